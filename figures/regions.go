package figures

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/drknn/drknn/eval"
)

// GridSize is the number of grid cells on each side of a shaded panel.
const GridSize = 160

// Panel is one 2-D decision-region panel: the classifier Method of package
// eval, configured by Settings (and P for the methods that need it), is
// fitted on the 2-D training points and evaluated on a grid; each cell is
// coloured by its predicted class, paler where the vote is less certain.
// Training points are large dots with a dark outline, queries small dots,
// both coloured by their true class.
type Panel struct {
	Title       string
	Train       []float64 // n×2 row-major
	TrainLabels []int     // length n, values 0…M−1
	Query       []float64 // nq×2 row-major (may be empty)
	QueryLabels []int     // length nq, or nil to draw queries in grey
	M           int
	Method      string        // an eval method name, e.g. eval.MethodDrKNN
	Settings    eval.Settings // K, Tau, Bandwidth, …
	P           []float64     // M×n least-favourable distributions for the methods that need them
	ClassNames  []string      // when set (length M), a legend names the classes
}

func (p *Panel) check() (n, nq int, err error) {
	if p.M < 2 {
		return 0, 0, inputf("panel %q: M = %d classes, want ≥ 2", p.Title, p.M)
	}
	if len(p.Train) == 0 || len(p.Train)%2 != 0 {
		return 0, 0, inputf("panel %q: %d training values, want n×2 with n ≥ 1", p.Title, len(p.Train))
	}
	if len(p.Query)%2 != 0 {
		return 0, 0, inputf("panel %q: %d query values, want nq×2", p.Title, len(p.Query))
	}
	n, nq = len(p.Train)/2, len(p.Query)/2
	if err := finite("training point", p.Train); err != nil {
		return 0, 0, fmt.Errorf("panel %q: %w", p.Title, err)
	}
	if err := finite("query point", p.Query); err != nil {
		return 0, 0, fmt.Errorf("panel %q: %w", p.Title, err)
	}
	if err := checkLabels("training labels", p.TrainLabels, n, p.M); err != nil {
		return 0, 0, fmt.Errorf("panel %q: %w", p.Title, err)
	}
	if p.ClassNames != nil && len(p.ClassNames) != p.M {
		return 0, 0, inputf("panel %q: %d class names for M = %d", p.Title, len(p.ClassNames), p.M)
	}
	if p.QueryLabels != nil {
		if err := checkLabels("query labels", p.QueryLabels, nq, p.M); err != nil {
			return 0, 0, fmt.Errorf("panel %q: %w", p.Title, err)
		}
	}
	return n, nq, nil
}

// bounds returns a square-ish box around the points with a margin.
func bounds(sets ...[]float64) (x0, x1, y0, y1 float64) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, s := range sets {
		for i := 0; i+1 < len(s); i += 2 {
			x0, x1 = math.Min(x0, s[i]), math.Max(x1, s[i])
			y0, y1 = math.Min(y0, s[i+1]), math.Max(y1, s[i+1])
		}
	}
	span := math.Max(x1-x0, y1-y0)
	if !(span > 0) {
		span = 1
	}
	mx, my := 0.08*span+0.5*(span-(x1-x0)), 0.08*span+0.5*(span-(y1-y0))
	return x0 - mx, x1 + mx, y0 - my, y1 + my
}

// gridPoints returns the centres of a g×g grid over the box, row 0 at the
// top (largest y), as image rows are.
func gridPoints(x0, x1, y0, y1 float64, g int) []float64 {
	pts := make([]float64, 0, 2*g*g)
	for r := 0; r < g; r++ {
		y := y1 - (float64(r)+0.5)*(y1-y0)/float64(g)
		for c := 0; c < g; c++ {
			pts = append(pts, x0+(float64(c)+0.5)*(x1-x0)/float64(g), y)
		}
	}
	return pts
}

// regionImage classifies the grid and colours it.
func regionImage(p *Panel, n int, grid []float64, g int) (*image.RGBA, error) {
	c, err := eval.New(p.Method, p.Settings, p.P)
	if err != nil {
		return nil, fmt.Errorf("panel %q: %w", p.Title, err)
	}
	if err := c.Fit(p.Train, n, 2, p.TrainLabels, p.M); err != nil {
		return nil, fmt.Errorf("panel %q: %s: %w", p.Title, p.Method, err)
	}
	nq := len(grid) / 2
	pred, err := c.Predict(grid, nq)
	if err != nil {
		return nil, fmt.Errorf("panel %q: %w", p.Title, err)
	}
	votes, err := c.Votes(grid, nq)
	if err != nil {
		return nil, fmt.Errorf("panel %q: %w", p.Title, err)
	}
	img := image.NewRGBA(image.Rect(0, 0, g, g))
	for i := 0; i < nq; i++ {
		v := votes[i*p.M : (i+1)*p.M]
		var sum float64
		for _, x := range v {
			sum += x
		}
		conf := 1.0
		if sum > 0 {
			conf = (v[pred[i]]/sum - 1/float64(p.M)) / (1 - 1/float64(p.M))
		}
		img.SetRGBA(i%g, i/g, blend(ClassColour(pred[i]), 0.18+0.5*conf))
	}
	return img, nil
}

// scatter returns a scatter plotter of the points coloured by label (grey
// when labels is nil), with radius r.
func scatter(pts []float64, labels []int, r vg.Length) (*plotter.Scatter, error) {
	xys := make(plotter.XYs, len(pts)/2)
	for i := range xys {
		xys[i].X, xys[i].Y = pts[2*i], pts[2*i+1]
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	s.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		st := draw.GlyphStyle{Radius: r, Shape: draw.CircleGlyph{}}
		if labels == nil {
			st.Color = plotter.DefaultGlyphStyle.Color
		} else {
			st.Color = ClassColour(labels[i])
		}
		return st
	}
	return s, nil
}

// ringer draws a dark ring around each point (the training points).
func ringer(pts []float64, r vg.Length) (*plotter.Scatter, error) {
	s, err := scatter(pts, nil, r)
	if err != nil {
		return nil, err
	}
	s.GlyphStyleFunc = nil
	s.GlyphStyle = draw.GlyphStyle{Radius: r, Shape: draw.RingGlyph{}, Color: color.Gray{Y: 30}}
	return s, nil
}

func regionPlot(p *Panel) (*plot.Plot, error) {
	n, _, err := p.check()
	if err != nil {
		return nil, err
	}
	x0, x1, y0, y1 := bounds(p.Train, p.Query)
	img, err := regionImage(p, n, gridPoints(x0, x1, y0, y1, GridSize), GridSize)
	if err != nil {
		return nil, err
	}
	pl := newPlot(p.Title, "", "")
	pl.Add(plotter.NewImage(img, x0, y0, x1, y1))
	if len(p.Query) > 0 {
		q, err := scatter(p.Query, p.QueryLabels, vg.Points(1.3))
		if err != nil {
			return nil, err
		}
		pl.Add(q)
	}
	tr, err := scatter(p.Train, p.TrainLabels, vg.Points(4))
	if err != nil {
		return nil, err
	}
	ring, err := ringer(p.Train, vg.Points(4))
	if err != nil {
		return nil, err
	}
	pl.Add(tr, ring)
	pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = x0, x1, y0, y1
	addLegend(pl, p.ClassNames)
	return pl, nil
}

// DecisionRegions draws the panels side by side (Figure 5 of the paper:
// Dr.k-NN, PCA+k-NN, SVD+k-NN and NCA on 2-D points) as a width×height PNG.
func DecisionRegions(w io.Writer, panels []Panel, width, height int) error {
	return renderRow(w, "panels", len(panels), func(i int) (*plot.Plot, error) { return regionPlot(&panels[i]) }, width, height)
}

// Project2D maps raw training and query samples (n×d and nq×d) to 2-D
// with the projection of a pixel baseline — eval.MethodPCAKNN,
// MethodSVDKNN or MethodNCAKNN — learned on the training samples, for
// drawing that baseline's decision regions (the k-NN in the plane is then
// eval.MethodEmbeddingKNN).
func Project2D(method string, train []float64, n, d int, labels []int, m int, query []float64, nq int, seed int64) (tr2, q2 []float64, err error) {
	var proj eval.Projector
	switch method {
	case eval.MethodPCAKNN:
		proj = &eval.PCA{OutDim: 2}
	case eval.MethodSVDKNN:
		proj = &eval.SVD{OutDim: 2}
	case eval.MethodNCAKNN:
		proj = &eval.NCA{Settings: eval.NCASettings{OutDim: 2, Seed: seed}}
	default:
		return nil, nil, inputf("Project2D: method %q, want pca_knn, svd_knn or nca_knn", method)
	}
	if d < 2 {
		return nil, nil, inputf("Project2D: samples of dimension %d, want ≥ 2", d)
	}
	if err := proj.FitProjection(train, n, d, labels, m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	if tr2, err = proj.Transform(train, n); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	if nq > 0 {
		if q2, err = proj.Transform(query, nq); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", method, err)
		}
	}
	return tr2, q2, nil
}

// addLegend names the classes with dots of their colours.
func addLegend(pl *plot.Plot, names []string) {
	for m, name := range names {
		pl.Legend.Add(name, legendDot{ClassColour(m)})
	}
	pl.Legend.Top = true
	pl.Legend.TextStyle.Font.Size = font.Length(9)
}

// legendDot is a legend thumbnail: a filled circle with a dark ring.
type legendDot struct{ c color.Color }

func (d legendDot) Thumbnail(c *draw.Canvas) {
	pt := vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}
	c.DrawGlyph(draw.GlyphStyle{Color: d.c, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}, pt)
	c.DrawGlyph(draw.GlyphStyle{Color: color.Gray{Y: 30}, Radius: vg.Points(4), Shape: draw.RingGlyph{}}, pt)
}

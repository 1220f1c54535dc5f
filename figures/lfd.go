package figures

import (
	"fmt"
	"image"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/drknn/drknn/eval"
)

// LFDData is the input of Figure 3: 2-D training points, their labels, the
// least-favourable distributions P* solved on them, and optional queries.
type LFDData struct {
	Train       []float64 // n×2 row-major
	TrainLabels []int     // values 0…M−1
	M           int
	P           []float64 // M×n: row m is P*_m
	Query       []float64 // nq×2, may be empty
	QueryLabels []int     // length nq or nil
	K           int       // neighbours of the Dr.k-NN panel (0: 5, capped at n)
	// Bandwidth h of the Gaussian kernel κ_h(u) ∝ exp(−‖u‖²/(2h²)) that
	// shades each P*_m (eq. 15 of the paper); 0 means a quarter of the
	// median distance between training points.
	Bandwidth  float64
	ClassNames []string // panel titles; nil gives "class 1"…
}

// smoothed returns s_m(ξ) = Σ_i P_m(ξⁱ) κ_h(ξ − ξⁱ) on the grid for class m.
func smoothed(train, p []float64, n, m int, grid []float64, h float64) []float64 {
	out := make([]float64, len(grid)/2)
	row := p[m*n : (m+1)*n]
	inv := 1 / (2 * h * h)
	for g := range out {
		gx, gy := grid[2*g], grid[2*g+1]
		var s float64
		for i, w := range row {
			if w == 0 {
				continue
			}
			dx, dy := gx-train[2*i], gy-train[2*i+1]
			s += w * math.Exp(-(dx*dx+dy*dy)*inv)
		}
		out[g] = s
	}
	return out
}

// LFDWeights draws Figure 3 of the paper as a width×height PNG: one panel
// per class m with P*_m smoothed by a Gaussian kernel as shading (darker
// where the smoothed mass is larger, scaled to the panel's maximum) and
// the training points sized by their mass under P*_m, then a last panel
// with the Dr.k-NN decision regions (colour depth = vote confidence), the
// training points as large dots and the queries as small dots.
func LFDWeights(w io.Writer, d LFDData, width, height int) error {
	if err := checkSize(width, height); err != nil {
		return err
	}
	panel := Panel{Title: "Dr.k-NN decision", Train: d.Train, TrainLabels: d.TrainLabels, Query: d.Query,
		QueryLabels: d.QueryLabels, M: d.M, Method: eval.MethodDrKNN, P: d.P}
	n, _, err := panel.check()
	if err != nil {
		return err
	}
	if len(d.P) != d.M*n {
		return inputf("P has %d values, want M×n = %d×%d", len(d.P), d.M, n)
	}
	if err := finite("P", d.P); err != nil {
		return err
	}
	for i, v := range d.P {
		if v < 0 {
			return inputf("P[%d] = %v is negative", i, v)
		}
	}
	if d.ClassNames != nil && len(d.ClassNames) != d.M {
		return inputf("%d class names for M = %d", len(d.ClassNames), d.M)
	}
	h := d.Bandwidth
	if h == 0 {
		med, err := eval.MedianDistance(d.Train, n, 2)
		if err != nil {
			return inputf("%v", err)
		}
		h = med / 4
	}
	if !(h > 0) || math.IsInf(h, 0) {
		return inputf("bandwidth %v, want > 0", d.Bandwidth)
	}
	k := d.K
	if k == 0 {
		k = min(5, n)
	}
	panel.Settings = eval.Settings{K: k}
	panel.Title = fmt.Sprintf("Dr.k-NN, k = %d", k)

	x0, x1, y0, y1 := bounds(d.Train, d.Query)
	grid := gridPoints(x0, x1, y0, y1, GridSize)
	row := make([]*plot.Plot, 0, d.M+1)
	for m := 0; m < d.M; m++ {
		s := smoothed(d.Train, d.P, n, m, grid, h)
		var top float64
		for _, v := range s {
			top = math.Max(top, v)
		}
		img := image.NewRGBA(image.Rect(0, 0, GridSize, GridSize))
		for g, v := range s {
			t := 0.0
			if top > 0 {
				t = 0.85 * v / top
			}
			img.SetRGBA(g%GridSize, g/GridSize, blend(ClassColour(m), t))
		}
		name := fmt.Sprintf("class %d", m+1)
		if d.ClassNames != nil {
			name = d.ClassNames[m]
		}
		pl := newPlot(fmt.Sprintf("P*%s (%s)", subscript(m+1), name), "", "")
		pl.Add(plotter.NewImage(img, x0, y0, x1, y1))
		var wmax float64
		for i := 0; i < n; i++ {
			wmax = math.Max(wmax, d.P[m*n+i])
		}
		pts, err := scatter(d.Train, d.TrainLabels, vg.Points(3))
		if err != nil {
			return err
		}
		base := pts.GlyphStyleFunc
		pts.GlyphStyleFunc = func(i int) (st draw.GlyphStyle) {
			st = base(i)
			frac := 0.0
			if wmax > 0 {
				frac = d.P[m*n+i] / wmax
			}
			st.Radius = vg.Points(1.2 + 4*math.Sqrt(frac))
			return st
		}
		pl.Add(pts)
		pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = x0, x1, y0, y1
		row = append(row, pl)
	}
	panel.ClassNames = d.ClassNames
	rp, err := regionPlot(&panel)
	if err != nil {
		return err
	}
	row = append(row, rp)
	return renderGrid(w, [][]*plot.Plot{row}, width, height)
}

// subscript writes a positive integer with Unicode subscript digits.
func subscript(v int) string {
	var b []rune
	for _, c := range fmt.Sprint(v) {
		b = append(b, '₀'+(c-'0'))
	}
	return string(b)
}

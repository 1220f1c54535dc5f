package figures

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/optlayer"
)

// render runs f into a buffer, decodes the PNG and checks its size and that
// it has more than minColours distinct colours. With $DRKNN_FIGURES_OUT set
// the PNG is also kept there for inspection.
func render(t *testing.T, name string, width, height, minColours int, f func(w io.Writer) error) image.Image {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	if r := img.Bounds(); r.Dx() != width || r.Dy() != height {
		t.Fatalf("%s: %d×%d, want %d×%d", name, r.Dx(), r.Dy(), width, height)
	}
	if n := colours(img); n <= minColours {
		t.Fatalf("%s: %d distinct colours, want > %d", name, n, minColours)
	}
	if dir := os.Getenv("DRKNN_FIGURES_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// gauss3 is a small 3-class 2-D set with its LFD solved.
func gauss3(t *testing.T, perClass int) LFDData {
	t.Helper()
	d, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: perClass, Seed: 1, Noise: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	n := d.Len()
	x := make([]float64, len(d.X))
	for i, v := range d.X {
		x[i] = float64(v)
	}
	res, err := optlayer.Solve(&optlayer.Problem{N: n, Features: x, Dim: 2, Labels: d.Labels, Theta: []float64{0.3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: 40, Seed: 2, Noise: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	qx := make([]float64, len(q.X))
	for i, v := range q.X {
		qx[i] = float64(v)
	}
	return LFDData{Train: x, TrainLabels: d.Labels, M: 3, P: res.P, Query: qx, QueryLabels: q.Labels, K: 5}
}

// pixel returns the RGB of img at a data-space point of a single-panel
// figure is hard to locate; instead tests count pixels near each class
// colour.
func countNear(img image.Image, c [3]uint8, tol int) int {
	b := img.Bounds()
	k := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-int(c[0])) <= tol && abs(int(g>>8)-int(c[1])) <= tol && abs(int(bl>>8)-int(c[2])) <= tol {
				k++
			}
		}
	}
	return k
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestLFDWeights(t *testing.T) {
	d := gauss3(t, 15)
	img := render(t, "fig3-lfd", 1600, 420, 200, func(w io.Writer) error { return LFDWeights(w, d, 1600, 420) })
	// Every class colour appears (dots at full colour, shading blended).
	for m := 0; m < 3; m++ {
		c := ClassColour(m)
		if k := countNear(img, [3]uint8{c.R, c.G, c.B}, 6); k < 50 {
			t.Fatalf("class %d colour covers %d pixels", m, k)
		}
	}
}

func TestSmoothedIsEquation15(t *testing.T) {
	train := []float64{0, 0, 1, 0, 0, 2}
	p := []float64{0.5, 0.5, 0, 0, 0.25, 0.75}
	grid := []float64{0.5, 0.5, 3, -1}
	got := smoothed(train, p, 3, 1, grid, 0.7)
	for g := 0; g < 2; g++ {
		var want float64
		for i := 0; i < 3; i++ {
			dx, dy := grid[2*g]-train[2*i], grid[2*g+1]-train[2*i+1]
			want += p[3+i] * math.Exp(-(dx*dx+dy*dy)/(2*0.49))
		}
		if math.Abs(got[g]-want) > 1e-15 {
			t.Fatalf("grid %d: %v, want %v", g, got[g], want)
		}
	}
}

func TestDecisionRegions(t *testing.T) {
	d := gauss3(t, 10)
	n := len(d.TrainLabels)
	pixels := make([]float64, n*6)
	rng := rand.New(rand.NewSource(3))
	for i := range pixels {
		pixels[i] = d.Train[2*(i/6)+(i%2)] + 0.1*rng.NormFloat64()
	}
	qn := len(d.QueryLabels)
	qpix := make([]float64, qn*6)
	for i := range qpix {
		qpix[i] = d.Query[2*(i/6)+(i%2)] + 0.1*rng.NormFloat64()
	}
	panels := []Panel{{Title: "Dr.k-NN", Train: d.Train, TrainLabels: d.TrainLabels, Query: d.Query, QueryLabels: d.QueryLabels,
		M: 3, Method: eval.MethodDrKNN, Settings: eval.Settings{K: 5}, P: d.P, ClassNames: []string{"four", "six", "nine"}}}
	for _, m := range []string{eval.MethodPCAKNN, eval.MethodSVDKNN, eval.MethodNCAKNN} {
		tr, q, err := Project2D(m, pixels, n, 6, d.TrainLabels, 3, qpix, qn, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 2*n || len(q) != 2*qn {
			t.Fatalf("%s: %d and %d values", m, len(tr), len(q))
		}
		panels = append(panels, Panel{Title: m, Train: tr, TrainLabels: d.TrainLabels, Query: q, QueryLabels: d.QueryLabels,
			M: 3, Method: eval.MethodEmbeddingKNN, Settings: eval.Settings{K: 5}})
	}
	render(t, "fig5-regions", 1600, 420, 200, func(w io.Writer) error { return DecisionRegions(w, panels, 1600, 420) })

	// The region colours agree with the classifier: a grid point deep in
	// class m's cloud is classified m and coloured with m's hue.
	g := 8
	x0, x1, y0, y1 := bounds(d.Train, d.Query)
	grid := gridPoints(x0, x1, y0, y1, g)
	img, err := regionImage(&panels[0], n, grid, g)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := eval.New(eval.MethodDrKNN, eval.Settings{K: 5}, d.P)
	if err := c.Fit(d.Train, n, 2, d.TrainLabels, 3); err != nil {
		t.Fatal(err)
	}
	pred, _ := c.Predict(grid, g*g)
	classes := map[int]bool{}
	for i, m := range pred {
		px := img.RGBAAt(i%g, i/g)
		col := ClassColour(m)
		// blend keeps the channel order of the class colour.
		if (col.R > col.B) != (px.R > px.B) && col.R != col.B {
			t.Fatalf("grid %d: class %d colour %v, pixel %v", i, m, col, px)
		}
		classes[m] = true
	}
	if len(classes) != 3 {
		t.Fatalf("grid shows classes %v, want all 3", classes)
	}
}

func TestAccuracySweep(t *testing.T) {
	d := gauss3(t, 10)
	e := &Episode{Train: d.Train, TrainLabels: d.TrainLabels, N: len(d.TrainLabels), D: 2, M: 3, P: d.P,
		Query: d.Query, QueryLabels: d.QueryLabels}
	acc, err := AccuracyVsK(e, eval.MethodDrKNN, []int{1, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 5} {
		c, _ := eval.New(eval.MethodDrKNN, eval.Settings{K: k}, d.P)
		want, _, err := eval.Evaluate(c, e.Train, e.N, 2, e.TrainLabels, 3, e.Query, len(e.QueryLabels), e.QueryLabels)
		if err != nil {
			t.Fatal(err)
		}
		if got := acc[map[int]int{1: 0, 5: 1}[k]]; got != want {
			t.Fatalf("k=%d: %v, eval %v", k, got, want)
		}
	}
	if acc[1] < 0.5 {
		t.Fatalf("Dr.k-NN accuracy %v on separated Gaussians", acc[1])
	}
	hs := []float64{0.05, 1}
	bw, err := AccuracyVsBandwidth(e, hs)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		c := &eval.KernelSmoothing{H: h, P: d.P}
		want, _, err := eval.Evaluate(c, e.Train, e.N, 2, e.TrainLabels, 3, e.Query, len(e.QueryLabels), e.QueryLabels)
		if err != nil {
			t.Fatal(err)
		}
		if bw[i] != want {
			t.Fatalf("h=%v: %v, eval %v", h, bw[i], want)
		}
	}
	render(t, "appC-sweep", 1000, 400, 20, func(w io.Writer) error {
		return AccuracySweep(w, e, DefaultKs, []float64{0.01, 0.1, 1, 10}, 5, true, 1000, 400)
	})
}

func TestTrainingCurves(t *testing.T) {
	dir := t.TempDir()
	for r, body := range []string{
		`[{"step":1,"risk":0.6,"mean_rel_gap":4e-4,"max_rel_gap":5e-4,"iterations":100,"not_optimal":0},
		  {"step":2,"risk":0.5,"mean_rel_gap":3e-4,"max_rel_gap":6e-4,"iterations":90,"not_optimal":0},
		  {"step":3,"risk":0.3,"mean_rel_gap":0,"max_rel_gap":1e-4,"iterations":80,"not_optimal":1}]`,
		`[{"step":1,"risk":0.7,"mean_rel_gap":2e-4,"max_rel_gap":5e-4,"iterations":100,"not_optimal":0},
		  {"step":2,"risk":0.4,"mean_rel_gap":1e-4,"max_rel_gap":6e-4,"iterations":90,"not_optimal":0}]`,
	} {
		rd := filepath.Join(dir, "repeats", []string{"01", "02"}[r])
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rd, "history.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := ReadRunCurves(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, hs := rc.Names, rc.Histories
	if len(names) != 2 || names[1] != "02" || len(hs[0]) != 3 || hs[0][2].Risk != 0.3 || hs[0][2].NotOptimal != 1 {
		t.Fatalf("%v %+v", names, hs)
	}
	render(t, "curves", 900, 350, 20, func(w io.Writer) error { return TrainingCurves(w, names, hs, 900, 350) })

	for name, bad := range map[string]string{
		"empty": `[]`, "not json": `{`, "object": `{"step":1}`, "zero step": `[{"step":0,"risk":1}]`,
		"decreasing": `[{"step":2,"risk":1},{"step":1,"risk":1}]`, "risk string": `[{"step":1,"risk":"x"}]`,
	} {
		if _, err := ParseHistory([]byte(bad), "h.json"); err == nil || !strings.Contains(err.Error(), "h.json") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := ReadRunCurves(t.TempDir()); err == nil {
		t.Fatal("empty run folder accepted")
	}
}

func TestBadInput(t *testing.T) {
	d := gauss3(t, 5)
	ok := func() LFDData { c := d; return c }
	cases := map[string]func(w io.Writer) error{
		"tiny size": func(w io.Writer) error { return LFDWeights(w, d, 10, 10) },
		"no room":   func(w io.Writer) error { return LFDWeights(w, d, 64, 64) },
		"no room for charts": func(w io.Writer) error {
			return TrainingCurves(w, []string{"01"}, [][]Step{{{Step: 1, Risk: 0.5}}}, 100, 64)
		},
		"huge size": func(w io.Writer) error { return LFDWeights(w, d, 100000, 300) },
		"P too short": func(w io.Writer) error {
			c := ok()
			c.P = c.P[:3]
			return LFDWeights(w, c, 400, 200)
		},
		"P NaN": func(w io.Writer) error {
			c := ok()
			c.P = append([]float64(nil), c.P...)
			c.P[2] = math.NaN()
			return LFDWeights(w, c, 400, 200)
		},
		"P negative": func(w io.Writer) error {
			c := ok()
			c.P = append([]float64(nil), c.P...)
			c.P[2] = -1
			return LFDWeights(w, c, 400, 200)
		},
		"label out of range": func(w io.Writer) error {
			c := ok()
			c.TrainLabels = append([]int(nil), c.TrainLabels...)
			c.TrainLabels[0] = 3
			return LFDWeights(w, c, 400, 200)
		},
		"odd coordinates": func(w io.Writer) error {
			c := ok()
			c.Train = c.Train[:len(c.Train)-1]
			return LFDWeights(w, c, 400, 200)
		},
		"Inf point": func(w io.Writer) error {
			c := ok()
			c.Query = append([]float64(nil), c.Query...)
			c.Query[0] = math.Inf(1)
			return LFDWeights(w, c, 400, 200)
		},
		"negative bandwidth": func(w io.Writer) error {
			c := ok()
			c.Bandwidth = -1
			return LFDWeights(w, c, 400, 200)
		},
		"class names": func(w io.Writer) error {
			c := ok()
			c.ClassNames = []string{"a"}
			return LFDWeights(w, c, 400, 200)
		},
		"no panels": func(w io.Writer) error { return DecisionRegions(w, nil, 400, 200) },
		"panel class names": func(w io.Writer) error {
			return DecisionRegions(w, []Panel{{Train: d.Train, TrainLabels: d.TrainLabels, M: 3, Method: "embedding_knn",
				Settings: eval.Settings{K: 1}, ClassNames: []string{"a", "b"}}}, 400, 200)
		},
		"unknown method": func(w io.Writer) error {
			return DecisionRegions(w, []Panel{{Train: d.Train, TrainLabels: d.TrainLabels, M: 3, Method: "nope"}}, 400, 200)
		},
		"k too big": func(w io.Writer) error {
			return DecisionRegions(w, []Panel{{Train: d.Train, TrainLabels: d.TrainLabels, M: 3, Method: "embedding_knn",
				Settings: eval.Settings{K: 1000}}}, 400, 200)
		},
		"no charts": func(w io.Writer) error { return Charts(w, nil, 400, 200) },
		"ragged curve": func(w io.Writer) error {
			return Charts(w, []Chart{{Curves: []Curve{{X: []float64{1, 2}, Y: []float64{1}}}}}, 400, 200)
		},
		"log of zero only": func(w io.Writer) error {
			return Charts(w, []Chart{{LogX: true, Curves: []Curve{{X: []float64{0}, Y: []float64{1}}}}}, 400, 200)
		},
		"sweep k too big": func(w io.Writer) error {
			e := &Episode{Train: d.Train, TrainLabels: d.TrainLabels, N: len(d.TrainLabels), D: 2, M: 3, P: d.P,
				Query: d.Query, QueryLabels: d.QueryLabels}
			return AccuracySweep(w, e, []int{100}, []float64{1}, 5, false, 400, 200)
		},
		"sweep bad h": func(w io.Writer) error {
			e := &Episode{Train: d.Train, TrainLabels: d.TrainLabels, N: len(d.TrainLabels), D: 2, M: 3, P: d.P,
				Query: d.Query, QueryLabels: d.QueryLabels}
			return AccuracySweep(w, e, []int{1}, []float64{0}, 1, false, 400, 200)
		},
		"sweep query labels": func(w io.Writer) error {
			e := &Episode{Train: d.Train, TrainLabels: d.TrainLabels, N: len(d.TrainLabels), D: 2, M: 3, P: d.P,
				Query: d.Query, QueryLabels: d.QueryLabels[:2]}
			return AccuracySweep(w, e, []int{1}, []float64{1}, 1, false, 400, 200)
		},
		"curves mismatch": func(w io.Writer) error { return TrainingCurves(w, []string{"01"}, nil, 400, 200) },
		"project method": func(w io.Writer) error {
			_, _, err := Project2D("drknn", d.Train, len(d.TrainLabels), 2, d.TrainLabels, 3, nil, 0, 1)
			return err
		},
	}
	for name, f := range cases {
		var b bytes.Buffer
		err := f(&b)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		if b.Len() != 0 {
			t.Fatalf("%s: wrote %d bytes before failing", name, b.Len())
		}
		_ = errors.Is(err, ErrInput)
	}
}

func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.png")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Save(path, func(w io.Writer) error { w.Write([]byte("partial")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("file now %q", b)
	}
	d := gauss3(t, 5)
	if err := Save(path, func(w io.Writer) error { return LFDWeights(w, d, 600, 200) }); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files in the folder, want 1", len(ents))
	}
}

func FuzzParseHistory(f *testing.F) {
	f.Add([]byte(`[{"step":1,"risk":0.6,"mean_rel_gap":4e-4,"max_rel_gap":5e-4,"iterations":100,"not_optimal":0}]`))
	f.Add([]byte(`[{"step":1,"risk":1},{"step":1,"risk":1}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"step":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHistory(b, "h.json")
		if err != nil {
			return
		}
		if len(h) == 0 || h[0].Step < 1 {
			t.Fatalf("accepted %+v", h)
		}
		for i := 1; i < len(h); i++ {
			if h[i].Step <= h[i-1].Step {
				t.Fatalf("steps not increasing: %+v", h)
			}
		}
		var buf bytes.Buffer
		if err := TrainingCurves(&buf, []string{"01"}, [][]Step{h}, 600, 300); err != nil {
			t.Fatalf("valid history does not draw: %v", err)
		}
	})
}

// TestTickLabel checks the axis labels of values produced by tick
// arithmetic: 0.95·1e-3 is 0.0009500000000000001 in float64.
func TestTickLabel(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0.95 * 1e-3, "0.00095"},
		{3 * 1e-3, "0.003"},
		{0.1 + 0.2, "0.3"},
		{1, "1"},
		{250000, "2.5e+05"}, {12345, "12345"},
		{1e-5, "1e-05"},
		{1234567, "1.23e+06"},
	} {
		if got := tickLabel(c.v); got != c.want {
			t.Errorf("tickLabel(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestSaveFormats: the file's extension picks the format (-out x.svg used
// to get PNG bytes); an unknown extension is refused before anything is
// written.
func TestSaveFormats(t *testing.T) {
	dir := t.TempDir()
	charts := []Chart{{Title: "t", Curves: []Curve{{Label: "a", X: []float64{1, 2, 3}, Y: []float64{0.5, 0.7, 0.6}}}}}
	for ext, magic := range map[string][]string{
		"png": {"\x89PNG"}, "svg": {"<?xml", "<svg"}, "SVG": {"<?xml", "<svg"}, "pdf": {"%PDF"}, "eps": {"%!PS"},
	} {
		path := filepath.Join(dir, "f."+ext)
		if err := Save(path, func(w io.Writer) error { return Charts(w, charts, 400, 300) }); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ok := false
		for _, m := range magic {
			ok = ok || bytes.HasPrefix(b, []byte(m))
		}
		if !ok {
			t.Fatalf("%s: file starts with %q", ext, b[:min(len(b), 20)])
		}
		if strings.EqualFold(ext, "svg") && !bytes.Contains(b, []byte("<svg")) {
			t.Fatal("svg: no <svg element")
		}
	}
	for _, name := range []string{"f.jpg", "f"} {
		err := Save(filepath.Join(dir, name), func(w io.Writer) error { return Charts(w, charts, 400, 300) })
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), ".png, .svg, .pdf or .eps") {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s written", name)
		}
	}
}

// TestFitY: the fitted range contains the data with a margin, stays inside
// the floor and ceiling, and leaves room for the legend on its side.
func TestFitY(t *testing.T) {
	lo, hi, ok := FitY([]float64{0.845, 0.84, 0.855}, false, 0, 1, 0, true)
	if !ok || !(lo < 0.84 && hi > 0.855) || hi-lo > 0.1 {
		t.Fatalf("[%v, %v]", lo, hi)
	}
	lo2, hi2, _ := FitY([]float64{0.845, 0.84, 0.855}, false, 0, 1, 2, true)
	if lo2 != lo || !(hi2 > hi) {
		t.Fatalf("legend room: [%v, %v] vs [%v, %v]", lo2, hi2, lo, hi)
	}
	lo3, hi3, _ := FitY([]float64{0.845, 0.84, 0.855}, false, 0, 1, 2, false)
	if hi3 != hi || !(lo3 < lo) {
		t.Fatalf("legend room below: [%v, %v]", lo3, hi3)
	}
	if lo, hi, _ := FitY([]float64{0, 1}, false, 0, 1, 0, true); lo != 0 || hi != 1 {
		t.Fatalf("clipped to [0, 1]: [%v, %v]", lo, hi)
	}
	if lo, hi, _ := FitY([]float64{0.5, 0.5}, false, 0, 1, 0, true); !(lo < 0.5 && hi > 0.5) {
		t.Fatalf("one value: [%v, %v]", lo, hi)
	}
	if lo, hi, _ := FitY([]float64{3e-4, 9e-4}, true, 0, 0, 0, true); !(lo > 1e-4 && lo < 3e-4 && hi > 9e-4 && hi < 2e-3) {
		t.Fatalf("log: [%v, %v]", lo, hi)
	}
	if _, _, ok := FitY(nil, false, 0, 1, 0, true); ok {
		t.Fatal("no values fitted")
	}
}

// TestSweepAxis: both panels of Appendix C share a y range fitted to their
// accuracies — it contains every value and is narrower than [0, 1] when
// they are (the axis was fixed at [0, 1], hiding differences of a few
// queries).
func TestSweepAxis(t *testing.T) {
	d := gauss3(t, 10)
	e := &Episode{Train: d.Train, TrainLabels: d.TrainLabels, N: len(d.TrainLabels), D: 2, M: 3, P: d.P,
		Query: d.Query, QueryLabels: d.QueryLabels}
	charts, err := sweepCharts(e, DefaultKs, []float64{0.01, 0.1, 1, 10}, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	var ys []float64
	for _, ch := range charts {
		ys = append(ys, yValues(ch.Curves, false)...)
	}
	dlo, dhi := ys[0], ys[0]
	for _, v := range ys {
		dlo, dhi = min(dlo, v), max(dhi, v)
	}
	for i, ch := range charts {
		p, err := ch.plot()
		if err != nil {
			t.Fatal(err)
		}
		if !(p.Y.Min < dlo && p.Y.Max > dhi) || (dlo > 0.1 && dhi < 0.9 && !(p.Y.Min > 0 || p.Y.Max < 1)) {
			t.Fatalf("panel %d: axis [%v, %v] for accuracies in [%v, %v]", i, p.Y.Min, p.Y.Max, dlo, dhi)
		}
		if dhi-dlo < 0.5 && p.Y.Max-p.Y.Min >= 1 {
			t.Fatalf("panel %d: axis [%v, %v] not fitted to [%v, %v]", i, p.Y.Min, p.Y.Max, dlo, dhi)
		}
	}
	if charts[0].YMin != charts[1].YMin || charts[0].YMax != charts[1].YMax {
		t.Fatal("the panels' y ranges differ")
	}
}

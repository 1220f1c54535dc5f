package figures

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/drknn/drknn/eval"
)

// Episode is the data an accuracy sweep needs: embedded training points
// with their labels and P*, and labelled queries (one export folder).
type Episode struct {
	Train       []float64 // n×d
	TrainLabels []int
	N, D, M     int
	P           []float64 // M×n
	Query       []float64 // nq×d
	QueryLabels []int
}

func (e *Episode) check() (nq int, err error) {
	if e.N < 1 || e.D < 1 || e.M < 2 || len(e.Train) != e.N*e.D {
		return 0, inputf("episode: %d training values for n = %d, d = %d (M = %d)", len(e.Train), e.N, e.D, e.M)
	}
	if e.D == 0 || len(e.Query)%e.D != 0 || len(e.Query) == 0 {
		return 0, inputf("episode: %d query values, want nq×%d with nq ≥ 1", len(e.Query), e.D)
	}
	nq = len(e.Query) / e.D
	if err := checkLabels("training labels", e.TrainLabels, e.N, e.M); err != nil {
		return 0, err
	}
	if err := checkLabels("query labels", e.QueryLabels, nq, e.M); err != nil {
		return 0, err
	}
	if len(e.P) != e.M*e.N {
		return 0, inputf("episode: P has %d values, want M×n = %d", len(e.P), e.M*e.N)
	}
	if err := finite("training point", e.Train); err != nil {
		return 0, err
	}
	if err := finite("query point", e.Query); err != nil {
		return 0, err
	}
	return nq, nil
}

// AccuracyVsK returns the query accuracy of the method (Dr.k-NN or vanilla
// k-NN on the embedding) for each k.
func AccuracyVsK(e *Episode, method string, ks []int) ([]float64, error) {
	nq, err := e.check()
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(ks))
	for i, k := range ks {
		c, err := eval.New(method, eval.Settings{K: k, Workers: 1}, e.P)
		if err != nil {
			return nil, err
		}
		acc, _, err := eval.Evaluate(c, e.Train, e.N, e.D, e.TrainLabels, e.M, e.Query, nq, e.QueryLabels)
		if err != nil {
			return nil, fmt.Errorf("%s, k = %d: %w", method, k, err)
		}
		out[i] = acc
	}
	return out, nil
}

// AccuracyVsBandwidth returns the query accuracy of kernel smoothing of P*
// for each bandwidth h (the kernel's standard deviation, see
// eval.KernelSmoothing).
func AccuracyVsBandwidth(e *Episode, hs []float64) ([]float64, error) {
	nq, err := e.check()
	if err != nil {
		return nil, err
	}
	for i, h := range hs {
		if !(h > 0) || math.IsInf(h, 0) {
			return nil, inputf("bandwidth[%d] = %v, want > 0", i, h)
		}
	}
	ks := &eval.KernelSmoothing{P: e.P, Workers: 1}
	if err := ks.Fit(e.Train, e.N, e.D, e.TrainLabels, e.M); err != nil {
		return nil, err
	}
	preds, err := ks.PredictBandwidths(e.Query, nq, hs)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(hs))
	for b := range hs {
		if out[b], err = eval.Accuracy(preds[b], e.QueryLabels); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Curve is one line of a chart.
type Curve struct {
	Label string
	X, Y  []float64
	// Style: the zero value is a line with dots in the chart's next
	// colour; Faint draws a thin light-grey line (one of many, e.g. a
	// repeat behind the mean); Dashed a dashed line.
	Faint, Dashed bool
}

func (c Curve) xys(logX, logY bool) (plotter.XYs, error) {
	if len(c.X) != len(c.Y) || len(c.X) == 0 {
		return nil, inputf("curve %q: %d x and %d y values", c.Label, len(c.X), len(c.Y))
	}
	out := make(plotter.XYs, 0, len(c.X))
	for i := range c.X {
		x, y := c.X[i], c.Y[i]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return nil, inputf("curve %q: point %d = (%v, %v)", c.Label, i, x, y)
		}
		if math.IsNaN(y) || (logX && x <= 0) || (logY && y <= 0) {
			continue // a gap (e.g. a zero gap on a log axis)
		}
		out = append(out, plotter.XY{X: x, Y: y})
	}
	if len(out) == 0 {
		return nil, inputf("curve %q: no point can be drawn", c.Label)
	}
	return out, nil
}

// Chart is one panel of line charts.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Curves                []Curve
	YMin, YMax            float64 // fixed y range when YMax > YMin
	LegendBottom          bool    // legend in the lower right corner (default upper right)
	// FitY fits the y axis to the data (FitY, with a margin and room for
	// the legend) when no fixed range is given; without it gonum's
	// automatic range is used. Floor and Ceil bound the fitted range when
	// Ceil > Floor (0 and 1 for accuracies).
	FitY        bool
	Floor, Ceil float64
}

// yValues are the y values a chart draws (finite; positive on a log axis).
func yValues(curves []Curve, logY bool) []float64 {
	var ys []float64
	for _, c := range curves {
		for _, v := range c.Y {
			if math.IsNaN(v) || math.IsInf(v, 0) || (logY && v <= 0) {
				continue
			}
			ys = append(ys, v)
		}
	}
	return ys
}

// legendRows is the number of legend entries of the curves.
func legendRows(curves []Curve) int {
	n := 0
	for _, c := range curves {
		if c.Label != "" {
			n++
		}
	}
	return n
}

// FitY is a y range fitted to the values ys: their span widened by 8% on
// each side (at least 0.01 for a linear axis, a factor 1.1 for a log one),
// kept inside [floor, ceil] when ceil > floor, then extended at the top
// (legendTop) or bottom by room for legendRows legend entries so the
// legend does not cover the data. ok is false when there is no value.
func FitY(ys []float64, logY bool, floor, ceil float64, legendRows int, legendTop bool) (lo, hi float64, ok bool) {
	if len(ys) == 0 {
		return 0, 0, false
	}
	lo, hi = slices.Min(ys), slices.Max(ys)
	tr := func(v float64) float64 { return v }
	inv := tr
	if logY {
		tr, inv = math.Log10, func(v float64) float64 { return math.Pow(10, v) }
	}
	a, b := tr(lo), tr(hi)
	m := 0.08 * (b - a)
	if logY {
		m = max(m, math.Log10(1.1))
	} else {
		m = max(m, 0.01)
	}
	a, b = a-m, b+m
	if ceil > floor {
		if !logY || floor > 0 {
			a = max(a, tr(floor))
		}
		b = min(b, tr(ceil))
	}
	if legendRows > 0 {
		// Each legend entry takes about 6% of a panel's data height.
		f := min(0.06*float64(legendRows)+0.03, 0.6)
		room := (b - a) * f / (1 - f)
		if legendTop {
			b += room
		} else {
			a -= room
			if ceil > floor && !logY {
				a = max(a, floor-room) // a floor of 0 may give way to the legend only
			}
		}
	}
	return inv(a), inv(b), true
}

// logTicks labels a log axis at 1, 2 and 5 × 10^k over at most two
// decades and at the powers of ten beyond; a range of less than a factor
// of about 2.5 gets gonum's linear ticks.
type logTicks struct{}

// tickLabel prints a tick value with at most 6 significant digits, so that
// values computed by tick arithmetic (0.0009500000000000001) print as meant.
func tickLabel(v float64) string {
	if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64); err == nil {
		v = r
	}
	if a := math.Abs(v); a >= 1e-4 && a < 1e5 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	few := math.Log10(hi/lo) <= 2
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (few && (m == 2 || m == 5)) {
				t.Label = tickLabel(v)
				labelled++
			}
			ticks = append(ticks, t)
		}
	}
	if labelled < 2 {
		ticks = plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ticks {
			if ticks[i].Label != "" {
				ticks[i].Label = tickLabel(ticks[i].Value)
			}
		}
	}
	return ticks
}

func (ch *Chart) plot() (*plot.Plot, error) {
	if len(ch.Curves) == 0 {
		return nil, inputf("chart %q has no curves", ch.Title)
	}
	p := newPlot(ch.Title, ch.XLabel, ch.YLabel)
	if ch.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if ch.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	p.Add(plotter.NewGrid())
	colour := 0
	for _, c := range ch.Curves {
		xys, err := c.xys(ch.LogX, ch.LogY)
		if err != nil {
			return nil, err
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		col := color.RGBA{170, 170, 170, 255}
		if !c.Faint {
			col = ClassColour(colour)
			colour++
		}
		l.Color, pts.Color = col, col
		l.Width = vg.Points(1.5)
		pts.Radius = vg.Points(2.2)
		if len(xys) > 60 || c.Faint {
			pts.Radius = 0
		}
		if c.Faint {
			l.Width = vg.Points(0.8)
		}
		if c.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l, pts)
		if c.Label != "" {
			if pts.Radius == 0 {
				thumb := *l // a faint line's swatch drawn thicker, to be seen
				thumb.Width = max(thumb.Width, vg.Points(1.5))
				p.Legend.Add(c.Label, &thumb)
			} else {
				p.Legend.Add(c.Label, l, pts)
			}
		}
	}
	if ch.LogX {
		fixLogRange(&p.X, p.X.Min, p.X.Max)
	}
	if ch.FitY && !(ch.YMax > ch.YMin) {
		if lo, hi, ok := FitY(yValues(ch.Curves, ch.LogY), ch.LogY, ch.Floor, ch.Ceil, legendRows(ch.Curves), !ch.LegendBottom); ok {
			ch.YMin, ch.YMax = lo, hi
		}
	}
	if ch.LogY && !(ch.YMax > ch.YMin) {
		fixLogRange(&p.Y, p.Y.Min, p.Y.Max)
	}
	p.Legend.Top = !ch.LegendBottom
	p.Legend.TextStyle.Font.Size = font.Length(9)
	if ch.YMax > ch.YMin {
		p.Y.Min, p.Y.Max = ch.YMin, ch.YMax
	}
	return p, nil
}

// fixLogRange widens a log axis whose data span a single value (gonum
// would widen it by ±1, below zero) to a factor of 2 either side.
func fixLogRange(a *plot.Axis, lo, hi float64) {
	if lo == hi && lo > 0 {
		a.Min, a.Max = lo/2, hi*2
	}
}

// Charts draws the charts side by side as a width×height PNG.
func Charts(w io.Writer, charts []Chart, width, height int) error {
	return renderRow(w, "charts", len(charts), func(i int) (*plot.Plot, error) { return charts[i].plot() }, width, height)
}

// DefaultKs and DefaultBandwidths are the sweeps of Appendix C: k = 1…8
// and h = 10⁻³…10³ (the paper's bandwidth h is the kernel variance, ours
// the standard deviation √h; both are listed on the axis as our h).
var (
	DefaultKs         = []int{1, 2, 3, 4, 5, 6, 7, 8}
	DefaultBandwidths = []float64{1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000}
)

// AccuracySweep draws Appendix C as a width×height PNG: the accuracy of
// Dr.k-NN (and vanilla k-NN on the same embedding) against k, and of
// kernel smoothing of P* against the bandwidth h (log axis) with Dr.k-NN at
// k = kRef as a reference line. Bandwidths are in units of the median
// distance between training points when relative is set.
func AccuracySweep(w io.Writer, e *Episode, ks []int, hs []float64, kRef int, relative bool, width, height int) error {
	if err := checkSize(width, height); err != nil {
		return err
	}
	charts, err := sweepCharts(e, ks, hs, kRef, relative)
	if err != nil {
		return err
	}
	return Charts(w, charts, width, height)
}

// sweepCharts are the two panels of AccuracySweep.
func sweepCharts(e *Episode, ks []int, hs []float64, kRef int, relative bool) ([]Chart, error) {
	if len(ks) == 0 || len(hs) == 0 {
		return nil, inputf("empty k or h sweep")
	}
	for _, k := range ks {
		if k < 1 || k > e.N {
			return nil, inputf("k = %d outside 1…%d", k, e.N)
		}
	}
	dr, err := AccuracyVsK(e, eval.MethodDrKNN, ks)
	if err != nil {
		return nil, err
	}
	kn, err := AccuracyVsK(e, eval.MethodEmbeddingKNN, ks)
	if err != nil {
		return nil, err
	}
	scale := 1.0
	xlabel := "bandwidth h"
	if relative {
		if scale, err = eval.MedianDistance(e.Train, e.N, e.D); err != nil {
			return nil, err
		}
		xlabel = "bandwidth h / median training distance"
	}
	abs := make([]float64, len(hs))
	for i, h := range hs {
		abs[i] = h * scale
	}
	ksAcc, err := AccuracyVsBandwidth(e, abs)
	if err != nil {
		return nil, err
	}
	ref, err := AccuracyVsK(e, eval.MethodDrKNN, []int{kRef})
	if err != nil {
		return nil, err
	}
	kx := make([]float64, len(ks))
	for i, k := range ks {
		kx[i] = float64(k)
	}
	refY := make([]float64, len(hs))
	for i := range refY {
		refY[i] = ref[0]
	}
	charts := []Chart{
		{Title: "Dr.k-NN against k", XLabel: "k", YLabel: "query accuracy",
			Curves: []Curve{{Label: "Dr.k-NN", X: kx, Y: dr}, {Label: "embedding + k-NN", X: kx, Y: kn, Dashed: true}}},
		{Title: "kernel smoothing against h", XLabel: xlabel, YLabel: "query accuracy", LogX: true,
			Curves: []Curve{{Label: "kernel smoothing", X: hs, Y: ksAcc}, {Label: fmt.Sprintf("Dr.k-NN, k = %d", kRef), X: hs, Y: refY, Dashed: true}}},
	}
	// One y range for both panels, fitted to all their accuracies (the
	// differences are often a few queries: [0, 1] would hide them).
	lo, hi, _ := FitY(append(yValues(charts[0].Curves, false), yValues(charts[1].Curves, false)...), false, 0, 1, 2, true)
	for i := range charts {
		charts[i].YMin, charts[i].YMax = lo, hi
	}
	return charts, nil
}

// Step is one line of a repeat's history.json (train.StepStats).
type Step struct {
	Step       int     `json:"step"`
	Risk       float64 `json:"risk"`
	MeanRelGap float64 `json:"mean_rel_gap"`
	MaxRelGap  float64 `json:"max_rel_gap"`
	Iterations int     `json:"iterations"`
	NotOptimal int     `json:"not_optimal"`
}

// ReadHistory reads a history.json file: a JSON list of steps with
// increasing step numbers.
func ReadHistory(path string) ([]Step, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseHistory(b, path)
}

// ParseHistory parses the contents of a history.json; name is used in
// errors.
func ParseHistory(b []byte, name string) ([]Step, error) {
	var h []Step
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(h) == 0 {
		return nil, inputf("%s: no steps", name)
	}
	for i, s := range h {
		if s.Step < 1 || (i > 0 && s.Step <= h[i-1].Step) {
			return nil, inputf("%s: entry %d has step %d (steps must increase from 1)", name, i, s.Step)
		}
		for _, v := range []float64{s.Risk, s.MeanRelGap, s.MaxRelGap} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputf("%s: step %d has a non-finite value", name, s.Step)
			}
		}
	}
	return h, nil
}

// RunCurves are the training histories of a run folder (ReadRunCurves).
type RunCurves struct {
	// Names are the repeats ("01", …) of an episodes run, or the
	// objectives ("drknn", "proto") of a transfer run, with their
	// histories.
	Names     []string
	Histories [][]Step
	Transfer  bool    // read from a transfer run's train/<objective>/history.json
	Fit       bool    // read from a fit run's history.json (its one model, named "fit")
	Files     int     // history files found, read or not
	Skipped   []error // the files that could not be read, each naming its file; the others are in Histories
}

// ReadRunCurves reads the training histories of a run folder, in name
// order: DIR/repeats/*/history.json (episodes), or else a transfer run's
// DIR/train/*/history.json, or else a fit run's DIR/history.json. A file that cannot be read is left out and its
// error, naming the file, kept in Skipped; only a folder with no history
// file, or none readable, is an error.
func ReadRunCurves(dir string) (*RunCurves, error) {
	rc := &RunCurves{}
	matches, err := filepath.Glob(filepath.Join(dir, "repeats", "*", "history.json"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		if matches, err = filepath.Glob(filepath.Join(dir, "train", "*", "history.json")); err != nil {
			return nil, err
		}
		rc.Transfer = len(matches) > 0
	}
	if len(matches) == 0 {
		// A fit run: its one model's DIR/history.json.
		if _, err := os.Stat(filepath.Join(dir, "history.json")); err == nil {
			matches, rc.Fit = []string{filepath.Join(dir, "history.json")}, true
		}
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("%s: no repeats/*/history.json (episodes run), train/*/history.json (transfer run) or history.json (fit run)", dir)
	}
	sort.Strings(matches)
	rc.Files = len(matches)
	for _, m := range matches {
		h, err := ReadHistory(m)
		if err != nil {
			rc.Skipped = append(rc.Skipped, err)
			continue
		}
		name := filepath.Base(filepath.Dir(m))
		if rc.Fit {
			name = "fit"
		}
		rc.Names = append(rc.Names, name)
		rc.Histories = append(rc.Histories, h)
	}
	if len(rc.Histories) == 0 {
		return nil, fmt.Errorf("%s: no readable history file: %w", dir, errors.Join(rc.Skipped...))
	}
	return rc, nil
}

// Incomplete is the error of a figure that was written without some of
// its parts (DrawCurves: history files that could not be read), each
// error naming its file. Its ExitCode is 3, as drknn-train's run that
// finished with failures.
type Incomplete struct {
	Drawn   string // the figure's summary
	Skipped []error
}

func (e *Incomplete) Error() string {
	parts := make([]string, len(e.Skipped))
	for i, err := range e.Skipped {
		parts[i] = err.Error()
	}
	return fmt.Sprintf("drawn without %d part(s): %s", len(e.Skipped), strings.Join(parts, "; "))
}

// ExitCode is the exit status of a command whose figure is incomplete.
func (*Incomplete) ExitCode() int { return 3 }

// ObjectiveCurves draws a transfer run's trainings against the step, one
// line per objective: its training loss (the worst-case risk for drknn,
// the prototypical loss for proto) and, for the objectives that solve
// LFDs (some gap above 0), the mean and the largest certified relative gap
// of the step's mini-sets (log axis).
func ObjectiveCurves(w io.Writer, names []string, hs [][]Step, width, height int) error {
	if len(hs) == 0 || len(names) != len(hs) {
		return inputf("%d names for %d histories", len(names), len(hs))
	}
	loss := Chart{Title: "training loss", XLabel: "step", YLabel: "loss (drknn: worst-case risk)", FitY: true}
	gap := Chart{Title: "LFD certified relative gap", XLabel: "step", YLabel: "relative gap", LogY: true, FitY: true}
	for i, h := range hs {
		if len(h) == 0 {
			return inputf("objective %s has no steps", names[i])
		}
		var x, y, mg, xg []float64
		positive := false
		for _, s := range h {
			x = append(x, float64(s.Step))
			y = append(y, s.Risk)
			mg = append(mg, s.MeanRelGap)
			xg = append(xg, max(s.MaxRelGap, s.MeanRelGap))
			positive = positive || s.MaxRelGap > 0 || s.MeanRelGap > 0
		}
		loss.Curves = append(loss.Curves, Curve{Label: names[i], X: x, Y: y})
		if positive {
			if slices.ContainsFunc(mg, func(v float64) bool { return v > 0 }) {
				gap.Curves = append(gap.Curves, Curve{Label: names[i] + ": mean over mini-sets", X: x, Y: mg})
			}
			gap.Curves = append(gap.Curves, Curve{Label: names[i] + ": largest of any mini-set", X: x, Y: xg, Dashed: true})
		}
	}
	charts := []Chart{loss}
	if len(gap.Curves) > 0 {
		charts = append(charts, gap)
	}
	return Charts(w, charts, width, height)
}

// TrainingCurves draws, against the step, the mean worst-case risk of each
// repeat (faint lines) with their mean over the repeats (one bold line),
// and the certified relative duality gap of the step's LFDs: the mean over
// mini-sets and repeats and the largest of any mini-set (log axis), as a
// width×height PNG. Two series per panel whatever the number of repeats;
// the y axes are fitted to the data with room for the legend above it.
func TrainingCurves(w io.Writer, names []string, hs [][]Step, width, height int) error {
	if len(hs) == 0 || len(names) != len(hs) {
		return inputf("%d names for %d histories", len(names), len(hs))
	}
	risk := Chart{Title: "training: worst-case risk", XLabel: "step", YLabel: "mean worst-case risk", FitY: true}
	gap := Chart{Title: "LFD certified relative gap", XLabel: "step", YLabel: "relative gap", LogY: true, FitY: true}
	type acc struct {
		risk, gap, maxGap float64
		n                 int
	}
	byStep := map[int]*acc{}
	for r, h := range hs {
		if len(h) == 0 {
			return inputf("repeat %s has no steps", names[r])
		}
		var x, y []float64
		for _, s := range h {
			x = append(x, float64(s.Step))
			y = append(y, s.Risk)
			a := byStep[s.Step]
			if a == nil {
				a = &acc{}
				byStep[s.Step] = a
			}
			a.risk += s.Risk
			a.gap += s.MeanRelGap
			a.maxGap = max(a.maxGap, s.MaxRelGap, s.MeanRelGap)
			a.n++
		}
		c := Curve{X: x, Y: y, Faint: len(hs) > 1}
		if r == 0 {
			c.Label = "repeat " + names[0]
			if names[0] == "fit" {
				c.Label = "the fit run's model"
			}
			if len(hs) > 1 {
				c.Label = fmt.Sprintf("each repeat (%s–%s)", names[0], names[len(names)-1])
			}
		}
		risk.Curves = append(risk.Curves, c)
	}
	steps := make([]int, 0, len(byStep))
	for st := range byStep {
		steps = append(steps, st)
	}
	sort.Ints(steps)
	var x, mr, mg, xg []float64
	for _, st := range steps {
		a := byStep[st]
		n := float64(a.n)
		x = append(x, float64(st))
		mr = append(mr, a.risk/n)
		mg = append(mg, a.gap/n)
		xg = append(xg, a.maxGap)
	}
	if len(hs) > 1 {
		risk.Curves = append(risk.Curves, Curve{Label: fmt.Sprintf("mean of %d repeats", len(hs)), X: x, Y: mr})
	}
	gap.Curves = []Curve{{Label: "mean over mini-sets and repeats", X: x, Y: mg}, {Label: "largest of any mini-set", X: x, Y: xg, Dashed: true}}
	positive := false
	for _, c := range gap.Curves {
		for _, v := range c.Y {
			positive = positive || v > 0
		}
	}
	gap.LogY = positive // all gaps exactly 0: a linear axis
	if positive {
		// On the log axis a curve that is 0 at every step (e.g. the mean
		// gap when only one mini-set had any) has nothing to draw: leave
		// it out rather than fail the figure.
		kept := gap.Curves[:0]
		for _, c := range gap.Curves {
			if slices.ContainsFunc(c.Y, func(v float64) bool { return v > 0 }) {
				kept = append(kept, c)
			}
		}
		gap.Curves = kept
	}
	return Charts(w, []Chart{risk, gap}, width, height)
}

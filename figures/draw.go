package figures

// Whole figures as drknn-figures draws them: the data in, a PNG file and a
// one-line summary out.

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/errkind"
	"github.com/drknn/drknn/optlayer"
)

// Input marks err as bad input, errors.Is(err, ErrInput), keeping its
// message (nil stays nil).
func Input(err error) error { return errkind.Mark(ErrInput, err) }

// LFDSettings describe Figure 3: a 3-class 2-D Gaussian set
// (datasets.SyntheticGauss, means on a circle of radius 2), its LFD with
// Euclidean cost, and queries from the same distribution.
type LFDSettings struct {
	PerClass  int     // training points per class (1…500)
	Queries   int     // query points per class, drawn with Seed+1 (0…5000)
	Noise     float64 // standard deviation of each class
	Theta     float64 // Wasserstein radius ϑ of every class, in cost units
	K         int     // neighbours of the Dr.k-NN panel
	Bandwidth float64 // kernel bandwidth of the shading (0: a quarter of the median training distance)
	Seed      int64   // seed of the training draw
}

// DefaultLFDSettings are the settings of the paper's Figure 3 as drawn here.
func DefaultLFDSettings() LFDSettings {
	return LFDSettings{PerClass: 15, Queries: 40, Noise: 0.8, Theta: 0.3, K: 5, Seed: 1}
}

// Validate checks the settings; errors wrap ErrInput and name the setting.
func (s LFDSettings) Validate() error {
	switch {
	case s.PerClass < 1 || s.PerClass > 500:
		return inputf("lfd: -per-class %d, want 1…500", s.PerClass)
	case s.Queries < 0 || s.Queries > 5000:
		return inputf("lfd: -queries %d, want 0…5000", s.Queries)
	case !(s.Noise > 0) || math.IsInf(s.Noise, 0):
		return inputf("lfd: -noise %v, want > 0", s.Noise)
	case !(s.Theta >= 0) || math.IsInf(s.Theta, 0):
		return inputf("lfd: -theta %v, want ≥ 0", s.Theta)
	case s.K < 1 || s.K > 3*s.PerClass:
		return inputf("lfd: -k %d, want 1…%d", s.K, 3*s.PerClass)
	case !(s.Bandwidth >= 0) || math.IsInf(s.Bandwidth, 0):
		return inputf("lfd: -bandwidth %v, want ≥ 0", s.Bandwidth)
	}
	return nil
}

// DrawLFD draws Figure 3 to path.
func DrawLFD(path string, s LFDSettings, width, height int) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	if err := checkSize(width, height); err != nil {
		return "", err
	}
	tr, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: s.PerClass, Noise: s.Noise, Seed: s.Seed})
	if err != nil {
		return "", err
	}
	x := tr.Float64()
	res, err := optlayer.Solve(&optlayer.Problem{N: tr.Len(), Features: x, Dim: 2, Labels: tr.Labels, Theta: []float64{s.Theta}}, nil)
	if err != nil {
		return "", err
	}
	data := LFDData{Train: x, TrainLabels: tr.Labels, M: 3, P: res.P, K: s.K, Bandwidth: s.Bandwidth}
	if s.Queries > 0 {
		q, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: s.Queries, Noise: s.Noise, Seed: s.Seed + 1})
		if err != nil {
			return "", err
		}
		data.Query, data.QueryLabels = q.Float64(), q.Labels
	}
	if err := Save(path, func(w io.Writer) error { return LFDWeights(w, data, width, height) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: LFD of %d points, objective %.4f (certified gap %.1e)", path, tr.Len(), res.Objective, res.RelGap), nil
}

// DrawRegions draws decision-region panels side by side to path.
func DrawRegions(path string, panels []Panel, width, height int) error {
	return Save(path, func(w io.Writer) error { return DecisionRegions(w, panels, width, height) })
}

// EmbeddingPanels are the decision regions of the methods that vote on an
// episode's 2-D embedding: Dr.k-NN, truncated Dr.k-NN, embedding + k-NN and
// kernel smoothing, configured by s (its K capped at the training points).
func EmbeddingPanels(e *Episode, s eval.Settings, classNames []string) ([]Panel, error) {
	if _, err := e.check(); err != nil {
		return nil, err
	}
	if e.D != 2 {
		return nil, inputf("regions: %d-dimensional embeddings; decision regions need d = 2 (train with -set model.dim=2)", e.D)
	}
	if s.K < 1 || s.K > e.N {
		s.K = min(5, e.N)
	}
	base := Panel{Train: e.Train, TrainLabels: e.TrainLabels, Query: e.Query, QueryLabels: e.QueryLabels, M: e.M, P: e.P, Settings: s}
	var panels []Panel
	for _, m := range []struct{ method, title string }{
		{eval.MethodDrKNN, "Dr.k-NN"}, {eval.MethodDrKNNTruncated, "truncated Dr.k-NN"},
		{eval.MethodEmbeddingKNN, "embedding + k-NN"}, {eval.MethodKernelSmoothing, "kernel smoothing"},
	} {
		p := base
		p.Method, p.Title = m.method, m.title
		if m.method != eval.MethodKernelSmoothing {
			p.Title += fmt.Sprintf(", k = %d", s.K)
		}
		panels = append(panels, p)
	}
	panels[0].ClassNames = classNames
	return panels, nil
}

// DrawSweep draws Appendix C for an episode to path (AccuracySweep over
// DefaultKs up to the training points and DefaultBandwidths, relative to
// the median training distance unless absolute) with Dr.k-NN at kRef as
// the reference (the largest k when kRef is out of range).
func DrawSweep(path string, e *Episode, kRef int, absolute bool, width, height int) (string, error) {
	var ks []int
	for _, k := range DefaultKs {
		if k <= e.N {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return "", inputf("sweep: no training points")
	}
	if kRef < 1 || kRef > e.N {
		kRef = ks[len(ks)-1]
	}
	if err := Save(path, func(w io.Writer) error {
		return AccuracySweep(w, e, ks, DefaultBandwidths, kRef, !absolute, width, height)
	}); err != nil {
		return "", err
	}
	acc, err := AccuracyVsK(e, eval.MethodDrKNN, ks)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("k=%d %.3f", k, acc[i])
	}
	return fmt.Sprintf("%s: Dr.k-NN accuracy %s", path, strings.Join(parts, ", ")), nil
}

// DrawCurves draws the training curves of the run folder runDir to path:
// every repeat of an episodes run (repeats/NN/history.json, TrainingCurves)
// or each objective of a transfer run (train/<objective>/history.json,
// ObjectiveCurves). A history file that cannot be read is left out and the
// rest drawn: the figure is written and the error is an *Incomplete naming
// each such file.
func DrawCurves(path, runDir string, width, height int) (string, error) {
	rc, err := ReadRunCurves(runDir)
	if err != nil {
		return "", Input(err)
	}
	draw, what := TrainingCurves, "repeats"
	switch {
	case rc.Transfer:
		draw, what = ObjectiveCurves, "objectives of a transfer run"
	case rc.Fit:
		what = "model of a fit run"
	}
	if err := Save(path, func(w io.Writer) error { return draw(w, rc.Names, rc.Histories, width, height) }); err != nil {
		return "", err
	}
	summary := fmt.Sprintf("%s: training curves of %d %s (%s)", path, len(rc.Histories), what, strings.Join(rc.Names, ", "))
	if len(rc.Skipped) > 0 {
		summary = fmt.Sprintf("%s: training curves of %d of %d %s (%s)", path, len(rc.Histories), rc.Files, what, strings.Join(rc.Names, ", "))
		return summary, &Incomplete{Drawn: summary, Skipped: rc.Skipped}
	}
	return summary, nil
}

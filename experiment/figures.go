package experiment

import (
	"context"
	"fmt"
	"strings"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/figures"
	"github.com/drknn/drknn/predict"
)

// FigureRequest says which figure drknn-figures draws, from what.
type FigureRequest struct {
	Kind          string // "lfd", "regions", "sweep" or "curves"
	Out           string // the figure's file: .png, .svg, .pdf or .eps
	Width, Height int    // pixels

	LFD figures.LFDSettings // lfd: Figure 3

	// regions from a config: the config file and -set overrides; the
	// network of repeat Repeat (0-based) is trained with embedding width
	// d = 2 by the pipeline (RunRepeat), exactly as drknn-train would.
	Config string
	Sets   []string
	Repeat int

	Export   string // regions, sweep: an export folder (…/repeats/NN/export)
	Absolute bool   // sweep: bandwidths in embedding units
	Run      string // curves: a run folder

	Observer Observer // regions -config: the training's events
}

// Figure draws the requested figure and returns a one-line summary. Bad
// requests and unusable inputs give errors that wrap figures.ErrInput (or
// ErrConfig for the config).
func Figure(ctx context.Context, req FigureRequest) (string, error) {
	if req.Out == "" {
		return "", figures.Input(fmt.Errorf("%s: -out is required", req.Kind))
	}
	if err := figures.CheckOut(req.Out); err != nil { // before any work: a missing folder failed at the end
		return "", err
	}
	switch req.Kind {
	case "lfd":
		return figures.DrawLFD(req.Out, req.LFD, req.Width, req.Height)
	case "regions":
		if (req.Config == "") == (req.Export == "") {
			return "", figures.Input(fmt.Errorf("regions: give exactly one of -config and -export"))
		}
		if req.Export != "" {
			if len(req.Sets) > 0 {
				return "", figures.Input(fmt.Errorf("regions: -set applies only with -config"))
			}
			return exportRegions(req)
		}
		return configRegions(ctx, req)
	case "sweep":
		if req.Export == "" {
			return "", figures.Input(fmt.Errorf("sweep: -export is required"))
		}
		e, ep, err := exportEpisode(req.Export)
		if err != nil {
			return "", err
		}
		return figures.DrawSweep(req.Out, ep, e.Settings.K, req.Absolute, req.Width, req.Height)
	case "curves":
		if req.Run == "" {
			return "", figures.Input(fmt.Errorf("curves: -run is required"))
		}
		return figures.DrawCurves(req.Out, req.Run, req.Width, req.Height)
	}
	return "", figures.Input(fmt.Errorf("unknown figure %q: want lfd, regions, sweep or curves", req.Kind))
}

// exportEpisode reads an export folder with its queries.
func exportEpisode(dir string) (*predict.Export, *figures.Episode, error) {
	e, err := predict.Load(dir)
	if err != nil {
		return nil, nil, figures.Input(err)
	}
	q, _, ql, err := e.Queries()
	if err != nil {
		return nil, nil, figures.Input(err)
	}
	return e, &figures.Episode{Train: e.TrainEmb, TrainLabels: e.TrainLabels, N: e.N, D: e.D, M: e.M, P: e.P,
		Query: q, QueryLabels: ql}, nil
}

func exportRegions(req FigureRequest) (string, error) {
	e, ep, err := exportEpisode(req.Export)
	if err != nil {
		return "", err
	}
	panels, err := figures.EmbeddingPanels(ep, eval.Settings{K: e.Settings.K, Tau: e.Settings.Tau, Bandwidth: e.Settings.Bandwidth}, e.ClassNames)
	if err != nil {
		return "", err
	}
	if err := figures.DrawRegions(req.Out, panels, req.Width, req.Height); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: decision regions of %d training and %d query points", req.Out, e.N, len(ep.QueryLabels)), nil
}

func configRegions(ctx context.Context, req FigureRequest) (string, error) {
	if req.Repeat < 0 {
		return "", figures.Input(fmt.Errorf("regions: -repeat %d, want ≥ 0", req.Repeat))
	}
	cfg, err := LoadConfig(req.Config, append(append([]string(nil), req.Sets...), "model.dim=2"))
	if err != nil {
		return "", err
	}
	if err := regionsProtocol(cfg); err != nil {
		return "", fmt.Errorf("%s: %w", req.Config, err)
	}
	panels, rep, acc, err := PlaneRegions(ctx, cfg, req.Repeat, req.Observer)
	if err != nil {
		return "", err
	}
	if err := figures.DrawRegions(req.Out, panels, req.Width, req.Height); err != nil {
		return "", err
	}
	var parts []string
	for _, m := range []string{eval.MethodDrKNN, eval.MethodPCAKNN, eval.MethodSVDKNN, eval.MethodNCAKNN} {
		parts = append(parts, fmt.Sprintf("%s %.3f", m, acc[m]))
	}
	h := rep.History
	risk := "no steps"
	if len(h) > 0 {
		risk = fmt.Sprintf("risk %.3f → %.3f", h[0].Risk, h[len(h)-1].Risk)
	}
	return fmt.Sprintf("%s: %s %d-way %d-shot, %d queries, %d steps (%s); query accuracy in the plane: %s",
		req.Out, cfg.Dataset, cfg.Ways, cfg.Shots, rep.Episode.Query.Len(), len(h), risk, strings.Join(parts, ", ")), nil
}

// PlaneRegions is Figure 5: repeat r of the experiment cfg (whose
// model.dim must be 2) run by the pipeline (RunRepeat, evaluating Dr.k-NN
// only), and the decision regions of Dr.k-NN in the learned plane beside
// those of k-NN after 2-D PCA, SVD and NCA projections of the episode's
// (standardised) samples. It returns the panels, the repeat and the query
// accuracy of each panel: acc["drknn"] is the repeat's Dr.k-NN accuracy,
// the one drknn-train reports for the same config.
func PlaneRegions(ctx context.Context, cfg Config, r int, obs Observer) ([]figures.Panel, *Repeat, map[string]float64, error) {
	if err := regionsProtocol(cfg); err != nil {
		return nil, nil, nil, err
	}
	if cfg.Model.Dim != 2 {
		return nil, nil, nil, figures.Input(fmt.Errorf("regions: model.dim = %d, want 2", cfg.Model.Dim))
	}
	if r >= cfg.Repeats {
		return nil, nil, nil, figures.Input(fmt.Errorf("regions: repeat %d of a config with %d repeats", r, cfg.Repeats))
	}
	d, err := LoadData(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	if cfg, d, err = ForData(cfg, d); err != nil {
		return nil, nil, nil, err
	}
	notify := serial(obs)
	methods := []string{eval.MethodDrKNN}
	notify(Started{Config: cfg, Samples: d.Len(), Shape: d.Shape, Repeats: 1, Steps: cfg.Train.Steps, CVSteps: cfg.cvSteps(), Methods: methods})
	rep, err := RunRepeat(ctx, cfg, d, r, RepeatOptions{Methods: methods, Observer: notify})
	notify(Finished{Err: err})
	if err != nil {
		return nil, nil, nil, err
	}
	ep := rep.Episode
	n, nq := ep.Train.Len(), ep.Query.Len()
	s := eval.Settings{K: cfg.Eval.K}
	acc := map[string]float64{eval.MethodDrKNN: rep.Accuracy[eval.MethodDrKNN]}
	panels := []figures.Panel{{Title: fmt.Sprintf("Dr.k-NN (learned, d = 2), k = %d", s.K), Train: rep.TrainEmb, TrainLabels: ep.TrainLabels,
		Query: rep.QueryEmb, QueryLabels: ep.QueryLabels, M: cfg.Ways, Method: eval.MethodDrKNN, Settings: s, P: rep.LFD.P,
		ClassNames: ep.ClassNames}}
	raw, rawQ := ep.Train.Float64(), ep.Query.Float64()
	for _, m := range []struct{ method, title string }{
		{eval.MethodPCAKNN, "PCA + k-NN"}, {eval.MethodSVDKNN, "SVD + k-NN"}, {eval.MethodNCAKNN, "NCA + k-NN"},
	} {
		t2, q2, err := figures.Project2D(m.method, raw, n, ep.Train.SampleSize(), ep.TrainLabels, cfg.Ways, rawQ, nq, ep.Seed)
		if err != nil {
			return nil, nil, nil, err
		}
		panels = append(panels, figures.Panel{Title: fmt.Sprintf("%s, k = %d", m.title, s.K), Train: t2, TrainLabels: ep.TrainLabels,
			Query: q2, QueryLabels: ep.QueryLabels, M: cfg.Ways, Method: eval.MethodEmbeddingKNN, Settings: s})
		c, err := eval.New(eval.MethodEmbeddingKNN, s, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		if acc[m.method], _, err = eval.Evaluate(c, t2, n, 2, ep.TrainLabels, cfg.Ways, q2, nq, ep.QueryLabels); err != nil {
			return nil, nil, nil, err
		}
	}
	return panels, rep, acc, nil
}

// regionsProtocol refuses configs of the protocols whose runs are not one
// M-way K-shot episode of its own network (transfer, fit): Figure 5 draws
// the plane of such an episode.
func regionsProtocol(cfg Config) error {
	switch cfg.Protocol {
	case ProtocolTransfer, ProtocolFit:
		return configErr(fmt.Errorf("key protocol = %s: regions -config draws the plane of one episode of the episodes protocol, which %s configs do not run; give an episodes config (e.g. mnist)", cfg.Protocol, cfg.Protocol))
	}
	return nil
}

package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
	"github.com/drknn/drknn/train"
)

type repeatOut struct {
	episode EpisodeRecord
	acc     map[string]float64
}

// RepeatSeed is the seed of repeat r (0-based): it draws the episode and
// initialises the network.
func RepeatSeed(cfg Config, r int) int64 { return cfg.Seed + int64(r) }

// methods lists the methods the config evaluates, in table order.
func methods(cfg Config) []string {
	if len(cfg.Eval.Methods) > 0 {
		return cfg.Eval.Methods
	}
	return Methods()
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func trainSettings(cfg Config, theta []float64, seed int64, n int) train.Settings {
	size := cfg.Train.MinisetSize
	if size > n {
		size = n
	}
	return train.Settings{Steps: cfg.Train.Steps, LR: cfg.Train.LR, Minisets: cfg.Train.Minisets,
		MinisetSize: size, Seed: seed,
		Augment: datasets.AugmentSettings{Shift: cfg.Train.Augment.Shift, Flip: cfg.Train.Augment.Flip},
		Ways:    cfg.Ways, LFD: gop.Settings{Metric: cfg.Metric(), Theta: theta,
			Normalize: cfg.Train.ThetaRelative,
			Solver:    optlayer.Settings{Epsilon: cfg.Train.Epsilon, Tol: cfg.Train.Tol}, Workers: 1}}
}

// SolveLFD solves the LFD on embeddings e (n×dim) with the run's metric,
// normalisation and radii: the P* that Dr.k-NN votes with.
func SolveLFD(cfg Config, e []float64, n, dim int, labels []int, theta []float64) (*optlayer.Result, error) {
	c, err := optlayer.Costs(e, n, dim, cfg.Metric())
	if err != nil {
		return nil, err
	}
	if cfg.Train.ThetaRelative {
		if _, err := optlayer.NormalizeCosts(c); err != nil {
			return nil, fmt.Errorf("LFD: %w", err)
		}
	}
	return optlayer.Solve(&optlayer.Problem{N: n, Cost: c, Labels: labels, Theta: theta},
		&optlayer.Settings{Epsilon: cfg.Train.Epsilon, Tol: cfg.Train.Tol})
}

// fitTrain trains a fresh network on (x, y) and returns it.
func fitTrain(cfg Config, shape []int, x []float32, y []int, theta []float64, seed int64,
	ckpt, key string, resume bool, onStep func(train.StepStats)) (*model.Net, *train.Trainer, error) {
	net, err := model.New(cfg.NetConfig(shape), seed)
	if err != nil {
		return nil, nil, err
	}
	tr, err := train.NewTrainer(net, x, y, trainSettings(cfg, theta, seed, len(y)))
	if err != nil {
		return nil, nil, err
	}
	if resume && ckpt != "" {
		if _, err := os.Stat(ckpt); err == nil {
			if err := tr.Resume(ckpt, key); err != nil {
				return nil, nil, err
			}
		}
	}
	every := cfg.Train.CheckpointEvery
	for !tr.Done() {
		st, err := tr.Step()
		if err != nil {
			return nil, nil, err
		}
		if onStep != nil {
			onStep(st)
		}
		if ckpt != "" && (tr.Done() || (every > 0 && st.Step%every == 0)) {
			if err := tr.SaveCheckpoint(ckpt, key); err != nil {
				return nil, nil, err
			}
		}
	}
	return net, tr, nil
}

func runRepeat(cfg Config, d *datasets.Dataset, r int, opts Options, log *syncLogger, prog *progress) (*repeatOut, error) {
	start := time.Now()
	seed := RepeatSeed(cfg, r)
	ep, err := datasets.NewEpisode(d, datasets.EpisodeSettings{Ways: cfg.Ways, Shots: cfg.Shots, Queries: cfg.Queries, Seed: seed})
	if err != nil {
		return nil, err
	}
	rec := EpisodeRecord{Seed: seed, Classes: ep.Classes, TrainIndex: ep.TrainIndex, QueryIndex: ep.QueryIndex, Short: ep.Short}
	for _, c := range ep.Classes {
		rec.ClassNames = append(rec.ClassNames, d.Classes[c])
	}
	trainSet, querySet := d.Subset(ep.TrainIndex), d.Subset(ep.QueryIndex)
	n, nq := len(ep.TrainIndex), len(ep.QueryIndex)
	if rec.Standardize, err = standardize(cfg.Data.Standardize, trainSet, querySet); err != nil {
		return nil, err
	}

	theta, err := chooseTheta(cfg, d.Shape, trainSet.X, ep.TrainLabels, seed, log, r)
	if err != nil {
		return nil, err
	}
	rec.Theta = theta

	var dir, ckpt string
	if opts.OutDir != "" {
		dir = filepath.Join(opts.OutDir, "repeats", fmt.Sprintf("%02d", r+1))
		if err := os.MkdirAll(filepath.Join(dir, "export"), 0o755); err != nil {
			return nil, err
		}
		ckpt = filepath.Join(dir, "checkpoint.bin")
	}
	key := fmt.Sprintf("%s|%d-way|%d-shot|seed %d|theta %v|%+v|%+v", cfg.Dataset, cfg.Ways, cfg.Shots, seed, theta, cfg.Model, cfg.Train)
	net, tr, err := fitTrain(cfg, d.Shape, trainSet.X, ep.TrainLabels, theta, seed, ckpt, key, opts.Resume,
		func(st train.StepStats) { prog.step(r, st) })
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	if h := tr.History(); len(h) > 0 {
		rec.FinalRisk = h[len(h)-1].Risk
		log.printf("repeat %d: %d steps, risk %.4f → %.4f, last mean certified gap %.2e", r+1, len(h), h[0].Risk, rec.FinalRisk, h[len(h)-1].MeanRelGap)
	}

	dim := net.Dim()
	et, err := net.Embed(trainSet.X, n)
	if err != nil {
		return nil, err
	}
	eq, err := net.Embed(querySet.X, nq)
	if err != nil {
		return nil, err
	}
	lfd, err := SolveLFD(cfg, et, n, dim, ep.TrainLabels, theta)
	if err != nil {
		return nil, fmt.Errorf("LFD on the training set: %w", err)
	}
	rec.LFDRelGap = lfd.RelGap

	out := &repeatOut{acc: map[string]float64{}}
	es := eval.Settings{K: cfg.Eval.K, Tau: cfg.Eval.Tau, Bandwidth: cfg.Eval.Bandwidth, Workers: 1}
	rawTrain, rawQuery := toF64(trainSet.X), toF64(querySet.X)
	raw := d.SampleSize()
	for _, m := range methods(cfg) {
		if eval.IsFewShot(m) {
			acc, err := fewShotAccuracy(cfg, m, d.Shape, trainSet.X, ep.TrainLabels, querySet.X, ep.QueryLabels, seed)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m, err)
			}
			out.acc[m] = acc
			continue
		}
		c, err := eval.New(m, es, lfd.P)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		var acc float64
		if eval.OnRawPixels(m) {
			acc, _, err = eval.Evaluate(c, rawTrain, n, raw, ep.TrainLabels, cfg.Ways, rawQuery, nq, ep.QueryLabels)
		} else {
			acc, _, err = eval.Evaluate(c, et, n, dim, ep.TrainLabels, cfg.Ways, eq, nq, ep.QueryLabels)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		out.acc[m] = acc
	}
	log.printf("repeat %d: drknn %.4f, embedding_knn %.4f (%d queries%s)", r+1, out.acc["drknn"], out.acc["embedding_knn"], nq, map[bool]string{true: ", all that remained", false: ""}[ep.Short])

	if dir != "" {
		if err := writeJSON(filepath.Join(dir, "history.json"), tr.History()); err != nil {
			return nil, err
		}
		if err := export(filepath.Join(dir, "export"), cfg, net, et, ep.TrainLabels, lfd, eq, ep.QueryLabels, n, nq, dim, theta, rec); err != nil {
			return nil, err
		}
	}
	rec.Seconds = time.Since(start).Seconds()
	out.episode = rec
	return out, nil
}

// standardize applies data.standardize to an episode's samples in place:
// "sample" rescales each sample on its own; "channel" uses the mean and
// standard deviation of each channel (or feature) over the training
// samples alone, for training and query samples alike.
func standardize(mode string, trainSet, querySet *datasets.Dataset) (*StandardizeRecord, error) {
	switch mode {
	case "", "none":
		return nil, nil
	case "sample":
		if err := datasets.StandardizeSamples(trainSet.X, trainSet.Len(), trainSet.SampleSize()); err != nil {
			return nil, err
		}
		if err := datasets.StandardizeSamples(querySet.X, querySet.Len(), querySet.SampleSize()); err != nil {
			return nil, err
		}
		return &StandardizeRecord{Mode: mode}, nil
	case "channel":
		mean, sd, err := datasets.ChannelStats(trainSet.X, trainSet.Len(), trainSet.Shape)
		if err != nil {
			return nil, err
		}
		if err := datasets.StandardizeChannels(trainSet.X, trainSet.Len(), trainSet.Shape, mean, sd); err != nil {
			return nil, err
		}
		if err := datasets.StandardizeChannels(querySet.X, querySet.Len(), querySet.Shape, mean, sd); err != nil {
			return nil, err
		}
		return &StandardizeRecord{Mode: mode, Mean: mean, SD: sd}, nil
	}
	return nil, fmt.Errorf("data.standardize = %q: want none, sample or channel", mode)
}

func int64s(x []int) []int64 {
	out := make([]int64, len(x))
	for i, v := range x {
		out[i] = int64(v)
	}
	return out
}

// Manifest describes an export folder.
type Manifest struct {
	Format        int           `json:"format"`
	Config        Config        `json:"config"`
	Model         model.Config  `json:"model"`
	Theta         []float64     `json:"theta"`
	ThetaRelative bool          `json:"theta_relative"`
	CostScale     string        `json:"cost_scale"`
	K             int           `json:"k"`
	Metric        string        `json:"metric"`
	Ways          int           `json:"ways"`
	ClassNames    []string      `json:"class_names"`
	Episode       EpisodeRecord `json:"episode"`
	LFD           struct {
		Objective  float64 `json:"objective"`
		LowerBound float64 `json:"lower_bound"`
		RelGap     float64 `json:"rel_gap"`
	} `json:"lfd"`
	Files    map[string]string `json:"files"`
	Versions map[string]string `json:"versions"`
}

// ExportFormat is the version of the export folder layout.
const ExportFormat = 1

func export(dir string, cfg Config, net *model.Net, et []float64, yt []int, lfd *optlayer.Result,
	eq []float64, yq []int, n, nq, dim int, theta []float64, rec EpisodeRecord) error {
	files := map[string]string{
		"train_embeddings": "train_embeddings.npy", "train_labels": "train_labels.npy",
		"lfd_weights": "lfd_weights.npy", "query_embeddings": "query_embeddings.npy",
		"query_labels": "query_labels.npy", "model": "model.bin",
	}
	steps := []func() error{
		func() error { return npy.WriteFloat64(filepath.Join(dir, files["train_embeddings"]), et, n, dim) },
		func() error { return npy.WriteInt64(filepath.Join(dir, files["train_labels"]), int64s(yt)) },
		func() error { return npy.WriteFloat64(filepath.Join(dir, files["lfd_weights"]), lfd.P, lfd.M, n) },
		func() error { return npy.WriteFloat64(filepath.Join(dir, files["query_embeddings"]), eq, nq, dim) },
		func() error { return npy.WriteInt64(filepath.Join(dir, files["query_labels"]), int64s(yq)) },
		func() error { return net.Save(filepath.Join(dir, files["model"])) },
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	m := Manifest{Format: ExportFormat, Config: cfg, Model: net.Config(), Theta: theta, ThetaRelative: cfg.Train.ThetaRelative,
		K: cfg.Eval.K, Metric: cfg.Train.Metric, Ways: cfg.Ways, ClassNames: rec.ClassNames, Episode: rec, Files: files,
		Versions: versions()}
	if cfg.Train.ThetaRelative {
		m.CostScale = "costs divided by their mean over the n×n training cost matrix before solving"
	} else {
		m.CostScale = "absolute"
	}
	m.LFD.Objective, m.LFD.LowerBound, m.LFD.RelGap = lfd.Objective, lfd.LowerBound, lfd.RelGap
	return writeJSON(filepath.Join(dir, "manifest.json"), m)
}

// fewShotAccuracy trains a network baseline with the same body, the same
// M·K samples and the same seed as Dr.k-NN and classifies the same queries.
func fewShotAccuracy(cfg Config, method string, shape []int, x []float32, y []int, q []float32, yq []int, seed int64) (float64, error) {
	steps := cfg.Eval.FewShotSteps
	if steps == 0 {
		steps = cfg.Train.Steps
	}
	s := eval.DefaultFewShotSettings()
	s.Model, s.Steps, s.LR, s.Seed, s.Workers = cfg.NetConfig(shape), steps, cfg.Train.LR, seed, 1
	f, err := eval.TrainFewShot(method, s, shape, x, y, cfg.Ways)
	if err != nil {
		return 0, err
	}
	pred, err := f.Predict(q, len(yq))
	if err != nil {
		return 0, err
	}
	return eval.Accuracy(pred, yq)
}

// Package experiment runs a whole Dr.k-NN experiment from a configuration:
// for each repeat it draws an M-way K-shot episode, trains the embedding
// with Algorithm 1 on the episode's M·K samples only, solves the LFD on the
// whole training set, evaluates Dr.k-NN and the baselines on the episode's
// queries, and exports embeddings, labels, LFD weights and model weights.
// It sits between the commands and the train/eval packages.
package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
	"golang.org/x/sync/errgroup"
)

// Options control where and how a run reports.
type Options struct {
	OutDir   string   // run folder (results.json, repeats/NN/…); "" writes nothing
	Resume   bool     // continue from checkpoints in OutDir
	Observer Observer // progress and log events (nil: none); see Started
}

// MethodResult is one method's accuracy over the repeats, and (protocol
// episodes) its log-loss and expected calibration error on each repeat's
// queries (eval.Score: log-loss clipped at 1e-15, ECE over 15 bins).
type MethodResult struct {
	Mean      float64   `json:"mean"`
	CI95      float64   `json:"ci95"` // half-width of the 95% t-interval; null with one repeat
	PerRepeat []float64 `json:"per_repeat"`
	LogLoss   *Metric   `json:"log_loss,omitempty"`
	ECE       *Metric   `json:"ece,omitempty"`
}

// Metric is a score's mean over the repeats with its 95% t-interval
// half-width (NaN, written null, with one repeat) and its value on each
// repeat.
type Metric struct {
	Mean      float64
	CI95      float64
	PerRepeat []float64
}

// newMetric summarises per-repeat values.
func newMetric(xs []float64) (*Metric, error) {
	s, err := eval.Summarize(xs)
	if err != nil {
		return nil, err
	}
	return &Metric{Mean: s.Mean, CI95: s.HalfWidth, PerRepeat: xs}, nil
}

// MarshalJSON writes a NaN half-width (one repeat) as null.
func (m Metric) MarshalJSON() ([]byte, error) {
	return json.Marshal(ciJSON(m.Mean, m.CI95, m.PerRepeat))
}

// ciJSON is the JSON form of a mean, a half-width (null when NaN) and the
// per-repeat values.
func ciJSON(mean, ci float64, per []float64) any {
	type plain struct {
		Mean      float64   `json:"mean"`
		CI95      *float64  `json:"ci95"`
		PerRepeat []float64 `json:"per_repeat"`
	}
	p := plain{Mean: mean, PerRepeat: per}
	if !math.IsNaN(ci) {
		p.CI95 = &ci
	}
	return p
}

// UnmarshalJSON reads a null half-width as NaN.
func (m *Metric) UnmarshalJSON(b []byte) error {
	var p struct {
		Mean      float64   `json:"mean"`
		CI95      *float64  `json:"ci95"`
		PerRepeat []float64 `json:"per_repeat"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	m.Mean, m.CI95, m.PerRepeat = p.Mean, math.NaN(), p.PerRepeat
	if p.CI95 != nil {
		m.CI95 = *p.CI95
	}
	return nil
}

// EpisodeRecord says exactly which samples a repeat used, as indices into
// the data set in the reader's natural order.
type EpisodeRecord struct {
	Seed       int64     `json:"seed"`
	Classes    []int     `json:"classes"`
	ClassNames []string  `json:"class_names"`
	TrainIndex []int     `json:"train_index"`
	QueryIndex []int     `json:"query_index"`
	Short      bool      `json:"short"` // fewer queries remained than requested: all were used
	Theta      []float64 `json:"theta"`
	FinalRisk  float64   `json:"final_risk"`
	LFDRelGap  float64   `json:"lfd_rel_gap"`
	Seconds    float64   `json:"seconds"`
	// Impute records the fill of missing values (data.missing mean or mode)
	// from the training samples: a new sample's missing value j becomes
	// values[j] before standardisation.
	Impute *predict.Impute `json:"impute,omitempty"`
	// Standardize records data.standardize when it is on: the mode and,
	// for "channel", the training statistics every input was mapped with
	// (x − mean[c]) / sd[c] — a new sample must be mapped the same way
	// before it is embedded with this episode's network.
	Standardize *predict.Standardize `json:"standardize,omitempty"`
	LabelNoise  *LabelNoise          `json:"label_noise,omitempty"` // data.label_noise: flipped support labels and the truth
	ThetaLOO    *ThetaChoice         `json:"theta_loo,omitempty"`   // eval.theta_loo: the test-time radius and its evidence
}

// Results is results.json.
type Results struct {
	Dataset  string                  `json:"dataset"`
	Protocol string                  `json:"protocol,omitempty"` // "" = episodes
	Ways     int                     `json:"ways"`
	Shots    int                     `json:"shots"`
	Repeats  int                     `json:"repeats"`
	Seed     int64                   `json:"seed"`
	Methods  map[string]MethodResult `json:"methods"`
	Episodes []EpisodeRecord         `json:"episodes"`
	Config   Config                  `json:"config"`
	Seconds  float64                 `json:"seconds"`
	// Fit is protocol fit's report (nil for episodes): Methods then holds
	// the test-part accuracy, or the cross-validation folds' mean, 95%
	// interval and per-fold accuracies (in per_repeat).
	Fit *FitSummary `json:"fit,omitempty"`
	// Transfer is the transfer protocol's split, training runs and
	// test-time settings (protocol transfer only).
	Transfer *TransferInfo `json:"transfer,omitempty"`
}

// LoadData reads the configured data set. Your own data (imagefolder,
// csv, npy) is read from data_dir, which must be given: it never falls back
// to the shared data root.
func LoadData(cfg Config) (*datasets.Dataset, error) {
	dir := cfg.DataDir
	if datasets.OwnData(cfg.Dataset) && strings.TrimSpace(dir) == "" {
		return nil, configErr(fmt.Errorf("key data_dir: dataset %s reads your own files: give the folder (csv: the .csv file) in data_dir", cfg.Dataset))
	}
	if dir == "" && !datasets.Synthetic(cfg.Dataset) {
		dir = filepath.Join(datadir.Dir(), datasets.Subdir(cfg.Dataset))
	}
	opts := datasets.Options{Grey: cfg.Data.Grey, Size: cfg.Data.Size, Seed: cfg.Seed, PerClass: cfg.Data.Synthetic, OneHot: cfg.Data.OneHot,
		Features: cfg.Data.Features, Label: cfg.Data.Label, Missing: cfg.Data.Missing}
	switch cfg.Dataset {
	case "miniimagenet":
		opts.Split = cmp.Or(cfg.Data.Split, "test")
	case "mnist", "imagefolder", "omniglot":
		opts.Split = cfg.Data.Split
	}
	if cfg.Dataset == "omniglot" && cfg.Data.Omniglot == "alphabets" {
		opts.Omniglot.ByAlphabet = true
	}
	return datasets.Load(cfg.Dataset, dir, opts)
}

// Run runs the experiment: it reads the data set, runs the repeats in
// parallel on cfg.Workers goroutines (RunRepeat; every repeat is a function
// of the config and its number alone, so results do not depend on the
// worker count) and writes OutDir/results.json. When ctx is cancelled the
// repeats stop after their current training step, keep their checkpoints,
// and Run returns an error wrapping ctx's without writing results.json.
func Run(ctx context.Context, cfg Config, opts Options) (*Results, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Protocol == ProtocolTransfer {
		return runTransfer(ctx, cfg, opts, start)
	}
	d, err := LoadData(cfg)
	if err != nil {
		return nil, err
	}
	return runData(ctx, cfg, d, opts, start)
}

// RunData is Run on a data set already in memory (the table reuses one
// load across its cells).
func RunData(ctx context.Context, cfg Config, d *datasets.Dataset, opts Options) (*Results, error) {
	if cfg.Protocol == ProtocolTransfer {
		return runTransferData(ctx, cfg, d, TransferOptions{Options: opts}, time.Now())
	}
	return runData(ctx, cfg, d, opts, time.Now())
}

func runData(ctx context.Context, cfg Config, d *datasets.Dataset, opts Options, start time.Time) (res *Results, err error) {
	if cfg.Protocol == ProtocolFit {
		return runFit(ctx, cfg, d, opts, start)
	}
	notify := serial(opts.Observer)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg, d, err = ForData(cfg, d); err != nil {
		return nil, err
	}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("run folder: %w", err)
		}
	}
	notify(Started{Dir: opts.OutDir, Config: cfg, Samples: d.Len(), Shape: d.Shape, Repeats: cfg.Repeats,
		Steps: cfg.fitSteps(), CVSteps: cfg.cvSteps(), Methods: cfg.methods()})
	defer func() { notify(Finished{Results: res, Err: err}) }()
	notify(Message{fmt.Sprintf("drknn-train: %s %d-way %d-shot, %d repeats, seed %d, %d samples of shape %v, model %s", cfg.Dataset, cfg.Ways, cfg.Shots, cfg.Repeats, cfg.Seed, d.Len(), d.Shape, cfg.Model.Kind)})
	if s := d.Report.Summary(); s != "" {
		notify(Message{fmt.Sprintf("%s: %s", cfg.Dataset, s)})
	}

	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	reps := make([]*Repeat, cfg.Repeats)
	errs := make([]error, cfg.Repeats)
	// Repeats run in parallel, each on one goroutine and writing only its
	// own slot; the first failure stops the others (their errors are then
	// cancellations, so the reported error is the real one).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for r := 0; r < cfg.Repeats; r++ {
		g.Go(func() error {
			if errs[r] = gctx.Err(); errs[r] != nil {
				return errs[r] // another repeat failed, or the run was stopped
			}
			o := RepeatOptions{Resume: opts.Resume, Observer: notify}
			if opts.OutDir != "" {
				o.Dir = filepath.Join(opts.OutDir, "repeats", fmt.Sprintf("%02d", r+1))
			}
			reps[r], errs[r] = RunRepeat(gctx, cfg, d, r, o)
			return errs[r]
		})
	}
	g.Wait()
	if err := firstError(ctx, errs); err != nil {
		return nil, err
	}
	res = &Results{Dataset: cfg.Dataset, Ways: cfg.Ways, Shots: cfg.Shots, Repeats: cfg.Repeats, Seed: cfg.Seed,
		Methods: map[string]MethodResult{}, Config: cfg}
	for _, rep := range reps {
		res.Episodes = append(res.Episodes, rep.Record)
	}
	for _, m := range cfg.methods() {
		var accs, ll, ece []float64
		for _, rep := range reps {
			accs = append(accs, rep.Accuracy[m])
			ll = append(ll, rep.Scores[m].LogLoss)
			ece = append(ece, rep.Scores[m].ECE)
		}
		s, err := eval.Summarize(accs)
		if err != nil {
			return nil, err
		}
		mr := MethodResult{Mean: s.Mean, CI95: s.HalfWidth, PerRepeat: accs}
		if mr.LogLoss, err = newMetric(ll); err != nil {
			return nil, fmt.Errorf("%s log-loss: %w", m, err)
		}
		if mr.ECE, err = newMetric(ece); err != nil {
			return nil, fmt.Errorf("%s ECE: %w", m, err)
		}
		res.Methods[m] = mr
	}
	res.Seconds = time.Since(start).Seconds()
	keys := make([]string, 0, len(res.Methods))
	for m := range res.Methods {
		keys = append(keys, m)
	}
	sort.Strings(keys)
	for _, m := range keys {
		r := res.Methods[m]
		notify(Message{fmt.Sprintf("%-18s %.4f ± %.4f", m, r.Mean, r.CI95)})
	}
	if opts.OutDir != "" {
		if err := writeJSON(filepath.Join(opts.OutDir, "results.json"), res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// MethodOrder lists the methods of the results in table order: those of
// Methods() first, then any others alphabetically.
func (r *Results) MethodOrder() []string {
	var out []string
	for _, m := range Methods() {
		if _, ok := r.Methods[m]; ok {
			out = append(out, m)
		}
	}
	var extra []string
	for m := range r.Methods {
		if !slices.Contains(out, m) {
			extra = append(extra, m)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// firstError returns the error of the lowest-numbered repeat that failed
// other than by cancellation, as "repeat N: …"; else ctx's cancellation.
func firstError(ctx context.Context, errs []error) error {
	for r, err := range errs {
		if err != nil && !errStopped(err) {
			return fmt.Errorf("repeat %d: %w", r+1, err)
		}
	}
	for r, err := range errs {
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", err)
			}
			return fmt.Errorf("repeat %d: %w", r+1, err)
		}
	}
	return nil
}

// cvSteps is the number of training steps of one repeat's cross-validation.
func (c *Config) cvSteps() int {
	if len(c.Train.ThetaGrid) == 0 {
		return 0
	}
	folds := c.Train.CVFolds
	if n := c.Ways * c.Shots; folds == 0 || folds > n {
		folds = n
	}
	return len(c.Train.ThetaGrid) * folds * c.fitSteps()
}

// fitSteps is the number of training steps of one network: none for
// model.kind identity (nothing to train).
func (c *Config) fitSteps() int {
	if c.Model.Kind == string(model.Identity) {
		return 0
	}
	return c.Train.Steps
}

// MarshalJSON writes NaN confidence half-widths (one repeat) as null.
func (m MethodResult) MarshalJSON() ([]byte, error) {
	type plain struct {
		Mean      float64   `json:"mean"`
		CI95      *float64  `json:"ci95"`
		PerRepeat []float64 `json:"per_repeat"`
		LogLoss   *Metric   `json:"log_loss,omitempty"`
		ECE       *Metric   `json:"ece,omitempty"`
	}
	p := plain{Mean: m.Mean, PerRepeat: m.PerRepeat, LogLoss: m.LogLoss, ECE: m.ECE}
	if !math.IsNaN(m.CI95) {
		p.CI95 = &m.CI95
	}
	return json.Marshal(p)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}

// ForData fits the config to the data set d it will run on: model.kind ""
// becomes cnn for images and mlp for feature rows; images are flattened
// into feature rows for an MLP; a CNN on feature rows or augmentation
// without images is an error. The returned config is the one recorded.
func ForData(cfg Config, d *datasets.Dataset) (Config, *datasets.Dataset, error) {
	cfg.Model.Kind = cfg.ModelKind(d.Shape)
	a := cfg.Train.Augment
	switch {
	case cfg.Model.Kind == "cnn" && len(d.Shape) != 3:
		return cfg, nil, configErr(fmt.Errorf("model.kind = cnn needs images, but %s has samples of shape %v (use model.kind: mlp, or leave it empty)", cfg.Dataset, d.Shape))
	case (a.Shift > 0 || a.Flip) && cfg.Model.Kind != "cnn":
		return cfg, nil, configErr(fmt.Errorf("key train.augment = {shift: %d, flip: %v}: augmentation transforms images; model.kind is %s", a.Shift, a.Flip, cfg.Model.Kind))
	case cfg.Model.Kind == "mlp" && len(d.Shape) != 1:
		c := *d
		c.Shape = []int{d.SampleSize()}
		return cfg, &c, nil
	}
	return cfg, d, nil
}

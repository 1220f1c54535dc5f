// Package experiment runs a whole Dr.k-NN experiment from a configuration:
// for each repeat it draws an M-way K-shot episode, trains the embedding
// with Algorithm 1 on the episode's M·K samples only, solves the LFD on the
// whole training set, evaluates Dr.k-NN and the baselines on the episode's
// queries, and exports embeddings, labels, LFD weights and model weights.
// It sits between the commands and the train/eval packages.
package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/datadir"
)

// Options control where and how a run reports.
type Options struct {
	OutDir   string    // run folder (results.json, log, repeats/NN/…); "" writes nothing
	Resume   bool      // continue from checkpoints in OutDir
	Progress io.Writer // progress bar (nil: none)
	Log      io.Writer // extra log destination besides OutDir/train.log (nil: none)
}

// MethodResult is one method's accuracy over the repeats.
type MethodResult struct {
	Mean      float64   `json:"mean"`
	CI95      float64   `json:"ci95"` // half-width of the 95% t-interval; null with one repeat
	PerRepeat []float64 `json:"per_repeat"`
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
	// Standardize records data.standardize when it is on: the mode and,
	// for "channel", the training statistics every input was mapped with
	// (x − mean[c]) / sd[c] — a new sample must be mapped the same way
	// before it is embedded with this episode's network.
	Standardize *StandardizeRecord `json:"standardize,omitempty"`
}

// StandardizeRecord is the input standardisation of an episode.
type StandardizeRecord struct {
	Mode string    `json:"mode"`
	Mean []float64 `json:"mean,omitempty"`
	SD   []float64 `json:"sd,omitempty"`
}

// Results is results.json.
type Results struct {
	Dataset  string                  `json:"dataset"`
	Ways     int                     `json:"ways"`
	Shots    int                     `json:"shots"`
	Repeats  int                     `json:"repeats"`
	Seed     int64                   `json:"seed"`
	Methods  map[string]MethodResult `json:"methods"`
	Episodes []EpisodeRecord         `json:"episodes"`
	Config   Config                  `json:"config"`
	Seconds  float64                 `json:"seconds"`
}

// LoadData reads the configured data set.
func LoadData(cfg Config) (*datasets.Dataset, error) {
	dir := cfg.DataDir
	if dir == "" && !datasets.Synthetic(cfg.Dataset) {
		dir = filepath.Join(datadir.Dir(), datasets.Subdir(cfg.Dataset))
	}
	opts := datasets.Options{Grey: cfg.Data.Grey, Size: cfg.Data.Size, Seed: cfg.Seed, PerClass: cfg.Data.Synthetic, OneHot: cfg.Data.OneHot}
	if cfg.Dataset == "miniimagenet" {
		opts.Split = cfg.Data.Split
	}
	if cfg.Dataset == "omniglot" && cfg.Data.Omniglot == "alphabets" {
		opts.Omniglot.ByAlphabet = true
	}
	d, err := datasets.Load(cfg.Dataset, dir, opts)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Run runs the experiment and writes OutDir/results.json and the exports.
func Run(cfg Config, opts Options) (*Results, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := LoadData(cfg)
	if err != nil {
		return nil, err
	}
	return RunData(cfg, d, opts, start)
}

// RunData is Run on a data set already in memory (the table reuses one
// load across its cells). start is when the run's clock started.
func RunData(cfg Config, d *datasets.Dataset, opts Options, start time.Time) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Model.Kind == "cnn" && len(d.Shape) != 3 {
		return nil, fmt.Errorf("model.kind = cnn needs images, but %s has samples of shape %v (use model.kind: mlp)", cfg.Dataset, d.Shape)
	}
	if cfg.Model.Kind == "mlp" && len(d.Shape) != 1 {
		d = flatten(d)
	}
	var logw io.Writer = io.Discard
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("run folder: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(opts.OutDir, "train.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("run folder: %w", err)
		}
		defer f.Close()
		logw = f
	}
	if opts.Log != nil {
		logw = io.MultiWriter(logw, opts.Log)
	}
	log := &syncLogger{w: logw}
	log.printf("drknn-train: %s %d-way %d-shot, %d repeats, seed %d, %d samples of shape %v", cfg.Dataset, cfg.Ways, cfg.Shots, cfg.Repeats, cfg.Seed, d.Len(), d.Shape)

	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	prog := newProgress(opts.Progress, cfg.Repeats*max(cfg.Train.Steps, 1), cfg.Repeats)
	defer prog.finish()

	outs := make([]*repeatOut, cfg.Repeats)
	errs := make([]error, cfg.Repeats)
	// Repeats run in parallel, each on one goroutine; every repeat is a
	// function of (config, repeat number) alone, so results do not depend on
	// the worker count.
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for r := 0; r < cfg.Repeats; r++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(r int) {
			defer wg.Done()
			defer func() { <-sem }()
			outs[r], errs[r] = runRepeat(cfg, d, r, opts, log, prog)
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("repeat %d: %w", r+1, err)
		}
	}
	res := &Results{Dataset: cfg.Dataset, Ways: cfg.Ways, Shots: cfg.Shots, Repeats: cfg.Repeats, Seed: cfg.Seed,
		Methods: map[string]MethodResult{}, Config: cfg}
	names := map[string]bool{}
	for _, o := range outs {
		res.Episodes = append(res.Episodes, o.episode)
		for m := range o.acc {
			names[m] = true
		}
	}
	for m := range names {
		var accs []float64
		for _, o := range outs {
			accs = append(accs, o.acc[m])
		}
		s, err := eval.Summarize(accs)
		if err != nil {
			return nil, err
		}
		res.Methods[m] = MethodResult{Mean: s.Mean, CI95: s.HalfWidth, PerRepeat: accs}
	}
	res.Seconds = time.Since(start).Seconds()
	keys := make([]string, 0, len(res.Methods))
	for m := range res.Methods {
		keys = append(keys, m)
	}
	sort.Strings(keys)
	for _, m := range keys {
		r := res.Methods[m]
		log.printf("%-18s %.4f ± %.4f", m, r.Mean, r.CI95)
	}
	if opts.OutDir != "" {
		if err := writeJSON(filepath.Join(opts.OutDir, "results.json"), res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// MarshalJSON writes NaN confidence half-widths (one repeat) as null.
func (m MethodResult) MarshalJSON() ([]byte, error) {
	type plain struct {
		Mean      float64   `json:"mean"`
		CI95      *float64  `json:"ci95"`
		PerRepeat []float64 `json:"per_repeat"`
	}
	p := plain{Mean: m.Mean, PerRepeat: m.PerRepeat}
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

func flatten(d *datasets.Dataset) *datasets.Dataset {
	c := *d
	c.Shape = []int{d.SampleSize()}
	return &c
}

type syncLogger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *syncLogger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

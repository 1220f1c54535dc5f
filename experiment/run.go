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
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/internal/oneline"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
	"golang.org/x/sync/errgroup"
)

// Options control where and how a run reports.
type Options struct {
	OutDir   string   // run folder (results.json, repeats/NN/…); "" writes nothing
	Resume   bool     // continue from checkpoints in OutDir
	Observer Observer // progress and log events (nil: none); see Started
	// KeepCheckpoints keeps the repeats' checkpoint.bin files once the run
	// is finished. By default they are deleted after results.json is
	// written: each repeat's export holds its trained weights, and a
	// checkpoint (weights, Adam moments, history) only serves -resume of an
	// unfinished run. An interrupted or failed repeat keeps its checkpoint.
	KeepCheckpoints bool

	tempsRemoved int // stale temporaries removed on start (logged)
}

// removeTemps removes the stale temporaries of OutDir (RemoveTemps) and
// records how many for the run's log. Run and RunData call it on entry.
func (o *Options) removeTemps() error {
	if o.OutDir == "" {
		return nil
	}
	n, err := RemoveTemps(o.OutDir)
	o.tempsRemoved = n
	return err
}

// MethodResult is one method's accuracy over the repeats, and (protocol
// episodes) its log-loss and expected calibration error on each repeat's
// queries (eval.Score: log-loss clipped at 1e-15, ECE over 15 bins).
//
// A method that failed on a repeat (e.g. a network baseline whose solve is
// singular) has NaN there in PerRepeat (null in results.json, also in
// log_loss and ece), its repeat numbers in Failed and the first failure's
// message in Error; Mean and CI95 are over the repeats it completed, NaN
// (null) when it completed none. A repeat that failed as a whole is NaN
// for every method.
type MethodResult struct {
	Mean      float64   `json:"mean"`
	CI95      float64   `json:"ci95"` // half-width of the 95% t-interval; null with one repeat
	PerRepeat []float64 `json:"per_repeat"`
	LogLoss   *Metric   `json:"log_loss,omitempty"`
	ECE       *Metric   `json:"ece,omitempty"`
	Error     string    `json:"error,omitempty"`  // the first failure: "repeat N: message"
	Failed    []int     `json:"failed,omitempty"` // 1-based repeats where the method has no accuracy
}

// Completed returns the accuracies of the repeats the method completed.
func (m MethodResult) Completed() []float64 { return finite(m.PerRepeat) }

// finite returns the values of xs that are not NaN.
func finite(xs []float64) []float64 {
	var out []float64
	for _, a := range xs {
		if !math.IsNaN(a) {
			out = append(out, a)
		}
	}
	return out
}

// Metric is a score's mean over the repeats with its 95% t-interval
// half-width (NaN, written null, with one repeat) and its value on each
// repeat (NaN, written null, where the method failed).
type Metric struct {
	Mean      float64
	CI95      float64
	PerRepeat []float64
}

// newMetric summarises per-repeat values over those that are not NaN
// (nil when none is).
func newMetric(xs []float64) (*Metric, error) {
	done := finite(xs)
	if len(done) == 0 {
		return nil, nil
	}
	s, err := eval.Summarize(done)
	if err != nil {
		return nil, err
	}
	return &Metric{Mean: s.Mean, CI95: s.HalfWidth, PerRepeat: xs}, nil
}

// MarshalJSON writes NaN values as null.
func (m Metric) MarshalJSON() ([]byte, error) {
	return json.Marshal(methodJSON{Mean: nullNaN(m.Mean), CI95: nullNaN(m.CI95), PerRepeat: nullNaNs(m.PerRepeat)})
}

// UnmarshalJSON reads null values as NaN.
func (m *Metric) UnmarshalJSON(b []byte) error {
	var p methodJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = Metric{Mean: nanNull(p.Mean), CI95: nanNull(p.CI95), PerRepeat: nanNulls(p.PerRepeat)}
	return nil
}

// EpisodeRecord says exactly which samples a repeat used, as indices into
// the data set in the reader's natural order.
type EpisodeRecord struct {
	Seed int64 `json:"seed"`
	// Error is why the repeat failed as a whole (it has no accuracy for
	// any method); MethodErrors why single methods failed on it.
	Error        string            `json:"error,omitempty"`
	MethodErrors map[string]string `json:"method_errors,omitempty"`
	Classes      []int             `json:"classes"`
	ClassNames   []string          `json:"class_names"`
	TrainIndex   []int             `json:"train_index"`
	QueryIndex   []int             `json:"query_index"`
	Short        bool              `json:"short"` // fewer queries remained than requested: all were used
	Theta        []float64         `json:"theta"`
	FinalRisk    float64           `json:"final_risk"`
	LFDRelGap    float64           `json:"lfd_rel_gap"`
	Seconds      float64           `json:"seconds"`
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
	// Errors lists every failure of the run, one line each ("repeat 3:
	// metaoptnet: …", "repeat 5: …" for a whole repeat): the run went on
	// without them, and drknn-train exits with status 3.
	Errors []string `json:"errors,omitempty"`
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
	if err := opts.removeTemps(); err != nil {
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
	if err := opts.removeTemps(); err != nil {
		return nil, err
	}
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
	defer func() {
		if err != nil && ctx.Err() == nil {
			notify(Message{failedText(err)}) // before Finished; a stop's line is logged below
		}
	}()
	notify(Message{fmt.Sprintf("drknn-train: %s %d-way %d-shot, %d repeats, seed %d, %d samples of shape %v, model %s", cfg.Dataset, cfg.Ways, cfg.Shots, cfg.Repeats, cfg.Seed, d.Len(), d.Shape, cfg.Model.Kind)})
	if s := d.Report.Summary(); s != "" {
		notify(Message{fmt.Sprintf("%s: %s", cfg.Dataset, s)})
	}
	if opts.tempsRemoved > 0 {
		notify(Message{fmt.Sprintf("removed %d stale temporary file(s) of an interrupted write under %s", opts.tempsRemoved, opts.OutDir)})
	}

	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	reps := make([]*Repeat, cfg.Repeats)
	errs := make([]error, cfg.Repeats)
	// Repeats run in parallel, each on one goroutine and writing only its
	// own slot. A failing repeat is recorded and the others go on; only a
	// cancelled ctx (Ctrl-C) stops them all.
	var g errgroup.Group
	g.SetLimit(workers)
	for r := 0; r < cfg.Repeats; r++ {
		g.Go(func() error {
			if errs[r] = ctx.Err(); errs[r] != nil {
				return nil // the run was stopped
			}
			o := RepeatOptions{Resume: opts.Resume, Observer: notify}
			if opts.OutDir != "" {
				o.Dir = filepath.Join(opts.OutDir, "repeats", fmt.Sprintf("%02d", r+1))
			}
			reps[r], errs[r] = RunRepeat(ctx, cfg, d, r, o)
			switch {
			case errs[r] == nil:
			case errStopped(errs[r]):
				ck := ""
				if o.Dir != "" {
					ck = filepath.Join(o.Dir, "checkpoint.bin")
				}
				notify(Message{stoppedText(fmt.Sprintf("repeat %d", r+1), errs[r], ck)})
			default:
				notify(Message{fmt.Sprintf("repeat %d failed: %s", r+1, oneline.Err(errs[r]))})
			}
			return nil
		})
	}
	g.Wait()
	if ctx.Err() != nil {
		err := firstError(ctx, errs)
		notify(Message{interruptedText(err, opts.OutDir)})
		return nil, err
	}
	if failed := slices.IndexFunc(reps, func(rep *Repeat) bool { return rep != nil }); failed < 0 {
		return nil, &RepeatsFailed{Errs: errs} // every repeat failed: nothing to record
	}
	res = &Results{Dataset: cfg.Dataset, Ways: cfg.Ways, Shots: cfg.Shots, Repeats: cfg.Repeats, Seed: cfg.Seed,
		Methods: map[string]MethodResult{}, Config: cfg}
	for r, rep := range reps {
		if rep == nil {
			msg := fmt.Sprintf("repeat %d: %v", r+1, errs[r])
			res.Episodes = append(res.Episodes, EpisodeRecord{Seed: RepeatSeed(cfg, r), Error: errs[r].Error()})
			res.Errors = append(res.Errors, msg)
			continue
		}
		res.Episodes = append(res.Episodes, rep.Record)
		for _, m := range slices.Sorted(maps.Keys(rep.MethodErr)) {
			res.Errors = append(res.Errors, fmt.Sprintf("repeat %d: %s: %s", r+1, m, rep.MethodErr[m]))
		}
	}
	for _, m := range cfg.methods() {
		if res.Methods[m], err = summarizeMethod(m, reps, errs); err != nil {
			return nil, err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	keys := make([]string, 0, len(res.Methods))
	for m := range res.Methods {
		keys = append(keys, m)
	}
	sort.Strings(keys)
	for _, m := range keys {
		r := res.Methods[m]
		line := fmt.Sprintf("%-18s %s", m, meanCIText(r.Mean, r.CI95))
		if r.Error != "" {
			line += fmt.Sprintf(" (failed in %d of %d repeats: %s)", len(r.Failed), cfg.Repeats, r.Error)
		}
		notify(Message{line})
	}
	if opts.OutDir != "" {
		if err := writeJSON(filepath.Join(opts.OutDir, "results.json"), res); err != nil {
			return nil, err
		}
		if !opts.KeepCheckpoints {
			for r, rep := range reps {
				if rep == nil {
					continue
				}
				p := filepath.Join(opts.OutDir, "repeats", fmt.Sprintf("%02d", r+1), "checkpoint.bin")
				for _, f := range []string{p, settingsPath(p), cvPath(p)} { // settings.json: the checkpoint's (Checkpointing.Settings); cv.json: its ϑ's cross-validation (cvProgress)
					if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return nil, err
					}
				}
			}
		}
	}
	return res, nil
}

// summarizeMethod is method m's result over the repeats: NaN and the
// error where a repeat failed as a whole (errs[r]) or the method failed on
// it; the mean and interval over the rest.
func summarizeMethod(m string, reps []*Repeat, errs []error) (MethodResult, error) {
	res := MethodResult{Mean: math.NaN(), CI95: math.NaN(), PerRepeat: make([]float64, len(reps))}
	ll, ece := make([]float64, len(reps)), make([]float64, len(reps))
	for r, rep := range reps {
		why := ""
		switch {
		case rep == nil:
			why = oneline.Err(errs[r])
		case rep.MethodErr[m] != "":
			why = rep.MethodErr[m]
		default:
			if a, ok := rep.Accuracy[m]; ok {
				res.PerRepeat[r] = a
				ll[r], ece[r] = rep.Scores[m].LogLoss, rep.Scores[m].ECE
				continue
			}
			why = "not evaluated"
		}
		res.PerRepeat[r], ll[r], ece[r] = math.NaN(), math.NaN(), math.NaN()
		res.Failed = append(res.Failed, r+1)
		if res.Error == "" {
			res.Error = fmt.Sprintf("repeat %d: %s", r+1, why)
		}
	}
	if done := res.Completed(); len(done) > 0 {
		s, err := eval.Summarize(done)
		if err != nil {
			return res, err
		}
		res.Mean, res.CI95 = s.Mean, s.HalfWidth
	}
	var err error
	if res.LogLoss, err = newMetric(ll); err != nil {
		return res, fmt.Errorf("%s log-loss: %w", m, err)
	}
	if res.ECE, err = newMetric(ece); err != nil {
		return res, fmt.Errorf("%s ECE: %w", m, err)
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
// other than by cancellation, as "repeat N: …"; else ctx's cancellation —
// also when every repeat finished before it noticed (a network baseline's
// training does not watch ctx): the run was interrupted all the same, and a
// nil error would pass for a finished run with no results.
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
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	return nil
}

// interruptedText is the log line of a run stopped (Ctrl-C) with err:
// where its checkpoints are kept (InterruptedNote) when it has a folder.
func interruptedText(err error, dir string) string {
	msg := oneline.Err(err)
	if !strings.HasPrefix(msg, "interrupted") {
		msg = "interrupted: " + msg
	}
	if dir == "" {
		return msg
	}
	return msg + "; " + InterruptedNote(dir)
}

// RepeatsFailed is the error of a run whose every repeat failed: it has
// nothing to record (no results.json). Errs holds each repeat's error, in
// repeat order. Its message gives each repeat's cause once — repeats that
// failed alike share it ("all 3 repeats failed: repeats 1–2: …; repeat 3:
// …"); a run of one repeat reads "repeat 1: …".
type RepeatsFailed struct {
	Errs []error
}

func (e *RepeatsFailed) Error() string {
	if len(e.Errs) == 1 {
		return "repeat 1: " + oneline.Err(e.Errs[0])
	}
	var causes []string
	by := map[string][]int{}
	for r, err := range e.Errs {
		c := oneline.Err(err)
		if by[c] == nil {
			causes = append(causes, c)
		}
		by[c] = append(by[c], r+1)
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = repeatList(by[c]) + ": " + c
	}
	return fmt.Sprintf("all %d repeats failed: %s", len(e.Errs), strings.Join(parts, "; "))
}

// Unwrap gives errors.Is and errors.As every repeat's error.
func (e *RepeatsFailed) Unwrap() []error { return e.Errs }

// repeatList names the repeats rs (1-based, ascending): "repeat 3",
// "repeats 1–4, 7".
func repeatList(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("repeat %d", rs[0])
	}
	var runs []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		switch {
		case j == i:
			runs = append(runs, strconv.Itoa(rs[i]))
		case j == i+1:
			runs = append(runs, strconv.Itoa(rs[i]), strconv.Itoa(rs[j]))
		default:
			runs = append(runs, fmt.Sprintf("%d–%d", rs[i], rs[j]))
		}
		i = j + 1
	}
	return "repeats " + strings.Join(runs, ", ")
}

// failedText is the log line of a run that failed with err (not a stop):
// one line, as the terminal's, so that train.log says why the run ended
// without results.json. A run whose every repeat failed has logged each
// repeat's cause in that repeat's line ("repeat 2 failed: …"): its own
// line says only that the run failed, and why in those terms.
func failedText(err error) string {
	var rf *RepeatsFailed
	if errors.As(err, &rf) {
		if len(rf.Errs) == 1 {
			return "failed: the run failed (its one repeat failed; the cause is logged above)"
		}
		return fmt.Sprintf("failed: the run failed (all %d repeats failed; each repeat's cause is logged above)", len(rf.Errs))
	}
	return "failed: " + oneline.Err(err)
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

// methodJSON is MethodResult (and Metric) on disk: NaN (no value) is null.
type methodJSON struct {
	Mean      *float64   `json:"mean"`
	CI95      *float64   `json:"ci95"`
	PerRepeat []*float64 `json:"per_repeat"`
	LogLoss   *Metric    `json:"log_loss,omitempty"`
	ECE       *Metric    `json:"ece,omitempty"`
	Error     string     `json:"error,omitempty"`
	Failed    []int      `json:"failed,omitempty"`
}

func nullNaN(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

func nanNull(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func nullNaNs(xs []float64) []*float64 {
	if xs == nil {
		return nil
	}
	out := make([]*float64, len(xs))
	for i, v := range xs {
		out[i] = nullNaN(v)
	}
	return out
}

func nanNulls(ps []*float64) []float64 {
	if ps == nil {
		return nil
	}
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = nanNull(p)
	}
	return out
}

// MarshalJSON writes NaN values as null: the confidence half-width of one
// repeat, the accuracy of a repeat where the method failed, the mean of a
// method that completed no repeat.
func (m MethodResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(methodJSON{Mean: nullNaN(m.Mean), CI95: nullNaN(m.CI95), PerRepeat: nullNaNs(m.PerRepeat),
		LogLoss: m.LogLoss, ECE: m.ECE, Error: m.Error, Failed: m.Failed})
}

// UnmarshalJSON reads null values as NaN.
func (m *MethodResult) UnmarshalJSON(b []byte) error {
	var p methodJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = MethodResult{Mean: nanNull(p.Mean), CI95: nanNull(p.CI95), PerRepeat: nanNulls(p.PerRepeat),
		LogLoss: p.LogLoss, ECE: p.ECE, Error: p.Error, Failed: p.Failed}
	return nil
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
// into feature rows for an MLP (their shape kept in ImageShape); an image
// network (cnn, conv4) on feature rows is an error, and so is augmentation
// for a model that does not take images (mlp, identity). The returned
// config is the one recorded.
func ForData(cfg Config, d *datasets.Dataset) (Config, *datasets.Dataset, error) {
	cfg.Model.Kind = cfg.ModelKind(d.Shape)
	a := cfg.Train.Augment
	imageNet := cfg.Model.Kind == "cnn" || cfg.Model.Kind == "conv4"
	switch {
	case imageNet && len(d.Shape) != 3:
		return cfg, nil, configErr(fmt.Errorf("model.kind = %s needs images, but %s has samples of shape %v (use model.kind: mlp, or leave it empty)", cfg.Model.Kind, cfg.Dataset, d.Shape))
	case (a.Shift > 0 || a.Flip) && !imageNet:
		return cfg, nil, configErr(fmt.Errorf("key train.augment = {shift: %d, flip: %v}: augmentation transforms the training images of an image network (model.kind cnn or conv4); model.kind is %s", a.Shift, a.Flip, cfg.Model.Kind))
	case cfg.Model.Kind == "mlp" && len(d.Shape) != 1:
		c := *d
		c.Shape = []int{d.SampleSize()}
		if len(d.Shape) == 3 {
			c.ImageShape = slices.Clone(d.Shape) // recorded: the model still takes images
		}
		return cfg, &c, nil
	}
	return cfg, d, nil
}

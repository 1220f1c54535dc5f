package experiment

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/oneline"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
	"github.com/drknn/drknn/predict"
	"github.com/drknn/drknn/train"
	"gorgonia.org/tensor"
)

// The pipeline: one repeat end to end, built from parts every command calls.
//
//	NewEpisode → ChooseTheta → Fit (Algorithm 1) → Embed → SolveLFD →
//	EvaluateMethod for each method → Export
//
// RunRepeat chains them; Run runs the repeats of a config and the table runs
// Run for each cell; drknn-figures draws what RunRepeat returns.

// Episode is a repeat's data: the M-way K-shot draw and its samples after
// the input standardisation (data.standardize).
type Episode struct {
	*datasets.Episode
	Repeat      int   // 0-based
	Seed        int64 // draws the episode and initialises the networks
	Train       *datasets.Dataset
	Query       *datasets.Dataset
	ClassNames  []string             // of Classes
	Impute      *predict.Impute      // the fill of missing values (data.missing mean or mode); nil when off
	Standardize *predict.Standardize // nil when off
	LabelNoise  *LabelNoise          // nil when data.label_noise is off; TrainLabels are then the noisy labels
}

// RepeatSeed is the seed of repeat r (0-based): it draws the episode and
// initialises the network.
func RepeatSeed(cfg Config, r int) int64 { return cfg.Seed + int64(r) }

// NewEpisode draws repeat r's episode from d, fills its missing values
// (data.missing) and standardises its samples (copies; d is not changed),
// both with the training samples' statistics alone. With protocol
// paper-lung the queries are then redrawn from all rows of the episode's
// classes (paperLungQueries), and with data.label_noise the support labels
// are flipped (FlipLabels; the true ones are kept in LabelNoise).
func NewEpisode(cfg Config, d *datasets.Dataset, r int) (*Episode, error) {
	seed := RepeatSeed(cfg, r)
	ep, err := datasets.NewEpisode(d, datasets.EpisodeSettings{Ways: cfg.Ways, Shots: cfg.Shots, Queries: cfg.Queries, Seed: seed})
	if err != nil {
		return nil, err
	}
	if cfg.Protocol == ProtocolPaperLung {
		paperLungQueries(d, ep, cfg.Queries, seed)
	}
	var noise *LabelNoise
	if cfg.Data.LabelNoise > 0 {
		noisy, flipped, err := FlipLabels(ep.TrainLabels, cfg.Ways, cfg.Data.LabelNoise, seed)
		if err != nil {
			return nil, err
		}
		noise = &LabelNoise{Rate: cfg.Data.LabelNoise, Flipped: flipped, TrueLabels: ep.TrainLabels}
		ep.TrainLabels = noisy
	}
	e, err := newEpisode(cfg, d, ep, r, seed)
	if err != nil {
		return nil, err
	}
	e.LabelNoise = noise
	return e, nil
}

// newEpisode makes the Episode of a draw: the training and query samples
// of d, missing values filled and inputs standardised with the training
// samples' statistics.
func newEpisode(cfg Config, d *datasets.Dataset, ep *datasets.Episode, r int, seed int64) (*Episode, error) {
	e := &Episode{Episode: ep, Repeat: r, Seed: seed}
	var err error
	if e.Impute, d, err = impute(cfg.Data.Missing, d, ep.TrainIndex); err != nil {
		return nil, err
	}
	e.Train, e.Query = d.Subset(ep.TrainIndex), d.Subset(ep.QueryIndex)
	for _, c := range ep.Classes {
		e.ClassNames = append(e.ClassNames, d.Classes[c])
	}
	if e.Standardize, err = standardize(cfg.Data.Standardize, e.Train, e.Query, ep.TrainLabels, len(ep.Classes)); err != nil {
		return nil, err
	}
	return e, nil
}

// impute fills the missing values of d (data.missing mean or mode) with the
// statistics of the training samples trainIdx alone (datasets.Impute) and
// returns the fill to record, or d as it is when it has no missing values.
func impute(mode string, d *datasets.Dataset, trainIdx []int) (*predict.Impute, *datasets.Dataset, error) {
	if mode != datasets.ImputeMean && mode != datasets.ImputeMode {
		return nil, d, nil
	}
	filled, err := datasets.Impute(d, trainIdx, mode)
	if err != nil {
		return nil, nil, err
	}
	fill, err := datasets.ImputeValues(d, trainIdx, mode)
	if err != nil {
		return nil, nil, err
	}
	rec := &predict.Impute{Mode: mode, Values: make([]float64, len(fill))}
	for j, v := range fill {
		if v != v { // Impute has failed on such a column already
			return nil, nil, fmt.Errorf("missing values: feature %d has no value among the %d training samples", j, len(trainIdx))
		}
		rec.Values[j] = float64(v)
	}
	return rec, filled, nil
}

// standardize applies data.standardize to an episode's samples in place:
// "sample" rescales each sample on its own; "channel" uses the mean and
// standard deviation of each channel (or feature) over the training
// samples alone, for training and query samples alike; "relevance"
// multiplies each feature (value position) by its relevance weight
// computed from the training samples and their labels (0…m−1) alone.
func standardize(mode string, trainSet, querySet *datasets.Dataset, labels []int, m int) (*predict.Standardize, error) {
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
		return &predict.Standardize{Mode: mode}, nil
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
		return &predict.Standardize{Mode: mode, Mean: mean, SD: sd}, nil
	case "relevance":
		w, err := datasets.RelevanceWeights(trainSet.X, trainSet.Len(), trainSet.SampleSize(), labels, m)
		if err != nil {
			return nil, err
		}
		if err := datasets.ScaleValues(trainSet.X, trainSet.Len(), w); err != nil {
			return nil, err
		}
		if err := datasets.ScaleValues(querySet.X, querySet.Len(), w); err != nil {
			return nil, err
		}
		return &predict.Standardize{Mode: mode, Weight: w}, nil
	}
	return nil, fmt.Errorf("data.standardize = %q: want none, sample, channel or relevance", mode)
}

// TrainSettings is what Algorithm 1 needs from the config, for n training
// samples, radii theta and a seed.
// With protocol fit, miniset_size 0 means FitMinisetSize, and a step
// embeds only its mini-sets (train.Settings.Gather) when they hold fewer
// rows than the n samples.
func (c *Config) TrainSettings(theta []float64, seed int64, n int) train.Settings {
	size := min(c.Train.MinisetSize, n)
	gather := false
	if c.Protocol == ProtocolFit {
		if size == 0 {
			size = FitMinisetSize(n, c.Ways)
		}
		gather = c.Train.Minisets*size < n
	}
	return train.Settings{Steps: c.Train.Steps, LR: c.Train.LR, Minisets: c.Train.Minisets,
		MinisetSize: size, Gather: gather, Seed: seed, Ways: c.Ways,
		Augment: datasets.AugmentSettings{Shift: c.Train.Augment.Shift, Flip: c.Train.Augment.Flip},
		LFD: gop.Settings{Metric: c.Metric(), Theta: theta, Normalize: c.Train.ThetaRelative,
			Solver: c.solverSettings(), Workers: 1}}
}

func (c *Config) solverSettings() optlayer.Settings {
	return optlayer.Settings{Epsilon: c.Train.Epsilon, Tol: c.Train.Tol}
}

// Checkpointing says where Fit saves and restores its state.
type Checkpointing struct {
	Path   string // checkpoint file ("" = none)
	Key    string // identifies the run; a checkpoint with another key is refused
	Resume bool   // continue from Path when it exists
	// Every is the number of steps between checkpoints, and one at the
	// end; 0 (train.checkpoint_every's default) is automatic: a checkpoint
	// whenever the training since the last one took CheckpointCostRatio
	// times as long as writing one (AutoCheckpointDue), so checkpoints
	// cost at most 1/CheckpointCostRatio of the training time and a kill
	// loses at most that much training. Ctrl-C always saves.
	Every int
	// Settings (optional) are what Key holds, as a value that marshals to
	// JSON: written to settings.json beside Path with the first checkpoint,
	// so that a resume whose key differs names the keys that changed
	// (train.lr 0.01 there, 0.02 now) instead of printing the two keys.
	// Covers says, for a checkpoint without settings.json (written before
	// it existed), what the key covers.
	Settings any
	Covers   string
	// Resumed (optional) is called once when Fit continues from Path's
	// checkpoint, with the number of steps it holds, before any further
	// step: the caller reports it (TrainingResumed, the run's log), since
	// those steps are not run again and onStep never sees them.
	Resumed func(step int)
}

// runSettings are the settings the checkpoint key of an episodes repeat or
// a fit run holds (Checkpointing.Settings).
type runSettings struct {
	Dataset  string      `json:"dataset"`
	Ways     int         `json:"ways,omitempty"`  // episodes
	Shots    int         `json:"shots,omitempty"` // episodes
	Seed     int64       `json:"seed"`
	Theta    []float64   `json:"theta"`
	Model    ModelConfig `json:"model"`
	Train    TrainConfig `json:"train"` // keyTrain's
	Protocol string      `json:"protocol"`
	Data     DataConfig  `json:"data"`
	// TrainingData is the samples trained on: their number, shape and
	// digest (dataDigest).
	TrainingData string `json:"training_data"`
	// Eval, with train.theta_grid, holds the eval keys that the choice of
	// ϑ by cross-validation depends on besides the others (thetaFor).
	Eval *thetaEval `json:"eval,omitempty"`
}

// thetaEval is runSettings.Eval.
type thetaEval struct {
	K        int `json:"k"`
	LFDBlock int `json:"lfd_block"`
}

// thetaFor returns the radii of the training whose checkpoint is at path
// (ChooseTheta) and completes s, the settings that checkpoint's key
// holds, with them. With train.theta_grid, a -resume (resume) reuses the ϑ
// a stopped run chose, read from the settings.json beside its checkpoint,
// when every setting the choice depends on is the same, instead of
// training the cross-validation fits again: they keep no checkpoint and ϑ
// is all they leave (the checkpoint's key, which holds ϑ, then checks the
// rest). Their steps are reported as restored (TrainingResumed with CV)
// and logged as reused by who ("repeat 2", "fit").
func thetaFor(ctx context.Context, cfg Config, ep *Episode, notify Observer, who string, r int, path string, resume bool, s *runSettings) ([]float64, error) {
	if len(cfg.Train.ThetaGrid) > 0 {
		s.Eval = &thetaEval{K: cfg.Eval.K, LFDBlock: cfg.Eval.LFDBlock}
		if theta, ok := resumedTheta(resume, path, *s, cfg.Train.ThetaGrid); ok {
			steps := cfg.cvSteps()
			notify(TrainingResumed{Repeat: r, CV: true, Step: steps, Steps: steps})
			notify(Message{fmt.Sprintf("%s: ϑ = %g chosen by cross-validation before the stop, reused from %s (its %d steps not run again)",
				who, theta[0], settingsPath(path), steps)})
			s.Theta = theta
			return theta, nil
		}
	}
	var cv *cvProgress
	if len(cfg.Train.ThetaGrid) > 0 && path != "" {
		cv = &cvProgress{path: cvPath(path), Settings: *s}
		cv.Settings.Theta = nil
		if resume {
			cv.Fits = resumedFits(cv.path, cv.Settings)
		}
	}
	theta, err := chooseTheta(ctx, cfg, ep, notify, who, cv)
	s.Theta = theta
	return theta, err
}

// cvProgress is cv.json beside a repeat's (or a fit run's) checkpoint: the
// cross-validation fits of train.theta_grid finished so far, written after
// each, so that a -resume after a stop during the cross-validation does
// not train them again. They are reused only when every setting the
// choice depends on (Settings: the run's, without ϑ) is the same; a fit is
// deterministic given them, so a reused fold counts what training it
// again would count. Removed with the checkpoint.
type cvProgress struct {
	path     string
	Settings runSettings `json:"settings"`
	Fits     []cvFit     `json:"fits"`
}

// cvFit is one finished cross-validation fit: radius, fold and the
// held-out points it classified correctly of those it classified.
type cvFit struct {
	Theta   float64 `json:"theta"`
	Fold    int     `json:"fold"`
	Correct int     `json:"correct"`
	Total   int     `json:"total"`
}

// cvPath is the cv.json beside the checkpoint at path.
func cvPath(checkpoint string) string {
	return filepath.Join(filepath.Dir(checkpoint), "cv.json")
}

// resumedFits are the fits the cv.json at path records when its settings
// are want (none when it is missing, unreadable or another run's).
func resumedFits(path string, want runSettings) []cvFit {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var had cvProgress
	var got struct {
		Settings map[string]any `json:"settings"`
	}
	if json.Unmarshal(b, &had) != nil || json.Unmarshal(b, &got) != nil || got.Settings == nil || jsonDiff(got.Settings, want) != "" {
		return nil
	}
	var fits []cvFit
	for _, x := range had.Fits {
		if x.Total > 0 && x.Correct >= 0 && x.Correct <= x.Total {
			fits = append(fits, x)
		}
	}
	return fits
}

// done returns the recorded fit of radius theta and fold f.
func (c *cvProgress) done(theta float64, f int) (cvFit, bool) {
	if c == nil {
		return cvFit{}, false
	}
	for _, x := range c.Fits {
		if x.Theta == theta && x.Fold == f {
			return x, true
		}
	}
	return cvFit{}, false
}

// add records a finished fit and writes the file.
func (c *cvProgress) add(x cvFit) error {
	if c == nil {
		return nil
	}
	c.Fits = append(c.Fits, x)
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	return writeJSON(c.path, c)
}

// resumedTheta is the ϑ chosen by cross-validation that the settings.json
// beside the checkpoint at path records, when a -resume may reuse it: the
// checkpoint is there, the ϑ is one of grid, and every other setting is
// want's.
func resumedTheta(resume bool, path string, want runSettings, grid []float64) ([]float64, bool) {
	if !resume || path == "" {
		return nil, false
	}
	if _, err := os.Stat(path); err != nil {
		return nil, false
	}
	b, err := os.ReadFile(settingsPath(path))
	if err != nil {
		return nil, false
	}
	var had runSettings
	var got map[string]any
	if json.Unmarshal(b, &had) != nil || json.Unmarshal(b, &got) != nil || len(had.Theta) != 1 || !slices.Contains(grid, had.Theta[0]) {
		return nil, false
	}
	want.Theta = had.Theta
	if jsonDiff(got, want) != "" {
		return nil, false
	}
	return had.Theta, true
}

// runCovers is what the checkpoint key of an episodes repeat or a fit run
// covers, for a checkpoint without settings.json.
const runCovers = "dataset, ways, shots, seed, the radii, model, train, protocol, data and the training samples"

// CheckpointCostRatio is the automatic checkpoint period in units of a
// checkpoint's write time: 50, i.e. checkpoints cost ≤ 2% of training.
const CheckpointCostRatio = 50

// AutoCheckpointDue reports whether an automatic checkpoint is due after
// sinceLast of training without one, when a checkpoint takes cost to write.
func AutoCheckpointDue(sinceLast, cost time.Duration) bool {
	return sinceLast >= CheckpointCostRatio*cost
}

// checkpointCostEstimate is the write time assumed before the first
// checkpoint of a network is timed: 20 ms plus its weights and two Adam
// moments at 150 MB/s (measured: MNIST's 60 MB checkpoint 0.42 s wall with
// its fsync, synthetic's 2.6 MB 0.06 s, on a loaded 2-core machine).
func checkpointCostEstimate(net *model.Net) time.Duration {
	width := 8
	if net.Dtype() == tensor.Float32 {
		width = 4
	}
	bytes := 3 * float64(width) * float64(net.NumParams())
	return 20*time.Millisecond + time.Duration(bytes/150e6*float64(time.Second))
}

// Fit trains a fresh network (initialised from seed) with Algorithm 1 on
// the samples x of the given shape with labels y, and returns it with the
// history of its steps. onStep (may be nil) sees every step. When ctx is
// cancelled Fit stops after the current step, saves a checkpoint (when it
// has one) and returns an error wrapping ctx's.
//
// keep, when not nil, saves the finished training's checkpoint: the last
// automatic checkpoint (checkpoint_every: 0) may be steps behind, or none
// was written, and writing one at every training's end would cost each
// repeat a checkpoint's write for nothing. The caller calls keep when it
// is stopped after Fit returned (Ctrl-C during the evaluation), so that a
// -resume does not train again.
func Fit(ctx context.Context, cfg Config, shape []int, x []float32, y []int, theta []float64, seed int64,
	ck Checkpointing, onStep func(train.StepStats)) (net *model.Net, hist []train.StepStats, keep func() error, err error) {
	net, err = model.New(cfg.NetConfig(shape), seed)
	if err != nil {
		return nil, nil, nil, err
	}
	if net.NumParams() == 0 { // model.kind identity: the input is the embedding
		return net, nil, nil, nil
	}
	tr, err := train.NewTrainer(net, x, y, cfg.TrainSettings(theta, seed, len(y)))
	if err != nil {
		return nil, nil, nil, err
	}
	defer tr.Close()
	wroteSettings := false
	writeSettings := func() error {
		if ck.Settings != nil && !wroteSettings {
			if err := writeJSON(settingsPath(ck.Path), ck.Settings); err != nil {
				return err
			}
			wroteSettings = true
		}
		return nil
	}
	if ck.Resume && ck.Path != "" {
		if _, err := os.Stat(ck.Path); err == nil {
			if err := tr.Resume(ck.Path, ck.Key); err != nil {
				if errors.Is(err, train.ErrCheckpointMismatch) {
					// a run folder of another config: exit 2, as a bad config
					if ck.Settings != nil {
						err = checkpointMismatch(ck.Path, ck.Settings, ck.Covers)
					} else {
						err = configErr(err)
					}
				}
				return nil, nil, nil, err
			}
			// the key matched: a checkpoint from before settings.json
			// gets one now, even when it is finished and never saved again
			if err := writeSettings(); err != nil {
				return nil, nil, nil, err
			}
			if ck.Resumed != nil {
				ck.Resumed(tr.StepsDone())
			}
		}
	}
	save := func() error {
		if err := writeSettings(); err != nil {
			return err
		}
		// a state the last step left non-finite is not written: the
		// step's divergence, as one found by the next step's run
		return divergedErr(tr.SaveCheckpoint(ck.Path, ck.Key), cfg.Train.Steps, cfg.Train.LR)
	}
	saved := tr.StepsDone()
	cost, last := checkpointCostEstimate(net), time.Now()
	for !tr.Done() {
		if err := ctx.Err(); err != nil {
			if ck.Path != "" && tr.StepsDone() > saved {
				if err := save(); err != nil {
					return nil, nil, nil, err
				}
			}
			return nil, nil, nil, fmt.Errorf("stopped after step %d of %d: %w", tr.StepsDone(), cfg.Train.Steps, context.Cause(ctx))
		}
		st, err := tr.Step()
		if err != nil {
			return nil, nil, nil, divergedErr(err, cfg.Train.Steps, cfg.Train.LR)
		}
		if onStep != nil {
			onStep(st)
		}
		due := ck.Every > 0 && (tr.Done() || st.Step%ck.Every == 0)
		if ck.Every == 0 {
			due = AutoCheckpointDue(time.Since(last), cost)
		}
		if ck.Path != "" && due {
			t0 := time.Now()
			if err := save(); err != nil {
				return nil, nil, nil, err
			}
			cost, last, saved = time.Since(t0), time.Now(), tr.StepsDone()
		}
	}
	if ck.Path != "" && tr.StepsDone() > saved {
		keep = save // the trainer's weights, Adam state and history outlive Close
	}
	return net, tr.History(), keep, nil
}

// keepTraining saves the finished training's checkpoint through keep (from
// Fit; nil: nothing to save) for a run stopped after its training, and
// returns stop, joined with the save's error if it failed.
func keepTraining(keep func() error, stop error) error {
	if keep == nil {
		return stop
	}
	if err := keep(); err != nil {
		return errors.Join(stop, fmt.Errorf("saving the finished training's checkpoint: %w", err))
	}
	return stop
}

// SolveLFD solves the LFD on embeddings e (n×dim) with the run's metric,
// normalisation (optlayer.NormalizeCosts, as in training) and radii: the P*
// that Dr.k-NN votes with.
//
// A training set larger than eval.lfd_block (protocol fit) is solved in
// class-stratified random blocks of at most that many points
// (solveLFDBlocks): the whole-set LFD's cost grows as n².
func SolveLFD(cfg Config, e []float64, n, dim int, labels []int, theta []float64) (*optlayer.Result, error) {
	if b := cfg.Eval.LFDBlock; b > 0 && n > b {
		return solveLFDBlocks(cfg, e, n, dim, labels, theta)
	}
	return solveLFD(cfg, e, n, dim, labels, theta, nil)
}

// solveLFD is SolveLFD with an optional warm start.
func solveLFD(cfg Config, e []float64, n, dim int, labels []int, theta []float64, warm *optlayer.Dual) (*optlayer.Result, error) {
	c, err := optlayer.Costs(e, n, dim, cfg.Metric())
	if err != nil {
		return nil, err
	}
	if cfg.Train.ThetaRelative {
		if _, err := optlayer.NormalizeCosts(c); err != nil {
			return nil, fmt.Errorf("LFD: %w", err)
		}
	}
	s := cfg.solverSettings()
	s.Warm = warm
	return optlayer.Solve(&optlayer.Problem{N: n, Cost: c, Labels: labels, Theta: theta}, &s)
}

// Repeat is one repeat of an experiment, end to end: its episode, the
// radii, the trained network and its history, the embeddings, the LFD on
// the training set and every method's query accuracy.
type Repeat struct {
	Episode  *Episode
	Theta    []float64
	Net      *model.Net
	History  []train.StepStats
	TrainEmb []float64 // n×Dim, the episode's training samples
	QueryEmb []float64 // nq×Dim, its queries
	Dim      int
	LFD      *optlayer.Result
	ThetaLOO *ThetaChoice     // eval.theta_loo's choice (nil when off)
	LFDLOO   *optlayer.Result // the LFD at ThetaLOO.Theta, what drknn_loo votes with
	Accuracy map[string]float64
	Scores   map[string]eval.Scores // accuracy (= Accuracy), log-loss and ECE of each method
	// MethodErr holds the methods that failed on this repeat and why
	// (they have no Accuracy or Scores); the repeat goes on with the others.
	MethodErr map[string]string
	Record    EpisodeRecord
}

// RepeatOptions control RunRepeat.
type RepeatOptions struct {
	Dir      string   // the repeat's folder: checkpoint.bin, history.json, export/ ("" writes nothing)
	Resume   bool     // continue from Dir's checkpoint
	Methods  []string // methods to evaluate (nil: the config's eval.methods, or all)
	Observer Observer // must be safe for concurrent use when repeats run in parallel
}

// failHook, when set (tests only), is called at the start of repeat r
// (method "") and before each of its methods: an error it returns is that
// repeat's or method's failure.
var failHook func(r int, method string) error

// RunRepeat runs repeat r of the experiment cfg on the data set d: the one
// function every command's experiment goes through. When ctx is cancelled
// it stops after the current training step, keeping the checkpoint.
func RunRepeat(ctx context.Context, cfg Config, d *datasets.Dataset, r int, o RepeatOptions) (*Repeat, error) {
	start := time.Now()
	notify := o.Observer
	if notify == nil {
		notify = func(Event) {}
	}
	if failHook != nil {
		if err := failHook(r, ""); err != nil {
			return nil, err
		}
	}
	ep, err := NewEpisode(cfg, d, r)
	if err != nil {
		return nil, err
	}
	rep := &Repeat{Episode: ep, Accuracy: map[string]float64{}, Scores: map[string]eval.Scores{}, MethodErr: map[string]string{}}
	rep.Record = EpisodeRecord{Seed: ep.Seed, Classes: ep.Classes, ClassNames: ep.ClassNames, TrainIndex: ep.TrainIndex,
		QueryIndex: ep.QueryIndex, Short: ep.Short, Impute: ep.Impute, Standardize: ep.Standardize, LabelNoise: ep.LabelNoise}
	digest := dataDigest(ep.Train, ep.TrainLabels)
	settings := runSettings{Dataset: cfg.Dataset, Ways: cfg.Ways, Shots: cfg.Shots, Seed: ep.Seed, Model: cfg.Model,
		Train: keyTrain(cfg.Train), Protocol: cfg.Protocol, Data: cfg.Data, TrainingData: digest}
	ck := Checkpointing{Resume: o.Resume, Every: cfg.Train.CheckpointEvery, Covers: runCovers}
	if o.Dir != "" {
		ck.Path = filepath.Join(o.Dir, "checkpoint.bin")
	}
	if rep.Theta, err = thetaFor(ctx, cfg, ep, notify, fmt.Sprintf("repeat %d", r+1), r, ck.Path, o.Resume, &settings); err != nil {
		return nil, err
	}
	rep.Record.Theta = rep.Theta
	ck.Key = fmt.Sprintf("%s|%d-way|%d-shot|seed %d|theta %v|%+v|%+v|%s", cfg.Dataset, cfg.Ways, cfg.Shots, ep.Seed, rep.Theta, cfg.Model, keyTrain(cfg.Train), dataKey(cfg, digest))
	ck.Settings = settings
	if o.Dir != "" {
		if err := os.MkdirAll(filepath.Join(o.Dir, "export"), 0o755); err != nil {
			return nil, err
		}
	}
	ck.Resumed = func(step int) {
		notify(TrainingResumed{Repeat: r, Step: step, Steps: cfg.Train.Steps})
		notify(Message{resumedText(fmt.Sprintf("repeat %d", r+1), step, cfg.Train.Steps, ck.Path)})
	}
	var keep func() error
	rep.Net, rep.History, keep, err = Fit(ctx, cfg, d.Shape, ep.Train.X, ep.TrainLabels, rep.Theta, ep.Seed, ck,
		func(st train.StepStats) { notify(StepDone{Repeat: r, Stats: st}) })
	if err != nil {
		return nil, err
	}
	if h := rep.History; len(h) > 0 {
		rep.Record.FinalRisk = h[len(h)-1].Risk
		notify(Message{fmt.Sprintf("repeat %d: %d steps, risk %.4f → %.4f, last mean certified gap %.2e", r+1, len(h), h[0].Risk, rep.Record.FinalRisk, h[len(h)-1].MeanRelGap)})
	}

	rep.Dim = rep.Net.Dim()
	if rep.TrainEmb, err = rep.Net.Embed(ep.Train.X, ep.Train.Len()); err != nil {
		return nil, err
	}
	if rep.QueryEmb, err = rep.Net.Embed(ep.Query.X, ep.Query.Len()); err != nil {
		return nil, err
	}
	if rep.LFD, err = SolveLFD(cfg, rep.TrainEmb, ep.Train.Len(), rep.Dim, ep.TrainLabels, rep.Theta); err != nil {
		return nil, fmt.Errorf("LFD on the training set: %w", err)
	}
	rep.Record.LFDRelGap = rep.LFD.RelGap
	if len(cfg.Eval.ThetaLOO) > 0 {
		if err := rep.solveLOO(cfg); err != nil {
			return nil, err
		}
		notify(Message{fmt.Sprintf("repeat %d: leave-one-out ϑ = %g (correct %v of %d for %v)", r+1, rep.ThetaLOO.Theta,
			rep.ThetaLOO.Correct, rep.ThetaLOO.Counted, rep.ThetaLOO.Grid)})
	}

	methods := o.Methods
	if methods == nil {
		methods = cfg.methods()
	}
	// A method that fails is recorded (MethodErr, the episode record's
	// method_errors) and the others go on: one failing baseline never
	// loses the repeat.
	for _, m := range methods {
		if err := ctx.Err(); err != nil {
			return nil, keepTraining(keep, fmt.Errorf("stopped before evaluating %s: %w", m, context.Cause(ctx)))
		}
		t0 := time.Now()
		var sc eval.Scores
		var err error
		if failHook != nil {
			err = failHook(r, m)
		}
		if err == nil {
			sc, err = rep.EvaluateScores(cfg, m)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, keepTraining(keep, fmt.Errorf("stopped evaluating %s: %w", m, context.Cause(ctx)))
			}
			msg := oneline.Err(err)
			rep.MethodErr[m] = msg
			if rep.Record.MethodErrors == nil {
				rep.Record.MethodErrors = map[string]string{}
			}
			rep.Record.MethodErrors[m] = msg
			notify(Message{fmt.Sprintf("repeat %d: %s failed: %s", r+1, m, msg)})
			notify(UnitDone{Repeat: r, Method: m, Accuracy: math.NaN(), Seconds: time.Since(t0).Seconds(), Err: msg})
			continue
		}
		rep.Accuracy[m], rep.Scores[m] = sc.Accuracy, sc
		notify(UnitDone{Repeat: r, Method: m, Accuracy: sc.Accuracy, Seconds: time.Since(t0).Seconds()})
	}
	accText := func(m string) string {
		if a, ok := rep.Accuracy[m]; ok {
			return fmt.Sprintf("%.4f", a)
		}
		if rep.MethodErr[m] != "" {
			return "failed"
		}
		return "–"
	}
	notify(Message{fmt.Sprintf("repeat %d: drknn %s, embedding_knn %s (%d queries%s)", r+1, accText("drknn"), accText("embedding_knn"),
		ep.Query.Len(), map[bool]string{true: ", all that remained", false: ""}[ep.Short])})

	if o.Dir != "" {
		if err := writeJSON(filepath.Join(o.Dir, "history.json"), rep.History); err != nil {
			return nil, err
		}
		if err := rep.Export(filepath.Join(o.Dir, "export"), cfg); err != nil {
			return nil, err
		}
	}
	rep.Record.Seconds = time.Since(start).Seconds()
	notify(RepeatDone{Repeat: r, Episode: rep.Record, Accuracy: rep.Accuracy})
	return rep, nil
}

// methods lists the methods the config evaluates, in table order
// (drknn_loo only when eval.theta_loo is set).
func (c *Config) methods() []string {
	if len(c.Eval.Methods) > 0 {
		return c.Eval.Methods
	}
	var out []string
	for _, m := range Methods() {
		if m != MethodDrKNNLOO || len(c.Eval.ThetaLOO) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// EvalSettings are the classifiers' settings of the config.
func (c *Config) EvalSettings() eval.Settings {
	return eval.Settings{K: c.Eval.K, Tau: c.Eval.Tau, Bandwidth: c.Eval.Bandwidth, Workers: 1}
}

// EvaluateMethod returns the query accuracy of one method on the repeat
// (EvaluateScores' Accuracy).
func (rep *Repeat) EvaluateMethod(cfg Config, method string) (float64, error) {
	s, err := rep.EvaluateScores(cfg, method)
	return s.Accuracy, err
}

// EvaluateScores scores one method on the repeat's queries: the accuracy
// of its predictions and the log-loss and ECE of its class probabilities
// (eval.Score). The methods are the classifiers that vote on the learned
// embedding (with P* for Dr.k-NN and its variants), the baselines on the
// raw samples, and the few-shot network baselines, trained here with the
// same body, samples and seed.
func (rep *Repeat) EvaluateScores(cfg Config, method string) (eval.Scores, error) {
	ep := rep.Episode
	n, nq := ep.Train.Len(), ep.Query.Len()
	if eval.IsFewShot(method) {
		return fewShotScores(cfg, method, ep)
	}
	p := rep.LFD.P
	if method == MethodDrKNNLOO {
		if rep.LFDLOO == nil {
			return eval.Scores{}, fmt.Errorf("%s: no leave-one-out radius (eval.theta_loo is empty)", method)
		}
		method, p = eval.MethodDrKNN, rep.LFDLOO.P
	}
	c, err := eval.New(method, cfg.EvalSettings(), p)
	if err != nil {
		return eval.Scores{}, err
	}
	if eval.OnRawPixels(method) {
		size := ep.Train.SampleSize()
		s, _, _, err := eval.EvaluateScores(c, ep.Train.Float64(), n, size, ep.TrainLabels, cfg.Ways, ep.Query.Float64(), nq, ep.QueryLabels)
		return s, err
	}
	s, _, _, err := eval.EvaluateScores(c, rep.TrainEmb, n, rep.Dim, ep.TrainLabels, cfg.Ways, rep.QueryEmb, nq, ep.QueryLabels)
	return s, err
}

// fewShotScores trains a network baseline with the same body, the same
// M·K samples and the same seed as Dr.k-NN and scores it on the same
// queries.
func fewShotScores(cfg Config, method string, ep *Episode) (eval.Scores, error) {
	steps := cfg.Eval.FewShotSteps
	if steps == 0 {
		steps = cfg.Train.Steps
	}
	if cfg.Model.Kind == string(model.Identity) {
		steps = 0 // no body to train: the heads classify the raw inputs
	}
	s := eval.DefaultFewShotSettings()
	s.Model, s.Steps, s.LR, s.Seed, s.Workers = cfg.NetConfig(ep.Train.Shape), steps, cfg.Train.LR, ep.Seed, 1
	f, err := eval.TrainFewShot(method, s, ep.Train.Shape, ep.Train.X, ep.TrainLabels, cfg.Ways)
	if err != nil {
		return eval.Scores{}, err
	}
	sc, _, _, err := f.Score(ep.Query.X, ep.Query.Len(), ep.QueryLabels)
	return sc, err
}

// Model is the repeat's trained classifier, as drknn-predict would load it
// from the repeat's export.
func (rep *Repeat) Model(cfg Config) (*predict.Model, error) {
	ep := rep.Episode
	return predict.NewModel(rep.Net, rep.TrainEmb, ep.Train.Len(), rep.Dim, ep.TrainLabels, rep.LFD.P, ep.ClassNames, cfg.predictSettings(ep))
}

// predictSettings are the voting settings of cfg and the preprocessing of
// episode e's samples, for the model trained on it.
func (c *Config) predictSettings(e *Episode) predict.Settings {
	in := &predict.Input{Kind: predict.InputFeatures, Reader: c.Dataset, Shape: slices.Clone(e.Train.Shape), Features: e.Train.Features}
	if im := e.Train.ImageShape; len(im) == 3 && len(in.Shape) == 1 && im[0]*im[1]*im[2] == in.Shape[0] {
		in.Shape = slices.Clone(im) // images flattened for an MLP: the model takes images
	}
	if len(in.Shape) == 3 {
		in.Kind = predict.InputImages
	}
	return predict.Settings{K: c.Eval.K, Tau: c.Eval.Tau, Bandwidth: c.Eval.Bandwidth, Standardize: e.Standardize,
		Impute: e.Impute, Dataset: c.Dataset, Input: in}
}

// manifest is the part of an export's manifest the experiment fills: the
// config, ϑ, the cost scale and the LFD's certificate (solved in blocks
// LFD blocks).
func (c *Config) manifest(theta []float64, lfd *optlayer.Result, blocks int) (predict.Manifest, error) {
	man := predict.Manifest{Theta: theta, ThetaRelative: c.Train.ThetaRelative, Metric: c.Train.Metric,
		LFD: predict.LFDBounds{Objective: lfd.Objective, LowerBound: lfd.LowerBound, RelGap: lfd.RelGap}}
	if blocks > 1 {
		man.LFD.Blocks = blocks
	}
	var err error
	if man.Config, err = predict.Record(c); err != nil {
		return man, fmt.Errorf("export: %w", err)
	}
	man.CostScale = "absolute"
	if c.Train.ThetaRelative {
		man.CostScale = "costs divided by their mean over the n×n training cost matrix before solving"
		if blocks > 1 {
			man.CostScale = "costs divided by their mean over each LFD block's cost matrix before solving"
		}
	}
	return man, nil
}

// Export writes the repeat's model, queries and manifest to the folder dir
// (predict.WriteExport).
func (rep *Repeat) Export(dir string, cfg Config) error {
	m, err := rep.Model(cfg)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	man, err := cfg.manifest(rep.Theta, rep.LFD, 1)
	if err != nil {
		return err
	}
	if man.Episode, err = predict.RecordEpisode(rep.Record); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return predict.WriteExport(dir, m, man, rep.QueryEmb, rep.Episode.Query.Len(), rep.Episode.QueryLabels)
}

// trainingDiverged is the error of a training whose step diverged
// (train.DivergedError), in the config's terms: the step of how many, what
// was not finite, and the key to lower. Unwrap reaches the step's error
// and, through it, the machine's or Adam's report.
type trainingDiverged struct {
	d     *train.DivergedError
	steps int
	lr    float64
	err   error
}

func (e *trainingDiverged) Error() string {
	return fmt.Sprintf("training diverged at step %d of %d: %s; lower train.lr (now %g) or check the data for NaN/Inf",
		e.d.Step, e.steps, e.d.Reason(), e.lr)
}

func (e *trainingDiverged) Unwrap() error { return e.err }

// divergedErr is err, a training step's error, as a trainingDiverged when
// the step diverged (steps: the training's, lr: train.lr); any other err
// is returned as it is.
func divergedErr(err error, steps int, lr float64) error {
	var d *train.DivergedError
	if !errors.As(err, &d) {
		return err
	}
	return &trainingDiverged{d: d, steps: steps, lr: lr, err: err}
}

// resumedText is the log line of a training (who: "repeat 3", "fit")
// that continues from its checkpoint at path, step of steps.
func resumedText(who string, step, steps int, path string) string {
	return fmt.Sprintf("%s: resumed at step %d of %d from %s", who, step, steps, path)
}

// stoppedText is the log line of a training (who: "repeat 3")
// stopped by err (Ctrl-C), saying whether its checkpoint at path (""
// none) is kept for -resume.
func stoppedText(who string, err error, path string) string {
	kept := "no checkpoint written"
	if path != "" {
		if _, statErr := os.Stat(path); statErr == nil {
			kept = "checkpoint " + path + " kept"
		}
	}
	return fmt.Sprintf("%s interrupted: %s; %s", who, oneline.Err(err), kept)
}

// errStopped reports whether err is a cancellation (Ctrl-C) rather than a
// failure.
func errStopped(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// LabelNoise records data.label_noise in an episode: the rate, the flipped
// positions (into the episode's training samples) and the true labels of
// all training samples (the episode's TrainLabels are the noisy ones).
type LabelNoise struct {
	Rate       float64 `json:"rate"`
	Flipped    []int   `json:"flipped"`
	TrueLabels []int   `json:"true_labels"`
}

// paperLungSalt separates the paper-lung query generator from the episode's.
const paperLungSalt = 0x6c756e67 // "lung"

// paperLungQueries replaces ep's queries by n draws with replacement from
// all rows of d in the episode's classes — training rows included — from a
// generator seeded by seed (protocol paper-lung, docs/medical-rows.md).
func paperLungQueries(d *datasets.Dataset, ep *datasets.Episode, n int, seed int64) {
	var rows, labels []int
	byClass := d.ClassIndex()
	for local, c := range ep.Classes {
		for _, i := range byClass[c] {
			rows = append(rows, i)
			labels = append(labels, local)
		}
	}
	rng := rand.New(rand.NewSource(seed ^ paperLungSalt))
	ep.QueryIndex, ep.QueryLabels, ep.Short = make([]int, n), make([]int, n), false
	for j := range n {
		u := rng.Intn(len(rows))
		ep.QueryIndex[j], ep.QueryLabels[j] = rows[u], labels[u]
	}
}

// solveLOO chooses the test-time radius by leave-one-out on the support
// set (eval.theta_loo) and solves the LFD drknn_loo votes with.
func (rep *Repeat) solveLOO(cfg Config) error {
	ep := rep.Episode
	n := ep.Train.Len()
	solve := func(e []float64, n int, y []int, theta float64, warm *optlayer.Dual) (*optlayer.Result, error) {
		return solveLFD(cfg, e, n, rep.Dim, y, []float64{theta}, warm)
	}
	ch, err := ChooseThetaLOO(rep.TrainEmb, n, rep.Dim, ep.TrainLabels, cfg.Ways, cfg.Eval.K, cfg.Eval.ThetaLOO, rep.Theta[0], solve)
	if err != nil {
		return err
	}
	rep.ThetaLOO, rep.Record.ThetaLOO = ch, ch
	if ch.Theta == rep.Theta[0] {
		rep.LFDLOO = rep.LFD
		return nil
	}
	if rep.LFDLOO, err = SolveLFD(cfg, rep.TrainEmb, n, rep.Dim, ep.TrainLabels, []float64{ch.Theta}); err != nil {
		return fmt.Errorf("LFD at the leave-one-out radius: %w", err)
	}
	return nil
}

// keyTrain is the train settings as a checkpoint's key holds them: without
// train.checkpoint_every, which says when checkpoints are written and
// changes no step, so -resume may write them at another period.
func keyTrain(t TrainConfig) TrainConfig {
	t.CheckpointEvery = 0
	return t
}

// dataKey is the part of a training checkpoint's key that names its data:
// the protocol, the data settings and the digest of the training samples
// (dataDigest). Without it -resume continued a training on other data
// (another data.standardize, data.synthetic or data_dir) and recorded the
// new config for the mixed run.
func dataKey(cfg Config, digest string) string {
	return fmt.Sprintf("protocol %q|%+v|data %s", cfg.Protocol, cfg.Data, digest)
}

// dataDigest names the training samples as trained on — after imputation
// and standardisation — with their labels: their number, shape and a
// digest (FNV-64a) of both.
func dataDigest(train *datasets.Dataset, labels []int) string {
	h := fnv.New64a()
	buf := make([]byte, 0, 4096)
	flush := func() {
		h.Write(buf)
		buf = buf[:0]
	}
	for _, v := range train.X {
		if len(buf)+4 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	for _, l := range labels {
		if len(buf)+8 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(l))
	}
	flush()
	return fmt.Sprintf("%d×%v %016x", train.Len(), train.Shape, h.Sum64())
}

package experiment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/oneline"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
	"github.com/drknn/drknn/train"
	"golang.org/x/sync/errgroup"
)

// Protocol fit: one model trained on every labelled sample, for users who
// want to classify new inputs rather than reproduce the paper's table.
//
//	training part → impute, standardise → ChooseTheta → Fit (Algorithm 1,
//	gathered mini-sets) → embed → SolveLFD (blocks above eval.lfd_block) →
//	evaluate on the test part, or k-fold cross-validation → export
//
// A split folder (imagefolder with train/ and test/) trains on train/ and
// reports accuracy, log-loss and ECE on test/; any other data set is
// trained on whole and its accuracy estimated by stratified k-fold
// cross-validation (each fold a fresh network on the other folds, folds in
// parallel). The export (RUN/export) is what drknn-predict -model loads.

// FitMinisetSize is protocol fit's mini-set size n′ when train.miniset_size
// is 0: ten points per class, at least 20, at most the n training samples.
// A step then embeds train.minisets × n′ samples whatever n is.
func FitMinisetSize(n, m int) int { return min(n, max(20, 10*m)) }

// DefaultFitFolds is train.cv_folds of a protocol fit config that leaves
// the key out (ParseConfig fills it in): k-fold cross-validation of a fit
// without a test part trains one network per fold, and leave-one-out (an
// explicit 0) one per training sample.
const DefaultFitFolds = 5

// FitMethods are the methods protocol fit evaluates when eval.methods is
// empty. It accepts the methods a predict.Model classifies with
// (predict.Methods): those that vote on the learned embedding.
func FitMethods() []string { return []string{eval.MethodDrKNN, eval.MethodEmbeddingKNN} }

// FitSummary is protocol fit's report (results.json "fit").
type FitSummary struct {
	Classes    []string `json:"classes"`
	Train      int      `json:"train"`      // labelled samples the exported model is trained on
	Test       int      `json:"test"`       // samples of the test part (0 with cross-validation)
	Evaluation string   `json:"evaluation"` // "test" (the split folder's test part) or "cv" (k-fold cross-validation)
	// Folds is the number of folds used: train.cv_folds, the number of
	// training samples for leave-one-out (cv_folds 0), or the smallest
	// class's number of samples when cv_folds asks for more (k-fold folds
	// each hold every class) — FoldsNote then says so.
	Folds     int    `json:"folds,omitempty"`
	FoldsNote string `json:"folds_note,omitempty"`
	// Scores per method: on the test part, or pooled over every held-out
	// fold (each sample predicted once, by the fold's network).
	Scores map[string]eval.Scores `json:"scores"`
	// FoldAccuracy per method, one value per fold (cross-validation only).
	FoldAccuracy map[string][]float64 `json:"fold_accuracy,omitempty"`
	// MethodErrors holds the methods that failed on the test part (or on a
	// cross-validation fold: the first such fold) and why
	// (they have no Scores); the others and the export are unaffected.
	MethodErrors map[string]string    `json:"method_errors,omitempty"`
	Theta        []float64            `json:"theta"`
	MinisetSize  int                  `json:"miniset_size"` // n′ of Algorithm 1
	Gathered     bool                 `json:"gathered"`     // each step embedded only its mini-sets
	FinalRisk    float64              `json:"final_risk"`
	LFDBlocks    int                  `json:"lfd_blocks"` // 1 = the exact whole-set LFD
	LFDRelGap    float64              `json:"lfd_rel_gap"`
	Impute       *predict.Impute      `json:"impute,omitempty"`
	Standardize  *predict.Standardize `json:"standardize,omitempty"`
	Export       string               `json:"export,omitempty"`
	// Seconds of each part: "train", "embed", "lfd", "evaluate" (test part
	// or cross-validation), "export".
	Seconds map[string]float64 `json:"seconds"`
}

// FitModel is protocol fit's result in memory: the exported model and the
// report.
type FitModel struct {
	Model   *predict.Model
	Net     *model.Net
	History []train.StepStats
	Summary FitSummary
	// Pred and Proba hold each method's predictions and probabilities
	// (rows of M) for the test samples, in their order.
	Pred  map[string][]int
	Proba map[string][]float64
	// keep saves the finished training's checkpoint (Fit's keep; nil:
	// nothing to save), for a caller stopped after FitAll returned: a
	// stop during runFit's cross-validation keeps the model's training.
	keep func() error
}

// forFit checks and completes a config for protocol fit on d: ways becomes
// the number of classes (cv_folds is kept: 0 is leave-one-out, as in every
// protocol), the methods
// are those a predict.Model classifies with; train.theta, eval.k and
// train.miniset_size are checked against the training part.
func forFit(cfg Config, d *datasets.Dataset, trainIdx []int) (Config, error) {
	m := len(d.Classes)
	count := make([]int, m)
	for _, i := range trainIdx {
		count[d.Labels[i]]++
	}
	for c, k := range count {
		if k == 0 {
			return cfg, fmt.Errorf("fit: class %q has no training samples (a class only in test/ cannot be learned)", d.Classes[c])
		}
	}
	if m < 2 {
		return cfg, fmt.Errorf("fit: %s has %d class; a classifier needs at least 2", cfg.Dataset, m)
	}
	cfg.Ways, cfg.Shots = m, slices.Min(count)
	if len(cfg.Eval.Methods) == 0 {
		cfg.Eval.Methods = FitMethods()
	}
	for _, meth := range cfg.Eval.Methods {
		if !slices.Contains(predict.Methods(), meth) {
			return cfg, configErr(fmt.Errorf("key eval.methods = %s: protocol fit evaluates the methods an exported model classifies with: %v", meth, predict.Methods()))
		}
	}
	n := len(trainIdx)
	if t := cfg.Train.Theta; len(t) != 1 && len(t) != m {
		return cfg, configErr(fmt.Errorf("key train.theta = %v: give one radius or one per class (%d classes)", t, m))
	}
	if cfg.Eval.K > n {
		return cfg, configErr(fmt.Errorf("key eval.k = %d: more neighbours than the %d training samples", cfg.Eval.K, n))
	}
	if s := cfg.Train.MinisetSize; s > n {
		return cfg, configErr(fmt.Errorf("key train.miniset_size = %d: larger than the %d training samples", s, n))
	}
	return cfg, nil
}

// fitFolds is the number of cross-validation folds of a fit without a
// test part: train.cv_folds, or one per training sample for 0
// (leave-one-out, as train.cv_folds means in every protocol). k-fold
// folds each hold about 1/k of every class, so a k above the smallest
// class's count is capped at that count, and note says so (logged as a
// warning, recorded in results.json). Every class needs two samples (one
// held out, one to learn from).
func fitFolds(cfg Config, d *datasets.Dataset, trainIdx []int) (folds int, note string, err error) {
	count := make([]int, len(d.Classes))
	for _, i := range trainIdx {
		count[d.Labels[i]]++
	}
	if cfg.Shots < 2 {
		return 0, "", oneSampleClasses(cfg, d, count)
	}
	if cfg.Train.CVFolds == 0 {
		return len(trainIdx), "", nil
	}
	if folds = cfg.Train.CVFolds; folds <= cfg.Shots {
		return folds, "", nil
	}
	small := d.Classes[slices.Index(count, cfg.Shots)]
	return cfg.Shots, fmt.Sprintf("train.cv_folds = %d capped at %d folds: class %q has %d training samples, and each fold holds every class (train.cv_folds: 0 is leave-one-out)", folds, cfg.Shots, small, cfg.Shots), nil
}

// oneSampleClasses is the error of a fit without a test part whose
// training part has classes of one sample (count: samples per class): it
// names the first of them as the reader gave it, how many there are, the
// data file or folder and, for a csv table, the label column.
func oneSampleClasses(cfg Config, d *datasets.Dataset, count []int) error {
	var ones []string
	for c, k := range count {
		if k < 2 {
			ones = append(ones, d.Classes[c])
		}
	}
	if len(ones) == 0 { // not reached: cfg.Shots is the smallest count
		ones = append(ones, "?")
	}
	which := fmt.Sprintf("class %q has", ones[0])
	if len(ones) > 1 {
		which = fmt.Sprintf("%d of the %d classes (%q, %q, …) have", len(ones), len(count), ones[0], ones[1])
	}
	src := fmt.Sprintf("%s data %s", cfg.Dataset, cfg.DataDir)
	hint := "add samples to such classes, or give a test part (a split folder)"
	if cfg.Dataset == "csv" {
		if cfg.Data.Label != "" {
			src += fmt.Sprintf(" (label column %q)", cfg.Data.Label)
		} else {
			src += " (label column: the last; data.label names another)"
		}
		hint = "add rows to such classes, or check that the label column holds the classes"
	}
	return fmt.Errorf("fit: %s: %s 1 training sample and there is no test part: cross-validation needs at least 2 per class (%s)", src, which, hint)
}

// RunFit runs protocol fit on the data set d (see the package comment on
// protocol fit above): it trains, evaluates and, when opts.OutDir is set,
// writes OutDir/export (the model drknn-predict -model loads),
// OutDir/history.json and OutDir/results.json. The Results carry the
// summary in Fit and each method's accuracy in Methods (for
// cross-validation: the mean over folds with its 95% interval, one value
// per fold). Run calls it for protocol fit.
func RunFit(ctx context.Context, cfg Config, d *datasets.Dataset, opts Options) (*Results, error) {
	return runFit(ctx, cfg, d, opts, time.Now())
}

func runFit(ctx context.Context, cfg Config, d *datasets.Dataset, opts Options, start time.Time) (res *Results, err error) {
	notify := serial(opts.Observer)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg, d, err = ForData(cfg, d); err != nil {
		return nil, err
	}
	trainIdx, testIdx := d.Split()
	if cfg, err = forFit(cfg, d, trainIdx); err != nil {
		return nil, err
	}
	folds, foldsNote := 0, ""
	if len(testIdx) == 0 {
		if folds, foldsNote, err = fitFolds(cfg, d, trainIdx); err != nil {
			return nil, err
		}
	}
	if opts.OutDir != "" {
		export := filepath.Join(opts.OutDir, "export")
		if err := os.MkdirAll(export, 0o755); err != nil {
			return nil, fmt.Errorf("run folder: %w", err)
		}
		// A run stopped (Ctrl-C) or failed before its export is written
		// leaves no empty export/ that looks like a model (os.Remove
		// removes only an empty folder).
		defer func() {
			if err != nil {
				os.Remove(export)
			}
		}()
	}
	notify(Started{Dir: opts.OutDir, Config: cfg, Samples: d.Len(), Shape: d.Shape, Repeats: 1,
		Steps: cfg.Train.Steps, CVSteps: cfg.cvSteps() + folds*cfg.Train.Steps, Methods: cfg.Eval.Methods})
	defer func() { notify(Finished{Results: res, Err: err}) }()
	defer func() {
		switch {
		case err != nil && ctx.Err() != nil:
			notify(Message{interruptedText(err, opts.OutDir)}) // before Finished
		case err != nil:
			notify(Message{failedText(err)})
		}
	}()
	how := fmt.Sprintf("%d-fold cross-validation", folds)
	switch {
	case folds == 0:
		how = fmt.Sprintf("the %d samples of the test part", len(testIdx))
	case cfg.Train.CVFolds == 0:
		how = fmt.Sprintf("leave-one-out cross-validation (train.cv_folds = 0: %d folds)", folds)
	}
	notify(Message{fmt.Sprintf("drknn-train: fit on %s: %d training samples, %d classes, shape %v, model %s, evaluated on %s", cfg.Dataset, len(trainIdx), cfg.Ways, d.Shape, cfg.Model.Kind, how)})
	if foldsNote != "" {
		notify(Message{"drknn-train: warning: " + foldsNote})
	}
	if s := d.Report.Summary(); s != "" {
		notify(Message{fmt.Sprintf("%s: %s", cfg.Dataset, s)})
	}

	fm, err := FitAll(ctx, cfg, d, trainIdx, testIdx, opts, notify)
	if err != nil {
		return nil, err
	}
	sum := &fm.Summary
	if folds > 0 {
		t0 := time.Now()
		if sum.Scores, sum.FoldAccuracy, sum.MethodErrors, err = crossValidate(ctx, cfg, d, trainIdx, folds, sum.Theta, notify); err != nil {
			if ctx.Err() != nil { // Ctrl-C: the model's training is finished, -resume must not train it again
				return nil, keepTraining(fm.keep, err)
			}
			return nil, err
		}
		sum.Evaluation, sum.Folds, sum.FoldsNote = "cv", folds, foldsNote
		sum.Seconds["evaluate"] = time.Since(t0).Seconds()
		// The run's evaluation units (one per method, as for a test part):
		// the folds' own are not passed on.
		for _, meth := range cfg.Eval.Methods {
			u := UnitDone{Method: meth, Accuracy: math.NaN(), Seconds: sum.Seconds["evaluate"] / float64(len(cfg.Eval.Methods)), Err: sum.MethodErrors[meth]}
			if s, ok := sum.Scores[meth]; ok {
				u.Accuracy = s.Accuracy
			}
			notify(u)
		}
	}
	res = &Results{Dataset: cfg.Dataset, Protocol: ProtocolFit, Ways: cfg.Ways, Shots: cfg.Shots, Repeats: 1, Seed: cfg.Seed,
		Methods: map[string]MethodResult{}, Config: cfg, Fit: sum}
	for _, meth := range cfg.Eval.Methods {
		if why, failed := sum.MethodErrors[meth]; failed && folds > 0 {
			// Failed on some folds: the folds it completed still count.
			mr := MethodResult{Mean: math.NaN(), CI95: math.NaN(), PerRepeat: sum.FoldAccuracy[meth], Error: why}
			for f, a := range mr.PerRepeat {
				if math.IsNaN(a) {
					mr.Failed = append(mr.Failed, f+1)
				}
			}
			if done := mr.Completed(); len(done) > 0 {
				s, err := eval.Summarize(done)
				if err != nil {
					return nil, err
				}
				mr.Mean, mr.CI95 = s.Mean, s.HalfWidth
			}
			res.Methods[meth] = mr
			delete(sum.FoldAccuracy, meth) // its folds are methods.<m>.per_repeat (null where it failed)
			res.Errors = append(res.Errors, fmt.Sprintf("fit: %s: %s", meth, why))
			continue
		}
		if why, failed := sum.MethodErrors[meth]; failed {
			res.Methods[meth] = MethodResult{Mean: math.NaN(), CI95: math.NaN(), PerRepeat: []float64{math.NaN()}, Error: why, Failed: []int{1}}
			res.Errors = append(res.Errors, fmt.Sprintf("fit: %s: %s", meth, why))
			continue
		}
		if folds == 0 {
			a := sum.Scores[meth].Accuracy
			res.Methods[meth] = MethodResult{Mean: a, CI95: math.NaN(), PerRepeat: []float64{a}}
			continue
		}
		s, err := eval.Summarize(sum.FoldAccuracy[meth])
		if err != nil {
			return nil, err
		}
		res.Methods[meth] = MethodResult{Mean: s.Mean, CI95: s.HalfWidth, PerRepeat: sum.FoldAccuracy[meth]}
	}
	for _, meth := range cfg.Eval.Methods {
		s, ok := sum.Scores[meth]
		if !ok {
			continue // failed, logged above
		}
		notify(Message{fmt.Sprintf("%-18s accuracy %.4f  log-loss %.4f  ECE %.4f (%s)", meth, s.Accuracy, s.LogLoss, s.ECE, sum.Evaluation)})
	}
	res.Seconds = time.Since(start).Seconds()
	if opts.OutDir != "" {
		if err := writeJSON(filepath.Join(opts.OutDir, "results.json"), res); err != nil {
			return nil, err
		}
		if !opts.KeepCheckpoints { // the export holds the weights (Options.KeepCheckpoints)
			for _, name := range []string{"checkpoint.bin", "settings.json", "cv.json"} { // settings.json: the checkpoint's (Checkpointing.Settings); cv.json: its ϑ's cross-validation (cvProgress)
				if err := os.Remove(filepath.Join(opts.OutDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
			}
		}
	}
	return res, nil
}

// scoreFitMethod predicts the nq test embeddings with one method of the
// fit model and scores it against truth.
func scoreFitMethod(mdl *predict.Model, meth string, testEmb []float64, nq, m int, truth []int) (eval.Scores, []int, []float64, error) {
	if failHook != nil {
		if err := failHook(0, meth); err != nil {
			return eval.Scores{}, nil, nil, err
		}
	}
	c, err := mdl.Classifier(predict.Options{Method: meth})
	if err != nil {
		return eval.Scores{}, nil, nil, err
	}
	pred, err := c.Predict(testEmb, nq)
	if err != nil {
		return eval.Scores{}, nil, nil, err
	}
	proba, err := c.Proba(testEmb, nq)
	if err != nil {
		return eval.Scores{}, nil, nil, err
	}
	s, err := eval.Score(pred, proba, m, truth)
	if err != nil {
		return eval.Scores{}, nil, nil, fmt.Errorf("%s on the test part: %w", meth, err)
	}
	return s, pred, proba, nil
}

// FitAll trains the model of protocol fit on the samples trainIdx of d
// (cfg as completed by RunFit: ways = the classes of d): missing values
// filled and inputs standardised with the training samples' statistics,
// ϑ chosen (train.theta_grid), Algorithm 1, the embedding of every
// training sample and its LFD; the samples testIdx (may be empty) are
// scored with every method of eval.methods. With opts.OutDir it writes the
// export (OutDir/export, the test part as its queries) and history.json;
// opts.Resume continues from OutDir/checkpoint.bin.
func FitAll(ctx context.Context, cfg Config, d *datasets.Dataset, trainIdx, testIdx []int, opts Options, notify Observer) (*FitModel, error) {
	if notify == nil {
		notify = func(Event) {}
	}
	times := map[string]float64{}
	lap := func(part string, t0 time.Time) { times[part] += time.Since(t0).Seconds() }
	m := len(d.Classes)
	ep := &datasets.Episode{TrainIndex: trainIdx, QueryIndex: testIdx}
	for c := range m {
		ep.Classes = append(ep.Classes, c)
	}
	for _, i := range trainIdx {
		ep.TrainLabels = append(ep.TrainLabels, d.Labels[i])
	}
	for _, i := range testIdx {
		ep.QueryLabels = append(ep.QueryLabels, d.Labels[i])
	}
	e, err := newEpisode(cfg, d, ep, 0, cfg.Seed)
	if err != nil {
		return nil, err
	}
	n := len(trainIdx)
	digest := dataDigest(e.Train, e.TrainLabels)
	settings := runSettings{Dataset: cfg.Dataset, Seed: cfg.Seed, Model: cfg.Model, Train: keyTrain(cfg.Train),
		Protocol: cfg.Protocol, Data: cfg.Data, TrainingData: digest}
	ck := Checkpointing{Resume: opts.Resume, Every: cfg.Train.CheckpointEvery, Covers: runCovers}
	if opts.OutDir != "" {
		ck.Path = filepath.Join(opts.OutDir, "checkpoint.bin")
	}
	theta, err := thetaFor(ctx, cfg, e, notify, "fit", 0, ck.Path, opts.Resume, &settings)
	if err != nil {
		return nil, err
	}
	ts := cfg.TrainSettings(theta, cfg.Seed, n)
	ck.Key = fmt.Sprintf("fit|%s|n %d|seed %d|theta %v|%+v|%+v|%s", cfg.Dataset, n, cfg.Seed, theta, cfg.Model, keyTrain(cfg.Train), dataKey(cfg, digest))
	ck.Settings = settings
	ck.Resumed = func(step int) {
		notify(TrainingResumed{Step: step, Steps: cfg.Train.Steps})
		notify(Message{resumedText("fit", step, cfg.Train.Steps, ck.Path)})
	}
	t0 := time.Now()
	net, hist, keep, err := Fit(ctx, cfg, e.Train.Shape, e.Train.X, e.TrainLabels, theta, cfg.Seed, ck,
		func(st train.StepStats) { notify(StepDone{Stats: st}) })
	if err != nil {
		return nil, err
	}
	lap("train", t0)
	fm := &FitModel{Net: net, History: hist, keep: keep}
	sum := &fm.Summary
	*sum = FitSummary{Classes: d.Classes, Train: n, Test: len(testIdx), Evaluation: "test", Theta: theta,
		MinisetSize: ts.MinisetSize, Gathered: ts.Gather, Impute: e.Impute, Standardize: e.Standardize, Seconds: times}
	if len(hist) > 0 {
		sum.FinalRisk = hist[len(hist)-1].Risk
		notify(Message{fmt.Sprintf("fit: %d steps, risk %.4f → %.4f (mini-sets of %d, %s)", len(hist), hist[0].Risk, sum.FinalRisk,
			ts.MinisetSize, map[bool]string{true: "each step embeds only its mini-sets", false: "each step embeds every sample"}[ts.Gather])})
	}
	t0 = time.Now()
	dim := net.Dim()
	trainEmb, err := net.Embed(e.Train.X, n)
	if err != nil {
		return nil, err
	}
	var testEmb []float64
	if len(testIdx) > 0 {
		if testEmb, err = net.Embed(e.Query.X, len(testIdx)); err != nil {
			return nil, err
		}
	}
	lap("embed", t0)
	t0 = time.Now()
	lfd, err := SolveLFD(cfg, trainEmb, n, dim, e.TrainLabels, theta)
	if err != nil {
		return nil, fmt.Errorf("LFD on the training set: %w", err)
	}
	lap("lfd", t0)
	sum.LFDBlocks, sum.LFDRelGap = len(LFDBlocks(e.TrainLabels, cfg.Eval.LFDBlock, cfg.Seed)), lfd.RelGap
	notify(Message{fmt.Sprintf("fit: LFD on %d training points in %d block(s), largest certified relative gap %.2e, %.1fs", n, sum.LFDBlocks, lfd.RelGap, times["lfd"])})
	fm.Model, err = predict.NewModel(net, trainEmb, n, dim, e.TrainLabels, lfd.P, d.Classes, cfg.predictSettings(e))
	if err != nil {
		return nil, err
	}
	if len(testIdx) > 0 {
		t0 = time.Now()
		sum.Scores, fm.Pred, fm.Proba = map[string]eval.Scores{}, map[string][]int{}, map[string][]float64{}
		for _, meth := range cfg.Eval.Methods {
			s, pred, proba, err := scoreFitMethod(fm.Model, meth, testEmb, len(testIdx), m, e.QueryLabels)
			if err != nil {
				if ctx.Err() != nil {
					return nil, keepTraining(keep, fmt.Errorf("stopped evaluating %s: %w", meth, context.Cause(ctx)))
				}
				// Recorded; the other methods and the export go on.
				if sum.MethodErrors == nil {
					sum.MethodErrors = map[string]string{}
				}
				sum.MethodErrors[meth] = oneline.Err(err)
				notify(Message{fmt.Sprintf("fit: %s failed: %s", meth, sum.MethodErrors[meth])})
				notify(UnitDone{Method: meth, Accuracy: math.NaN(), Seconds: time.Since(t0).Seconds(), Err: sum.MethodErrors[meth]})
				continue
			}
			sum.Scores[meth], fm.Pred[meth], fm.Proba[meth] = s, pred, proba
			notify(UnitDone{Method: meth, Accuracy: s.Accuracy, Seconds: time.Since(t0).Seconds()})
		}
		lap("evaluate", t0)
	}
	if opts.OutDir != "" {
		t0 = time.Now()
		if err := writeJSON(filepath.Join(opts.OutDir, "history.json"), hist); err != nil {
			return nil, err
		}
		sum.Export = filepath.Join(opts.OutDir, "export")
		man, err := cfg.manifest(theta, lfd, sum.LFDBlocks)
		if err != nil {
			return nil, err
		}
		rec := EpisodeRecord{Seed: cfg.Seed, Classes: ep.Classes, ClassNames: d.Classes, TrainIndex: trainIdx, QueryIndex: testIdx,
			Theta: theta, FinalRisk: sum.FinalRisk, LFDRelGap: lfd.RelGap, Impute: e.Impute, Standardize: e.Standardize}
		if man.Episode, err = predict.RecordEpisode(rec); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if err := predict.WriteExport(sum.Export, fm.Model, man, testEmb, len(testIdx), e.QueryLabels); err != nil {
			return nil, err
		}
		lap("export", t0)
	}
	return fm, nil
}

// crossValidate estimates protocol fit's accuracy without a test part:
// stratified folds (StratifiedFolds, seeded by the config's seed), each a
// fresh model (FitAll, seed + 1 + fold, the model's ϑ) trained on the
// other folds and scoring the held-out one; missing values and
// standardisation come from each fold's training samples. Folds run in parallel on cfg.Workers
// goroutines, each writing its own slot, so the result does not depend on
// the worker count. Scores pool every held-out prediction; the fold
// accuracies are returned per method.
func crossValidate(ctx context.Context, cfg Config, d *datasets.Dataset, trainIdx []int, folds int, theta []float64, notify Observer) (map[string]eval.Scores, map[string][]float64, map[string]string, error) {
	y := make([]int, len(trainIdx))
	for j, i := range trainIdx {
		y[j] = d.Labels[i]
	}
	fold := StratifiedFolds(y, cfg.Ways, folds, cfg.Seed)
	m := cfg.Ways
	pred := map[string][]int{}      // by position in trainIdx
	proba := map[string][]float64{} // rows of m, by position in trainIdx
	accs := map[string][]float64{}
	foldErr := map[string][]string{} // by method: why it failed on each fold ("" = it did not)
	for _, meth := range cfg.Eval.Methods {
		pred[meth], proba[meth], accs[meth] = make([]int, len(y)), make([]float64, len(y)*m), make([]float64, folds)
		foldErr[meth] = make([]string, folds)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for f := range folds {
		g.Go(func() error {
			var tr, ho, pos []int
			for j, i := range trainIdx {
				if fold[j] == f {
					ho, pos = append(ho, i), append(pos, j)
				} else {
					tr = append(tr, i)
				}
			}
			c := cfg
			c.Seed = cfg.Seed + 1 + int64(f)
			c.Train.ThetaGrid = nil // the radius is the model's, chosen once
			c.Train.Theta = theta
			fm, err := FitAll(gctx, c, d, tr, ho, Options{}, func(e Event) {
				if s, ok := e.(StepDone); ok {
					s.CV = true
					notify(s)
				}
			})
			if err != nil {
				return fmt.Errorf("cross-validation fold %d of %d: %w", f+1, folds, err)
			}
			// Each fold writes only its own held-out positions and slot. A
			// method that failed on the fold is recorded (NaN accuracy, its
			// error); the other methods and folds go on.
			for _, meth := range cfg.Eval.Methods {
				if why, failed := fm.Summary.MethodErrors[meth]; failed {
					accs[meth][f], foldErr[meth][f] = math.NaN(), why
					notify(Message{fmt.Sprintf("cross-validation fold %d of %d: %s failed: %s", f+1, folds, meth, why)})
					continue
				}
				for t, j := range pos {
					pred[meth][j] = fm.Pred[meth][t]
					copy(proba[meth][j*m:(j+1)*m], fm.Proba[meth][t*m:(t+1)*m])
				}
				accs[meth][f] = fm.Summary.Scores[meth].Accuracy
			}
			if s, ok := fm.Summary.Scores[eval.MethodDrKNN]; ok {
				notify(Message{fmt.Sprintf("cross-validation fold %d of %d: drknn %.4f on %d held-out samples", f+1, folds, s.Accuracy, len(ho))})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	scores := map[string]eval.Scores{}
	var failed map[string]string
	for _, meth := range cfg.Eval.Methods {
		if f := slices.IndexFunc(foldErr[meth], func(why string) bool { return why != "" }); f >= 0 {
			if failed == nil {
				failed = map[string]string{}
			}
			failed[meth] = fmt.Sprintf("cross-validation fold %d of %d: %s", f+1, folds, foldErr[meth][f])
			continue // no pooled score without every fold's predictions
		}
		s, err := eval.Score(pred[meth], proba[meth], m, y)
		if err != nil {
			return nil, nil, nil, err
		}
		scores[meth] = s
	}
	return scores, accs, failed, nil
}

package experiment

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/internal/oneline"
	"github.com/drknn/drknn/internal/par"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
	"github.com/drknn/drknn/train"
	"gopkg.in/yaml.v3"
)

// The transfer protocol (issue 12): an embedding is trained once on the
// base classes, episode by episode (train.EpisodicTrainer), a validation
// part of the base classes selects its checkpoint, and the frozen
// embedding is evaluated on `repeats` M-way K-shot tasks of the novel
// classes, which neither training nor selection ever sees. The anchor is
// the same backbone trained on the same episodes with the
// prototypical-network loss.
//
//	TransferSplitOf → TrainEmbedding (drknn; proto for the anchor) →
//	EvaluateTransfer (every method on the same novel tasks) → export

// ProtocolTransfer is the transfer protocol (Config.Protocol).
const ProtocolTransfer = "transfer"

// TransferConfig is the transfer protocol's base-class training (config
// section transfer). Both objectives draw the same episodes: Ways base
// classes of Shots + Queries samples each. The prototypical anchor uses
// the first Shots of each class as supports and the rest as queries;
// Dr.k-NN's Algorithm 1 draws its mini-sets from all of them.
type TransferConfig struct {
	Ways     int `yaml:"ways" json:"ways"`         // classes per training episode (default 20)
	Shots    int `yaml:"shots" json:"shots"`       // supports per class for the anchor (default 5)
	Queries  int `yaml:"queries" json:"queries"`   // queries per class for the anchor (default 5)
	Episodes int `yaml:"episodes" json:"episodes"` // episodes per step (default 1)
	// MinisetWays is the number of an episode's classes each of Dr.k-NN's
	// mini-sets covers (0: all Ways). The episodes, and so the anchor's
	// training, do not change with it.
	MinisetWays int `yaml:"miniset_ways" json:"miniset_ways"`
	// DecayEvery and DecayFactor: the learning rate is multiplied by
	// DecayFactor every DecayEvery steps (0: constant; factor default 0.5).
	DecayEvery  int     `yaml:"decay_every" json:"decay_every"`
	DecayFactor float64 `yaml:"decay_factor" json:"decay_factor"`
	// ValidateEvery is the number of steps between validations (0: at the
	// end only); each validation embeds the validation part and scores
	// ValTasks tasks of ValWays ways and ValShots shots (15 queries per
	// class, or all that remain): Dr.k-NN for the drknn objective, the
	// nearest prototype for the anchor. The best validation accuracy
	// selects the checkpoint (ties: the earlier step).
	ValidateEvery int `yaml:"validate_every" json:"validate_every"`
	ValTasks      int `yaml:"val_tasks" json:"val_tasks"` // default 200
	ValWays       int `yaml:"val_ways" json:"val_ways"`   // default 5
	ValShots      int `yaml:"val_shots" json:"val_shots"` // default 1
	// Theta is the radius of the LFD solved on a task's support set at test
	// time (one value; default train.theta), relative to the support set's
	// mean cost when train.theta_relative is set.
	Theta []float64 `yaml:"theta" json:"theta"`
	// Anchor trains the prototypical-network anchor (method proto_net)
	// with the same episodes, steps and learning rates. Default true when
	// proto_net is among the methods.
	Anchor *bool `yaml:"anchor" json:"anchor"`
}

// Transfer protocol defaults (for zero fields when protocol is transfer).
const (
	DefaultTransferRepeats = 600 // novel-class tasks, the literature's
	DefaultTransferQueries = 15  // queries per class of a task
	DefaultValQueries      = 15
)

// TransferMethods are the methods the transfer protocol evaluates, in
// table order: the classifiers on the Dr.k-NN embedding and the
// prototypical-network anchor (its own embedding, nearest prototype).
func TransferMethods() []string {
	return []string{eval.MethodDrKNN, eval.MethodDrKNNTruncated, eval.MethodEmbeddingKNN, eval.MethodNearestCentroid, eval.MethodProtoNet}
}

// transferDefaults fills what the transfer protocol takes by default:
// repeats and queries (per class) when the file does not set them, and
// the keys of the transfer section the file (or -set) does not give.
// hasKey reports whether a dotted key ("transfer.ways") is given: a key
// given 0 keeps its 0, which validateTransfer refuses where 0 is not a
// setting (a 0 was replaced by the default, so transfer.decay_factor=0
// ran with 0.5).
func (c *Config) transferDefaults(hasKey func(string) bool) {
	if !hasKey("repeats") {
		c.Repeats = DefaultTransferRepeats
	}
	if !hasKey("queries") {
		c.Queries = DefaultTransferQueries
	}
	t := &c.Transfer
	for _, f := range []struct {
		key string
		v   *int
		def int
	}{{"ways", &t.Ways, 20}, {"shots", &t.Shots, 5}, {"queries", &t.Queries, 5}, {"episodes", &t.Episodes, 1}, {"val_tasks", &t.ValTasks, 200},
		{"val_ways", &t.ValWays, 5}, {"val_shots", &t.ValShots, 1}} {
		if !hasKey("transfer." + f.key) {
			*f.v = f.def
		}
	}
	if !hasKey("transfer.decay_factor") {
		t.DecayFactor = 0.5
	}
	if len(t.Theta) == 0 {
		t.Theta = slices.Clone(c.Train.Theta)
	}
	if t.Anchor == nil {
		a := slices.Contains(c.methods(), eval.MethodProtoNet)
		t.Anchor = &a
	}
}

// validateTransfer checks what the transfer protocol needs; the shared
// keys are checked by validate.
func (c *Config) validateTransfer() error {
	bad := badKey
	t := &c.Transfer
	if c.Data.Standardize != "" && c.Data.Standardize != "none" {
		return bad("data.standardize", c.Data.Standardize, "protocol transfer feeds the base-class network raw inputs; it does not standardise")
	}
	switch c.Dataset {
	case "omniglot", "miniimagenet":
		if len(c.Data.BaseClasses) > 0 {
			return bad("data.base_classes", c.Data.BaseClasses, c.Dataset+" has its standard split of base and novel classes")
		}
	default:
		if len(c.Data.BaseClasses) == 0 {
			return bad("data.base_classes", "[]", "the transfer protocol needs the base classes of "+c.Dataset+" (names or indices; the rest are novel)")
		}
	}
	if c.Dataset != "miniimagenet" {
		if (c.Data.ValClasses > 0) == (c.Data.ValFraction > 0) {
			return bad("data.val_classes", c.Data.ValClasses, fmt.Sprintf("give exactly one of data.val_classes (whole base classes held out) and data.val_fraction (a part of every base class's samples; now %v)", c.Data.ValFraction))
		}
	} else if c.Data.ValClasses > 0 || c.Data.ValFraction > 0 {
		return bad("data.val_classes", c.Data.ValClasses, "miniImageNet validates on its val.csv classes")
	}
	if c.Data.ValClasses < 0 {
		return bad("data.val_classes", c.Data.ValClasses, "must be ≥ 0")
	}
	if !(c.Data.ValFraction >= 0 && c.Data.ValFraction < 1) {
		return bad("data.val_fraction", c.Data.ValFraction, "must be in [0, 1)")
	}
	if c.Data.RotateClasses && c.Dataset == "miniimagenet" {
		return bad("data.rotate_classes", true, "rotated classes are for Omniglot-like drawings")
	}
	switch c.Model.Kind {
	case "cnn", "conv4":
	default:
		return bad("model.kind", c.Model.Kind, "the transfer protocol trains an image backbone: cnn or conv4")
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"transfer.ways", t.Ways}, {"transfer.shots", t.Shots}, {"transfer.episodes", t.Episodes}, {"transfer.val_tasks", t.ValTasks},
		{"transfer.val_shots", t.ValShots}} {
		if f.v < 1 {
			return bad(f.key, f.v, "must be ≥ 1")
		}
	}
	if t.Ways < 2 {
		return bad("transfer.ways", t.Ways, "training episodes need at least 2 classes")
	}
	if t.ValWays < 2 {
		return bad("transfer.val_ways", t.ValWays, "validation tasks need at least 2 classes")
	}
	if t.Queries < 0 || (*t.Anchor && t.Queries < 1) {
		return bad("transfer.queries", t.Queries, "the prototypical anchor needs ≥ 1 query per class")
	}
	if t.DecayEvery < 0 {
		return bad("transfer.decay_every", t.DecayEvery, "must be ≥ 0 (0 = constant learning rate)")
	}
	if !(t.DecayFactor > 0 && t.DecayFactor <= 1) {
		return bad("transfer.decay_factor", t.DecayFactor, "must be in (0, 1]")
	}
	if t.ValidateEvery < 0 {
		return bad("transfer.validate_every", t.ValidateEvery, "must be ≥ 0 (0 = at the end only)")
	}
	if len(t.Theta) != 1 || !(t.Theta[0] >= 0) {
		return bad("transfer.theta", t.Theta, "give one radius ≥ 0 for the support sets' LFD")
	}
	if len(c.Train.Theta) != 1 {
		return bad("train.theta", c.Train.Theta, "the transfer protocol's episodes change classes: give one radius")
	}
	if t.MinisetWays != 0 && (t.MinisetWays < 2 || t.MinisetWays > t.Ways) {
		return bad("transfer.miniset_ways", t.MinisetWays, fmt.Sprintf("want 2…%d (transfer.ways), or 0 for all the episode's classes", t.Ways))
	}
	w := t.Ways
	if t.MinisetWays > 0 {
		w = t.MinisetWays
	}
	pool := w * (t.Shots + t.Queries)
	if s := c.Train.MinisetSize; s != 0 && (s < w || s > pool) {
		return bad("train.miniset_size", s, fmt.Sprintf("want %d…%d (a mini-set's ways to its ways × (shots + queries)), or 0 for all", w, pool))
	}
	for _, m := range c.Eval.Methods {
		if !slices.Contains(TransferMethods(), m) {
			return bad("eval.methods", m, "the transfer protocol evaluates "+fmt.Sprint(TransferMethods()))
		}
	}
	if slices.Contains(c.methods(), eval.MethodProtoNet) && !*t.Anchor {
		return bad("transfer.anchor", false, "method proto_net is the anchor: train it, or leave proto_net out of eval.methods")
	}
	return nil
}

// transferObjectives are the embeddings a transfer run trains: the
// Dr.k-NN embedding unless eval.methods names proto_net alone (the
// anchor's training on its own, e.g. in a second process whose
// train/proto folder a full run then resumes from), and the anchor when
// transfer.anchor is set.
func transferObjectives(cfg Config, methods []string) []string {
	var obj []string
	if slices.ContainsFunc(methods, func(m string) bool { return m != eval.MethodProtoNet }) {
		obj = append(obj, train.ObjectiveDrKNN)
	}
	if *cfg.Transfer.Anchor {
		obj = append(obj, train.ObjectiveProto)
	}
	return obj
}

// transferMethods are the methods of a transfer config, in table order.
func (c *Config) transferMethods() []string {
	if len(c.Eval.Methods) > 0 {
		return c.Eval.Methods
	}
	if !*c.Transfer.Anchor {
		return TransferMethods()[:4]
	}
	return TransferMethods()
}

// LoadTransferData reads the data set of a transfer config: for Omniglot
// both sets (data.split empty), for miniImageNet its train, val and test
// splits as one data set (classes in that order).
func LoadTransferData(cfg Config) (*datasets.Dataset, error) {
	if cfg.Dataset == "miniimagenet" {
		dir := cfg.DataDir
		if dir == "" {
			dir = filepath.Join(datadir.Dir(), datasets.Subdir(cfg.Dataset))
		}
		return datasets.ReadMiniImageNetTransfer(dir, cfg.Data.Size, cfg.Data.Grey)
	}
	if cfg.Dataset == "omniglot" && cfg.Data.Omniglot == "alphabets" {
		return nil, configErr(fmt.Errorf("key data.omniglot = alphabets: the transfer protocol's classes are characters"))
	}
	return LoadData(cfg)
}

// TransferSplitOf splits d as the config says: Omniglot background
// characters are base classes and evaluation characters novel,
// miniImageNet's train/val/test classes are base/validation/novel, any
// other data set's data.base_classes are base and the rest novel; the
// validation part is data.val_classes whole base classes (Omniglot: whole
// alphabets until at least data.val_classes characters are held out —
// seed 1's val_classes 5 is one alphabet of 34) or data.val_fraction of
// every base class's samples, drawn from the seed.
func TransferSplitOf(cfg Config, d *datasets.Dataset) (*datasets.TransferSplit, error) {
	var base, novel []int
	var err error
	switch cfg.Dataset {
	case "omniglot":
		base, novel, err = datasets.OmniglotBaseClasses(d)
	case "miniimagenet":
		return datasets.MiniImageNetSplit(d)
	default:
		base, err = datasets.ClassIDs(d, cfg.Data.BaseClasses)
		if err != nil {
			err = configErr(fmt.Errorf("key data.base_classes: %w", err))
		}
	}
	if err != nil {
		return nil, err
	}
	s, err := datasets.NewTransferSplit(d, base, novel)
	if err != nil {
		return nil, err
	}
	if cfg.Data.ValClasses > 0 {
		err = s.HoldOutClasses(d, cfg.Data.ValClasses, cfg.Seed)
	} else {
		err = s.HoldOutSamples(d, cfg.Data.ValFraction, cfg.Seed)
	}
	if err != nil {
		return nil, err
	}
	return s, s.Check(d)
}

// Validation is one validation of a training run.
type Validation struct {
	Step     int     `json:"step"`
	Accuracy float64 `json:"accuracy"`
}

// TrainingRecord describes the training of one embedding.
type TrainingRecord struct {
	Objective       string       `json:"objective"`
	Steps           int          `json:"steps"`
	BatchSize       int          `json:"batch_size"`       // images per step
	TrainingClasses int          `json:"training_classes"` // base classes (× 4 with rotations)
	Seconds         float64      `json:"seconds"`          // wall time of training and validation (summed over resumed runs)
	CPUSeconds      float64      `json:"cpu_seconds"`      // CPU time of the process over the same spans (all threads)
	BestStep        int          `json:"best_step"`
	BestAccuracy    float64      `json:"best_accuracy"`
	Validations     []Validation `json:"validations"`
	FirstLoss       float64      `json:"first_loss"`
	FinalLoss       float64      `json:"final_loss"`
	PeakHeapBytes   uint64       `json:"peak_heap_bytes,omitempty"`
}

// TransferStep reports one training step of the transfer protocol.
type TransferStep struct {
	Objective string // train.ObjectiveDrKNN or train.ObjectiveProto
	Stats     train.StepStats
	LR        float64
}

// Validated reports one validation of a training run.
type Validated struct {
	Objective string
	Step      int
	Accuracy  float64
	Best      bool // the best so far: the selected checkpoint
}

func (TransferStep) event() {}
func (Validated) event()    {}

// EpisodicSettings is what the episodic trainer needs from a transfer
// config for one objective.
func (c *Config) EpisodicSettings(objective string) train.EpisodicSettings {
	t := c.Transfer
	s := train.EpisodicSettings{Objective: objective, Steps: c.Train.Steps, LR: c.Train.LR,
		DecayEvery: t.DecayEvery, DecayFactor: t.DecayFactor, Ways: t.Ways, Episodes: t.Episodes,
		Rotate:  c.Data.RotateClasses,
		Augment: datasets.AugmentSettings{Shift: c.Train.Augment.Shift, Flip: c.Train.Augment.Flip}, Seed: c.Seed}
	if objective == train.ObjectiveProto {
		s.Shots, s.Queries = t.Shots, t.Queries
		return s
	}
	s.Shots = t.Shots + t.Queries // the same samples as the anchor's episode
	s.Minisets, s.MinisetSize, s.MinisetWays = c.Train.Minisets, c.Train.MinisetSize, t.MinisetWays
	ts := c.TrainSettings(c.Train.Theta, c.Seed, s.Ways*s.Shots)
	s.LFD = ts.LFD
	s.LFD.Workers = c.workers()
	return s
}

func (c *Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.NumCPU()
}

// trainKey identifies a training run: everything that changes its result
// (not the evaluated tasks, so cells of a table share one training). The
// number of steps is not part of it: step t does not depend on it, so a
// stopped training can be resumed with more steps, or finished where its
// checkpoint is (-resume -set train.steps=<the checkpoint's steps>; the
// final validation then runs at that step).
func trainKey(cfg Config, objective string, s *datasets.TransferSplit) string {
	tc := cfg.Train
	tc.Steps, tc.CheckpointEvery = 0, 0
	return fmt.Sprintf("transfer|%s|%s|%+v|%+v|%+v|%+v|seed %d|split %v %v %s|%s", objective, cfg.Dataset, cfg.Data, cfg.Model, tc, cfg.Transfer.key(),
		cfg.Seed, s.Base, s.Val, s.HeldOut, fmt.Sprint(len(s.TrainIndex), len(s.ValIndex)))
}

// trainSettings are the settings trainKey holds, as JSON beside a
// training's checkpoint (settings.json): a resume whose key differs names
// the keys that changed from them instead of printing the two keys.
type trainSettings struct {
	Dataset  string         `json:"dataset"`
	Seed     int64          `json:"seed"`
	Data     DataConfig     `json:"data"`
	Model    ModelConfig    `json:"model"`
	Train    TrainConfig    `json:"train"`
	Transfer TransferConfig `json:"transfer"`
	Split    struct {
		Base    []int  `json:"base"`
		Val     []int  `json:"val"`
		HeldOut string `json:"held_out"`
		Train   int    `json:"train_samples"`
		ValLen  int    `json:"val_samples"`
	} `json:"split"`
}

// settingsOf is trainSettings of a training run: what its key holds.
func settingsOf(cfg Config, s *datasets.TransferSplit) trainSettings {
	ts := trainSettings{Dataset: cfg.Dataset, Seed: cfg.Seed, Data: cfg.Data, Model: cfg.Model, Train: cfg.Train, Transfer: cfg.Transfer}
	ts.Train.Steps, ts.Train.CheckpointEvery = 0, 0
	ts.Transfer.Theta, ts.Transfer.Anchor = nil, nil // not in the key: the evaluation's
	ts.Split.Base, ts.Split.Val, ts.Split.HeldOut, ts.Split.Train, ts.Split.ValLen = s.Base, s.Val, s.HeldOut, len(s.TrainIndex), len(s.ValIndex)
	return ts
}

// checkpointMismatch is the error of a checkpoint at path made with other
// settings than want (what its key holds, as JSON): the keys that differ,
// read from the settings.json beside it (jsonDiff; long values shortened).
// A checkpoint without one, from before it was written, is refused all the
// same, naming what the key covers.
func checkpointMismatch(path string, want any, covers string) error {
	diff := "its settings.json is missing; the key covers " + covers
	var got map[string]any
	if b, err := os.ReadFile(settingsPath(path)); err == nil && json.Unmarshal(b, &got) == nil {
		if diff = jsonDiff(got, want); diff == "" {
			diff = "settings.json matches, yet the key differs (a checkpoint from another version)"
		}
	}
	return configErr(fmt.Errorf("resume %s: %w (%s); delete %s to train afresh, or use another output folder",
		path, train.ErrCheckpointMismatch, diff, filepath.Dir(path)))
}

// settingsPath is the settings.json beside the checkpoint file path: the
// settings its key holds (checkpointMismatch).
func settingsPath(checkpoint string) string {
	return filepath.Join(filepath.Dir(checkpoint), "settings.json")
}

func (t TransferConfig) key() string {
	k := fmt.Sprintf("%d/%d/%d/%d decay %d×%g val %d/%d/%d×%d", t.Ways, t.Shots, t.Queries, t.Episodes, t.DecayEvery, t.DecayFactor,
		t.ValidateEvery, t.ValWays, t.ValShots, t.ValTasks)
	if t.MinisetWays != 0 { // absent when 0: the keys of earlier trainings stay valid
		k += fmt.Sprintf(" miniset ways %d", t.MinisetWays)
	}
	return k
}

// trainState is what a transfer checkpoint carries besides the trainer's
// own state: the validations so far and the best weights.
type trainState struct {
	Validations []Validation
	BestStep    int
	BestAcc     float64
	Best        []byte // weights file of the best network
	// Seconds and CPUSeconds are the training's wall and CPU time so far,
	// over all the processes that ran it.
	Seconds, CPUSeconds float64
}

// decodeTrainState decodes the validation state a transfer training's
// checkpoint ck carries (trainState, gob), after stepsDone steps of
// training net, and checks it is one a run could have left: validations
// at increasing steps 0…stepsDone with accuracies in [0, 1], the best of
// them (the first at the highest accuracy) as BestStep and BestAcc, with
// its network in Best (net's config), or none at all (BestAcc −1), and
// finite times ≥ 0. The checksum covers these bytes, so a state that fails
// was written by another build or made by hand: refused as a corrupt
// checkpoint (train.ErrCorruptCheckpoint) in one line, before a training
// resumes from it — an undecodable Best would otherwise fail only after
// the last step, and a NaN time when results.json is written.
func decodeTrainState(ck string, extra []byte, stepsDone int, net *model.Net) (trainState, error) {
	bad := func(format string, a ...any) (trainState, error) {
		return trainState{}, fmt.Errorf("resume %s: %w: validation state: %s (delete it, or start again with -force)",
			ck, train.ErrCorruptCheckpoint, strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", `\n`))
	}
	var st trainState
	if err := gob.NewDecoder(bytes.NewReader(extra)).Decode(&st); err != nil {
		return bad("%v", err)
	}
	bestStep, bestAcc := 0, -1.0
	for i, v := range st.Validations {
		if v.Step < 0 || v.Step > stepsDone || (i > 0 && v.Step <= st.Validations[i-1].Step) {
			return bad("validation %d at step %d (after %d steps, the one before at %d)", i+1, v.Step, stepsDone, st.Validations[max(i-1, 0)].Step)
		}
		if !(v.Accuracy >= 0 && v.Accuracy <= 1) {
			return bad("validation %d (step %d) has accuracy %v, want [0, 1]", i+1, v.Step, v.Accuracy)
		}
		if v.Accuracy > bestAcc {
			bestStep, bestAcc = v.Step, v.Accuracy
		}
	}
	if st.BestStep != bestStep || st.BestAcc != bestAcc {
		return bad("best validation %v at step %d, the validations' is %v at step %d", st.BestAcc, st.BestStep, bestAcc, bestStep)
	}
	if len(st.Validations) == 0 && len(st.Best) != 0 {
		return bad("a best network without a validation")
	}
	if len(st.Validations) > 0 {
		best, err := model.UnmarshalNet(st.Best, "best network")
		if err != nil {
			return bad("%v", err)
		}
		if best.Config().String() != net.Config().String() {
			return bad("best network config %s, want %s", best.Config(), net.Config())
		}
	}
	if !(st.Seconds >= 0 && st.CPUSeconds >= 0) || math.IsInf(st.Seconds, 0) || math.IsInf(st.CPUSeconds, 0) {
		return bad("times %v s, %v CPU-s, want finite and ≥ 0", st.Seconds, st.CPUSeconds)
	}
	return st, nil
}

// EmbeddingOptions control TrainEmbedding.
type EmbeddingOptions struct {
	Dir      string // the objective's folder: checkpoint.bin, history.json, best.bin ("" writes nothing)
	Resume   bool   // continue from Dir's checkpoint (a finished one is reused as is)
	Observer Observer
}

// TrainEmbedding trains a fresh network (initialised from cfg.Seed) on the
// base classes' training samples of split with the objective
// (train.ObjectiveDrKNN or train.ObjectiveProto), validates every
// transfer.validate_every steps and at the end on the validation part
// only, and returns the network of the best validation (its weights and
// batch-norm statistics) with the record of the run. The novel classes'
// samples are never read. Cancelling ctx stops after the current step,
// saves the checkpoint and returns an error wrapping ctx's.
func TrainEmbedding(ctx context.Context, cfg Config, d *datasets.Dataset, split *datasets.TransferSplit, objective string, o EmbeddingOptions) (*model.Net, *TrainingRecord, error) {
	notify := o.Observer
	if notify == nil {
		notify = func(Event) {}
	}
	net, err := model.New(cfg.NetConfig(d.Shape), cfg.Seed)
	if err != nil {
		return nil, nil, err
	}
	s := cfg.EpisodicSettings(objective)
	tr, err := train.NewEpisodicTrainer(net, d, split.Base, split.TrainIndex, s)
	if err != nil {
		return nil, nil, err
	}
	defer tr.Close()
	val, err := newValidator(cfg, d, split, objective)
	if err != nil {
		return nil, nil, fmt.Errorf("validation: %w", err)
	}
	rec := &TrainingRecord{Objective: objective, Steps: s.Steps, BatchSize: tr.BatchSize(), TrainingClasses: tr.TrainingClasses()}
	st := trainState{BestAcc: -1}
	key := trainKey(cfg, objective, split)
	var ck string
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, nil, err
		}
		ck = filepath.Join(o.Dir, "checkpoint.bin")
		if o.Resume {
			if _, err := os.Stat(ck); err == nil {
				extra, err := tr.Resume(ck, key)
				if err != nil {
					if errors.Is(err, train.ErrCheckpointMismatch) {
						// a run folder of another config: exit 2, as a bad
						// config, naming the keys that changed
						err = checkpointMismatch(ck, settingsOf(cfg, split), "dataset, seed, data, model, train (but its steps), transfer and the class split")
					}
					return nil, nil, err
				}
				if st, err = decodeTrainState(ck, extra, tr.StepsDone(), net); err != nil {
					return nil, nil, err
				}
				notify(TrainingResumed{Objective: objective, Step: tr.StepsDone(), Steps: s.Steps})
				notify(Message{resumedText(objective, tr.StepsDone(), s.Steps, ck)})
			}
		}
	}
	t0, c0 := time.Now(), processCPU()
	sec0, cpu0 := st.Seconds, st.CPUSeconds
	clock := func() {
		st.Seconds, st.CPUSeconds = sec0+time.Since(t0).Seconds(), cpu0+processCPU()-c0
	}
	save := func() error {
		clock()
		if ck == "" {
			return nil
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(st); err != nil {
			return err
		}
		if err := writeJSON(settingsPath(ck), settingsOf(cfg, split)); err != nil {
			return err
		}
		// a state the last step left non-finite is not written: the
		// step's divergence, as one found by the next step's run
		if err := tr.SaveCheckpoint(ck, key, buf.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", objective, divergedErr(err, s.Steps, s.LR))
		}
		return nil
	}
	validate := func() error {
		// weights the last step left non-finite are its divergence, not
		// a validation's failure on NaN embeddings
		if err := tr.Diverged(); err != nil {
			return fmt.Errorf("%s: %w", objective, divergedErr(err, s.Steps, s.LR))
		}
		acc, err := val.accuracy(net)
		if err != nil {
			return fmt.Errorf("validation at step %d: %w", tr.StepsDone(), err)
		}
		step := tr.StepsDone()
		st.Validations = append(st.Validations, Validation{Step: step, Accuracy: acc})
		best := acc > st.BestAcc
		if best {
			st.BestStep, st.BestAcc = step, acc
			if st.Best, err = net.MarshalBinary(); err != nil {
				return err
			}
		}
		notify(Validated{Objective: objective, Step: step, Accuracy: acc, Best: best})
		notify(Message{fmt.Sprintf("%s: step %d validation accuracy %.4f%s", objective, step, acc, map[bool]string{true: " (best)"}[best])})
		return nil
	}
	var peak uint64
	saved := tr.StepsDone()
	saturated, warned := 0, false // consecutive drknn steps at the largest risk; warned once
	for !tr.Done() {
		if err := ctx.Err(); err != nil {
			if tr.StepsDone() > saved {
				if err := save(); err != nil {
					return nil, nil, err
				}
			}
			return nil, nil, fmt.Errorf("%s: stopped after step %d of %d: %w", objective, tr.StepsDone(), s.Steps, context.Cause(ctx))
		}
		stats, err := tr.Step()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", objective, divergedErr(err, s.Steps, s.LR))
		}
		notify(TransferStep{Objective: objective, Stats: stats, LR: s.LRAt(stats.Step)})
		if objective == train.ObjectiveDrKNN && !warned {
			if m := riskClasses(s); stats.Risk >= float64(m-1)-SaturatedRiskTol {
				saturated++
			} else {
				saturated = 0
			}
			if saturated == SaturatedRiskSteps {
				warned = true
				notify(Message{fmt.Sprintf("%s: warning: the worst-case risk has been at its largest value, M − 1 = %d, for %d steps (step %d): "+
					"train.theta = %v lets the adversary move every class onto the others, the gradient is zero and the embedding does not train; lower train.theta",
					objective, riskClasses(s)-1, SaturatedRiskSteps, stats.Step, cfg.Train.Theta)})
			}
		}
		if v := cfg.Transfer.ValidateEvery; tr.Done() || (v > 0 && stats.Step%v == 0) {
			if err := validate(); err != nil {
				return nil, nil, err
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapSys)
		}
		if tr.Done() || (cfg.Train.CheckpointEvery > 0 && stats.Step%cfg.Train.CheckpointEvery == 0) {
			if err := save(); err != nil {
				return nil, nil, err
			}
			saved = tr.StepsDone()
		}
	}
	if len(st.Validations) == 0 || st.Validations[len(st.Validations)-1].Step != tr.StepsDone() { // steps = 0, or resumed after the end
		if err := validate(); err != nil {
			return nil, nil, err
		}
	}
	rec.Seconds, rec.CPUSeconds, rec.PeakHeapBytes = st.Seconds, st.CPUSeconds, peak
	rec.BestStep, rec.BestAccuracy, rec.Validations = st.BestStep, st.BestAcc, st.Validations
	if h := tr.History(); len(h) > 0 {
		rec.FirstLoss, rec.FinalLoss = h[0].Risk, h[len(h)-1].Risk
		if o.Dir != "" {
			if err := writeJSON(filepath.Join(o.Dir, "history.json"), h); err != nil {
				return nil, nil, err
			}
		}
	}
	best, err := model.UnmarshalNet(st.Best, "best checkpoint")
	if err != nil {
		return nil, nil, err
	}
	notify(Message{fmt.Sprintf("%s: %d steps in %.0f s (%.0f CPU-s), loss %.4f → %.4f, best validation %.4f at step %d",
		objective, s.Steps, rec.Seconds, rec.CPUSeconds, rec.FirstLoss, rec.FinalLoss, st.BestAcc, st.BestStep)})
	return best, rec, nil
}

// A Dr.k-NN training whose risk stays within SaturatedRiskTol of its
// largest value M − 1 (M the classes of a mini-set) for SaturatedRiskSteps
// consecutive steps logs a warning: the radius saturates the LFD (its value
// is 1, every class spread over all the points), the gradient is zero and
// nothing trains. Measured on CIFAR-10: ϑ = 1.0 with five-class mini-sets
// and ϑ = 0.7 with two-class ones left the risk at exactly M − 1 for every
// step (README, transfer results).
const (
	SaturatedRiskSteps = 20
	SaturatedRiskTol   = 1e-6
)

// riskClasses is the number of classes of a Dr.k-NN mini-set.
func riskClasses(s train.EpisodicSettings) int {
	if s.MinisetWays > 0 {
		return s.MinisetWays
	}
	return s.Ways
}

// validator scores a network on fixed tasks of the validation part.
type validator struct {
	cfg       Config
	d         *datasets.Dataset
	objective string
	index     []int
	tasks     []*datasets.Episode
}

func newValidator(cfg Config, d *datasets.Dataset, split *datasets.TransferSplit, objective string) (*validator, error) {
	t := cfg.Transfer
	ts, err := datasets.NewTaskSampler(d, datasets.TaskSettings{Ways: t.ValWays, Shots: t.ValShots, Queries: DefaultValQueries,
		Classes: split.Val, Index: split.ValIndex})
	if err != nil {
		return nil, err
	}
	v := &validator{cfg: cfg, d: d, objective: objective, index: split.ValIndex}
	for r := 0; r < t.ValTasks; r++ {
		v.tasks = append(v.tasks, ts.Draw(cfg.Seed+1_000_000+int64(r)))
	}
	return v, nil
}

// accuracy embeds the validation samples (inference mode) and returns the
// mean accuracy over the tasks: Dr.k-NN for the drknn objective, the
// nearest prototype for the anchor.
func (v *validator) accuracy(net *model.Net) (float64, error) {
	emb, err := embedIndex(net, v.d, v.index)
	if err != nil {
		return 0, err
	}
	method := eval.MethodDrKNN
	if v.objective == train.ObjectiveProto {
		method = eval.MethodNearestCentroid
	}
	accs := make([]float64, len(v.tasks))
	err = par.For(len(v.tasks), v.cfg.workers(), func(r int) error {
		a, err := taskAccuracy(v.cfg, emb, v.tasks[r], method, nil)
		accs[r] = a
		return err
	})
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, a := range accs {
		sum += a
	}
	return sum / float64(len(accs)), nil
}

// indexedEmbedding holds the embeddings of some samples of a data set.
type indexedEmbedding struct {
	e   []float64
	dim int
	row map[int]int // sample index → row
}

func (ie *indexedEmbedding) gather(idx []int) []float64 {
	out := make([]float64, 0, len(idx)*ie.dim)
	for _, i := range idx {
		r := ie.row[i]
		out = append(out, ie.e[r*ie.dim:(r+1)*ie.dim]...)
	}
	return out
}

// embedIndex embeds the samples idx of d (inference mode).
func embedIndex(net *model.Net, d *datasets.Dataset, idx []int) (*indexedEmbedding, error) {
	sub := d.Subset(idx)
	e, err := net.Embed(sub.X, sub.Len())
	if err != nil {
		return nil, err
	}
	ie := &indexedEmbedding{e: e, dim: net.Dim(), row: make(map[int]int, len(idx))}
	for r, i := range idx {
		ie.row[i] = r
	}
	return ie, nil
}

// taskAccuracy classifies one task's queries from its support set with a
// method on the frozen embedding emb. Dr.k-NN and its truncation vote with
// the LFD solved on the support set (radius transfer.theta, costs
// normalised as in training) with k = min(eval.k, shots). gap, when not
// nil, receives the LFD's certified relative gap.
func taskAccuracy(cfg Config, emb *indexedEmbedding, ep *datasets.Episode, method string, gap *float64) (float64, error) {
	ways := len(ep.Classes)
	n, nq := len(ep.TrainIndex), len(ep.QueryIndex)
	x, q := emb.gather(ep.TrainIndex), emb.gather(ep.QueryIndex)
	s := cfg.EvalSettings()
	s.K = min(s.K, n/ways)
	var p []float64
	if eval.NeedsP(method) {
		res, err := SolveLFD(cfg, x, n, emb.dim, ep.TrainLabels, cfg.Transfer.Theta)
		if err != nil {
			return 0, fmt.Errorf("LFD on the support set: %w", err)
		}
		p = res.P
		if gap != nil {
			*gap = res.RelGap
		}
	}
	if method == eval.MethodProtoNet {
		method = eval.MethodNearestCentroid
	}
	c, err := eval.New(method, s, p)
	if err != nil {
		return 0, err
	}
	acc, _, err := eval.Evaluate(c, x, n, emb.dim, ep.TrainLabels, ways, q, nq, ep.QueryLabels)
	return acc, err
}

// TransferTask draws novel-class task r (0-based) of the config: ways
// classes, shots supports and queries queries per class (all that remain
// when fewer), seed cfg.Seed + r.
func TransferTask(cfg Config, d *datasets.Dataset, split *datasets.TransferSplit, r int) (*datasets.Episode, error) {
	return datasets.NewTask(d, datasets.TaskSettings{Ways: cfg.Ways, Shots: cfg.Shots, Queries: cfg.Queries,
		Classes: split.Novel, Index: split.NovelIndex, Seed: RepeatSeed(cfg, r)})
}

// EvaluateTransfer evaluates every method on cfg.Repeats novel-class tasks
// with the frozen embeddings nets (train.ObjectiveDrKNN's for the
// classifiers on the Dr.k-NN embedding, train.ObjectiveProto's for
// proto_net): all methods on the same tasks. It returns the accuracy of
// each method on each task and the tasks' records. notify receives, one
// at a time, a UnitDone for each method on each task (Repeat is the task)
// and a RepeatDone for each task.
func EvaluateTransfer(ctx context.Context, cfg Config, d *datasets.Dataset, split *datasets.TransferSplit, nets map[string]*model.Net,
	notify Observer) (map[string][]float64, []EpisodeRecord, error) {
	notify = serial(notify)
	ts, err := datasets.NewTaskSampler(d, datasets.TaskSettings{Ways: cfg.Ways, Shots: cfg.Shots, Queries: cfg.Queries,
		Classes: split.Novel, Index: split.NovelIndex})
	if err != nil {
		return nil, nil, err
	}
	embs := map[string]*indexedEmbedding{}
	for obj, net := range nets {
		if embs[obj], err = embedIndex(net, d, split.NovelIndex); err != nil {
			return nil, nil, err
		}
	}
	methods := cfg.transferMethods()
	accs := map[string][]float64{}
	for _, m := range methods {
		accs[m] = make([]float64, cfg.Repeats)
	}
	recs := make([]EpisodeRecord, cfg.Repeats)
	err = par.For(cfg.Repeats, cfg.workers(), func(r int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		seed := RepeatSeed(cfg, r)
		ep := ts.Draw(seed)
		rec := EpisodeRecord{Seed: seed, Classes: ep.Classes, ClassNames: datasets.ClassNames(d, ep.Classes),
			TrainIndex: ep.TrainIndex, QueryIndex: ep.QueryIndex, Short: ep.Short, Theta: cfg.Transfer.Theta}
		for _, m := range methods {
			obj := train.ObjectiveDrKNN
			if m == eval.MethodProtoNet {
				obj = train.ObjectiveProto
			}
			emb := embs[obj]
			if emb == nil {
				return fmt.Errorf("method %s: no %s embedding", m, obj)
			}
			var gap *float64
			if m == eval.MethodDrKNN {
				gap = &rec.LFDRelGap
			}
			var a float64
			var err error
			t0 := time.Now()
			if failHook != nil {
				err = failHook(r, m)
			}
			if err == nil {
				a, err = taskAccuracy(cfg, emb, ep, m, gap)
			}
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("task %d, %s: %w", r+1, m, context.Cause(ctx))
				}
				// Recorded as in the episodes protocol (the task's
				// method_errors, NaN accuracy); the other methods go on.
				msg := oneline.Err(err)
				if rec.MethodErrors == nil {
					rec.MethodErrors = map[string]string{}
				}
				rec.MethodErrors[m] = msg
				notify(Message{fmt.Sprintf("task %d: %s failed: %s", r+1, m, msg)})
				a = math.NaN()
			}
			accs[m][r] = a
			notify(UnitDone{Repeat: r, Method: m, Accuracy: a, Seconds: time.Since(t0).Seconds(), Err: rec.MethodErrors[m]})
		}
		recs[r] = rec
		done := map[string]float64{}
		for _, m := range methods {
			done[m] = accs[m][r]
		}
		notify(RepeatDone{Repeat: r, Episode: rec, Accuracy: done})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return accs, recs, nil
}

// TransferInfo is the transfer protocol's part of results.json.
type TransferInfo struct {
	Split    SplitRecord                `json:"split"`
	Training map[string]*TrainingRecord `json:"training"` // by objective
	Theta    []float64                  `json:"theta"`    // the support sets' LFD radius
	K        int                        `json:"k"`        // neighbours of drknn, drknn_truncated and embedding_knn
	// EvalSeconds is the wall time of embedding the novel samples and
	// evaluating every method on every task.
	EvalSeconds float64 `json:"eval_seconds"`
}

// SplitRecord is a TransferSplit by class name, with its sample counts.
type SplitRecord struct {
	Base          []string `json:"base"`
	Val           []string `json:"val"`
	Novel         []string `json:"novel"`
	HeldOut       string   `json:"held_out"`
	TrainSamples  int      `json:"train_samples"`
	ValSamples    int      `json:"val_samples"`
	NovelSamples  int      `json:"novel_samples"`
	RotateClasses bool     `json:"rotate_classes"`
}

func splitRecord(cfg Config, d *datasets.Dataset, s *datasets.TransferSplit) SplitRecord {
	return SplitRecord{Base: datasets.ClassNames(d, s.Base), Val: datasets.ClassNames(d, s.Val), Novel: datasets.ClassNames(d, s.Novel),
		HeldOut: s.HeldOut, TrainSamples: len(s.TrainIndex), ValSamples: len(s.ValIndex), NovelSamples: len(s.NovelIndex),
		RotateClasses: cfg.Data.RotateClasses}
}

// TransferOptions control RunTransferData beyond Options.
type TransferOptions struct {
	Options
	// TrainDir holds the training runs (TrainDir/drknn, TrainDir/proto);
	// "" = OutDir/train. Cells of a table share one.
	TrainDir string
}

// runTransfer is Run for the transfer protocol.
func runTransfer(ctx context.Context, cfg Config, opts Options, start time.Time) (*Results, error) {
	d, err := LoadTransferData(cfg)
	if err != nil {
		return nil, err
	}
	return runTransferData(ctx, cfg, d, TransferOptions{Options: opts}, start)
}

// RunTransferData runs the transfer protocol on a data set in memory:
// splits it, trains the Dr.k-NN embedding (and the anchor), evaluates the
// novel-class tasks, writes OutDir/results.json and exports the Dr.k-NN
// embedding to OutDir/export (predict.LoadEmbedding reads it).
func RunTransferData(ctx context.Context, cfg Config, d *datasets.Dataset, opts TransferOptions) (*Results, error) {
	return runTransferData(ctx, cfg, d, opts, time.Now())
}

func runTransferData(ctx context.Context, cfg Config, d *datasets.Dataset, opts TransferOptions, start time.Time) (res *Results, err error) {
	notify := serial(opts.Observer)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Protocol != ProtocolTransfer {
		return nil, configErr(fmt.Errorf("key protocol = %q: not the transfer protocol", cfg.Protocol))
	}
	if len(d.Shape) != 3 {
		return nil, configErr(fmt.Errorf("the transfer protocol trains an image backbone; %s has samples of shape %v", cfg.Dataset, d.Shape))
	}
	split, err := TransferSplitOf(cfg, d)
	if err != nil {
		return nil, err
	}
	if err := checkTransferSizes(cfg, d, split); err != nil {
		return nil, err
	}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("run folder: %w", err)
		}
	}
	methods := cfg.transferMethods()
	objectives := transferObjectives(cfg, methods)
	notify(Started{Dir: opts.OutDir, Config: cfg, Samples: d.Len(), Shape: d.Shape, Repeats: len(objectives), Steps: cfg.Train.Steps,
		Methods: methods, Tasks: cfg.Repeats})
	defer func() { notify(Finished{Results: res, Err: err}) }()
	trainDir := opts.TrainDir
	if trainDir == "" && opts.OutDir != "" {
		trainDir = filepath.Join(opts.OutDir, "train")
	}
	defer func() {
		switch {
		case err != nil && ctx.Err() != nil:
			notify(Message{transferInterruptedText(err, opts.OutDir, trainDir)}) // before Finished
		case err != nil:
			notify(Message{failedText(err)})
		}
	}()
	notify(Message{fmt.Sprintf("transfer: %s, %d base classes (%d training samples%s), %d validation classes (%s, %d samples), %d novel classes (%d samples)",
		cfg.Dataset, len(split.Base), len(split.TrainIndex), map[bool]string{true: ", rotated ×4"}[cfg.Data.RotateClasses],
		len(split.Val), split.HeldOut, len(split.ValIndex), len(split.Novel), len(split.NovelIndex))})

	info := &TransferInfo{Split: splitRecord(cfg, d, split), Training: map[string]*TrainingRecord{}, Theta: cfg.Transfer.Theta,
		K: min(cfg.Eval.K, cfg.Shots)}
	nets := map[string]*model.Net{}
	anchorErr := "" // why the anchor's training failed
	for _, obj := range objectives {
		eo := EmbeddingOptions{Resume: opts.Resume, Observer: notify}
		if trainDir != "" {
			eo.Dir = filepath.Join(trainDir, obj)
		}
		var net *model.Net
		var rec *TrainingRecord
		var err error
		if failHook != nil {
			err = failHook(0, "train:"+obj)
		}
		if err == nil {
			net, rec, err = TrainEmbedding(ctx, cfg, d, split, obj, eo)
		}
		if err != nil {
			if errStopped(err) && ctx.Err() != nil {
				ck := ""
				if eo.Dir != "" {
					ck = filepath.Join(eo.Dir, "checkpoint.bin")
				}
				// "drknn interrupted: stopped after step 4 of 6: …", as a repeat's
				notify(Message{stoppedText(obj, errors.New(strings.TrimPrefix(oneline.Err(err), obj+": ")), ck)})
			}
			if ctx.Err() != nil || obj != train.ObjectiveProto || len(objectives) == 1 {
				return nil, err
			}
			// The anchor's training failed: proto_net is recorded as
			// failed on every task; the Dr.k-NN embedding's methods go on.
			anchorErr = oneline.Err(err)
			notify(Message{fmt.Sprintf("training the %s anchor failed: %s", obj, anchorErr)})
			continue
		}
		nets[obj], info.Training[obj] = net, rec
	}
	evalCfg := cfg
	if anchorErr != "" {
		evalCfg.Eval.Methods = slices.DeleteFunc(slices.Clone(methods), func(m string) bool { return m == eval.MethodProtoNet })
	}
	t0 := time.Now()
	accs, recs, err := EvaluateTransfer(ctx, evalCfg, d, split, nets, notify)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted during evaluation: %w", context.Cause(ctx))
		}
		return nil, err
	}
	info.EvalSeconds = time.Since(t0).Seconds()
	res = &Results{Dataset: cfg.Dataset, Ways: cfg.Ways, Shots: cfg.Shots, Repeats: cfg.Repeats, Seed: cfg.Seed,
		Methods: map[string]MethodResult{}, Episodes: recs, Config: cfg, Transfer: info}
	for r, rec := range recs {
		for _, m := range slices.Sorted(maps.Keys(rec.MethodErrors)) {
			res.Errors = append(res.Errors, fmt.Sprintf("task %d: %s: %s", r+1, m, rec.MethodErrors[m]))
		}
	}
	if anchorErr != "" {
		why := fmt.Sprintf("training the %s anchor: %s", train.ObjectiveProto, anchorErr)
		res.Errors = append(res.Errors, fmt.Sprintf("%s: %s", eval.MethodProtoNet, why))
		accs[eval.MethodProtoNet] = make([]float64, cfg.Repeats)
		for r := range recs {
			accs[eval.MethodProtoNet][r] = math.NaN()
			if recs[r].MethodErrors == nil {
				recs[r].MethodErrors = map[string]string{}
			}
			recs[r].MethodErrors[eval.MethodProtoNet] = why
		}
	}
	for _, m := range methods {
		mr := MethodResult{Mean: math.NaN(), CI95: math.NaN(), PerRepeat: accs[m]}
		for r, a := range accs[m] {
			if math.IsNaN(a) {
				mr.Failed = append(mr.Failed, r+1)
				if mr.Error == "" {
					mr.Error = fmt.Sprintf("task %d: %s", r+1, recs[r].MethodErrors[m])
				}
			}
		}
		if m == eval.MethodProtoNet && anchorErr != "" {
			mr.Error = fmt.Sprintf("training the %s anchor: %s", train.ObjectiveProto, anchorErr) // not one task's failure
		}
		line := fmt.Sprintf("%-18s failed on every task: %s", m, mr.Error)
		if done := mr.Completed(); len(done) > 0 {
			s, err := eval.Summarize(done)
			if err != nil {
				return nil, err
			}
			mr.Mean, mr.CI95 = s.Mean, s.HalfWidth
			line = fmt.Sprintf("%-18s %s", m, meanCIText(s.Mean, s.HalfWidth))
			if mr.Error != "" {
				line += fmt.Sprintf(" (failed on %d of %d tasks: %s)", len(mr.Failed), cfg.Repeats, mr.Error)
			}
		}
		res.Methods[m] = mr
		notify(Message{line})
	}
	res.Seconds = time.Since(start).Seconds()
	if opts.OutDir != "" {
		// The export is the Dr.k-NN embedding's: an anchor-only run
		// (eval.methods [proto_net]) has none, but its results are
		// written all the same.
		if net := nets[train.ObjectiveDrKNN]; net != nil {
			if err := ExportEmbedding(filepath.Join(opts.OutDir, "export"), cfg, d, split, net); err != nil {
				return nil, err
			}
		}
		if err := writeJSON(filepath.Join(opts.OutDir, "results.json"), res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// transferInterruptedText is the log line of a transfer run stopped
// (Ctrl-C) with err, naming the trainings' checkpoints kept under trainDir
// (the run folder's train/, or the folder a table's cells share) as
// InterruptedNote does.
func transferInterruptedText(err error, outDir, trainDir string) string {
	if trainDir == "" || trainDir == filepath.Join(outDir, "train") {
		return interruptedText(err, outDir)
	}
	msg := interruptedText(err, "")
	kept, _ := filepath.Glob(filepath.Join(trainDir, "*", "checkpoint.bin"))
	if len(kept) == 0 {
		return fmt.Sprintf("%s; no checkpoint was written in %s before the stop; a rerun (-resume or -force) trains from the start", msg, trainDir)
	}
	return fmt.Sprintf("%s; checkpoints kept in %s; continue with -resume", msg, strings.Join(kept, ", "))
}

// checkTransferSizes checks the sizes of the config's episodes and tasks
// against the classes and samples of the split, before any training: the
// novel tasks (ways, shots), the training episodes (transfer.ways,
// transfer.shots + transfer.queries per class) and the validation tasks
// (transfer.val_ways, transfer.val_shots). Errors are ErrConfig and name
// the key and what the split holds.
func checkTransferSizes(cfg Config, d *datasets.Dataset, split *datasets.TransferSplit) error {
	t := cfg.Transfer
	bad := func(key string, v any, why string) error { return configErr(badKey(key, v, why)) }
	// fewest returns the class of cs with the fewest samples among idx
	// and that number.
	fewest := func(cs, idx []int) (string, int) {
		n := map[int]int{}
		for _, i := range idx {
			n[d.Labels[i]]++
		}
		name, least := "", math.MaxInt
		for _, c := range cs {
			if n[c] < least {
				name, least = d.Classes[c], n[c]
			}
		}
		return name, least
	}
	if len(split.Novel) < cfg.Ways {
		return bad("ways", cfg.Ways, fmt.Sprintf("the novel-class tasks draw from the %d novel classes of %s (%s)", len(split.Novel), cfg.Dataset, classList(d, split.Novel)))
	}
	if name, n := fewest(split.Novel, split.NovelIndex); n < cfg.Shots+1 {
		return bad("shots", cfg.Shots, fmt.Sprintf("novel class %q has %d samples; a %d-shot task needs %d per class (the shots and at least one query)", name, n, cfg.Shots, cfg.Shots+1))
	}
	classes, rot := len(split.Base), ""
	if cfg.Data.RotateClasses {
		classes, rot = classes*datasets.Rotations, fmt.Sprintf(" (%d base classes × %d rotations)", len(split.Base), datasets.Rotations)
	}
	if classes < t.Ways {
		return bad("transfer.ways", t.Ways, fmt.Sprintf("the training episodes draw from %d training classes%s", classes, rot))
	}
	if name, n := fewest(split.Base, split.TrainIndex); n < t.Shots+t.Queries {
		return bad("transfer.shots", t.Shots, fmt.Sprintf("base class %q has %d training samples; a training episode takes transfer.shots + transfer.queries = %d per class", name, n, t.Shots+t.Queries))
	}
	if len(split.Val) < t.ValWays {
		return bad("transfer.val_ways", t.ValWays, fmt.Sprintf("the validation tasks draw from the %d validation classes (%s)", len(split.Val), split.HeldOut))
	}
	if name, n := fewest(split.Val, split.ValIndex); n < t.ValShots+1 {
		return bad("transfer.val_shots", t.ValShots, fmt.Sprintf("validation class %q has %d validation samples; a %d-shot validation task needs %d per class", name, n, t.ValShots, t.ValShots+1))
	}
	return nil
}

// classList names the classes cs of d, the first few when there are many.
func classList(d *datasets.Dataset, cs []int) string {
	names := datasets.ClassNames(d, cs)
	if len(names) > 6 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(", … %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// EmbeddingSettings are the predict settings of a transfer config's
// embedding of images of the given shape: how a support set is turned
// into a classifier, and how new images are prepared.
func (c *Config) EmbeddingSettings(shape []int) predict.EmbeddingSettings {
	return predict.EmbeddingSettings{K: c.Eval.K, Tau: c.Eval.Tau, Bandwidth: c.Eval.Bandwidth, Theta: c.Transfer.Theta,
		ThetaRelative: c.Train.ThetaRelative, Metric: c.Train.Metric, Epsilon: c.Train.Epsilon, Tol: c.Train.Tol, Dataset: c.Dataset,
		Input: &predict.Input{Kind: predict.InputImages, Reader: c.Dataset, Shape: slices.Clone(shape)}}
}

// ExportEmbedding writes the trained embedding net of a transfer run to
// dir (predict.WriteEmbedding): the network, the preprocessing, the
// support-set classifier's settings, the class split and the config.
func ExportEmbedding(dir string, cfg Config, d *datasets.Dataset, split *datasets.TransferSplit, net *model.Net) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	e, err := predict.NewEmbedding(net, cfg.EmbeddingSettings(d.Shape))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	rc, err := predict.Record(cfg)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	sr := splitRecord(cfg, d, split)
	return predict.WriteEmbedding(dir, e, predict.EmbeddingManifest{Config: rc,
		Split: predict.ClassSplit{Base: sr.Base, Val: sr.Val, Novel: sr.Novel, HeldOut: sr.HeldOut}})
}

// hasKey reports whether the mapping root sets the dotted key
// ("repeats", "transfer.ways"): every part of it is present, the last
// with any value.
func hasKey(root *yaml.Node, key string) bool {
	n := root
	for _, part := range strings.Split(key, ".") {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return false
		}
		var child *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				child = n.Content[i+1]
				break
			}
		}
		if child == nil {
			return false
		}
		n = child
	}
	return true
}

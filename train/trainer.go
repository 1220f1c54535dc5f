package train

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/drknn/drknn/datasets"
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer/gop"
)

// Settings control one run of Algorithm 1 on an episode's training samples.
type Settings struct {
	Steps       int     // Adam steps
	LR          float64 // Adam learning rate
	Minisets    int     // mini-sets per step
	MinisetSize int     // n′ (0 = all training samples)
	Ways        int     // M: classes of the labels (0…M−1), every mini-set holds each
	// LFD is the layer the risk goes through: radii, metric, cost
	// normalisation, solver settings and the goroutines over a step's
	// mini-sets (its Labels are unused: each mini-set has its own).
	LFD  gop.Settings
	Seed int64 // mini-set draws of step t use a generator seeded by (Seed, t)
	// Augment transforms the training images anew at every step (after the
	// step's mini-sets are drawn, from the same generator), so a resumed
	// run sees the same images. Zero = train on the samples as given.
	Augment datasets.AugmentSettings
	// Gather embeds only the step's mini-sets — Minisets × n′ rows, a
	// sample once for each mini-set that draws it — instead of all n
	// training samples, so a step costs the same whatever n: the form for
	// training sets much larger than a mini-set (protocol fit). The
	// mini-sets, the risk and (for networks without batch statistics) the
	// gradient are those of the ungathered step. Off: every sample is
	// embedded once per step, as in the paper's episodes.
	Gather bool
}

// StepStats describe one training step.
type StepStats struct {
	Step       int     `json:"step"` // 1-based
	Risk       float64 `json:"risk"` // mean worst-case risk before the update
	MeanRelGap float64 `json:"mean_rel_gap"`
	MaxRelGap  float64 `json:"max_rel_gap"`
	Iterations int     `json:"iterations"`
	NotOptimal int     `json:"not_optimal"`
}

// Trainer runs Algorithm 1: each Step draws mini-sets from the training
// samples, embeds all samples once, solves every mini-set's LFD inside the
// Gorgonia graph (the gop.Risk layer: gop.WorstCaseRisk) and takes one Adam
// step on the mean worst-case risk. The Net's weights change in place.
type Trainer struct {
	net     *model.Net
	s       Settings
	n       int
	vm      G.VM
	adam    *model.Adam
	risk    *gop.RiskLayer
	sampler *datasets.MiniSetSampler
	history []StepStats
	learn   G.Nodes // the network's learnable nodes and
	emb     *G.Node // its output: what a failed step looks at (stepError)

	// Augmentation and gathering: the samples as given, the image shape,
	// buffers for the step's gathered rows and transformed copy, and the
	// input node they are copied to.
	x     []float32
	shape []int
	rows  int // rows of the input node: n, or Minisets × n′ when gathering
	size  int // n′
	gath  []float32
	aug   []float32
	in    *model.Input
}

// NewTrainer prepares training of net on n samples x (n×InSize, pixels
// scaled to [0,1]) with labels 0…Ways−1.
func NewTrainer(net *model.Net, x []float32, labels []int, s Settings) (*Trainer, error) {
	cfg := net.Config()
	n := len(labels)
	if n == 0 || len(x) != n*cfg.InSize() {
		return nil, fmt.Errorf("train: %d values for %d samples of size %d", len(x), n, cfg.InSize())
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("train: sample %d holds a non-finite value", i/cfg.InSize())
		}
	}
	if s.Steps < 0 || !(s.LR > 0) || s.Minisets < 1 {
		return nil, fmt.Errorf("train: bad settings: steps %d, lr %g, minisets %d", s.Steps, s.LR, s.Minisets)
	}
	if err := s.Augment.Validate(cfg.InShape); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	size := s.MinisetSize
	if size == 0 {
		size = n
	}
	sampler, err := datasets.NewMiniSetSampler(labels, s.Ways, size)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	t := &Trainer{net: net, s: s, n: n, sampler: sampler, rows: n, size: size}
	in := x
	if s.Gather {
		t.rows = s.Minisets * size
		t.gath = make([]float32, t.rows*cfg.InSize())
		in = t.gath
	}

	g := G.NewGraph()
	if t.in, err = net.NewInput(g, "train.x", t.rows, in); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if s.Augment.Enabled() || s.Gather {
		t.x, t.shape = append([]float32(nil), x...), cfg.InShape
		if s.Augment.Enabled() {
			t.aug = make([]float32, len(in))
		}
	}
	emb, learn, err := net.Build(g, t.in.Node)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if t.risk, err = gop.Risk(emb, s.LFD); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	t.learn, t.emb = learn, emb
	if t.vm, t.adam, err = model.NewMinimiser(g, t.risk.Output, learn, model.AdamSettings{LR: s.LR}); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return t, nil
}

// Close releases the trainer's Gorgonia machine. The Net stays usable.
func (t *Trainer) Close() error { return t.vm.Close() }

// StepsDone is the number of steps taken (including restored ones).
func (t *Trainer) StepsDone() int { return len(t.history) }

// History returns the statistics of every step taken.
func (t *Trainer) History() []StepStats { return append([]StepStats(nil), t.history...) }

// Done reports whether all configured steps are taken.
func (t *Trainer) Done() bool { return len(t.history) >= t.s.Steps }

// stepRand is the generator of step number step (0-based): a function of
// the seed and the step alone, so a resumed run draws the same mini-sets.
func (t *Trainer) stepRand(step int) *rand.Rand {
	return rand.New(rand.NewSource(t.s.Seed*1_000_003 + int64(step)*7_919 + 17))
}

// Step takes one training step.
func (t *Trainer) Step() (StepStats, error) {
	step := len(t.history)
	rng := t.stepRand(step)
	sets := make([]gop.MiniSet, t.s.Minisets)
	for k := range sets {
		ms := t.sampler.Draw(rng)
		sets[k] = gop.MiniSet{Index: ms.Index, Labels: ms.Labels}
	}
	if err := t.load(rng, sets); err != nil {
		return StepStats{}, fmt.Errorf("train: step %d: %w", step+1, err)
	}
	// The risk layer solves every mini-set's LFD in the forward pass and
	// hands the exact gradient to the graph in the backward pass. It holds
	// only the mini-sets, never the trainer: a cycle through Gorgonia's tape
	// machine (which has a finaliser) would never be collected.
	t.risk.SetBatch(sets)
	defer t.risk.SetBatch(nil)
	defer t.vm.Reset()
	if err := t.vm.RunAll(); err != nil {
		return StepStats{}, stepError(step, err, true, t.learn, t.emb, "risk")
	}
	if err := t.adam.Step(); err != nil {
		return StepStats{}, stepError(step, err, false, t.learn, t.emb, "risk")
	}
	if step+1 == t.s.Steps { // no next step to find what this one left
		if d := stateDiverged(t.learn, t.net, t.adam, step+1); d != nil {
			return StepStats{}, d
		}
	}
	r := t.risk.Last()
	st := StepStats{Step: step + 1, Risk: r.Risk, MeanRelGap: r.MeanRelGap, MaxRelGap: r.MaxRelGap,
		Iterations: r.Iterations, NotOptimal: r.NotOptimal}
	t.history = append(t.history, st)
	return st, nil
}

// load writes this step's input rows into the input node's value (the
// tape machine reads it at every run): when gathering, the mini-sets'
// samples (and the mini-sets are renumbered to those rows); when
// augmenting, a transformed copy drawn from rng. Otherwise the node keeps
// the samples as given.
func (t *Trainer) load(rng *rand.Rand, sets []gop.MiniSet) error {
	if !t.s.Augment.Enabled() && !t.s.Gather {
		return nil
	}
	src := t.x
	if t.s.Gather {
		insize := len(t.x) / t.n
		for k := range sets {
			idx := make([]int, len(sets[k].Index))
			for j, i := range sets[k].Index {
				row := k*t.size + j
				copy(t.gath[row*insize:(row+1)*insize], t.x[i*insize:(i+1)*insize])
				idx[j] = row
			}
			sets[k].Index = idx
		}
		src = t.gath
	}
	if t.s.Augment.Enabled() {
		if err := datasets.Augment(t.aug, src, t.rows, t.shape, t.s.Augment, rng); err != nil {
			return err
		}
		src = t.aug
	}
	t.in.Set(src)
	return nil
}

// checkpoint is the on-disk form of a paused run.
type checkpoint struct {
	Version int
	Key     string // identifies the run (config, episode); must match on resume
	Net     []byte
	Adam    []byte
	History []StepStats
}

// checkpointVersion is the payload's version (ckfile.go: 2 adds the
// checksummed envelope).
const checkpointVersion = 2

// SaveCheckpoint writes the trainer's state (weights, Adam moments, step
// history) to path atomically. key identifies the run; Resume refuses a
// checkpoint with another key. A state that is not finite is not written
// (path, if any, stays as it was): the error wraps the *DivergedError of
// the last step taken, whose update left it so.
func (t *Trainer) SaveCheckpoint(path, key string) error {
	if err := checkpointable(path, t.learn, t.net, t.adam, len(t.history)); err != nil {
		return err
	}
	netb, adamb, err := stateBytes(path, t.net, t.adam)
	if err != nil {
		return err
	}
	return writeCheckpointSized(path, checkpointVersion, checkpoint{Version: checkpointVersion, Key: key, Net: netb, Adam: adamb, History: t.history},
		len(netb)+len(adamb)+len(key)+80*len(t.history))
}

// Resume restores a checkpoint written by SaveCheckpoint for the same run.
// On error the trainer is unchanged.
func (t *Trainer) Resume(path, key string) error {
	var ck checkpoint
	if err := readCheckpoint(path, checkpointVersion, &ck); err != nil {
		return err
	}
	if ck.Key != key {
		return fmt.Errorf("resume %s: the %w or config (key %q, want %q)", path, ErrCheckpointMismatch, ck.Key, key)
	}
	if len(ck.History) > t.s.Steps {
		return fmt.Errorf("resume %s: checkpoint has %d steps, the config asks for %d", path, len(ck.History), t.s.Steps)
	}
	if err := checkDecoded(path, ck.Version, checkpointVersion, ck.History); err != nil {
		return err
	}
	if err := restoreState(path, ck.Net, ck.Adam, len(ck.History), t.net, t.adam); err != nil {
		return err
	}
	t.history = ck.History
	return nil
}

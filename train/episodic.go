package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"

	"github.com/drknn/drknn/datasets"
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/internal/lossop"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer/gop"
)

// Objectives of the episodic trainer.
const (
	// ObjectiveDrKNN is Algorithm 1: the mean worst-case risk of mini-sets
	// drawn from each episode, through the LFD layer (gop.Risk).
	ObjectiveDrKNN = "drknn"
	// ObjectiveProto is the prototypical-network loss (Snell et al. 2017):
	// class prototypes are the mean embeddings of each class's Shots
	// supports, and the Queries queries per class are classified by a
	// softmax over −‖q − c‖²; the loss is the mean cross-entropy.
	ObjectiveProto = "proto"
)

// EpisodicSettings control training an embedding on base classes: every
// step draws Episodes episodes of Ways base classes (Shots samples each,
// plus Queries for the prototypical loss), embeds them as one batch
// (batch normalisation in training mode) and takes an Adam step on the
// mean loss of the episodes.
type EpisodicSettings struct {
	Objective string // ObjectiveDrKNN or ObjectiveProto
	Steps     int
	LR        float64 // Adam's learning rate at step 1
	// DecayEvery and DecayFactor: the learning rate of step t (1-based) is
	// LR · DecayFactor^⌊(t−1)/DecayEvery⌋ (DecayEvery 0: constant).
	DecayEvery  int
	DecayFactor float64
	Ways        int // classes per episode
	Shots       int // samples per class: the mini-sets' pool (drknn), the supports (proto)
	Queries     int // proto: queries per class (drknn: must be 0)
	Episodes    int // episodes per step (0 = 1)
	// Minisets is the number of mini-sets drawn from each episode and
	// MinisetSize their size n′ (0 = all MinisetWays·Shots samples of
	// their classes) (drknn).
	Minisets    int
	MinisetSize int
	// MinisetWays is the number of the episode's classes each mini-set
	// covers (drknn; 0 = all Ways): each mini-set draws that many of the
	// episode's classes at random, then its n′ samples from them. The
	// episodes, and so the batch, stay those of Ways classes (the anchor's).
	MinisetWays int
	// LFD is the layer of the drknn objective (radii, metric, cost
	// normalisation, solver, goroutines over the mini-sets).
	LFD gop.Settings
	// Rotate makes each base class seen rotated by 90°, 180° and 270° a
	// training class of its own (square images only).
	Rotate bool
	// Augment transforms every episode image after its rotation (shifts,
	// mirroring), from the step's generator.
	Augment datasets.AugmentSettings
	// Seed: step t's episodes, mini-sets and augmentation come from a
	// generator seeded by (Seed, t) alone, so -resume is exact.
	Seed int64
}

func (s EpisodicSettings) withDefaults() EpisodicSettings {
	if s.Episodes == 0 {
		s.Episodes = 1
	}
	if s.DecayFactor == 0 {
		s.DecayFactor = 1
	}
	return s
}

func (s EpisodicSettings) validate(shape []int) error {
	bad := func(what string, v any) error { return fmt.Errorf("train: episodic settings: %s = %v", what, v) }
	switch {
	case s.Objective != ObjectiveDrKNN && s.Objective != ObjectiveProto:
		return bad("objective", fmt.Sprintf("%q (want drknn or proto)", s.Objective))
	case s.Steps < 0:
		return bad("steps", s.Steps)
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return bad("lr", s.LR)
	case s.DecayEvery < 0:
		return bad("decay every", s.DecayEvery)
	case !(s.DecayFactor > 0 && s.DecayFactor <= 1):
		return bad("decay factor (want 0 < f ≤ 1)", s.DecayFactor)
	case s.Ways < 2:
		return bad("ways (want ≥ 2)", s.Ways)
	case s.Shots < 1:
		return bad("shots", s.Shots)
	case s.Episodes < 1:
		return bad("episodes", s.Episodes)
	}
	if s.Objective == ObjectiveProto && s.Queries < 1 {
		return bad("queries (the prototypical loss needs ≥ 1 per class)", s.Queries)
	}
	if s.Objective == ObjectiveDrKNN {
		if s.Queries != 0 {
			return bad("queries (Algorithm 1 has none; want 0)", s.Queries)
		}
		if s.Minisets < 1 {
			return bad("minisets", s.Minisets)
		}
		if s.MinisetWays != 0 && (s.MinisetWays < 2 || s.MinisetWays > s.Ways) {
			return bad(fmt.Sprintf("miniset ways (want 2…%d, or 0 for all)", s.Ways), s.MinisetWays)
		}
		w := s.minisetWays()
		if s.MinisetSize != 0 && (s.MinisetSize < w || s.MinisetSize > w*s.Shots) {
			return bad(fmt.Sprintf("miniset size (want %d…%d, or 0 for all)", w, w*s.Shots), s.MinisetSize)
		}
	} else if s.MinisetWays != 0 {
		return bad("miniset ways (the prototypical loss has no mini-sets; want 0)", s.MinisetWays)
	}
	if s.Rotate && (len(shape) != 3 || shape[1] != shape[2]) {
		return fmt.Errorf("train: rotated classes need square images, not samples of shape %v", shape)
	}
	return s.Augment.Validate(shape)
}

// minisetWays is the number of classes of a mini-set.
func (s EpisodicSettings) minisetWays() int {
	if s.MinisetWays == 0 {
		return s.Ways
	}
	return s.MinisetWays
}

// LRAt is the learning rate of step t (1-based).
func (s EpisodicSettings) LRAt(t int) float64 {
	s = s.withDefaults()
	if s.DecayEvery <= 0 || t < 1 {
		return s.LR
	}
	return s.LR * math.Pow(s.DecayFactor, float64((t-1)/s.DecayEvery))
}

// EpisodicTrainer trains a network on episodes of base classes
// (EpisodicSettings). The network's weights and batch-norm running
// statistics change in place.
type EpisodicTrainer struct {
	net     *model.Net
	d       *datasets.Dataset
	s       EpisodicSettings
	sampler *datasets.BaseSampler
	mini    *datasets.MiniSetSampler // drknn: mini-sets of one episode (local positions)
	vm      G.VM
	adam    *model.Adam
	risk    *gop.RiskLayer
	proto   *lossop.Loss
	history []StepStats
	learn   G.Nodes // the network's learnable nodes and
	emb     *G.Node // its output: what a failed step looks at (stepError)

	perClass, batch int
	buf, img        []float32 // a step's batch; one image's scratch
	in              *model.Input
}

// NewEpisodicTrainer prepares training of net on the samples index (nil:
// all) of the classes of d (the base classes).
func NewEpisodicTrainer(net *model.Net, d *datasets.Dataset, classes, index []int, s EpisodicSettings) (*EpisodicTrainer, error) {
	s = s.withDefaults()
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	cfg := net.Config()
	if !slices.Equal(cfg.InShape, d.Shape) {
		return nil, fmt.Errorf("train: the network takes samples of shape %v, the data set has %v", cfg.InShape, d.Shape)
	}
	if err := s.validate(d.Shape); err != nil {
		return nil, err
	}
	all, err := d.Indices(index)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	for _, i := range all {
		for _, v := range d.Sample(i) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("train: sample %d holds a non-finite value", i)
			}
		}
	}
	t := &EpisodicTrainer{net: net, d: d, s: s, perClass: s.Shots + s.Queries}
	if t.sampler, err = datasets.NewBaseSampler(d, classes, index, s.Rotate, t.perClass); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if t.sampler.Classes() < s.Ways {
		return nil, fmt.Errorf("train: %d-way episodes from %d training classes", s.Ways, t.sampler.Classes())
	}
	if s.Objective == ObjectiveDrKNN {
		// The sampler draws from the positions of minisetWays classes of
		// Shots samples; miniSets maps them onto the episode's classes.
		w := s.minisetWays()
		labels := make([]int, w*s.Shots)
		for i := range labels {
			labels[i] = i / s.Shots
		}
		size := s.MinisetSize
		if size == 0 {
			size = len(labels)
		}
		if t.mini, err = datasets.NewMiniSetSampler(labels, w, size); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	t.batch = s.Episodes * s.Ways * t.perClass
	size := d.SampleSize()
	t.buf, t.img = make([]float32, t.batch*size), make([]float32, size)

	g := G.NewGraph()
	if t.in, err = net.NewInput(g, "episodes.x", t.batch, nil); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	emb, learn, err := net.Build(g, t.in.Node)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	t.learn, t.emb = learn, emb
	var loss *G.Node
	if s.Objective == ObjectiveDrKNN {
		if t.risk, err = gop.Risk(emb, s.LFD); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		loss = t.risk.Output
	} else {
		t.proto = lossop.New("ProtoLoss", nil)
		if loss, err = t.proto.Apply(emb); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	if t.vm, t.adam, err = model.NewMinimiser(g, loss, learn, model.AdamSettings{LR: s.LR}); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return t, nil
}

// Close releases the trainer's Gorgonia machine. The Net stays usable.
func (t *EpisodicTrainer) Close() error { return t.vm.Close() }

// StepsDone is the number of steps taken (including restored ones).
func (t *EpisodicTrainer) StepsDone() int { return len(t.history) }

// Done reports whether all configured steps are taken.
func (t *EpisodicTrainer) Done() bool { return len(t.history) >= t.s.Steps }

// History returns the statistics of every step taken. Risk is the step's
// loss: the mean worst-case risk (drknn) or the mean cross-entropy (proto).
func (t *EpisodicTrainer) History() []StepStats { return append([]StepStats(nil), t.history...) }

// BatchSize is the number of images embedded per step.
func (t *EpisodicTrainer) BatchSize() int { return t.batch }

// TrainingClasses is the number of classes episodes are drawn from
// (base classes, times 4 with rotations).
func (t *EpisodicTrainer) TrainingClasses() int { return t.sampler.Classes() }

func (t *EpisodicTrainer) stepRand(step int) *rand.Rand {
	return rand.New(rand.NewSource(t.s.Seed*1_000_003 + int64(step)*7_919 + 29))
}

// Episodes returns the episodes step (1-based) draws, without taking it:
// what the tests use to check that only base classes are ever drawn.
func (t *EpisodicTrainer) Episodes(step int) ([]*datasets.BaseEpisode, error) {
	rng := t.stepRand(step - 1)
	out := make([]*datasets.BaseEpisode, t.s.Episodes)
	for e := range out {
		ep, err := t.sampler.Draw(rng, t.s.Ways, t.perClass)
		if err != nil {
			return nil, err
		}
		out[e] = ep
	}
	return out, nil
}

// Step takes one training step.
func (t *EpisodicTrainer) Step() (StepStats, error) {
	step := len(t.history)
	fail := func(err error) (StepStats, error) { return StepStats{}, fmt.Errorf("train: step %d: %w", step+1, err) }
	rng := t.stepRand(step)
	eps := make([]*datasets.BaseEpisode, t.s.Episodes)
	for e := range eps {
		ep, err := t.sampler.Draw(rng, t.s.Ways, t.perClass)
		if err != nil {
			return fail(err)
		}
		eps[e] = ep
	}
	// The batch: episode e's samples at e·Ways·perClass…, class by class;
	// within a class the Shots supports first, then the queries.
	size := t.d.SampleSize()
	sh := t.d.Shape
	for e, ep := range eps {
		for k, i := range ep.Index {
			dst := t.buf[(e*len(ep.Index)+k)*size:][:size]
			if r := ep.Rot[ep.Labels[k]]; r == 0 {
				copy(dst, t.d.Sample(i))
			} else if err := datasets.Rotate90(dst, t.d.Sample(i), sh[0], sh[1], sh[2], r); err != nil {
				return fail(err)
			}
		}
	}
	var sets []gop.MiniSet
	if t.s.Objective == ObjectiveDrKNN {
		sets = t.miniSets(rng, len(eps))
	}
	if t.s.Augment.Enabled() {
		for b := 0; b < t.batch; b++ {
			src := t.buf[b*size : (b+1)*size]
			copy(t.img, src)
			if err := datasets.Augment(src, t.img, 1, sh, t.s.Augment, rng); err != nil {
				return fail(err)
			}
		}
	}
	t.in.Set(t.buf)
	if t.risk != nil {
		t.risk.SetBatch(sets)
		defer t.risk.SetBatch(nil)
	} else {
		t.proto.SetFunc(protoEpisodes(t.s.Episodes, t.s.Ways, t.s.Shots, t.s.Queries))
	}
	defer t.vm.Reset()
	loss := map[bool]string{true: "risk", false: "loss"}[t.risk != nil]
	if err := t.vm.RunAll(); err != nil {
		return StepStats{}, stepError(step, err, true, t.learn, t.emb, loss)
	}
	lr := t.s.LRAt(step + 1)
	if err := t.adam.SetLR(lr); err != nil {
		return fail(err)
	}
	if err := t.adam.Step(); err != nil {
		return StepStats{}, stepError(step, err, false, t.learn, t.emb, loss)
	}
	if step+1 == t.s.Steps { // no next step to find what this one left
		if d := stateDiverged(t.learn, t.net, t.adam, step+1); d != nil {
			return StepStats{}, d
		}
	}
	st := StepStats{Step: step + 1}
	if t.risk != nil {
		r := t.risk.Last()
		st.Risk, st.MeanRelGap, st.MaxRelGap, st.Iterations, st.NotOptimal = r.Risk, r.MeanRelGap, r.MaxRelGap, r.Iterations, r.NotOptimal
	} else {
		loss, err := t.proto.Last()
		if err != nil {
			return fail(err)
		}
		st.Risk = loss
	}
	t.history = append(t.history, st)
	return st, nil
}

// miniSets draws the mini-sets of a step's episodes (rows of the batch as
// Step lays it out): Minisets per episode, each of MinisetWays of the
// episode's classes (labels 0…MinisetWays−1 in the order drawn). With
// MinisetWays 0 or Ways it draws nothing more from rng than the mini-sets
// of all Ways classes did before the setting existed.
func (t *EpisodicTrainer) miniSets(rng *rand.Rand, episodes int) []gop.MiniSet {
	per := t.s.Ways * t.s.Shots
	var sets []gop.MiniSet
	for e := 0; e < episodes; e++ {
		for k := 0; k < t.s.Minisets; k++ {
			ms := t.mini.Draw(rng)
			var classes []int // the episode's class of each mini-set label
			if w := t.s.minisetWays(); w < t.s.Ways {
				classes = rng.Perm(t.s.Ways)[:w]
			}
			idx := make([]int, len(ms.Index))
			for j, p := range ms.Index {
				if classes != nil {
					p = classes[p/t.s.Shots]*t.s.Shots + p%t.s.Shots
				}
				idx[j] = e*per + p
			}
			sets = append(sets, gop.MiniSet{Index: idx, Labels: ms.Labels})
		}
	}
	return sets
}

// protoEpisodes is the prototypical loss of a batch of episodes laid out as
// Step lays them out, averaged over the episodes.
func protoEpisodes(episodes, ways, shots, queries int) lossop.Func {
	per := shots + queries
	return func(e []float64, n, d int) (float64, []float64, error) {
		if n != episodes*ways*per {
			return 0, nil, fmt.Errorf("proto loss: %d embeddings for %d episodes of %d×%d", n, episodes, ways, per)
		}
		grad := make([]float64, n*d)
		var total float64
		for ep := 0; ep < episodes; ep++ {
			off := ep * ways * per
			l, err := ProtoLoss(e[off*d:(off+ways*per)*d], d, ways, shots, queries, grad[off*d:(off+ways*per)*d], 1/float64(episodes))
			if err != nil {
				return 0, nil, err
			}
			total += l / float64(episodes)
		}
		return total, grad, nil
	}
}

// ProtoLoss is the prototypical-network loss of one episode whose
// embeddings e (ways·(shots+queries) rows of width d) are grouped by class,
// each class's shots supports first, then its queries: the mean over the
// queries of −log softmax_c(−‖q − μ_c‖²)[class of q], with μ_c the mean of
// class c's supports. It adds w·∂loss/∂e to grad (same layout as e) and
// returns the loss.
func ProtoLoss(e []float64, d, ways, shots, queries int, grad []float64, w float64) (float64, error) {
	per := shots + queries
	if len(e) != ways*per*d || len(grad) != len(e) || shots < 1 || queries < 1 {
		return 0, fmt.Errorf("proto loss: %d values for %d classes of %d+%d rows of width %d", len(e), ways, shots, queries, d)
	}
	row := func(c, j int) []float64 { return e[(c*per+j)*d:][:d] }
	mu := make([]float64, ways*d)
	for c := 0; c < ways; c++ {
		m := mu[c*d : (c+1)*d]
		for j := 0; j < shots; j++ {
			for k, v := range row(c, j) {
				m[k] += v
			}
		}
		for k := range m {
			m[k] /= float64(shots)
		}
	}
	nq := float64(ways * queries)
	dmu := make([]float64, ways*d)
	z := make([]float64, ways)
	var loss float64
	for c := 0; c < ways; c++ {
		for j := shots; j < per; j++ {
			q := row(c, j)
			mx := math.Inf(-1)
			for m := 0; m < ways; m++ {
				var s float64
				for k, v := range q {
					t := v - mu[m*d+k]
					s += t * t
				}
				z[m] = -s
				mx = max(mx, z[m])
			}
			var sum float64
			for m := range z {
				sum += math.Exp(z[m] - mx)
			}
			lse := mx + math.Log(sum)
			loss += (lse - z[c]) / nq
			gq := grad[(c*per+j)*d:][:d]
			for m := 0; m < ways; m++ {
				// ∂loss/∂z_m = (softmax_m − [m = c]) / nq; ∂z_m/∂q = −2(q − μ_m), ∂z_m/∂μ_m = 2(q − μ_m).
				g := (math.Exp(z[m]-lse) - b2f(m == c)) / nq * w
				if g == 0 {
					continue
				}
				for k, v := range q {
					t := 2 * g * (v - mu[m*d+k])
					gq[k] -= t
					dmu[m*d+k] += t
				}
			}
		}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, fmt.Errorf("proto loss is %v", loss)
	}
	for c := 0; c < ways; c++ {
		for j := 0; j < shots; j++ {
			gs := grad[(c*per+j)*d:][:d]
			for k := range gs {
				gs[k] += dmu[c*d+k] / float64(shots)
			}
		}
	}
	return loss, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// episodicCheckpoint is the on-disk form of a paused episodic run.
type episodicCheckpoint struct {
	Version int
	Key     string
	Net     []byte
	Adam    []byte
	History []StepStats
	Extra   []byte // the caller's state (validation history, best weights)
}

const episodicCheckpointVersion = 2 // 2: the checksummed envelope (ckfile.go)

// SaveCheckpoint writes the trainer's state (weights and batch-norm
// statistics, Adam moments, step history) and the caller's extra bytes to
// path atomically; key identifies the run. A state that is not finite is
// not written (path, if any, stays as it was): the error wraps the
// *DivergedError of the last step taken, whose update left it so.
func (t *EpisodicTrainer) SaveCheckpoint(path, key string, extra []byte) error {
	if err := checkpointable(path, t.learn, t.net, t.adam, len(t.history)); err != nil {
		return err
	}
	netb, adamb, err := stateBytes(path, t.net, t.adam)
	if err != nil {
		return err
	}
	ck := episodicCheckpoint{Version: episodicCheckpointVersion, Key: key, Net: netb, Adam: adamb, History: t.history, Extra: extra}
	return writeCheckpointSized(path, episodicCheckpointVersion, ck, len(netb)+len(adamb)+len(extra)+len(key)+80*len(t.history))
}

// Diverged is the *DivergedError of the last step taken when it left the
// state — weights, batch-norm statistics, Adam's moments — NaN or ±Inf,
// else nil: for a caller about to use the weights between steps (a
// validation), which no next step has checked yet. SaveCheckpoint and the
// last step check by themselves. One pass over the state.
func (t *EpisodicTrainer) Diverged() error {
	if d := stateDiverged(t.learn, t.net, t.adam, len(t.history)); d != nil {
		return d
	}
	return nil
}

// ErrCheckpointMismatch is wrapped when a checkpoint belongs to another run.
var ErrCheckpointMismatch = errors.New("checkpoint belongs to another run")

// Resume restores a checkpoint written by SaveCheckpoint under the same key
// and returns the caller's extra bytes. On error the trainer is unchanged.
func (t *EpisodicTrainer) Resume(path, key string) ([]byte, error) {
	var ck episodicCheckpoint
	if err := readCheckpoint(path, episodicCheckpointVersion, &ck); err != nil {
		return nil, err
	}
	if ck.Key != key {
		return nil, fmt.Errorf("resume %s: %w (key %q, want %q)", path, ErrCheckpointMismatch, ck.Key, key)
	}
	if len(ck.History) > t.s.Steps {
		return nil, fmt.Errorf("resume %s: checkpoint has %d steps, the settings ask for %d", path, len(ck.History), t.s.Steps)
	}
	if err := checkDecoded(path, ck.Version, episodicCheckpointVersion, ck.History); err != nil {
		return nil, err
	}
	if err := restoreState(path, ck.Net, ck.Adam, len(ck.History), t.net, t.adam); err != nil {
		return nil, err
	}
	t.history = ck.History
	return ck.Extra, nil
}

package train

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
)

// TestProtoLossHandWorked: 2 classes, 1 support and 1 query each, d = 1.
// Supports at 0 and 2 are the prototypes; the query of class 0 at 0.5 has
// logits (−0.25, −2.25), the query of class 1 at 1 has (−1, −1):
// loss = (log(1 + e⁻²) + log 2) / 2.
func TestProtoLossHandWorked(t *testing.T) {
	e := []float64{0, 0.5, 2, 1}
	grad := make([]float64, 4)
	loss, err := ProtoLoss(e, 1, 2, 1, 1, grad, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := (math.Log1p(math.Exp(-2)) + math.Ln2) / 2
	if math.Abs(loss-want) > 1e-15 {
		t.Fatalf("loss %.17g, want %.17g", loss, want)
	}
	// Query 1 (class 1 at 1) sits halfway: its gradient is
	// ½·[(½)(−2)(1−0) − (½ − 1)·… ]: check one entry by hand:
	// ∂/∂q₁ = ½ Σ_m (s_m − [m=1])·(−2)(q₁ − μ_m) = ½[(½)(−2)(1) + (−½)(−2)(−1)] = −1.
	if math.Abs(grad[3]-(-1)) > 1e-15 {
		t.Fatalf("∂loss/∂q₁ = %v, want −1", grad[3])
	}
}

func TestProtoLossGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	ways, shots, queries, d := 3, 2, 2, 4
	e := make([]float64, ways*(shots+queries)*d)
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	grad := make([]float64, len(e))
	if _, err := ProtoLoss(e, d, ways, shots, queries, grad, 0.5); err != nil {
		t.Fatal(err)
	}
	f := func(x []float64) float64 {
		l, err := ProtoLoss(x, d, ways, shots, queries, make([]float64, len(x)), 1)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	const h = 1e-6
	for i := range e {
		x := append([]float64(nil), e...)
		x[i] += h
		up := f(x)
		x[i] -= 2 * h
		fd := 0.5 * (up - f(x)) / (2 * h)
		if math.Abs(fd-grad[i]) > 1e-7*(1+math.Abs(fd)) {
			t.Fatalf("∂loss/∂e[%d] = %v, finite differences %v", i, grad[i], fd)
		}
	}
}

func TestLRAtStepDecay(t *testing.T) {
	s := EpisodicSettings{LR: 0.1, DecayEvery: 3, DecayFactor: 0.5}
	for step, want := range map[int]float64{1: 0.1, 3: 0.1, 4: 0.05, 6: 0.05, 7: 0.025} {
		if got := s.LRAt(step); math.Abs(got-want) > 1e-17 {
			t.Errorf("step %d: lr %v, want %v", step, got, want)
		}
	}
	if got := (EpisodicSettings{LR: 0.1}).LRAt(1000); got != 0.1 {
		t.Errorf("no decay: lr %v", got)
	}
}

// episodicFixture: 8 synthetic classes of 16×16 images; 0…4 are base
// classes, 5…7 novel.
func episodicFixture(t *testing.T) (*datasets.Dataset, []int, []int) {
	t.Helper()
	d, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 8, PerClass: 12, Size: 16, Noise: 0.3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var base, idx []int
	for c := 0; c < 5; c++ {
		base = append(base, c)
	}
	for i, y := range d.Labels {
		if y < 5 {
			idx = append(idx, i)
		}
	}
	return d, base, idx
}

func episodicSettings(objective string, steps int) EpisodicSettings {
	s := EpisodicSettings{Objective: objective, Steps: steps, LR: 1e-2, DecayEvery: 2, DecayFactor: 0.5,
		Ways: 3, Shots: 3, Episodes: 2, Rotate: true, Augment: datasets.AugmentSettings{Shift: 1}, Seed: 9,
		Minisets: 2, MinisetSize: 5,
		LFD: gop.Settings{Metric: optlayer.Euclidean, Theta: []float64{0.3}, Normalize: true,
			Solver: optlayer.Settings{Epsilon: 0.01, Tol: 1e-3}, Workers: 2}}
	if objective == ObjectiveProto {
		s.Queries, s.Minisets, s.MinisetSize = 2, 0, 0
	}
	return s
}

func newEpisodic(t *testing.T, d *datasets.Dataset, base, idx []int, s EpisodicSettings) (*model.Net, *EpisodicTrainer) {
	t.Helper()
	net, err := model.New(model.Config{Kind: model.Conv4, InShape: d.Shape, Channels: 4}, 11)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewEpisodicTrainer(net, d, base, idx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return net, tr
}

func runEpisodic(t *testing.T, tr *EpisodicTrainer, steps int) {
	t.Helper()
	for i := 0; i < steps && !tr.Done(); i++ {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
}

// weightBits lists every weight and batch-norm statistic of net as bits.
func weightBits(net *model.Net) []uint64 {
	var out []uint64
	for _, p := range append(append([]*model.Param(nil), net.Params()...), net.Buffers()...) {
		for j := 0; j < p.Len(); j++ {
			out = append(out, math.Float64bits(p.At(j)))
		}
	}
	return out
}

// TestEpisodicResume: for both objectives, a run stopped after 3 of 6
// steps and resumed from its checkpoint ends with bit-identical weights,
// batch-norm statistics and history, and hands back the caller's bytes.
func TestEpisodicResume(t *testing.T) {
	d, base, idx := episodicFixture(t)
	for _, obj := range []string{ObjectiveDrKNN, ObjectiveProto} {
		t.Run(obj, func(t *testing.T) {
			s := episodicSettings(obj, 6)
			netA, a := newEpisodic(t, d, base, idx, s)
			runEpisodic(t, a, 6)
			_, b := newEpisodic(t, d, base, idx, s)
			runEpisodic(t, b, 3)
			ck := filepath.Join(t.TempDir(), "ck.bin")
			if err := b.SaveCheckpoint(ck, "run", []byte("extra")); err != nil {
				t.Fatal(err)
			}
			netC, c := newEpisodic(t, d, base, idx, s)
			if _, err := c.Resume(ck, "other"); !errors.Is(err, ErrCheckpointMismatch) {
				t.Fatalf("resume under another key: %v", err)
			}
			extra, err := c.Resume(ck, "run")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(extra, []byte("extra")) || c.StepsDone() != 3 {
				t.Fatalf("extra %q, %d steps", extra, c.StepsDone())
			}
			runEpisodic(t, c, 6)
			if !reflect.DeepEqual(weightBits(netA), weightBits(netC)) {
				t.Fatal("resumed weights differ from the uninterrupted run's")
			}
			if !reflect.DeepEqual(a.History(), c.History()) {
				t.Fatalf("histories differ:\n%v\n%v", a.History(), c.History())
			}
			h := a.History()
			if h[0].Risk == h[5].Risk || math.IsNaN(h[5].Risk) {
				t.Fatalf("losses %v", h)
			}
			if obj == ObjectiveDrKNN && !(h[0].MeanRelGap > 0 && h[0].MeanRelGap <= 1e-3) {
				t.Fatalf("certified gap %v", h[0].MeanRelGap)
			}
		})
	}
}

// TestEpisodicNeverReadsOtherSamples: the samples outside the training
// index (novel and held-out ones) never reach training. Filled with NaN
// they would poison the weights; filled with anything else they would
// change them. Both runs end bit-identical to a run on the clean data, and
// every episode holds base-class training samples only.
func TestEpisodicNeverReadsOtherSamples(t *testing.T) {
	d, base, idx := episodicFixture(t)
	// Hold out one sample of each base class too.
	held := map[int]bool{}
	var train []int
	seen := map[int]bool{}
	for _, i := range idx {
		if y := d.Labels[i]; !seen[y] {
			seen[y], held[i] = true, true
			continue
		}
		train = append(train, i)
	}
	inTrain := map[int]bool{}
	for _, i := range train {
		inTrain[i] = true
	}
	for _, obj := range []string{ObjectiveDrKNN, ObjectiveProto} {
		s := episodicSettings(obj, 4)
		netA, a := newEpisodic(t, d, base, train, s)
		for step := 1; step <= 4; step++ {
			eps, err := a.Episodes(step)
			if err != nil {
				t.Fatal(err)
			}
			for _, ep := range eps {
				for _, i := range ep.Index {
					if !inTrain[i] {
						t.Fatalf("%s step %d draws sample %d (class %d), not a training sample", obj, step, i, d.Labels[i])
					}
				}
			}
		}
		runEpisodic(t, a, 4)
		for _, fill := range []float32{float32(math.NaN()), 7} {
			p := *d
			p.X = append([]float32(nil), d.X...)
			for i := range d.Labels {
				if !inTrain[i] {
					for k := range p.Sample(i) {
						p.Sample(i)[k] = fill
					}
				}
			}
			netB, b := newEpisodic(t, &p, base, train, s)
			runEpisodic(t, b, 4)
			if !reflect.DeepEqual(weightBits(netA), weightBits(netB)) {
				t.Fatalf("%s: other samples filled with %v changed the trained weights", obj, fill)
			}
		}
	}
}

func TestEpisodicBadSettings(t *testing.T) {
	d, base, idx := episodicFixture(t)
	net, err := model.New(model.Config{Kind: model.Conv4, InShape: d.Shape, Channels: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(s *EpisodicSettings){
		"objective":                  func(s *EpisodicSettings) { s.Objective = "cross-entropy" },
		"decay factor":               func(s *EpisodicSettings) { s.DecayFactor = 2 },
		"queries drknn":              func(s *EpisodicSettings) { s.Queries = 1 },
		"miniset size":               func(s *EpisodicSettings) { s.MinisetSize = 2 },
		"too many ways":              func(s *EpisodicSettings) { s.Ways, s.Rotate = 6, false },
		"too many shots":             func(s *EpisodicSettings) { s.Shots = 13 },
		"shift too large":            func(s *EpisodicSettings) { s.Augment.Shift = 16 },
		"miniset ways 1":             func(s *EpisodicSettings) { s.MinisetWays = 1 },
		"miniset ways 4":             func(s *EpisodicSettings) { s.MinisetWays = 4 },
		"miniset size over its ways": func(s *EpisodicSettings) { s.MinisetWays, s.MinisetSize = 2, 7 },
		"miniset ways proto": func(s *EpisodicSettings) {
			s.Objective, s.Queries, s.Minisets, s.MinisetSize, s.MinisetWays = ObjectiveProto, 2, 0, 0, 2
		},
	} {
		s := episodicSettings(ObjectiveDrKNN, 2)
		spoil(&s)
		if _, err := NewEpisodicTrainer(net, d, base, idx, s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestEpisodicMinisetWays: with MinisetWays 2 of 3-way episodes every
// mini-set covers exactly two of its episode's classes, its labels map one
// to one onto them, and its rows lie in its episode's block of the batch;
// the pairs of classes vary. MinisetWays = Ways trains bit-identically to
// the default 0 (all classes), so existing trainings are unchanged.
func TestEpisodicMinisetWays(t *testing.T) {
	d, base, idx := episodicFixture(t)
	s := episodicSettings(ObjectiveDrKNN, 3)
	s.MinisetWays, s.MinisetSize, s.Minisets = 2, 0, 3
	_, tr := newEpisodic(t, d, base, idx, s)
	per := s.Ways * s.Shots
	pairs := map[[2]int]bool{}
	rng := rand.New(rand.NewSource(1))
	for rep := 0; rep < 20; rep++ {
		sets := tr.miniSets(rng, s.Episodes)
		if len(sets) != s.Episodes*s.Minisets {
			t.Fatalf("%d mini-sets, want %d", len(sets), s.Episodes*s.Minisets)
		}
		for k, ms := range sets {
			if len(ms.Index) != 2*s.Shots {
				t.Fatalf("mini-set %d has %d rows, want %d", k, len(ms.Index), 2*s.Shots)
			}
			ep := k / s.Minisets
			class := map[int]int{} // mini-set label → episode class
			seen := map[int]bool{}
			for j, i := range ms.Index {
				if i/per != ep || seen[i] {
					t.Fatalf("mini-set %d (episode %d): row %d repeated or outside the episode", k, ep, i)
				}
				seen[i] = true
				c := (i % per) / s.Shots
				if l := ms.Labels[j]; l < 0 || l > 1 {
					t.Fatalf("mini-set %d: label %d", k, l)
				} else if old, ok := class[l]; ok && old != c {
					t.Fatalf("mini-set %d: label %d on episode classes %d and %d", k, l, old, c)
				}
				class[ms.Labels[j]] = c
			}
			if len(class) != 2 || class[0] == class[1] {
				t.Fatalf("mini-set %d: labels → classes %v", k, class)
			}
			pairs[[2]int{min(class[0], class[1]), max(class[0], class[1])}] = true
		}
	}
	if len(pairs) != 3 {
		t.Fatalf("pairs of classes drawn: %v, want all 3", pairs)
	}

	all := episodicSettings(ObjectiveDrKNN, 2)
	same := all
	same.MinisetWays = same.Ways
	netA, trA := newEpisodic(t, d, base, idx, all)
	netB, trB := newEpisodic(t, d, base, idx, same)
	runEpisodic(t, trA, 2)
	runEpisodic(t, trB, 2)
	if !reflect.DeepEqual(weightBits(netA), weightBits(netB)) {
		t.Fatal("MinisetWays = Ways trains differently from MinisetWays = 0")
	}
}

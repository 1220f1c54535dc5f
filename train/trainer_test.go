package train

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
)

// trainFixture is a 2-way 5-shot episode of the built-in synthetic images.
func trainFixture(t *testing.T, seed int64) (*datasets.Dataset, *datasets.Episode) {
	t.Helper()
	d, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 2, PerClass: 60, Size: 16, Noise: 0.3, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := datasets.NewEpisode(d, datasets.EpisodeSettings{Ways: 2, Shots: 5, Queries: 100, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return d, ep
}

func trainSettings(steps int, workers int) Settings {
	return Settings{Steps: steps, LR: 1e-2, Minisets: 4, MinisetSize: 6, Seed: 3,
		Ways: 2, LFD: gop.Settings{Metric: optlayer.Euclidean, Theta: []float64{0.3}, Normalize: true,
			Solver: optlayer.Settings{Epsilon: 0.01, Tol: 1e-3}, Workers: workers}}
}

func newTestTrainer(t *testing.T, d *datasets.Dataset, ep *datasets.Episode, s Settings) (*model.Net, *Trainer) {
	t.Helper()
	net, err := model.New(model.Config{Kind: model.CNN, InShape: d.Shape, Channels: 4, Dim: 16, DType: model.Float64}, 11)
	if err != nil {
		t.Fatal(err)
	}
	x := d.Subset(ep.TrainIndex).X
	tr, err := NewTrainer(net, x, ep.TrainLabels, s)
	if err != nil {
		t.Fatal(err)
	}
	return net, tr
}

// finish takes the trainer's remaining steps.
func finish(t *testing.T, tr *Trainer) {
	t.Helper()
	for !tr.Done() {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkpointAfter takes steps steps of a fresh trainer and returns the
// checkpoint it saved under key.
func checkpointAfter(t *testing.T, d *datasets.Dataset, ep *datasets.Episode, s Settings, steps int, key string) string {
	t.Helper()
	ck := filepath.Join(t.TempDir(), "ckpt.bin")
	_, b := newTestTrainer(t, d, ep, s)
	defer b.Close()
	for i := 0; i < steps; i++ {
		if _, err := b.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SaveCheckpoint(ck, key); err != nil {
		t.Fatal(err)
	}
	return ck
}

// sameWeights fails unless the resumed net's weights equal the
// uninterrupted one's, bit for bit, and returns the latter.
func sameWeights(t *testing.T, uninterrupted, resumed *model.Net) []float64 {
	t.Helper()
	wa, wc := weightsOf(uninterrupted), weightsOf(resumed)
	for i := range wa {
		if wa[i] != wc[i] {
			t.Fatalf("weight %d: uninterrupted %v, resumed %v", i, wa[i], wc[i])
		}
	}
	return wa
}

func TestTrainerLowersRisk(t *testing.T) {
	d, ep := trainFixture(t, 1)
	_, tr := newTestTrainer(t, d, ep, trainSettings(30, 2))
	var first, last float64
	for !tr.Done() {
		st, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if st.Step <= 5 {
			first += st.Risk / 5
		}
		if st.Step > 25 {
			last += st.Risk / 5
		}
	}
	if !(last < 0.8*first) {
		t.Fatalf("mean risk of the last 5 steps %.4f, of the first 5 %.4f: training does not lower the worst-case risk", last, first)
	}
}

func weightsOf(net *model.Net) []float64 {
	var w []float64
	for _, p := range net.Params() {
		for i := 0; i < p.Len(); i++ {
			w = append(w, p.At(i))
		}
	}
	return w
}

func TestTrainerResumeMatchesUninterrupted(t *testing.T) {
	d, ep := trainFixture(t, 2)
	s := trainSettings(6, 2)
	netA, a := newTestTrainer(t, d, ep, s)
	finish(t, a)
	ck := checkpointAfter(t, d, ep, s, 3, "run-1")
	// A fresh process: new net from the same seed, resumed from disk.
	netC, c := newTestTrainer(t, d, ep, s)
	if err := c.Resume(ck, "other-run"); err == nil {
		t.Fatal("resume accepted a checkpoint of another run")
	}
	if err := c.Resume(ck, "run-1"); err != nil {
		t.Fatal(err)
	}
	finish(t, c)
	sameWeights(t, netA, netC)
	ha, hc := a.History(), c.History()
	for i := range ha {
		if ha[i] != hc[i] {
			t.Fatalf("step %d stats differ: %+v vs %+v", i+1, ha[i], hc[i])
		}
	}
}

func TestTrainerDeterministicAcrossWorkers(t *testing.T) {
	d, ep := trainFixture(t, 3)
	net1, a := newTestTrainer(t, d, ep, trainSettings(3, 1))
	net2, b := newTestTrainer(t, d, ep, trainSettings(3, 4))
	for i := 0; i < 3; i++ {
		sa, err := a.Step()
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := b.Step()
		if sa != sb {
			t.Fatalf("step %d: %+v vs %+v", i+1, sa, sb)
		}
	}
	w1, w2 := weightsOf(net1), weightsOf(net2)
	for i := range w1 {
		if w1[i] != w2[i] || math.IsNaN(w1[i]) {
			t.Fatalf("weight %d differs: %v vs %v", i, w1[i], w2[i])
		}
	}
}

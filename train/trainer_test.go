package train

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestCheckpointChecksumsEveryByte: a checkpoint with one byte flipped in
// any region — header, key, weights, Adam moments, history, checksum — is
// refused in one line wrapping ErrCorruptCheckpoint and leaves the trainer
// unchanged; a truncated one likewise.
func TestCheckpointChecksumsEveryByte(t *testing.T) {
	d, ep := trainFixture(t, 4)
	s := trainSettings(3, 1)
	ck := checkpointAfter(t, d, ep, s, 2, "run-key")
	data, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	net, tr := newTestTrainer(t, d, ep, s)
	defer tr.Close()
	before := weightsOf(net)
	// Offsets in each region: the Adam moments and weights are found by
	// their encodings inside the file.
	_, saved := newTestTrainer(t, d, ep, s)
	defer saved.Close()
	adamb, err := saved.adam.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[string]int{"magic": 0, "version": 8, "length": 12, "checksum": len(data) - 1,
		"key": bytes.Index(data, []byte("run-key")) + 2, "history": len(data) - ckTrailer - 20}
	netb, err := tr.net.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The weights' encoding starts with the model magic; the Adam moments
	// follow the weights: take the middle of each blob.
	if i := bytes.Index(data, []byte("DRKNNMDL")); i > 0 {
		offsets["weights"] = i + len(netb)/2
		offsets["adam"] = i + len(netb) + len(adamb)/2
	} else {
		t.Fatal("no weights blob in the checkpoint")
	}
	for region, off := range offsets {
		if off < 0 || off >= len(data) {
			t.Fatalf("%s: offset %d outside the %d bytes", region, off, len(data))
		}
		bad := append([]byte(nil), data...)
		bad[off] ^= 0x10
		p := filepath.Join(t.TempDir(), "bad.bin")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		err := tr.Resume(p, "run-key")
		if !errors.Is(err, ErrCorruptCheckpoint) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), p) {
			t.Errorf("%s flipped at %d: %v", region, off, err)
		}
	}
	p := filepath.Join(t.TempDir(), "short.bin")
	os.WriteFile(p, data[:len(data)/2], 0o644)
	if err := tr.Resume(p, "run-key"); !errors.Is(err, ErrCorruptCheckpoint) {
		t.Errorf("truncated: %v", err)
	}
	if tr.StepsDone() != 0 || !slices.Equal(weightsOf(net), before) {
		t.Fatal("a refused checkpoint changed the trainer")
	}
	if err := tr.Resume(ck, "run-key"); err != nil || tr.StepsDone() != 2 {
		t.Fatalf("the intact checkpoint: %v, %d steps", err, tr.StepsDone())
	}
}

package train

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model"
	"gorgonia.org/tensor"
)

// hugeLRTrainer is a float32 trainer at lr 1e300: Adam's first update
// takes the weights to ±Inf (the step itself succeeds: its gradient was
// finite).
func hugeLRTrainer(t *testing.T, steps int) *Trainer {
	t.Helper()
	d, ep := trainFixture(t, 2)
	net, err := model.New(model.Config{Kind: model.CNN, InShape: d.Shape, Channels: 4, Dim: 16, DType: model.Float32}, 11)
	if err != nil {
		t.Fatal(err)
	}
	s := trainSettings(steps, 1)
	s.LR = 1e300
	tr, err := NewTrainer(net, d.Subset(ep.TrainIndex).X, ep.TrainLabels, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func hugeLREpisodic(t *testing.T, objective string, steps int) *EpisodicTrainer {
	t.Helper()
	d, base, idx := episodicFixture(t)
	s := episodicSettings(objective, steps)
	s.LR = 1e300
	_, tr := newEpisodic(t, d, base, idx, s)
	return tr
}

// checkStateDiverged checks that err is the divergence of step's update:
// the one-line message with the hint, non-finite weights named.
func checkStateDiverged(t *testing.T, err error, step int) {
	t.Helper()
	var d *DivergedError
	if !errors.As(err, &d) || d.Step != step || !errors.Is(err, ErrDiverged) {
		t.Fatalf("%v: not a *DivergedError of step %d", err, step)
	}
	msg := err.Error()
	if !strings.Contains(msg, "training diverged at step 1: non-finite weights (the update took \"") ||
		!strings.Contains(msg, "past the float range); lower the learning rate or check the data for NaN/Inf") || strings.Contains(msg, "\n") {
		t.Fatalf("the message: %q", msg)
	}
}

// A step whose update takes the weights past the float range succeeds —
// only the next step's run finds them — but its checkpoint is refused as
// the divergence of that step: no file is written, the previous
// checkpoint stays byte for byte, and the trainer (Trainer and
// EpisodicTrainer) says which step diverged.
func TestCheckpointRefusesNonFiniteState(t *testing.T) {
	check := func(t *testing.T, step func() error, save func(path string) error) {
		t.Helper()
		dir := t.TempDir()
		prev := filepath.Join(dir, "ck.bin")
		if err := save(prev); err != nil { // step 0: finite
			t.Fatal(err)
		}
		before, err := os.ReadFile(prev)
		if err != nil {
			t.Fatal(err)
		}
		if err := step(); err != nil {
			t.Fatalf("step 1: %v", err)
		}
		err = save(prev)
		checkStateDiverged(t, err, 1)
		if !strings.HasPrefix(err.Error(), "train: checkpoint "+prev+" not written: training diverged at step 1: ") {
			t.Fatalf("the message does not name the checkpoint: %q", err)
		}
		t.Log(err)
		if after, err := os.ReadFile(prev); err != nil || !bytes.Equal(before, after) {
			t.Fatalf("the previous checkpoint changed (%v)", err)
		}
		fresh := filepath.Join(dir, "fresh.bin")
		checkStateDiverged(t, save(fresh), 1)
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("the folder holds %d files, want the previous checkpoint alone", len(ents))
		}
	}
	t.Run("trainer", func(t *testing.T) {
		tr := hugeLRTrainer(t, 3)
		check(t, func() error { _, err := tr.Step(); return err }, func(p string) error { return tr.SaveCheckpoint(p, "k") })
	})
	for _, obj := range []string{ObjectiveDrKNN, ObjectiveProto} {
		t.Run("episodic "+obj, func(t *testing.T) {
			tr := hugeLREpisodic(t, obj, 3)
			check(t, func() error { _, err := tr.Step(); return err }, func(p string) error { return tr.SaveCheckpoint(p, "k", []byte("x")) })
		})
	}
}

// The last step hands its weights on (export, evaluation, the
// transfer's validation): a last step that leaves them non-finite fails
// as the divergence of that step, and is not counted.
func TestLastStepRefusesNonFiniteWeights(t *testing.T) {
	t.Run("trainer", func(t *testing.T) {
		tr := hugeLRTrainer(t, 1)
		_, err := tr.Step()
		checkStateDiverged(t, err, 1)
		if tr.Done() {
			t.Fatal("the diverged step was counted")
		}
	})
	for _, obj := range []string{ObjectiveDrKNN, ObjectiveProto} {
		t.Run("episodic "+obj, func(t *testing.T) {
			tr := hugeLREpisodic(t, obj, 1)
			_, err := tr.Step()
			checkStateDiverged(t, err, 1)
			if tr.Done() {
				t.Fatal("the diverged step was counted")
			}
		})
	}
}

// The rest of a checkpoint's state: a batch-norm running statistic or an
// Adam moment that is not finite (a gradient whose square overflows
// float32 leaves the second moment +Inf and the weight finite) is refused
// alike, named — Resume would refuse either.
func TestCheckpointRefusesNonFiniteStatistics(t *testing.T) {
	d, base, idx := episodicFixture(t)
	net, tr := newEpisodic(t, d, base, idx, episodicSettings(ObjectiveProto, 3))
	runEpisodic(t, tr, 1)
	ck := filepath.Join(t.TempDir(), "ck.bin")
	bn := net.Buffers()[0]
	bn.Set(0, math.Inf(1))
	err := tr.SaveCheckpoint(ck, "k", nil)
	var de *DivergedError
	if !errors.As(err, &de) || de.Step != 1 || !strings.Contains(err.Error(), "non-finite batch-norm statistics (\""+bn.Name+"\")") {
		t.Fatalf("a non-finite %s: %v", bn.Name, err)
	}
	if _, serr := os.Stat(ck); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("a checkpoint was written: %v", serr)
	}
	t.Log(err)

	g := G.NewGraph()
	w := G.NewVector(g, tensor.Float32, G.WithShape(2), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2}))))
	c := G.NewVector(g, tensor.Float32, G.WithShape(2), G.WithName("c"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 1e30}))))
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(w, c))))
	vm, adam, err := model.NewMinimiser(g, loss, G.Nodes{w}, model.AdamSettings{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if err := adam.Step(); err != nil {
		t.Fatal(err)
	}
	if model.NonFinite(w.Value()) {
		t.Fatalf("the weights %v are not finite: the fixture no longer overflows the moment alone", w.Value())
	}
	small, err := model.New(model.Config{Kind: model.MLP, InShape: []int{2}, Hidden: 2, Dim: 2, DType: model.Float32}, 1)
	if err != nil {
		t.Fatal(err)
	}
	d2 := stateDiverged(G.Nodes{w}, small, adam, 4)
	if d2 == nil || d2.Step != 4 || d2.Reason() != `non-finite Adam moments (the second moment of "w" overflowed)` {
		t.Fatalf("an Adam second moment of +Inf: %v", d2)
	}
}

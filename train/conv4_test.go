package train

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/drknn/drknn/model"
)

// TestTrainerConv4Resume: Algorithm 1 on the Conv-4 backbone (batch
// normalisation in training mode) resumes from a checkpoint to the same
// weights and the same BN running statistics, bit for bit, as an
// uninterrupted run.
func TestTrainerConv4Resume(t *testing.T) {
	d, ep := trainFixture(t, 2)
	s := trainSettings(6, 2)
	x := d.Subset(ep.TrainIndex).X
	newT := func() (*model.Net, *Trainer) {
		net, err := model.New(model.Config{Kind: model.Conv4, InShape: d.Shape, Channels: 4}, 11)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(net, x, ep.TrainLabels, s)
		if err != nil {
			t.Fatal(err)
		}
		return net, tr
	}
	run := func(tr *Trainer, steps int) {
		for i := 0; i < steps && !tr.Done(); i++ {
			if _, err := tr.Step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	netA, a := newT()
	run(a, 6)
	ck := filepath.Join(t.TempDir(), "ckpt.bin")
	_, b := newT()
	run(b, 3)
	if err := b.SaveCheckpoint(ck, "run"); err != nil {
		t.Fatal(err)
	}
	netC, c := newT()
	if err := c.Resume(ck, "run"); err != nil {
		t.Fatal(err)
	}
	run(c, 6)
	all := func(n *model.Net) []*model.Param {
		return append(append([]*model.Param(nil), n.Params()...), n.Buffers()...)
	}
	pa, pc := all(netA), all(netC)
	for i := range pa {
		for j := 0; j < pa[i].Len(); j++ {
			if math.Float64bits(pa[i].At(j)) != math.Float64bits(pc[i].At(j)) {
				t.Fatalf("%s[%d]: uninterrupted %v, resumed %v", pa[i].Name, j, pa[i].At(j), pc[i].At(j))
			}
		}
	}
	fresh, _ := model.New(netA.Config(), 11)
	if rm := fresh.Buffers()[0]; rm.At(0) == netA.Buffers()[0].At(0) {
		t.Error("training left the running mean unchanged")
	}
}

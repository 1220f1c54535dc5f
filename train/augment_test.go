package train

import (
	"math"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer/gop"
)

func augSettings(steps int) Settings {
	s := trainSettings(steps, 1)
	s.Augment = datasets.AugmentSettings{Shift: 2, Flip: true}
	return s
}

// TestTrainerAugmentFeedsTheGraph checks that a step's loss is computed on
// the documented augmented batch: the risk the trainer reports for step 1
// equals gop.WorstCaseRisk on the embedding (by the untrained net) of the
// images datasets.Augment produces from the step's generator after the
// mini-set draws, and differs from the risk on the images as given.
func TestTrainerAugmentFeedsTheGraph(t *testing.T) {
	d, ep := trainFixture(t, 5)
	s := augSettings(1)
	net, tr := newTestTrainer(t, d, ep, s)
	defer tr.Close()
	x := d.Subset(ep.TrainIndex).X
	n := len(ep.TrainLabels)

	// The twin of step 1's draws, made before the step changes the weights.
	rng := tr.stepRand(0)
	sets := make([]gop.MiniSet, s.Minisets)
	for k := range sets {
		ms := tr.sampler.Draw(rng)
		sets[k] = gop.MiniSet{Index: ms.Index, Labels: ms.Labels}
	}
	aug := make([]float32, len(x))
	if err := datasets.Augment(aug, x, n, d.Shape, s.Augment, rng); err != nil {
		t.Fatal(err)
	}
	riskOn := func(imgs []float32) float64 {
		e, err := net.Embed(imgs, n)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gop.WorstCaseRisk(e, n, net.Dim(), sets, s.LFD)
		if err != nil {
			t.Fatal(err)
		}
		return r.Risk
	}
	want, plain := riskOn(aug), riskOn(x)
	st, err := tr.Step()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.Risk-want) > 1e-9 {
		t.Fatalf("step 1 risk %.12f, risk on the augmented batch %.12f (on the plain batch %.12f)", st.Risk, want, plain)
	}
	if math.Abs(want-plain) < 1e-6 {
		t.Fatalf("augmentation did not change the risk (%.9f vs %.9f): the test proves nothing", want, plain)
	}
}

func TestTrainerAugmentResumeMatchesUninterrupted(t *testing.T) {
	d, ep := trainFixture(t, 6)
	s := augSettings(6)
	netA, a := newTestTrainer(t, d, ep, s)
	defer a.Close()
	finish(t, a)
	ck := checkpointAfter(t, d, ep, s, 4, "aug")
	netC, c := newTestTrainer(t, d, ep, s)
	defer c.Close()
	if err := c.Resume(ck, "aug"); err != nil {
		t.Fatal(err)
	}
	finish(t, c)
	wa := sameWeights(t, netA, netC)
	// And augmentation changes training: the same run without it ends elsewhere.
	netP, p := newTestTrainer(t, d, ep, trainSettings(6, 1))
	defer p.Close()
	finish(t, p)
	same := true
	for i, w := range weightsOf(netP) {
		if w != wa[i] {
			same = false
			break
		}
	}
	if same {
		t.Fatal("training with and without augmentation gave the same weights")
	}
}

func TestTrainerAugmentFloat32(t *testing.T) {
	d, ep := trainFixture(t, 7)
	net, err := model.New(model.Config{Kind: model.CNN, InShape: d.Shape, Channels: 4, Dim: 16, DType: model.Float32}, 11)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(net, d.Subset(ep.TrainIndex).X, ep.TrainLabels, augSettings(2))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for !tr.Done() {
		st, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(st.Risk) || st.Risk < 0 {
			t.Fatalf("step %d risk %v", st.Step, st.Risk)
		}
	}
}

func TestTrainerAugmentRejectsRows(t *testing.T) {
	net, err := model.New(model.Config{Kind: model.MLP, InShape: []int{4}, Hidden: 3, Dim: 2, DType: model.Float64}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := augSettings(1)
	s.Ways = 2
	_, err = NewTrainer(net, make([]float32, 16), []int{0, 0, 1, 1}, s)
	if err == nil || !strings.Contains(err.Error(), "not images") {
		t.Fatalf("augmenting feature rows: error %v", err)
	}
	s.Augment = datasets.AugmentSettings{Shift: 16}
	d, ep := trainFixture(t, 1) // 16×16 images: a shift of 16 is impossible
	net2, err := model.New(model.Config{Kind: model.CNN, InShape: d.Shape, Channels: 2, Dim: 4, DType: model.Float64}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewTrainer(net2, d.Subset(ep.TrainIndex).X, ep.TrainLabels, s); err == nil || !strings.Contains(err.Error(), "shift 16") {
		t.Fatalf("shift 16 on 16×16 images: error %v", err)
	}
}

package train

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model"
	"gorgonia.org/tensor"
)

// machineWords are what Gorgonia's tape machine puts around an op's error
// (the failing instruction's dump, its registers, "Failed to carry
// op.Do()"): none may reach a diverged step's message.
var machineWords = []string{"PC ", "Failed to execute", "Failed to carry", "CPU", "false false", "\t"}

// checkDiverged checks that err is a diverged step's error: one line
// naming the step and what was not finite, with the hint, and none of the
// machine's words; the step's own error stays behind errors.Unwrap.
func checkDiverged(t *testing.T, err error, step int, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("step %d: no error", step)
	}
	msg := err.Error()
	for _, w := range machineWords {
		if strings.Contains(msg, w) {
			t.Errorf("the message holds the machine's %q: %q", w, msg)
		}
	}
	want := fmt.Sprintf("training diverged at step %d: %s", step, reason)
	if !strings.Contains(msg, want) || !strings.Contains(msg, "lower the learning rate or check the data for NaN/Inf") {
		t.Errorf("the message %q does not say %q and the hint", msg, want)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("the message is not one line: %q", msg)
	}
	var d *DivergedError
	if !errors.As(err, &d) || d.Step != step || !errors.Is(err, ErrDiverged) || errors.Unwrap(err) == nil {
		t.Errorf("%q is not a *DivergedError of step %d wrapping the step's error", msg, step)
	}
}

// A learning rate of 1e300 takes the weights past the float range in one
// update: the next step's embeddings are NaN and the risk layer refuses
// them. The error says so in one line, without the tape machine's dump of
// the risk op's instruction it used to carry ("train: step 2: PC 7.
// Failed to execute instruction WorstCaseRisk(n=10,d=64) [CPU6] CPU7
// false false false: Failed to carry op.Do(): gop: risk: …").
func TestTrainerDivergedStepSaysSo(t *testing.T) {
	d, ep := trainFixture(t, 2)
	for _, tc := range []struct {
		lr     float64
		reason string
	}{
		{1e300, "non-finite risk (the embeddings hold NaN or ±Inf)"},
		{1e100, "non-finite risk (cost between points"}, // finite embeddings whose squared distances overflow
	} {
		s := trainSettings(5, 1)
		s.LR = tc.lr
		_, tr := newTestTrainer(t, d, ep, s)
		if _, err := tr.Step(); err != nil {
			t.Fatalf("lr %g: step 1: %v", tc.lr, err)
		}
		_, err := tr.Step()
		t.Logf("lr %g: %v", tc.lr, err)
		checkDiverged(t, err, 2, tc.reason)
		if tr.StepsDone() != 1 {
			t.Fatalf("lr %g: %d steps recorded, want 1", tc.lr, tr.StepsDone())
		}
		tr.Close()
	}
}

// The episodic trainer's drknn and proto objectives say the same.
func TestEpisodicDivergedStepSaysSo(t *testing.T) {
	d, base, idx := episodicFixture(t)
	for _, tc := range []struct{ objective, loss string }{{ObjectiveDrKNN, "risk"}, {ObjectiveProto, "loss"}} {
		t.Run(tc.objective, func(t *testing.T) {
			s := episodicSettings(tc.objective, 5)
			s.LR = 1e300
			_, tr := newEpisodic(t, d, base, idx, s)
			var err error
			for !tr.Done() && err == nil {
				_, err = tr.Step()
			}
			var de *DivergedError
			if !errors.As(err, &de) {
				t.Fatalf("the training did not diverge: %v", err)
			}
			t.Logf("%v", err)
			checkDiverged(t, err, de.Step, "non-finite ")
			if de.Param == "" && de.Loss != tc.loss {
				t.Errorf("the diverged %s says %q", tc.objective, de.Loss)
			}
		})
	}
}

// Adam refuses a non-finite gradient; the step's error names the
// parameter (the first learnable node whose gradient is not finite).
func TestStepErrorNamesTheGradient(t *testing.T) {
	g := G.NewGraph()
	w := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, math.Inf(1), 2}))))
	v := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 1, 1}))))
	loss := G.Must(G.Sum(G.Must(G.Add(G.Must(G.Square(w)), v))))
	learn := G.Nodes{v, w}
	vm, adam, err := model.NewMinimiser(g, loss, learn, model.AdamSettings{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	aerr := adam.Step()
	if aerr == nil {
		t.Fatal("Adam took a non-finite gradient")
	}
	err = stepError(6, aerr, false, learn, nil, "risk")
	checkDiverged(t, err, 7, `non-finite gradient of "w"`)
	if errors.Unwrap(err) != aerr {
		t.Fatalf("Unwrap: %v, want Adam's %v", errors.Unwrap(err), aerr)
	}
	// Not a non-finite value: the step's error as before, "train: step N: …".
	other := errors.New("out of memory")
	if err := stepError(6, other, true, nil, nil, "risk"); err.Error() != "train: step 7: out of memory" || errors.Is(err, ErrDiverged) {
		t.Fatalf("another failure: %v", err)
	}
}

package eval

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/diverge"
)

// machineWords are what Gorgonia's tape machine puts around an op's error
// (the failing instruction's dump, "Failed to carry op.Do()"): none may
// reach a diverged baseline's message.
var machineWords = []string{"PC ", "Failed to execute", "Failed to carry", "CPU", "false false", "\t"}

// checkFewShotDiverged checks that err is a diverged baseline training's
// error in the trainer's words: one line, "eval: METHOD: training diverged
// at step N of S: REASON…; lower the learning rate (now LR) or check the
// data for NaN/Inf", without the machine's words; errors.Is finds
// ErrDiverged (train.ErrDiverged) and errors.As the *diverge.Error
// (train.DivergedError) of step N.
func checkFewShotDiverged(t *testing.T, err error, method string, step, steps int, reason string, lr float64) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: the training did not fail", method)
	}
	msg := err.Error()
	t.Logf("%s", msg)
	for _, w := range machineWords {
		if strings.Contains(msg, w) {
			t.Errorf("the message holds the machine's %q: %q", w, msg)
		}
	}
	want := fmt.Sprintf("eval: %s: training diverged at step %d of %d: %s", method, step, steps, reason)
	hint := fmt.Sprintf("; lower the learning rate (now %g) or check the data for NaN/Inf", lr)
	if !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, hint) {
		t.Errorf("the message %q does not read %q … %q", msg, want, hint)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("the message is not one line: %q", msg)
	}
	var d *diverge.Error
	if !errors.Is(err, diverge.ErrDiverged) || !errors.As(err, &d) || d.Step != step || d.Steps != steps {
		t.Errorf("%q is not a *diverge.Error of step %d of %d", msg, step, steps)
	}
}

// A learning rate far too large makes every baseline's training diverge:
// the first update takes the weights past the float range (1e300) or
// makes the embeddings overflow (1e20), and the next step's loss cannot be
// computed. The error says so in the trainer's words (train.DivergedError)
// instead of "eval: proto_net: step 2: PC 7. Failed to execute instruction
// FewShotLoss [CPU6] … Failed to carry op.Do(): eval: embedding of
// training sample 0 is NaN (training diverged)".
func TestFewShotDivergedSaysSo(t *testing.T) {
	x, y, _, _, shape := syntheticEpisode(t, 3, 10, 2)
	for _, tc := range []struct {
		lr     float64
		reason string
	}{
		{1e300, `non-finite loss (the last update took the weights of "model.`},
		{1e20, "non-finite loss (the embeddings hold NaN or ±Inf)"},
	} {
		for _, method := range FewShotMethods() {
			s := smallSettings(6)
			s.LR = tc.lr
			_, err := TrainFewShot(method, s, shape, x, y, 2)
			checkFewShotDiverged(t, err, method, 2, 6, tc.reason, tc.lr)
		}
	}
}

// A single step whose update takes the weights past the float range
// leaves embeddings that are not finite: the last step diverged.
func TestFewShotDivergedLastStep(t *testing.T) {
	x, y, _, _, shape := syntheticEpisode(t, 3, 10, 2)
	s := smallSettings(1)
	s.LR = 1e300
	_, err := TrainFewShot(MethodProtoNet, s, shape, x, y, 2)
	checkFewShotDiverged(t, err, MethodProtoNet, 1, 1, "non-finite embedding (training sample 0 is ", 1e300)
}

// Inputs of 1e20 give proto_net a first gradient that is NaN: Adam
// refuses the step, and the error names the parameter as the trainer's
// does, instead of "eval: proto_net: step 1: model: Adam: gradient of
// "model.conv.weight" is NaN at 0".
func TestFewShotDivergedGradient(t *testing.T) {
	x, y, _, _, shape := syntheticEpisode(t, 3, 10, 2)
	for i := range x {
		x[i] *= 1e20
	}
	s := smallSettings(3)
	_, err := TrainFewShot(MethodProtoNet, s, shape, x, y, 2)
	checkFewShotDiverged(t, err, MethodProtoNet, 1, 3, `non-finite gradient of "model.conv.weight"`, s.LR)
}

// At lr 1e8 metaoptnet's embeddings stay finite but its pseudo-episode
// loss is NaN: the loss op's refusal is named (it used to read "eval:
// metaoptnet: step 2: PC 7. Failed to execute instruction FewShotLoss …:
// eval: few-shot episode loss is NaN"); the step's error stays behind
// errors.Unwrap.
func TestFewShotDivergedLoss(t *testing.T) {
	x, y, _, _, shape := syntheticEpisode(t, 3, 10, 2)
	s := smallSettings(6)
	s.LR = 1e8
	_, err := TrainFewShot(MethodMetaOptNet, s, shape, x, y, 2)
	checkFewShotDiverged(t, err, MethodMetaOptNet, 2, 6, "non-finite loss (the few-shot episode loss is NaN)", 1e8)
	if !strings.Contains(fmt.Sprint(errors.Unwrap(err)), "eval: few-shot episode loss is NaN") {
		t.Errorf("errors.Unwrap of %q is not the step's error: %v", err, errors.Unwrap(err))
	}
}

// A step that fails for another reason than a non-finite value keeps its
// own error — "eval: METHOD: step N: …" — with the machine's report of the
// failing instruction left out, and is no ErrDiverged. Inputs of 1e10 make
// metaoptnet's KKT system singular (it used to read "eval: metaoptnet:
// step 1: PC 7. Failed to execute instruction FewShotLoss [CPU6] …").
func TestFewShotStepErrorNotDiverged(t *testing.T) {
	x, y, _, _, shape := syntheticEpisode(t, 3, 10, 2)
	for i := range x {
		x[i] *= 1e10
	}
	_, err := TrainFewShot(MethodMetaOptNet, smallSettings(3), shape, x, y, 2)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	t.Logf("%s", msg)
	for _, w := range machineWords {
		if strings.Contains(msg, w) {
			t.Errorf("the message holds the machine's %q: %q", w, msg)
		}
	}
	if !strings.HasPrefix(msg, "eval: metaoptnet: step 1: eval: metaoptnet backward: ") || errors.Is(err, diverge.ErrDiverged) {
		t.Errorf("another failure reads %q", msg)
	}
}

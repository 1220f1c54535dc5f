package train

import (
	"errors"
	"fmt"
	"strings"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/internal/vmerr"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
)

// ErrDiverged is matched (errors.Is) by the error of a training step that
// diverged: a *DivergedError.
var ErrDiverged = errors.New("training diverged")

// DivergedError is the error of a training step whose loss or gradient is
// not finite — the learning rate too large for the network, or data that
// drive it to NaN or ±Inf. Its message is one line naming the step and
// what was not finite; the error Gorgonia's machine or Adam reported (the
// failing instruction, its node and registers) is Err, reached through
// errors.Unwrap.
type DivergedError struct {
	Step int // 1-based
	// Param is the learnable node whose gradient is not finite; "" when
	// the step's loss could not be computed (Loss is not finite).
	Param string
	// Loss is what the step minimises: "risk" (the mean worst-case risk)
	// or "loss" (the prototypical loss).
	Loss string
	// Detail says what was not finite, when known ("the embeddings hold
	// NaN or ±Inf", "cost between points 0 and 1 overflows (+Inf)").
	Detail string
	Err    error
}

// Reason is what went non-finite: `non-finite gradient of
// "model.conv.weight"`, or `non-finite risk (the embeddings hold NaN or
// ±Inf)`.
func (e *DivergedError) Reason() string {
	if e.Param != "" {
		return fmt.Sprintf("non-finite gradient of %q", e.Param)
	}
	s := "non-finite " + e.Loss
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("train: training diverged at step %d: %s; lower the learning rate or check the data for NaN/Inf", e.Step, e.Reason())
}

func (e *DivergedError) Unwrap() error        { return e.Err }
func (e *DivergedError) Is(target error) bool { return target == ErrDiverged }

// stepError is the error of step (0-based) that failed in the machine's
// run of the graph (run) or in Adam's update: a *DivergedError when a
// value of the step went non-finite (diverged says how it tells), else
// "train: step N: …" with the machine's report of the failing instruction
// kept out of the message (vmerr.Clean).
func stepError(step int, err error, run bool, learn G.Nodes, emb *G.Node, loss string) error {
	if d := diverged(err, run, learn, emb); d != nil {
		d.Step, d.Loss, d.Err = step+1, loss, err
		return d
	}
	return fmt.Errorf("train: step %d: %w", step+1, vmerr.Clean(err))
}

// diverged tells whether err, the error of a step's run (run) or of its
// Adam update, comes of a non-finite value, and which. Adam fails on a
// gradient that is not finite: the first learnable node whose gradient
// holds NaN or ±Inf is named. The run fails when the risk cannot be
// computed: weights that an update took past the float range, embeddings
// that hold NaN or ±Inf, or the risk layer refusing its input (costs that
// overflow, non-finite features or gradients: optlayer.ErrInvalid —
// the training samples were checked finite, so the network made them).
// It looks only after a failure: a step that succeeds pays nothing.
func diverged(err error, run bool, learn G.Nodes, emb *G.Node) *DivergedError {
	if !run {
		for _, n := range learn {
			if g, gerr := n.Grad(); gerr == nil && model.NonFinite(g) {
				return &DivergedError{Param: n.Name()}
			}
		}
		return nil
	}
	for _, n := range learn {
		if model.NonFinite(n.Value()) {
			return &DivergedError{Detail: fmt.Sprintf("the last update took the weights of %q past the float range", n.Name())}
		}
	}
	if emb != nil && model.NonFinite(emb.Value()) {
		return &DivergedError{Detail: "the embeddings hold NaN or ±Inf"}
	}
	// The machine's error does not unwrap to the op's: Find takes it out.
	if _, op, ok := vmerr.Find(err); ok && errors.Is(op, optlayer.ErrInvalid) {
		detail := op.Error()
		if _, after, ok := strings.Cut(detail, optlayer.ErrInvalid.Error()+": "); ok {
			detail = after
		}
		return &DivergedError{Detail: detail}
	}
	return nil
}

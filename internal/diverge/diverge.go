// Package diverge is the error of a training step that diverged — a
// gradient, weight, embedding or loss that went NaN or ±Inf — shared by the
// trainer (package train, whose DivergedError it is) and the few-shot
// network baselines (package eval), so that both say it in the same words
// and a caller matches either with errors.Is(err, ErrDiverged) or
// errors.As(err, &d) for a *Error (*train.DivergedError).
package diverge

import (
	"errors"
	"fmt"
	"strings"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model"
)

// ErrDiverged is matched (errors.Is) by every *Error.
var ErrDiverged = errors.New("training diverged")

// Error is the error of a training step whose loss or gradient is not
// finite — the learning rate too large for the network, or data that drive
// it to NaN or ±Inf. Its message is one line naming the step and what was
// not finite, with what to do: `train: training diverged at step 2:
// non-finite risk (the embeddings hold NaN or ±Inf); lower the learning
// rate or check the data for NaN/Inf`. The error Gorgonia's machine or
// Adam reported (the failing instruction, its node and registers) is Err,
// reached through errors.Unwrap.
type Error struct {
	// Op is what trained, the message's prefix ("train", "eval:
	// proto_net"); "" none.
	Op   string
	Step int // 1-based
	// Steps is the number of steps of the training, said as "step N of
	// Steps" when > 0.
	Steps int
	// Param is the learnable node whose gradient is not finite; "" when
	// the step's loss could not be computed (Loss is not finite).
	Param string
	// Loss is what was not finite when it is not a gradient: what the step
	// minimises, "risk" (the mean worst-case risk) or "loss" (an episodic
	// loss), or "embedding" (the embeddings after the last step).
	Loss string
	// Detail says what was not finite, when known ("the embeddings hold
	// NaN or ±Inf", "cost between points 0 and 1 overflows (+Inf)").
	Detail string
	// LR is the learning rate, named in the message's hint when > 0.
	LR  float64
	Err error
}

// Reason is what went non-finite: `non-finite gradient of
// "model.conv.weight"`, or `non-finite risk (the embeddings hold NaN or
// ±Inf)`.
func (e *Error) Reason() string {
	if e.Param != "" {
		return fmt.Sprintf("non-finite gradient of %q", e.Param)
	}
	s := "non-finite " + e.Loss
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	fmt.Fprintf(&b, "training diverged at step %d", e.Step)
	if e.Steps > 0 {
		fmt.Fprintf(&b, " of %d", e.Steps)
	}
	b.WriteString(": " + e.Reason() + "; lower the learning rate")
	if e.LR > 0 {
		fmt.Fprintf(&b, " (now %g)", e.LR)
	}
	b.WriteString(" or check the data for NaN/Inf")
	return b.String()
}

func (e *Error) Unwrap() error        { return e.Err }
func (e *Error) Is(target error) bool { return target == ErrDiverged }

// Find tells whether a step's failure — of the machine's run of the graph
// (run) or of Adam's update — comes of a non-finite value of the network,
// and which; Step, Op, Loss and Err are left to the caller. Adam fails on a
// gradient that is not finite: the first learnable node whose gradient
// holds NaN or ±Inf is named. A run fails when its loss cannot be computed:
// weights that an update took past the float range are named first, then
// embeddings (emb; nil: none) that hold NaN or ±Inf. Nil when none of
// these is the cause (the caller may know of others: the op that refused
// its input). It looks only after a failure: a step that succeeds pays
// nothing.
func Find(run bool, learn G.Nodes, emb *G.Node) *Error {
	if !run {
		for _, n := range learn {
			if g, gerr := n.Grad(); gerr == nil && model.NonFinite(g) {
				return &Error{Param: n.Name()}
			}
		}
		return nil
	}
	for _, n := range learn {
		if model.NonFinite(n.Value()) {
			return &Error{Detail: fmt.Sprintf("the last update took the weights of %q past the float range", n.Name())}
		}
	}
	if emb != nil && model.NonFinite(emb.Value()) {
		return &Error{Detail: "the embeddings hold NaN or ±Inf"}
	}
	return nil
}

package train

import (
	"errors"
	"fmt"
	"strings"

	"github.com/drknn/drknn/internal/diverge"
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/internal/vmerr"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
)

// ErrDiverged is matched (errors.Is) by the error of a training step that
// diverged: a *DivergedError, the trainer's or a few-shot baseline's
// (package eval; both come from internal/diverge).
var ErrDiverged = diverge.ErrDiverged

// DivergedError is the error of a training step whose loss or gradient is
// not finite — the learning rate too large for the network, or data that
// drive it to NaN or ±Inf. Its message is one line naming the step and
// what was not finite (Reason), with a hint: `train: training diverged at
// step 2: non-finite risk (the embeddings hold NaN or ±Inf); lower the
// learning rate or check the data for NaN/Inf`. The error Gorgonia's
// machine or Adam reported (the failing instruction, its node and
// registers) is Err, reached through errors.Unwrap. The trainer sets Step,
// Param or Loss ("risk" or "loss") and Detail; Op is "train". The few-shot
// baselines of package eval fail with the same type, so errors.As finds
// theirs too.
type DivergedError = diverge.Error

// stepError is the error of step (0-based) that failed in the machine's
// run of the graph (run) or in Adam's update: a *DivergedError when a
// value of the step went non-finite (diverged says how it tells), else
// "train: step N: …" with the machine's report of the failing instruction
// kept out of the message (vmerr.Clean).
func stepError(step int, err error, run bool, learn G.Nodes, emb *G.Node, loss string) error {
	if d := diverged(err, run, learn, emb); d != nil {
		d.Op, d.Step, d.Loss, d.Err = "train", step+1, loss, err
		return d
	}
	return fmt.Errorf("train: step %d: %w", step+1, vmerr.Clean(err))
}

// diverged tells whether err, the error of a step's run (run) or of its
// Adam update, comes of a non-finite value, and which: a gradient Adam
// refused, weights that an update took past the float range or embeddings
// that hold NaN or ±Inf (diverge.Find), or the risk layer refusing its
// input (costs that overflow, non-finite features or gradients:
// optlayer.ErrInvalid — the training samples were checked finite, so the
// network made them). It looks only after a failure: a step that succeeds
// pays nothing.
func diverged(err error, run bool, learn G.Nodes, emb *G.Node) *DivergedError {
	if d := diverge.Find(run, learn, emb); d != nil || !run {
		return d
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

// stateDiverged is a *DivergedError of step (1-based, the step whose
// update left the state so) when the trainer's state — the network's
// weights (learn, whose values are its storage), its batch-norm running
// statistics and Adam's moments, what a checkpoint holds — is not finite,
// nil when it is. A step can end with such a state and succeed: its
// gradient was finite, Adam's update took the weights past the float range
// (a learning rate of 1e300 in float32). The next step's run or gradient
// check catches it (diverge.Find); this check is for the state that no
// next step looks at: the one a checkpoint writes and the one the last
// step hands on. One pass over the state, made then only, never at every
// step.
func stateDiverged(learn G.Nodes, net *model.Net, adam *model.Adam, step int) *DivergedError {
	d := &DivergedError{Op: "train", Step: step}
	for _, n := range learn { // the network's weights (their storage), named as Find names them
		if model.NonFinite(n.Value()) {
			d.Loss, d.Detail = "weights", fmt.Sprintf("the update took %q past the float range", n.Name())
			return d
		}
	}
	if p := nonFiniteParam(net.Buffers()); p != "" {
		d.Loss, d.Detail = "batch-norm statistics", fmt.Sprintf("%q", p)
		return d
	}
	if node, moment := adam.NonFiniteMoment(); node != "" {
		d.Loss, d.Detail = "Adam moments", fmt.Sprintf("the %s moment of %q overflowed", moment, node)
		return d
	}
	return nil
}

// nonFiniteParam is the name of the first of ps that holds NaN or ±Inf, ""
// none.
func nonFiniteParam(ps []*model.Param) string {
	for _, p := range ps {
		if p.NonFinite() {
			return p.Name
		}
	}
	return ""
}

// checkpointable is nil when the state of a trainer that has taken steps
// steps may be written to the checkpoint path, else the error that wraps
// its step's *DivergedError (stateDiverged): "train: checkpoint path not
// written: training diverged at step N: non-finite weights (…); …".
func checkpointable(path string, learn G.Nodes, net *model.Net, adam *model.Adam, steps int) error {
	d := stateDiverged(learn, net, adam, steps)
	if d == nil {
		return nil
	}
	d.Op = ""
	return fmt.Errorf("train: checkpoint %s not written: %w", path, d)
}

// Package vmerr takes Gorgonia's tape-machine report out of an error's
// message. When an op of a graph fails, the machine wraps the op's own
// error ("gop: risk: mini-set 0: …", "few-shot episode loss is NaN") in a
// dump of the failing instruction — its program counter, op, registers and
// flags, and Gorgonia's own "Failed to carry op.Do()" — which says nothing
// to a person running an experiment. Clean keeps the op's error in the
// message and the machine's report behind errors.Unwrap.
package vmerr

import (
	"errors"
	"strings"

	pkgerrors "github.com/pkg/errors"
)

// machineError is the tape machine's error (internal/gorgonia's
// vmContextualError): the instruction that failed and the op's error
// wrapped in the instruction's dump.
type machineError interface {
	error
	InstructionID() int
	Err() error
}

// Find returns the tape machine's error inside err and the error of the op
// that failed (the machine's wrapping taken off), or ok false when err holds
// no machine error.
func Find(err error) (machine, op error, ok bool) {
	var me machineError
	if err == nil || !errors.As(err, &me) {
		return nil, nil, false
	}
	op = pkgerrors.Cause(me.Err())
	if op == nil {
		op = me.Err()
	}
	return me, op, true
}

// cleaned is an error whose message has the machine's report replaced by
// the op's error; Unwrap returns the error as it was.
type cleaned struct {
	msg string
	err error
}

func (e *cleaned) Error() string { return e.msg }
func (e *cleaned) Unwrap() error { return e.err }

// Clean returns err with the tape machine's report in its message
// replaced by the error of the op that failed: "train: step 2: PC 7.
// Failed to execute instruction WorstCaseRisk(…) [CPU6] CPU7 false …:
// Failed to carry op.Do(): gop: risk: …" reads "train: step 2: gop: risk:
// …". errors.Unwrap of the result is err, so errors.Is and errors.As reach
// everything err does. An err without a machine error (nil included), or
// whose message does not hold the machine's (a wrapper that words the
// failure itself), is returned as it is.
func Clean(err error) error {
	var c *cleaned
	if errors.As(err, &c) {
		return err
	}
	me, op, ok := Find(err)
	if !ok {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, me.Error()) {
		return err // a wrapper that words the failure itself (train.DivergedError)
	}
	return &cleaned{msg: strings.Replace(msg, me.Error(), op.Error(), 1), err: err}
}

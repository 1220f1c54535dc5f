package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Output is a writer that remembers its first failed write and fails every
// write after it, so that a command's many prints to standard output need
// no check each: Exec checks Err once the command returns. A closed pipe or
// a full disk under `> FILE` then gives one line and exit status 1, not a
// silent exit 0 with the output lost.
type Output struct {
	w   io.Writer
	err error
}

// NewOutput wraps w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

func (o *Output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = err
	}
	return n, err
}

// Err is the first write error, or nil.
func (o *Output) Err() error { return o.err }

// Exec runs run with stdout wrapped in an Output and returns the exit
// status, having printed the error as one line on stderr (Report): run's
// own error, or else a failed write to stdout ("writing standard output:
// …", status 1). Main calls it; tests call it with their writers.
func Exec(ctx context.Context, name string, run Run, args []string, stdout, stderr io.Writer, usage ...error) int {
	out := NewOutput(stdout)
	err := run(ctx, args, out, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		if werr := out.Err(); werr != nil {
			err = fmt.Errorf("writing standard output: %w", werr)
		}
	}
	return Report(stderr, name, err, usage...)
}

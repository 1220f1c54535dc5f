// Package cli is what the drknn commands share: running a command's run
// function with a context that Ctrl-C cancels, one-line errors and exit
// codes, repeatable flags, and the rendering of experiment events (a
// progress bar on the terminal and the run's log file).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/drknn/drknn/internal/oneline"
)

// Run is a command's body: it parses args with its own flag set, calls the
// library and prints its results to stdout (notes to stderr).
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Main runs run with a context that SIGINT (Ctrl-C) and SIGTERM cancel and
// exits with Exec's status (a failed write to standard output is an
// error). Only the first signal is caught: a second one ends the process at
// once, so a step that does not watch the context cannot keep it alive.
func Main(name string, run Run, usage ...error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the signals' default action again
	}()
	code := Exec(ctx, name, run, os.Args[1:], os.Stdout, os.Stderr, usage...)
	stop()
	os.Exit(code)
}

// Report prints err (unless nil or -help) as one line "name: message" on
// stderr and returns the exit status Code(err, usage…). Tests call it after
// run with buffers.
func Report(stderr io.Writer, name string, err error, usage ...error) int {
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "%s: %s\n", name, oneline.Err(err))
	}
	return Code(err, usage...)
}

// Code is the exit status for err: 0 for none (or -help); 2 for bad usage
// or input — errors marked by Usage, flag errors, or errors wrapping one of
// usage; 130 when the run was interrupted (context cancelled); the code of
// an error with an ExitCode() int method (e.g. 3: a run that finished with
// some methods or repeats failed); 1 otherwise.
func Code(err error, usage ...error) int {
	var ue usageError
	var ec interface{ ExitCode() int }
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	case errors.As(err, &ec):
		return ec.ExitCode()
	}
	for _, u := range usage {
		if errors.Is(err, u) {
			return 2
		}
	}
	return 1
}

// Incomplete is the error of a run or table that was written with N
// failures recorded in the file Path (and listed on stderr before it):
// exit status 3. Note says what the failures lack, Done what completed.
type Incomplete struct {
	N          int
	Path       string
	Note, Done string // e.g. "their methods have no accuracy there", "the rest of the run completed"
}

func (e Incomplete) Error() string {
	return fmt.Sprintf("%d failure(s) recorded in %s (%s); %s", e.N, e.Path, e.Note, e.Done)
}

// ExitCode is 3: done, with failures.
func (Incomplete) ExitCode() int { return 3 }

type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// Usage marks err as bad usage (exit status 2) keeping its message.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// Usagef is Usage(fmt.Errorf(format, args…)).
func Usagef(format string, args ...any) error { return Usage(fmt.Errorf(format, args...)) }

// Parse parses args with fs (whose output it silences) and marks flag
// errors as usage errors naming the usage line; -help prints the flags on
// stderr and returns flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, usage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return err
		}
		return Usagef("%v; %s", err, usage)
	}
	return nil
}

// MultiFlag is a repeatable string flag (-set a=1 -set b=2).
type MultiFlag []string

func (m *MultiFlag) String() string     { return strings.Join(*m, " ") }
func (m *MultiFlag) Set(v string) error { *m = append(*m, v); return nil }

package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/train"
)

func TestCodeAndReport(t *testing.T) {
	bad := errors.New("bad input")
	for _, c := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{flag.ErrHelp, 0},
		{Usagef("no config"), 2},
		{fmt.Errorf("x.yaml: %w", bad), 2},
		{fmt.Errorf("repeat 1: %w", context.Canceled), 130},
		{errors.New("disk full"), 1},
	} {
		var se bytes.Buffer
		if got := Report(&se, "tool", c.err, bad); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.code)
		}
		if lines := strings.Count(se.String(), "\n"); (c.code == 0 && lines != 0) || (c.code != 0 && (lines != 1 || !strings.HasPrefix(se.String(), "tool: "))) {
			t.Errorf("%v: stderr %q", c.err, se.String())
		}
	}
}

// TestReporter: the log lines of a run go to its folder's train.log with a
// time stamp; table cells get a line on the terminal.
func TestReporter(t *testing.T) {
	dir := t.TempDir()
	var term bytes.Buffer
	r := &Reporter{Term: &term, Bar: true}
	r.Observe(experiment.Started{Dir: dir, Repeats: 1, Steps: 2})
	r.Observe(experiment.Message{Text: "hello"})
	r.Observe(experiment.StepDone{Stats: train.StepStats{Step: 1, Risk: 0.5}})
	r.Observe(experiment.StepDone{CV: true, Stats: train.StepStats{Step: 1}})
	r.Observe(experiment.Finished{})
	r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: "x-2w5s", Skipped: "data not available"}})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "train.log"))
	if err != nil || !strings.HasSuffix(string(log), " hello\n") || len(log) != len("15:04:05 hello\n") {
		t.Fatalf("train.log %q, %v", log, err)
	}
	if !strings.HasSuffix(term.String(), "x-2w5s               skipped: data not available\n") {
		t.Fatalf("terminal %q", term.String())
	}
	bad := &Reporter{}
	bad.Observe(experiment.Started{Dir: filepath.Join(dir, "missing", "folder")})
	if bad.Err() == nil {
		t.Fatal("an unwritable log was not reported")
	}
}

type codeErr int

func (c codeErr) Error() string { return "finished with failures" }
func (c codeErr) ExitCode() int { return int(c) }

// TestExitCoder: an error with an ExitCode method sets the status, also
// when wrapped.
func TestExitCoder(t *testing.T) {
	if got := Code(fmt.Errorf("run: %w", codeErr(3))); got != 3 {
		t.Fatalf("code %d, want 3", got)
	}
}

// Incomplete (drknn-train's and drknn-table's "done, with failures") is
// exit status 3, also wrapped, and its message names the count and file.
func TestIncomplete(t *testing.T) {
	err := Incomplete{N: 2, Path: "out/results.json", Note: "their methods have no accuracy there", Done: "the rest of the run completed"}
	if c := Code(fmt.Errorf("run: %w", err)); c != 3 {
		t.Fatalf("exit status %d, want 3", c)
	}
	if want := "2 failure(s) recorded in out/results.json (their methods have no accuracy there); the rest of the run completed"; err.Error() != want {
		t.Fatalf("%q, want %q", err.Error(), want)
	}
}

package cli

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/train"
)

// clock is a fake clock that tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }
func (c *clock) at(sec float64) *clock {
	c.t = time.Unix(1000, 0).Add(time.Duration(sec * float64(time.Second)))
	return c
}

// TestProgressETA: the time left counts the evaluation units as well as the
// training steps, each at its measured cost, divided by the parallelism
// reached. (The old bar counted steps only: here half the work is
// evaluation, and its estimate was half the truth.)
func TestProgressETA(t *testing.T) {
	c := (&clock{}).at(0)
	var out bytes.Buffer
	p := newProgress(&out, func() int { return 0 }, c.now)
	p.add(2*10, 2, []string{"a", "b"})
	// Repeat 0 alone (one worker): 10 steps of 1 s (the first is not
	// measured: nothing before it is known to be its work), then method a
	// 2 s (with the embedding and LFD before it) and method b 4 s.
	for s := 0; s < 10; s++ {
		c.at(float64(s))
		p.step("/0")
	}
	if secs, known, ok := p.eta(); !ok || known || math.Abs(secs-10) > 1e-9 {
		t.Fatalf("after training: eta %v known %v ok %v, want a lower bound of 10 s (10 steps left, evaluation not measured yet)", secs, known, ok)
	}
	if got := p.etaText(); got != "≥10s left" {
		t.Fatalf("eta text %q", got)
	}
	c.at(11)
	p.unit("/0", "a", 0.5)
	c.at(15)
	p.unit("/0", "b", 0.5)
	p.forget("/0")
	// Measured 9 + 2 + 4 = 15 worker-seconds in 15 s: parallelism 1. Left:
	// 10 steps × 1 s + a 2 s + b 4 s.
	secs, known, ok := p.eta()
	if !ok || !known || math.Abs(secs-16) > 1e-9 {
		t.Fatalf("eta %v known %v ok %v, want 16 s", secs, known, ok)
	}
	if f := p.fraction(); math.Abs(f-0.5) > 1e-9 {
		t.Fatalf("fraction %v, want 0.5 (by estimated time)", f)
	}
	// The next repeat's first step is not measured (the time since repeat
	// 0 ended is not its work); two workers now run in parallel: steps of
	// 1 s on each of two repeats every second double the parallelism.
	p.add(2*10, 2, []string{"a", "b"})
	c.at(16)
	p.step("/1")
	p.step("/2")
	for s := 17; s <= 25; s++ {
		c.at(float64(s))
		p.step("/1")
		p.step("/2")
	}
	// Measured 15 + 18 = 33 worker-seconds over 25 s. Left: 10 steps (40
	// planned, 30 done), 3 units of a (2 s each) and 3 of b (4 s each).
	left := p.steps - p.doneSteps
	if left != 10 {
		t.Fatalf("%d steps left, want 10", left)
	}
	want := (10*1 + 3*2 + 3*4) / (33.0 / 25)
	if secs, known, _ := p.eta(); !known || math.Abs(secs-want) > 1e-9 {
		t.Fatalf("eta %v, want %v", secs, want)
	}
}

// TestProgressWidth: the terminal line never reaches the last column at
// any width from 20 to 200 columns, keeps the percentage and time left
// from 30 columns on, and shows the bar, counts and description as room
// allows.
func TestProgressWidth(t *testing.T) {
	c := (&clock{}).at(0)
	p := newProgress(&bytes.Buffer{}, func() int { return 0 }, c.now)
	p.add(1500, 10, []string{"drknn", "matching_net", "metaoptnet"})
	for s := 0; s < 450; s++ {
		c.at(float64(s) * 0.2)
		p.step("/0")
	}
	p.unit("/0", "drknn", 1)
	p.desc = "mnist-5w10s repeat 3 step 120 risk 0.612"
	for w := 20; w <= 200; w++ {
		line := p.line(w - 1)
		n := utf8.RuneCountInString(line)
		if n > w-1 {
			t.Fatalf("width %d: %d columns: %q", w, n, line)
		}
		if w >= 30 && (!strings.HasPrefix(line, " 30%") || !strings.Contains(line, " left")) {
			t.Fatalf("width %d: %q", w, line)
		}
		if w >= 40 && !strings.Contains(line, "[") {
			t.Fatalf("width %d: no bar: %q", w, line)
		}
		if w >= 80 && (!strings.Contains(line, "steps 450/1500 eval 1/30") || !strings.Contains(line, "mnist-5w10s")) {
			t.Fatalf("width %d: %q", w, line)
		}
	}
	if got := p.line(120); !strings.Contains(got, "mnist-5w10s repeat 3 step 120 risk 0.612") {
		t.Fatalf("wide line shortened the description: %q", got)
	}
}

// TestReporterTerminal: on a "terminal" of 40 columns every rewrite of the
// line fits (no wrap), table lines print above it, and Close clears it.
func TestReporterTerminal(t *testing.T) {
	c := (&clock{}).at(0)
	var term bytes.Buffer
	r := &Reporter{Term: &term, Bar: true, Width: 40, Now: c.now}
	dir := t.TempDir()
	r.Observe(experiment.TableStarted{Dir: dir, Cells: []experiment.CellPlan{
		{Name: "a-2w5s", Repeats: 2, Steps: 5, Methods: []string{"drknn", "pca_knn"}},
		{Name: "b-2w5s", Repeats: 2, Steps: 5, Methods: []string{"drknn", "pca_knn"}},
	}})
	if r.prog.steps != 20 || r.prog.units != 8 {
		t.Fatalf("table work: %d steps, %d units", r.prog.steps, r.prog.units)
	}
	r.Observe(experiment.CellStarted{Name: "a-2w5s", Dir: filepath.Join(dir, "cells", "a-2w5s")})
	r.Observe(experiment.Started{Dir: "", Repeats: 2, Steps: 5, Methods: []string{"drknn", "pca_knn"}})
	for s := 1; s <= 5; s++ {
		for rep := 0; rep < 2; rep++ {
			c.at(float64(s) + 0.2*float64(rep))
			r.Observe(experiment.StepDone{Repeat: rep, Stats: train.StepStats{Step: s, Risk: 0.5}})
		}
	}
	for rep := 0; rep < 2; rep++ {
		for _, m := range []string{"drknn", "pca_knn"} {
			c.t = c.t.Add(time.Second)
			r.Observe(experiment.UnitDone{Repeat: rep, Method: m, Accuracy: 0.9, Seconds: 1})
		}
	}
	r.Observe(experiment.Finished{})
	r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: "a-2w5s", Results: &experiment.Results{Methods: map[string]experiment.MethodResult{"drknn": {Mean: 0.9}}}}})
	r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: "b-2w5s", Skipped: "data not available"}})
	if r.prog.steps != 10 || r.prog.units != 4 || r.prog.remaining() != 0 || r.prog.fraction() != 1 {
		t.Fatalf("after the cells: %d/%d steps, %d/%d units", r.prog.doneSteps, r.prog.steps, r.prog.doneUnits, r.prog.units)
	}
	r.Close()
	out := term.String()
	if !strings.Contains(out, "writing to "+dir) || !strings.Contains(out, "a-2w5s               drknn 0.900") ||
		!strings.Contains(out, "b-2w5s               skipped: data not available\n") {
		t.Fatalf("terminal %q", out)
	}
	cleared := strings.ReplaceAll(out, "\r"+strings.Repeat(" ", 39)+"\r", "\n") // lines printed above the progress
	for _, line := range strings.Split(cleared, "\n") {
		for _, seg := range strings.Split(line, "\r")[1:] { // the progress rewrites (a line printed above starts a line)
			if n := utf8.RuneCountInString(seg); n > 39 {
				t.Fatalf("a %d-column segment on a 40-column terminal: %q", n, seg)
			}
		}
	}
	if !strings.HasSuffix(out, "\r"+strings.Repeat(" ", 39)+"\r") {
		t.Fatalf("Close did not clear the line: %q", out[max(len(out)-60, 0):])
	}
}

// TestReporterPlain: output that is not a terminal gets plain progress
// lines (no carriage returns), at most one per further 10% of the work,
// and the log's place.
func TestReporterPlain(t *testing.T) {
	c := (&clock{}).at(0)
	var term bytes.Buffer
	dir := t.TempDir()
	r := &Reporter{Term: &term, Bar: true, Now: c.now} // a bytes.Buffer is not a terminal
	r.Observe(experiment.Started{Dir: dir, Repeats: 1, Steps: 100, Methods: []string{"drknn"}})
	for s := 1; s <= 100; s++ {
		c.at(float64(s))
		r.Observe(experiment.StepDone{Stats: train.StepStats{Step: s}})
	}
	c.at(102)
	r.Observe(experiment.UnitDone{Method: "drknn", Seconds: 2})
	r.Observe(experiment.Finished{})
	out := term.String()
	if strings.Contains(out, "\r") || !strings.HasPrefix(out, "log: "+filepath.Join(dir, "train.log")+"\n") {
		t.Fatalf("output %q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 || len(lines) > 13 || !strings.HasPrefix(lines[1], "progress 0%") || !strings.HasPrefix(lines[len(lines)-1], "progress 100%, 0s left (steps 100/100 eval 1/1)") {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestReporterTransferTable: the transfer table's work is learnt cell by
// cell; a cell that reuses its data set's training (TrainingResumed at
// the last step: its planned steps are taken off, so the bar does not count
// steps that never ran — it showed steps 6/6 then 12/12) and the
// evaluation (no unit events) settle to done at the cell's end.
func TestReporterTransferTable(t *testing.T) {
	c := (&clock{}).at(0)
	r := &Reporter{Term: &bytes.Buffer{}, Bar: true, Width: 60, Now: c.now}
	r.Observe(experiment.TableStarted{Dir: t.TempDir()})
	done := experiment.TransferOutcome{Results: &experiment.Results{Methods: map[string]experiment.MethodResult{}}}
	for i, name := range []string{"omniglot-5w1s", "omniglot-5w5s"} {
		r.Observe(experiment.CellStarted{Name: name})
		r.Observe(experiment.Started{Repeats: 2, Steps: 3, Methods: []string{"drknn", "proto_net"}, Tasks: 5})
		if i == 1 {
			for _, obj := range []string{"drknn", "proto"} {
				r.Observe(experiment.TrainingResumed{Objective: obj, Step: 3, Steps: 3})
			}
		}
		if i == 0 {
			for s := 1; s <= 3; s++ {
				for _, obj := range []string{"drknn", "proto"} {
					c.at(float64(s))
					r.Observe(experiment.TransferStep{Objective: obj, Stats: train.StepStats{Step: s}})
				}
			}
			// Evaluation: 5 tasks × 2 methods, 0.5 s each; after two tasks
			// the estimate is the six units left at their measured cost.
			at := 3.0
			for task := range 2 {
				for _, m := range []string{"drknn", "proto_net"} {
					at += 0.5
					c.at(at)
					r.Observe(experiment.UnitDone{Repeat: task, Method: m, Accuracy: 0.5, Seconds: 0.5})
				}
				r.Observe(experiment.RepeatDone{Repeat: task})
			}
			if p := r.prog; p.units != 10 || p.doneUnits != 4 {
				t.Fatalf("evaluation: %d of %d units done, want 4 of 10", p.doneUnits, p.units)
			}
			if eta, known, ok := r.prog.eta(); !ok || !known || eta <= 0 {
				t.Fatalf("no estimate during the evaluation: %v %v %v", eta, known, ok)
			}
		}
		r.Observe(experiment.Finished{})
		if r.prog.remaining() == 0 {
			t.Fatalf("cell %d: no work left before the cell ended", i)
		}
		done.Cell = experiment.TransferCell{Dataset: "omniglot", Ways: 5, Shots: []int{1, 5}[i]}
		r.Observe(experiment.TransferCellDone{Outcome: done})
		if p := r.prog; p.remaining() != 0 || p.steps != 6 || p.doneSteps != 6 || p.units != 10*(i+1) {
			t.Fatalf("cell %d: %d/%d steps, %d/%d units", i, p.doneSteps, p.steps, p.doneUnits, p.units)
		}
	}
	r.Close()
}

// TestReporterResumedTransferRun: a transfer run resumed from finished
// trainings runs no step; the bar counts none (it showed "33% … steps
// 0/20 eval 10/10" at the end of the evaluation).
func TestReporterResumedTransferRun(t *testing.T) {
	c := (&clock{}).at(0)
	var term bytes.Buffer
	r := &Reporter{Term: &term, Bar: true, Now: c.now}
	r.Observe(experiment.Started{Dir: t.TempDir(), Repeats: 2, Steps: 10, Methods: []string{"drknn"}, Tasks: 10})
	for _, obj := range []string{"drknn", "proto"} {
		r.Observe(experiment.TrainingResumed{Objective: obj, Step: 10, Steps: 10})
	}
	for task := range 10 {
		c.at(float64(task + 1))
		r.Observe(experiment.UnitDone{Repeat: task, Method: "drknn", Seconds: 1})
		r.Observe(experiment.RepeatDone{Repeat: task})
	}
	if p := r.prog; p.steps != 0 || p.remaining() != 0 {
		t.Fatalf("%d/%d steps, %d/%d units", p.doneSteps, p.steps, p.doneUnits, p.units)
	}
	r.Observe(experiment.Finished{})
	lines := strings.Split(strings.TrimSpace(term.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "progress 100%") || strings.Contains(last, "steps") {
		t.Fatalf("last line %q", last)
	}
}

// A cell that ran and failed as a whole prints "failed: …" (it printed
// "skipped: failed: …"), and its work counts as done: the steps it ran
// stay counted and the table's line still ends at 100%. Before, its whole
// plan was taken off the total while the steps it had run stayed done.
func TestReporterFailedCell(t *testing.T) {
	c := (&clock{}).at(0)
	var term bytes.Buffer
	r := &Reporter{Term: &term, Bar: true, Width: 100, Now: c.now}
	dir := t.TempDir()
	r.Observe(experiment.TableStarted{Dir: dir, Cells: []experiment.CellPlan{
		{Name: "a-2w5s", Repeats: 2, Steps: 5, Methods: []string{"drknn"}},
		{Name: "b-2w5s", Repeats: 2, Steps: 5, Methods: []string{"drknn"}},
	}})
	r.Observe(experiment.CellStarted{Name: "a-2w5s", Dir: filepath.Join(dir, "cells", "a-2w5s")})
	r.Observe(experiment.Started{Dir: "", Repeats: 2, Steps: 5, Methods: []string{"drknn"}})
	for s := 1; s <= 3; s++ {
		for rep := 0; rep < 2; rep++ {
			c.at(float64(s) + 0.2*float64(rep))
			r.Observe(experiment.StepDone{Repeat: rep, Stats: train.StepStats{Step: s, Risk: 0.5}})
		}
	}
	r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: "a-2w5s", Failed: "repeat 1: diverged", Skipped: "failed: repeat 1: diverged"}})
	if r.prog.doneSteps > r.prog.steps || r.prog.doneSteps != 10 || r.prog.steps != 20 {
		t.Fatalf("after the failed cell: %d/%d steps, want 10/20", r.prog.doneSteps, r.prog.steps)
	}
	r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: "b-2w5s", Skipped: "data not available"}})
	if r.prog.fraction() != 1 {
		t.Fatalf("after the cells: %d/%d steps, %d/%d units", r.prog.doneSteps, r.prog.steps, r.prog.doneUnits, r.prog.units)
	}
	r.Close()
	out := term.String()
	if !strings.Contains(out, "a-2w5s               failed: repeat 1: diverged\n") || strings.Contains(out, "skipped: failed") {
		t.Fatalf("terminal %q", out)
	}
}

// TestReporterNothingLeftToRun: a table whose every cell is reused
// (-resume over a finished table) or skipped ends its plain output with
// "progress 100%, 0s left": nothing is left to do. It ended with
// "progress 0%, time left ?" — the reused cells' work is taken off the
// total, which left a fraction of 0/0.
func TestReporterNothingLeftToRun(t *testing.T) {
	for _, reused := range []bool{true, false} {
		c := (&clock{}).at(0)
		var term bytes.Buffer
		r := &Reporter{Term: &term, Bar: true, Now: c.now}
		dir := t.TempDir()
		r.Observe(experiment.TableStarted{Dir: dir, Cells: []experiment.CellPlan{
			{Name: "a-2w5s", Repeats: 2, Steps: 5, Methods: []string{"drknn"}},
			{Name: "b-2w5s", Repeats: 2, Steps: 5, Methods: []string{"drknn"}},
		}})
		for _, name := range []string{"a-2w5s", "b-2w5s"} {
			c.at(1)
			o := experiment.CellOutcome{Name: name, Skipped: "data not available"}
			if reused {
				o = experiment.CellOutcome{Name: name, Reused: true, Results: &experiment.Results{Methods: map[string]experiment.MethodResult{}}}
			}
			r.Observe(experiment.CellDone{Cell: o})
		}
		r.Close()
		lines := strings.Split(strings.TrimSpace(term.String()), "\n")
		if last := lines[len(lines)-1]; last != "progress 100%, 0s left" {
			t.Errorf("reused %v: last line %q, want %q (all: %q)", reused, last, "progress 100%, 0s left", lines)
		}
	}
}

package cli

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
)

// Reporter renders experiment events: each run's log lines, time-stamped,
// to DIR/train.log of its run folder (and to Log when set); when Bar is
// set, one progress line on Term over all the work — training steps and
// evaluation units of every repeat, and of every cell of a table — with the
// time left estimated from measured costs (see progress), rewritten in
// place on a terminal (fitted to its width) and as plain lines every 10%
// elsewhere; where the log is written; one line per table cell. Use
// Observe as the run's experiment.Observer, Close at the end, and check
// Err afterwards.
type Reporter struct {
	Term io.Writer // progress and table lines (nil: none)
	Bar  bool      // show the progress
	Log  io.Writer // a copy of the log lines (nil: none)
	// Width is the progress line's width in columns: 0 asks Term (a
	// terminal's width; anything else gets plain lines), < 0 forces plain
	// lines. Now is the clock (nil: time.Now). Tests set both.
	Width int
	Now   func() time.Time

	file  *os.File
	prog  *progress
	table map[string]experiment.CellPlan // the table's cells (nil: a single run)
	cell  string                         // the running cell
	mark  cellMark                       // progress when the cell started
	// resumed counts the planned training steps of the running cell (or
	// run) that a resumed training does not run again (TrainingResumed).
	resumed int
	val     map[string]string // latest validation accuracy per objective (transfer)
	err     error
}

// cellMark is the progress at the start of a cell, to settle its count at
// its end (a resumed cell reports only the steps it still runs).
type cellMark struct {
	steps, units int
	left         map[string]int
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reporter) width() int {
	if r.Width != 0 {
		return max(r.Width, 0)
	}
	return terminalWidth(r.Term)
}

func (r *Reporter) newProgress() *progress {
	if r.Term == nil || !r.Bar {
		return nil
	}
	return newProgress(r.Term, r.width, r.now)
}

// println prints a line on Term above the progress line.
func (r *Reporter) println(format string, args ...any) {
	if r.Term == nil {
		return
	}
	if r.prog != nil {
		r.prog.clear()
	}
	fmt.Fprintf(r.Term, format+"\n", args...)
	if r.prog != nil && r.prog.width() > 0 {
		r.prog.draw(true)
	}
}

// Close removes the progress line from the terminal (plain output gets a
// last line).
func (r *Reporter) Close() {
	if r.prog != nil {
		r.prog.final = true
		if r.prog.width() <= 0 {
			r.prog.draw(true) // the last plain line: where the work ended
		}
		r.prog.clear()
		r.prog = nil
	}
}

// Observe renders one event.
func (r *Reporter) Observe(e experiment.Event) {
	if r.prog != nil {
		r.prog.observe(e, r.cell)
	}
	switch e := e.(type) {
	case experiment.TableStarted:
		r.println("writing to %s (each cell's log: %s)", e.Dir, filepath.Join(e.Dir, "cells", "CELL", "train.log"))
		r.table = map[string]experiment.CellPlan{}
		r.prog = r.newProgress()
		for _, c := range e.Cells {
			r.table[c.Name] = c
			if r.prog != nil {
				r.prog.add(c.Repeats*(c.Steps+c.CVSteps), c.Evaluations(), c.Methods)
			}
		}
	case experiment.CellStarted:
		r.cell, r.resumed = e.Name, 0
		if r.prog != nil {
			r.mark = cellMark{r.prog.doneSteps, r.prog.doneUnits, maps.Clone(r.prog.unitsLeft)}
		}
	case experiment.Started:
		if e.Dir != "" {
			f, err := openLog(filepath.Join(e.Dir, "train.log"))
			if err != nil {
				r.fail(fmt.Errorf("run folder: %w", err))
			} else {
				r.file = f
			}
		}
		if r.table == nil {
			if e.Dir != "" {
				r.println("log: %s", filepath.Join(e.Dir, "train.log"))
			}
			r.prog = r.newProgress()
			if r.prog != nil {
				r.prog.add(e.Repeats*(e.Steps+e.CVSteps), e.Evaluations(), e.Methods)
				r.prog.draw(true)
			}
		} else if _, planned := r.table[r.cell]; !planned && r.prog != nil && r.cell != "" {
			// The transfer table learns its work cell by cell.
			plan := experiment.CellPlan{Name: r.cell, Repeats: e.Repeats, Steps: e.Steps, CVSteps: e.CVSteps, Methods: e.Methods, Tasks: e.Tasks}
			r.table[r.cell] = plan
			r.prog.add(plan.Repeats*(plan.Steps+plan.CVSteps), plan.Evaluations(), plan.Methods)
		}
	case experiment.TrainingResumed:
		// Planned as Steps, the training runs only the steps after its
		// checkpoint: the bar counts those (a reused training, none).
		if r.prog != nil {
			r.prog.add(-e.Step, 0, nil)
			r.resumed += e.Step
			r.prog.draw(false)
		}
	case experiment.Validated:
		if r.val == nil {
			r.val = map[string]string{}
		}
		r.val[e.Objective] = fmt.Sprintf(" val %.4f", e.Accuracy)
	case experiment.Message:
		if r.table != nil && r.file == nil {
			// a table's note between cells (a damaged cell run again):
			// no cell log is open
			r.println("%s", e.Text)
		}
		line := time.Now().Format("15:04:05 ") + e.Text + "\n"
		if r.file != nil {
			if _, err := io.WriteString(r.file, line); err != nil {
				r.fail(err)
			}
		}
		if r.Log != nil {
			io.WriteString(r.Log, line)
		}
	case experiment.Finished:
		if r.table == nil {
			r.Close()
		}
		if r.file != nil {
			if err := r.file.Close(); err != nil {
				r.fail(err)
			}
			r.file = nil
		}
	case experiment.TransferCellDone:
		o := e.Outcome
		// A cell that reused its data set's training, or evaluated without
		// unit events, counts as done; a skipped one had no work planned.
		r.settle(experiment.CellOutcome{Name: o.Cell.Name(), Results: o.Results, Skipped: o.Skipped, Failed: o.Failed, Reused: o.Reused})
		if o.Failed != "" {
			r.println("%-20s failed: %s", o.Cell.Name(), o.Failed)
			return
		}
		if o.Results == nil {
			r.println("%-20s skipped: %s", o.Cell.Name(), o.Skipped)
			return
		}
		took := fmt.Sprintf("%5.1fs", o.Results.Seconds)
		if o.Reused {
			took = "reused"
		}
		r.println("%-20s drknn %s, proto_net %s  %s", o.Cell.Name(), meanText(o.Results, "drknn"),
			meanText(o.Results, "proto_net"), took)
	case experiment.CellDone:
		r.settle(e.Cell)
		o := e.Cell
		if o.Failed != "" {
			r.println("%-20s failed: %s", o.Name, o.Failed)
			return
		}
		if o.Results == nil {
			r.println("%-20s skipped: %s", o.Name, o.Skipped)
			return
		}
		paper := "" // a cell the paper's Table 1 does not have (e.g. from -configs) has no value
		if v, ok := eval.PaperAccuracy("drknn", o.Column); ok {
			paper = fmt.Sprintf(" (paper %.3f)", v)
		}
		if o.Reused {
			r.println("%-20s drknn %s%s  reused", o.Name, meanText(o.Results, "drknn"), paper)
			return
		}
		r.println("%-20s drknn %s%s  %5.1fs", o.Name, meanText(o.Results, "drknn"), paper, o.Results.Seconds)
	}
}

// settle brings the progress to the end of a cell: the work of a skipped
// or reused cell is removed; a run cell, and one that ran and failed,
// counts as all done (a resumed one reports only the steps it still ran).
func (r *Reporter) settle(o experiment.CellOutcome) {
	r.cell = ""
	plan, ok := r.table[o.Name]
	if r.prog == nil || !ok {
		return
	}
	p := r.prog
	steps := plan.Repeats*(plan.Steps+plan.CVSteps) - r.resumed // what the cell was to run
	r.resumed = 0
	if o.Results == nil && o.Failed == "" || o.Reused {
		p.add(-steps, -plan.Evaluations(), plan.Methods)
		p.draw(false)
		return
	}
	p.doneSteps = max(p.doneSteps, r.mark.steps+steps)
	p.doneUnits = max(p.doneUnits, r.mark.units+plan.Evaluations()*len(plan.Methods))
	for _, m := range plan.Methods {
		p.unitsLeft[m] = min(p.unitsLeft[m], max(r.mark.left[m]-plan.Evaluations(), 0))
	}
}

// openLog opens a run's log at path for appending: a regular file, made
// when missing, or a symbolic link to one. Anything else is refused before
// a line is written, one line naming it and what it is: a directory, a
// device (the log lines would be written into it) or a named pipe (opening
// it for writing would wait for a reader for ever).
func openLog(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	// O_NONBLOCK: a named pipe put there since the check is refused
	// (ENXIO), not waited on; it changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, notRegular(path, st.Mode())
	}
	return f, nil
}

// notRegular is the error of a log at path whose file mode is m, not a
// regular file's.
func notRegular(path string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path {
		what += " (through the link to " + target + ")"
	}
	return fmt.Errorf("log %s is %s, not a regular file: no log line was written; move it away", path, what)
}

func (r *Reporter) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err returns the first error met while rendering (e.g. an unwritable log).
func (r *Reporter) Err() error { return r.err }

// meanText is method m's mean accuracy in res to three decimals, "–"
// when the run did not evaluate it (eval.methods without it), or "failed"
// when it failed on every repeat (no mean).
func meanText(res *experiment.Results, m string) string {
	r, ok := res.Methods[m]
	if !ok {
		return "–"
	}
	if math.IsNaN(r.Mean) {
		return "failed"
	}
	return fmt.Sprintf("%.3f", r.Mean)
}

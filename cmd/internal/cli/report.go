package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
	"github.com/schollz/progressbar/v3"
)

// Reporter renders experiment events: each run's log lines, time-stamped,
// to DIR/train.log of its run folder (and to Log when set); a progress bar
// over the repeats' training steps on Term when Bar is set; one line per
// table cell on Term. Use Observe as the run's experiment.Observer and
// check Err afterwards.
type Reporter struct {
	Term io.Writer // progress bar and table lines (nil: none)
	Bar  bool      // show a progress bar of the training steps
	Log  io.Writer // a copy of the log lines (nil: none)

	file *os.File
	bar  *progressbar.ProgressBar
	val  map[string]string // latest validation accuracy per objective (transfer)
	err  error
}

// Observe renders one event.
func (r *Reporter) Observe(e experiment.Event) {
	switch e := e.(type) {
	case experiment.Started:
		if e.Dir != "" {
			f, err := os.OpenFile(filepath.Join(e.Dir, "train.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				r.fail(fmt.Errorf("run folder: %w", err))
			} else {
				r.file = f
			}
		}
		if r.Term != nil && r.Bar {
			r.bar = progressbar.NewOptions(e.Repeats*max(e.Steps, 1),
				progressbar.OptionSetWriter(r.Term),
				progressbar.OptionSetDescription("training"),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("steps"),
				progressbar.OptionSetWidth(24),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
		}
	case experiment.TableStarted:
		if r.Term != nil {
			fmt.Fprintf(r.Term, "writing to %s (each cell's log: %s)\n", e.Dir, filepath.Join(e.Dir, "cells", "CELL", "train.log"))
		}
	case experiment.StepDone:
		if r.bar != nil && !e.CV {
			st := e.Stats
			r.bar.Describe(fmt.Sprintf("repeat %d step %d risk %.4f gap %.1e", e.Repeat+1, st.Step, st.Risk, st.MeanRelGap))
			r.bar.Add(1)
		}
	case experiment.TransferStep:
		if r.bar != nil {
			st := e.Stats
			r.bar.Describe(fmt.Sprintf("%s step %d loss %.4f lr %.1e%s", e.Objective, st.Step, st.Risk, e.LR, r.val[e.Objective]))
			r.bar.Add(1)
		}
	case experiment.Validated:
		if r.val == nil {
			r.val = map[string]string{}
		}
		r.val[e.Objective] = fmt.Sprintf(" val %.4f", e.Accuracy)
	case experiment.Message:
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
		if r.bar != nil {
			r.bar.Finish()
			r.bar = nil
		}
		if r.file != nil {
			if err := r.file.Close(); err != nil {
				r.fail(err)
			}
			r.file = nil
		}
	case experiment.TransferCellDone:
		if r.Term == nil {
			return
		}
		o := e.Outcome
		if o.Results == nil {
			fmt.Fprintf(r.Term, "%-20s skipped: %s\n", o.Cell.Name(), o.Skipped)
			return
		}
		fmt.Fprintf(r.Term, "%-20s drknn %.3f, proto_net %.3f  %5.1fs\n", o.Cell.Name(), o.Results.Methods["drknn"].Mean,
			o.Results.Methods["proto_net"].Mean, o.Results.Seconds)
	case experiment.CellDone:
		if r.Term == nil {
			return
		}
		o := e.Cell
		if o.Results == nil {
			fmt.Fprintf(r.Term, "%-20s skipped: %s\n", o.Name, o.Skipped)
			return
		}
		paper, _ := eval.PaperAccuracy("drknn", o.Column)
		fmt.Fprintf(r.Term, "%-20s drknn %.3f (paper %.3f)  %5.1fs\n", o.Name, o.Results.Methods["drknn"].Mean, paper, o.Results.Seconds)
	}
}

func (r *Reporter) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err returns the first error met while rendering (e.g. an unwritable log).
func (r *Reporter) Err() error { return r.err }

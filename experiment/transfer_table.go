package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/oneline"
	"github.com/drknn/drknn/train"
)

// TransferCell is one row of the transfer table: novel-class tasks of a
// data set with Ways classes and Shots supports.
type TransferCell struct {
	Dataset     string
	Ways, Shots int
}

// Name is the cell's name, e.g. "omniglot-5w1s".
func (c TransferCell) Name() string { return fmt.Sprintf("%s-%dw%ds", c.Dataset, c.Ways, c.Shots) }

// TransferCells are the rows of the transfer table (issue 12): Omniglot
// 5-way and 20-way, 1-shot and 5-shot; MNIST digits 0–4 → 5–9 and
// CIFAR-10 5-way 1-shot and 5-shot.
func TransferCells() []TransferCell {
	return []TransferCell{{"omniglot", 5, 1}, {"omniglot", 5, 5}, {"omniglot", 20, 1}, {"omniglot", 20, 5},
		{"mnist", 5, 1}, {"mnist", 5, 5}, {"cifar10", 5, 1}, {"cifar10", 5, 5}}
}

// TransferNames are the names -only accepts for the transfer table: its
// data sets and cells.
func TransferNames() []string {
	var names, cells []string
	for _, c := range TransferCells() {
		if !containsString(names, c.Dataset) {
			names = append(names, c.Dataset)
		}
		cells = append(cells, c.Name())
	}
	return append(names, cells...)
}

// TransferQuickSets are the overrides of the transfer table's quick mode:
// a smoke test of every cell, not a result.
func TransferQuickSets() []string {
	return []string{"repeats=5", "train.steps=3", "transfer.validate_every=0", "transfer.val_tasks=5", "model.channels=8"}
}

// TransferCellDone reports a finished (or skipped) row of the transfer
// table.
type TransferCellDone struct{ Outcome TransferOutcome }

func (TransferCellDone) event() {}

// TransferOutcome is one row of the transfer table.
type TransferOutcome struct {
	Cell    TransferCell
	Config  string
	Results *Results
	// Skipped says why the cell was not run: its data set is absent
	// ("data not available: …"). A cell that ran and failed has Failed
	// instead (NotRun gives either).
	Skipped string
	// Failed is the error of a cell that ran and failed as a whole: the
	// table is written without it.
	Failed string
	Reused bool // -resume: the cell's results.json was reused, nothing ran
}

// Failures are the cell's failures, one line each naming the cell (see
// CellOutcome.Failures): the whole cell's, or a method's on a task
// ("mnist-5w1s: task 3: drknn: …") and a training's its results record.
func (o TransferOutcome) Failures() []string { return cellFailures(o.Cell.Name(), o.Failed, o.Results) }

// NotRun is why the cell has no results (see CellOutcome.NotRun).
func (o TransferOutcome) NotRun() string { return notRun(o.Skipped, o.Failed) }

// RunTransferTable runs every cell of the transfer table with the configs
// ConfigDir/<data set>-transfer.yaml (ways and shots set per cell), all
// from that one folder or all shipped (TableConfigs: a folder lacking some
// is an ErrConfig before any work). The
// embeddings of a data set are trained once, by its first cell, in
// OutDir/train/<data set>, and shared by its other cells; each cell's
// results.json and export go to OutDir/cells/<cell>. Absent data sets are
// skipped with the reason; corrupt ones fail the run. A cell that fails as
// a whole is recorded (TransferOutcome.Failed) and the others run; the
// table lists it and the failures of methods and trainings the cells'
// results record (TransferOutcome.Failures). Writes
// OutDir/transfer.md and OutDir/transfer.csv. opts.Resume reuses the cells
// whose results.json was made with the cell's config (another config is an
// ErrConfig) and continues stopped trainings. Without it (-force) every
// selected cell and the training of its data set start afresh, but nothing
// earlier is deleted before it is replaced: the earlier training waits in
// OutDir/train/<data set>/.replaced-run (ReplacedDir) until a cell of that
// data set has finished, and a cell's earlier run in its own folder's
// (ReplaceRunDir) until the cell has; a cell that fails gets its earlier
// run back, and when every cell of a data set fails so does the training
// (the last one's failure says so). Interrupted, both stay aside (the
// error names where) and a later -resume deletes them once it finishes;
// another -force keeps them (ReplaceRunDir). A run killed (SIGKILL, power
// loss) after a cell's results.json and before those deletions leaves them
// too: a later -resume that reuses that cell deletes them, and a later
// -force takes the training that cell was made with for the one to
// replace, not the older one still aside (trainingSuperseded).
func RunTransferTable(ctx context.Context, opts TableOptions) (_ []TransferOutcome, err error) {
	resume := opts.Resume
	start := time.Now()
	notify := serial(opts.Observer)
	if opts.OutDir == "" {
		return nil, fmt.Errorf("transfer table: no output folder")
	}
	if err := checkOnly(opts.Only, TransferNames()); err != nil {
		return nil, err
	}
	// Every cell's config from the one folder, as RunTable: a folder that
	// lacks some is refused before any work, never completed with the
	// shipped configs.
	paths, shipped, err := TableConfigs(opts, true)
	if err != nil {
		return nil, fmt.Errorf("transfer table: %w", err)
	}
	if err := cellFixedSets(opts.Sets); err != nil {
		return nil, fmt.Errorf("transfer table: %w", err)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("transfer table: %w", err)
	}
	notify(TableStarted{Dir: opts.OutDir})
	var outs []TransferOutcome
	cache := map[string]*datasets.Dataset{}
	loadErr := map[string]error{}
	selected := func(c TransferCell) bool {
		return len(opts.Only) == 0 || containsString(opts.Only, c.Name()) || containsString(opts.Only, c.Dataset)
	}
	// The last cell of each data set: when it fails and no cell of the
	// data set has finished, the earlier training is put back.
	last := map[string]string{}
	for _, cell := range TransferCells() {
		if selected(cell) {
			last[cell.Dataset] = cell.Name()
		}
	}
	// The training folders, in the order the cells first used them, with
	// the earlier training each replaces. A run that stops with an error
	// settles those no finished cell has settled: interrupted, the earlier
	// training stays aside for -resume; failed under -force, it is put
	// back.
	trainings := map[string]*tableTraining{}
	var trainOrder []string
	defer func() {
		if err == nil {
			return
		}
		for _, dir := range trainOrder {
			if tr := trainings[dir]; !tr.settled {
				tr.settled = true
				err = tr.Settle(err)
			}
		}
	}()
	for _, cell := range TransferCells() {
		if !selected(cell) {
			continue
		}
		path := paths[cell.Dataset+"-transfer.yaml"]
		o := TransferOutcome{Cell: cell, Config: path}
		if shipped {
			o.Config = cell.Dataset + "-transfer.yaml (shipped)"
		}
		sets := []string{fmt.Sprintf("ways=%d", cell.Ways), fmt.Sprintf("shots=%d", cell.Shots)}
		if opts.Quick {
			sets = append(sets, TransferQuickSets()...)
		}
		sets = append(sets, opts.Sets...)
		cfg, err := LoadConfig(path, sets)
		if err == nil {
			err = checkTableData(opts.OutDir, cfg.DataDir)
		}
		if err != nil {
			return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
		}
		if cfg.Protocol != ProtocolTransfer {
			return nil, configErr(fmt.Errorf("transfer table: %s: key protocol = %q: the transfer table's cells run the transfer protocol", o.Config, cfg.Protocol))
		}
		key := cfg.Dataset + "|" + cfg.DataDir + fmt.Sprintf("|%+v", cfg.Data)
		d, ok := cache[key]
		if !ok && loadErr[key] == nil {
			if d, err = LoadTransferData(cfg); err != nil {
				loadErr[key] = err
			} else {
				cache[key] = d
			}
		}
		if err := loadErr[key]; err != nil {
			if !errors.Is(err, datasets.ErrNotFound) {
				return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
			}
			o.Skipped = "data not available: " + strings.ReplaceAll(err.Error(), "\n", " ")
			outs = append(outs, o)
			notify(TransferCellDone{o})
			continue
		}
		dir := filepath.Join(opts.OutDir, "cells", cell.Name())
		trainDir := filepath.Join(opts.OutDir, "train", cell.Dataset)
		if resume {
			for _, d := range []string{dir, trainDir} { // a set-aside or restore a kill interrupted
				if err := recoverPartial(d); err != nil {
					return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
				}
			}
			res, err := finishedCell(dir, cfg)
			if errors.Is(err, errDamagedCell) {
				notify(damagedNote(cell.Name(), err))
				res, err = nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
			}
			if res != nil {
				// A reused cell settles what a -force killed after the
				// cell's results.json and before the settling left aside:
				// its earlier run (a results.json beside a set-aside is
				// the newer run's, runKind), and the earlier training when
				// those results were written after it was set aside
				// (trainingSuperseded: they were made with the training in
				// the folder).
				if err := ResumedRunDir(dir).Settle(nil); err != nil {
					return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
				}
				if tr := trainings[trainDir]; (tr == nil || !tr.settled) && trainingSuperseded(trainDir, dir) {
					if tr == nil {
						tr = &tableTraining{Replaced: resumedTrainDir(trainDir)}
						trainings[trainDir] = tr
						trainOrder = append(trainOrder, trainDir)
					}
					tr.settled = true
					if err := tr.Settle(nil); err != nil {
						return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
					}
				}
				o.Results, o.Reused = res, true
				outs = append(outs, o)
				notify(TransferCellDone{o})
				continue
			}
		}
		// The first cell of a data set to run trains afresh under -force:
		// the earlier training is set aside until a cell of the data set
		// has finished (replaceTrainDir), and so is the cell's earlier run
		// in its folder (ReplaceRunDir), as RunTable does.
		tr := trainings[trainDir]
		if tr == nil {
			tr = &tableTraining{Replaced: resumedTrainDir(trainDir)}
			if !resume {
				if tr.Replaced, err = replaceTrainDir(trainDir, transferCellDirs(opts.OutDir, cell.Dataset)); err != nil {
					return nil, fmt.Errorf("transfer table: %w", err)
				}
			}
			trainings[trainDir] = tr
			trainOrder = append(trainOrder, trainDir)
		}
		replaced := ResumedRunDir(dir)
		if !resume {
			if replaced, err = ReplaceRunDir(dir); err != nil {
				return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
			}
		}
		notify(CellStarted{Name: cell.Name(), Dir: dir, Config: o.Config})
		// The first cell of a data set trains; the others find its
		// finished checkpoints (same key) and reuse them.
		res, err := RunTransferData(ctx, cfg, d, TransferOptions{Options: Options{OutDir: dir, Resume: true, Observer: notify}, TrainDir: trainDir})
		if err == nil && res == nil {
			err = errors.New("no results and no error (a bug: the cell would pass for skipped)")
		}
		err = replaced.Settle(err)
		switch {
		case err == nil && !tr.settled:
			// A cell finished, its training too: the earlier one goes.
			tr.settled = true
			if err := tr.Settle(nil); err != nil {
				return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err)
			}
		case err != nil && ctx.Err() == nil && !tr.settled && cell.Name() == last[cell.Dataset]:
			// Every cell of the data set failed: the earlier training is
			// put back (-force), or kept aside (-resume).
			tr.settled = true
			err = tr.Settle(err)
		}
		if err != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("transfer table: cell %s: %w", cell.Name(), err) // interrupted: no table
		}
		if err != nil {
			// The cell failed as a whole: it is reported, and the other
			// cells and the table go on.
			o.Failed = oneline.Err(err)
			outs = append(outs, o)
			notify(TransferCellDone{o})
			continue
		}
		o.Results = res
		outs = append(outs, o)
		notify(TransferCellDone{o})
	}
	if err := writeTransferTable(opts, outs, time.Since(start)); err != nil {
		return nil, err
	}
	return outs, nil
}

// tableTraining is a training folder of the transfer table while it runs:
// the earlier training it replaces (none, or the one a stopped -force run
// set aside), settled by the first cell of the data set that finishes, or
// by the last one failing.
type tableTraining struct {
	*Replaced
	settled bool
}

// transferCellDirs are the folders of every cell of the transfer table's
// data set ds in the table folder out, selected or not.
func transferCellDirs(out, ds string) []string {
	var dirs []string
	for _, c := range TransferCells() {
		if c.Dataset == ds {
			dirs = append(dirs, filepath.Join(out, "cells", c.Name()))
		}
	}
	return dirs
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func fmtAcc(r MethodResult, ok bool) string {
	if !ok {
		return "–"
	}
	if math.IsNaN(r.Mean) {
		return "failed"
	}
	s := fmt.Sprintf("%.3f ± %.3f", r.Mean, r.CI95)
	if math.IsNaN(r.CI95) {
		s = fmt.Sprintf("%.3f", r.Mean)
	}
	if n := len(r.Completed()); n < len(r.PerRepeat) {
		s += fmt.Sprintf(" [%d of %d tasks]", n, len(r.PerRepeat)) // failed on the others
	}
	return s
}

// anchorVerdict is transfer.md's "Dr.k-NN ≥ anchor": drknn's accuracy
// against proto_net's on the tasks both completed (paired, as table.md's
// paired differences), marked "[N of R tasks]" when that is not every task;
// "–" when either was not evaluated or no task has both.
func anchorVerdict(r *Results) string {
	p, ok, _ := PairedDiff(r, "drknn", "proto_net")
	if !ok {
		return "–"
	}
	v := "**no**"
	if p.Diff.Mean >= -accuracySlack {
		v = "yes"
	}
	if all := len(r.Methods["drknn"].PerRepeat); p.Diff.N < all {
		v += fmt.Sprintf(" [%d of %d tasks]", p.Diff.N, all)
	}
	return v
}

func fmtDuration(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func writeTransferTable(opts TableOptions, outs []TransferOutcome, wall time.Duration) error {
	var md bytes.Buffer
	fmt.Fprintf(&md, "# Transfer table: embeddings trained on base classes, novel-class tasks\n\nMode: %s. Wall time: %s.\n\n", tableMode(opts, TransferQuickSets()), wall.Round(time.Second))
	if opts.CommitInfo != "" {
		fmt.Fprintf(&md, "%s\n\n", opts.CommitInfo)
	}
	fmt.Fprintf(&md, "Machine: %s.\n\n", Machine())
	md.WriteString("Accuracy on the novel-class tasks' queries, mean ± 95% CI half-width over the tasks. " +
		"drknn … nearest_centroid classify with the Dr.k-NN-trained embedding; proto_net is the same backbone trained with the " +
		"prototypical loss on the same episodes for the same steps (nearest prototype). Training: wall time (CPU time) of each " +
		"embedding's training and validations, shared by the cells of a data set.\n\n")
	methods := TransferMethods()
	md.WriteString("| cell | tasks | " + strings.Join(methods, " | ") + " | Dr.k-NN ≥ anchor | training Dr.k-NN | training anchor |\n|---|---|")
	md.WriteString(strings.Repeat("---|", len(methods)+3) + "\n")
	for _, o := range outs {
		if o.Results == nil {
			what := "not run"
			if o.Failed != "" {
				what = "failed"
			}
			fmt.Fprintf(&md, "| %s | %s |%s\n", o.Cell.Name(), what, strings.Repeat(" |", len(methods)+3))
			continue
		}
		r := o.Results
		name := o.Cell.Name()
		if o.Reused {
			name += " (reused)"
		}
		fmt.Fprintf(&md, "| %s | %d |", name, r.Repeats)
		for _, m := range methods {
			v, ok := r.Methods[m]
			fmt.Fprintf(&md, " %s |", fmtAcc(v, ok))
		}
		fmt.Fprintf(&md, " %s |", anchorVerdict(r))
		for _, obj := range []string{train.ObjectiveDrKNN, train.ObjectiveProto} {
			if tr := r.Transfer.Training[obj]; tr != nil {
				fmt.Fprintf(&md, " %s (%s CPU), %d steps, best %d |", fmtDuration(tr.Seconds), fmtDuration(tr.CPUSeconds), tr.Steps, tr.BestStep)
			} else {
				md.WriteString(" – |")
			}
		}
		md.WriteString("\n")
	}
	var notRun []TransferOutcome
	for _, o := range outs {
		if o.NotRun() != "" {
			notRun = append(notRun, o)
		}
	}
	if len(notRun) > 0 {
		md.WriteString("\n## Cells not run\n\n")
		for _, o := range notRun {
			fmt.Fprintf(&md, "- %s: %s\n", o.Cell.Name(), o.NotRun())
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(opts.OutDir, "transfer.md"), md.Bytes()); err != nil {
		return err
	}
	var cb bytes.Buffer
	w := csv.NewWriter(&cb)
	w.Write([]string{"dataset", "ways", "shots", "method", "mean", "ci95", "tasks", "train_seconds", "train_cpu_seconds", "status"})
	for _, o := range outs {
		c := o.Cell
		if o.Results == nil {
			w.Write([]string{c.Dataset, strconv.Itoa(c.Ways), strconv.Itoa(c.Shots), "", "", "", "", "", "", noResultsStatus(o.Skipped, o.Failed)})
			continue
		}
		for _, m := range methods {
			r, ok := o.Results.Methods[m]
			if !ok {
				continue
			}
			obj := train.ObjectiveDrKNN
			if m == "proto_net" {
				obj = train.ObjectiveProto
			}
			secs, cpu := "", ""
			if tr := o.Results.Transfer.Training[obj]; tr != nil { // nil: that training failed
				secs, cpu = strconv.FormatFloat(tr.Seconds, 'f', 1, 64), strconv.FormatFloat(tr.CPUSeconds, 'f', 1, 64)
			}
			w.Write([]string{c.Dataset, strconv.Itoa(c.Ways), strconv.Itoa(c.Shots), m, csvNum(r.Mean), csvNum(r.CI95),
				strconv.Itoa(o.Results.Repeats), secs, cpu, csvStatus(r, "tasks")})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(opts.OutDir, "transfer.csv"), cb.Bytes())
}

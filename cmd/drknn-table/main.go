// Command drknn-table runs every runnable cell of the paper's Table 1 with
// the configs in configs/ (or -configs DIR: every cell's config from that
// one folder — one lacking some is refused, naming them; without a
// configs/ folder, the shipped configs), all methods, and writes table.md
// and table.csv.
// A data set that is absent is skipped with a note; one that is present but
// unreadable fails the run with the reader's message.
//
//	drknn-table [-out DIR] [-resume | -force] [-quick] [-only CELL,…] [-configs DIR] [-set key=value …]
//	drknn-table -transfer [-out DIR] [-resume | -force] [-quick] [-only CELL,…] [-configs DIR] [-set key=value …]
//
// Without -out the table goes to a new folder runs/table-YYYYMMDD-HHMMSS
// (named on stderr); an -out that holds anything is refused unless -resume
// (finished cells are reused — one whose results.json is damaged runs
// again, with a line naming it — the others continue from their checkpoints)
// or -force (every cell runs again; a cell's earlier run is kept until its
// new run has finished, and put back if the cell fails).
// -only takes cell and data set names; an unknown one is an error that
// lists them.
//
// -transfer runs the transfer table instead (protocol transfer,
// configs/<data set>-transfer.yaml; experiment.RunTransferTable) and
// writes transfer.md and transfer.csv; its -resume continues stopped
// trainings. Its -force keeps a data set's earlier base-class training
// (OUT/train/<data set>, in its .replaced-run/) until a cell of that data
// set has finished, and puts it back if every cell of it fails.
//
// A method that fails on a repeat (or task), a repeat that fails as a
// whole, and a cell that fails as a whole (every repeat failed) are
// recorded — table.md and the status column of table.csv say why — and
// the other cells complete: the table is written in full, every failure is
// printed on stderr (one line each, naming the cell, the repeat and the
// method), and the exit status is 3.
//
// Exit status: 0 done; 1 failed (no table written); 2 bad usage, config
// or output folder; 3 done, but some cells, repeats or methods failed (the
// table is written; the failures are listed on stderr); 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
)

const usage = "usage: drknn-table [-transfer] [-out DIR] [-resume | -force] [-keep-checkpoints] [-quick] [-only CELL,…] [-configs DIR] [-set key=value …]"

func main() { cli.Main("drknn-table", run, experiment.ErrConfig) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-table", flag.ContinueOnError)
	out := fs.String("out", "", "folder for table.md, table.csv and the per-cell runs (default: a new runs/table-DATE-TIME)")
	configs := fs.String("configs", experiment.DefaultConfigDir, "folder of the per-data-set configs; every cell reads its config from it, and one that lacks some is refused (without a configs/ folder here: the shipped configs)")
	quick := fs.Bool("quick", false, "1 repeat, 5 steps, 200 queries per cell: a smoke test")
	only := fs.String("only", "", "comma-separated cells (mnist-2w5s) or data sets (mnist) to run")
	transfer := fs.Bool("transfer", false, "the transfer table (base-class training, novel-class tasks) instead of Table 1")
	resume := fs.Bool("resume", false, "continue the table in -out: reuse finished cells, resume the others from their checkpoints")
	force := fs.Bool("force", false, "write into a non-empty -out, running every cell again")
	keep := fs.Bool("keep-checkpoints", false, "keep every cell's repeat checkpoints (deleted by default once the cell is done; the export holds the weights)")
	var sets cli.MultiFlag
	fs.Var(&sets, "set", "override a config key in every cell (repeatable)")
	if err := cli.Parse(fs, args, usage, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q; %s", fs.Arg(0), usage)
	}
	// Every cell's config from the one folder (RunTable and
	// RunTransferTable check it too): refused before any folder is touched.
	probe := experiment.TableOptions{ConfigDir: *configs}
	if *only != "" {
		probe.Only = strings.Split(*only, ",")
	}
	if _, _, err := experiment.TableConfigs(probe, *transfer); err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		if *resume {
			return cli.Usagef("-resume needs -out DIR, the folder of the table to continue")
		}
		name := "table"
		if *transfer {
			name = "transfer"
		}
		if *quick {
			name += "-quick"
		}
		dir = cli.FreshDir("runs", name, time.Now())
	}
	if *resume && *force {
		return cli.Usagef("-resume and -force exclude each other: -resume continues the table in %s, -force runs every cell again", dir)
	}
	// The same rule as drknn-train's run folder: a folder that holds
	// anything needs -resume or -force. -force removes nothing up front:
	// each cell's earlier run is replaced once its new run has finished
	// (RunTable), table.md and table.csv when the table is written.
	if !*force {
		if err := experiment.PrepareRunDir(dir, *resume, false); err != nil {
			return cli.Usage(err)
		}
	}
	n, err := experiment.RemoveTemps(dir)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(stderr, "removed %d stale temporary file(s) of an interrupted write under %s\n", n, dir)
	}
	rep := &cli.Reporter{Term: stderr, Bar: true}
	opts := experiment.TableOptions{OutDir: dir, ConfigDir: *configs, Quick: *quick, Sets: sets, Observer: rep.Observe,
		CommitInfo: commitInfo(), Resume: *resume, KeepCheckpoints: *keep}
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	file := "table.md"
	var failed []string
	if *transfer {
		file = "transfer.md"
		var outs []experiment.TransferOutcome
		outs, err = experiment.RunTransferTable(ctx, opts)
		for _, o := range outs {
			failed = append(failed, o.Failures()...)
		}
	} else {
		var outs []experiment.CellOutcome
		outs, err = experiment.RunTable(ctx, opts)
		for _, o := range outs {
			failed = append(failed, o.Failures()...)
		}
	}
	rep.Close()
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w; continue with -resume -out %s", err, dir)
	}
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		return err
	}
	path := filepath.Join(dir, file)
	fmt.Fprintln(stdout, path)
	if len(failed) == 0 {
		return nil
	}
	for _, f := range failed {
		fmt.Fprintf(stderr, "drknn-table: failed: %s\n", f)
	}
	return cli.Incomplete{N: len(failed), Path: path,
		Note: "listed above; those cells or methods have no accuracy there", Done: "the rest of the table completed"}
}

// commitInfo names the checkout's commit for table.md ("" outside git).
func commitInfo() string {
	rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	info := "Commit: " + strings.TrimSpace(string(rev))
	if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(st) > 0 {
		info += " (with uncommitted changes)"
	}
	return info + "."
}

// Command drknn-table runs every runnable cell of the paper's Table 1 with
// the configs in configs/, all methods, and writes table.md and table.csv.
// A data set that is absent is skipped with a note; one that is present but
// unreadable fails the run with the reader's message.
//
//	drknn-table [-out DIR] [-quick] [-only CELL,…] [-set key=value …]
//	drknn-table -transfer [-out DIR] [-quick] [-only CELL,…] [-set key=value …] [-resume]
//
// -transfer runs the transfer table instead (protocol transfer,
// configs/<data set>-transfer.yaml; experiment.RunTransferTable) and
// writes transfer.md and transfer.csv.
//
// Exit status: 0 done, 1 failed, 2 bad usage or config, 130 interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
)

const usage = "usage: drknn-table [-transfer] [-out DIR] [-quick] [-only CELL,…] [-set key=value …] [-resume]"

func main() { cli.Main("drknn-table", run, experiment.ErrConfig) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-table", flag.ContinueOnError)
	out := fs.String("out", "results", "folder for table.md, table.csv and the per-cell runs")
	configs := fs.String("configs", "configs", "folder of the per-data-set configs")
	quick := fs.Bool("quick", false, "1 repeat, 5 steps, 200 queries per cell: a smoke test")
	only := fs.String("only", "", "comma-separated cells (mnist-2w5s) or data sets (mnist) to run")
	transfer := fs.Bool("transfer", false, "the transfer table (base-class training, novel-class tasks) instead of Table 1")
	resume := fs.Bool("resume", false, "-transfer: continue stopped trainings in OUT/train instead of starting afresh")
	var sets cli.MultiFlag
	fs.Var(&sets, "set", "override a config key in every cell (repeatable)")
	if err := cli.Parse(fs, args, usage, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s", usage)
	}
	rep := &cli.Reporter{Term: stderr}
	opts := experiment.TableOptions{OutDir: *out, ConfigDir: *configs, Quick: *quick, Sets: sets, Observer: rep.Observe,
		CommitInfo: commitInfo()}
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	if *transfer {
		if _, err := experiment.RunTransferTable(ctx, opts, *resume); err != nil {
			return err
		}
		if err := rep.Err(); err != nil {
			return err
		}
		fmt.Fprintln(stdout, filepath.Join(*out, "transfer.md"))
		return nil
	}
	if *resume {
		return cli.Usagef("-resume is for -transfer; %s", usage)
	}
	if _, err := experiment.RunTable(ctx, opts); err != nil {
		return err
	}
	if err := rep.Err(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, filepath.Join(*out, "table.md"))
	return nil
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

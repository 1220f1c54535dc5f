// Command drknn-table runs every runnable cell of the paper's Table 1 with
// the configs in configs/, all methods, and writes table.md and table.csv.
//
//	drknn-table [-out DIR] [-quick] [-only CELL,…] [-set key=value …]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/drknn/drknn/experiment"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("drknn-table", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "results", "folder for table.md, table.csv and the per-cell runs")
	configs := fs.String("configs", "configs", "folder of the per-data-set configs")
	quick := fs.Bool("quick", false, "1 repeat, 5 steps, 200 queries per cell: a smoke test")
	only := fs.String("only", "", "comma-separated cells (mnist-2w5s) or data sets (mnist) to run")
	var sets multiFlag
	fs.Var(&sets, "set", "override a config key in every cell (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "drknn-table: usage: drknn-table [-out DIR] [-quick] [-only CELL,…] [-set key=value …]")
		return 2
	}
	opts := experiment.TableOptions{OutDir: *out, ConfigDir: *configs, Quick: *quick, Sets: sets, Progress: stderr}
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	if rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		opts.CommitInfo = "Commit: " + strings.TrimSpace(string(rev)) + "."
		if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(st) > 0 {
			opts.CommitInfo = "Commit: " + strings.TrimSpace(string(rev)) + " (with uncommitted changes)."
		}
	}
	if _, err := experiment.RunTable(opts); err != nil {
		fmt.Fprintln(stderr, "drknn-table:", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 1
	}
	fmt.Fprintln(stdout, filepath.Join(*out, "table.md"))
	return 0
}

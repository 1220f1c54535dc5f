package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
)

var configsDir = filepath.Join("..", "..", "configs")

// table runs drknn-table with args and returns its exit status, stdout
// and stderr.
func table(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var so, se bytes.Buffer
	err := run(t.Context(), args, &so, &se)
	code := cli.Report(&se, "drknn-table", err, experiment.ErrConfig)
	return code, so.String(), se.String()
}

// TestQuickLungCancer runs the quick table on the Lung Cancer cells (the
// real UCI file, a second of work) and checks the table and the progress
// lines.
func TestQuickLungCancer(t *testing.T) {
	out := t.TempDir()
	code, so, se := table(t, "-quick", "-only", "lung-cancer", "-out", out, "-configs", configsDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	if strings.TrimSpace(so) != filepath.Join(out, "table.md") {
		t.Fatalf("stdout %q", so)
	}
	if !strings.Contains(se, "writing to "+out) || !strings.Contains(se, "lung-cancer-3w5s     drknn ") || !strings.Contains(se, "(paper 0.704)") {
		t.Fatalf("stderr %q", se)
	}
	for _, f := range []string{"table.md", "table.csv", "cells/lung-cancer-3w8s/results.json", "cells/lung-cancer-3w8s/train.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestKeepCheckpoints: a cell's repeat checkpoints (an MLP cell: the
// shipped Lung Cancer config trains nothing) are deleted once it is
// done unless -keep-checkpoints.
func TestKeepCheckpoints(t *testing.T) {
	for _, keep := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"-quick", "-only", "lung-cancer-3w5s", "-set", "model.kind=mlp", "-set", "train.checkpoint_every=1", "-out", out, "-configs", configsDir}
		if keep {
			args = append(args, "-keep-checkpoints")
		}
		if code, _, se := table(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, se)
		}
		_, err := os.Stat(filepath.Join(out, "cells", "lung-cancer-3w5s", "repeats", "01", "checkpoint.bin"))
		if kept := err == nil; kept != keep {
			t.Fatalf("-keep-checkpoints %v: checkpoint kept %v (%v)", keep, kept, err)
		}
	}
}

// TestOnlyUnknown: a misspelt -only is a usage error that lists the valid
// names (it used to give an empty table and exit 0), and nothing is
// written.
func TestOnlyUnknown(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t")
	code, _, se := table(t, "-quick", "-only", "lung-cancer,mnst", "-out", out, "-configs", configsDir)
	if code != 2 || !strings.Contains(se, `"mnst"`) || !strings.Contains(se, "valid names: mnist, ") || !strings.Contains(se, "mnist-2w5s") {
		t.Fatalf("exit %d, stderr %q", code, se)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("an unknown -only name created the output folder")
	}
	code, _, se = table(t, "-transfer", "-quick", "-only", "omniglot-5w2s", "-out", out, "-configs", configsDir)
	if code != 2 || !strings.Contains(se, "omniglot-5w1s") {
		t.Fatalf("-transfer: exit %d, stderr %q", code, se)
	}
}

// TestDefaultOutFresh: without -out every run writes a new folder under
// runs/ (named on stderr) instead of the committed results/, and a
// non-empty -out is refused unless -resume or -force.
func TestDefaultOutFresh(t *testing.T) {
	abs, err := filepath.Abs(configsDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var dirs []string
	for range 2 {
		code, so, se := table(t, "-quick", "-only", "lung-cancer-3w5s", "-configs", abs)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, se)
		}
		dir := filepath.Dir(strings.TrimSpace(so))
		if !strings.HasPrefix(dir, filepath.Join("runs", "table-quick-")) || !strings.Contains(se, "writing to "+dir) {
			t.Fatalf("output %q, stderr %q", so, se)
		}
		dirs = append(dirs, dir)
	}
	if dirs[0] == dirs[1] {
		t.Fatalf("two runs wrote to the same folder %s", dirs[0])
	}
	if _, err := os.Stat("results"); err == nil {
		t.Fatal("results/ was written")
	}
	code, _, se := table(t, "-quick", "-only", "lung-cancer-3w5s", "-configs", abs, "-out", dirs[0])
	if code != 2 || !strings.Contains(se, "is not empty") || !strings.Contains(se, "-resume") {
		t.Fatalf("non-empty -out: exit %d, stderr %q", code, se)
	}
	if code, _, se := table(t, "-quick", "-only", "lung-cancer-3w5s", "-configs", abs, "-out", dirs[0], "-force"); code != 0 {
		t.Fatalf("-force: exit %d, stderr %q", code, se)
	}
	if code, _, se := table(t, "-quick", "-resume", "-configs", abs); code != 2 || !strings.Contains(se, "-resume needs -out") {
		t.Fatalf("-resume without -out: exit %d, stderr %q", code, se)
	}
}

// TestResumeAndHeader: -resume reuses finished cells (their results.json
// untouched), runs the unfinished ones, and refuses a finished cell made
// with another config; table.md describes the effective config (here
// eval.k = 3 from -set), not the committed one.
func TestResumeAndHeader(t *testing.T) {
	out := t.TempDir()
	args := []string{"-quick", "-only", "lung-cancer", "-configs", configsDir, "-set", "eval.k=3", "-out", out}
	if code, _, se := table(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "as committed") || !strings.Contains(string(md), "overrides `eval.k=3`") ||
		!strings.Contains(string(md), "| lung-cancer-3w5s | 1 | 200 | identity | 0 | [0.1] | 3 |") {
		t.Fatalf("table.md header:\n%s", md)
	}
	done := filepath.Join(out, "cells", "lung-cancer-3w5s", "results.json")
	before, err := os.ReadFile(done)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(out, "cells", "lung-cancer-3w8s", "results.json")
	if err := os.Remove(old); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, ".table.md.tmp-12345") // a write killed mid-way
	if err := os.WriteFile(stale, []byte("half a table"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, se := table(t, append(args, "-resume")...)
	if code != 0 {
		t.Fatalf("-resume: exit %d: %s", code, se)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) || !strings.Contains(se, "removed 1 stale temporary file(s) of an interrupted write under "+out) {
		t.Fatalf("stale temporary: %v; stderr %q", err, se)
	}
	after, err := os.ReadFile(done)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatal("-resume rewrote a finished cell")
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatal("-resume did not run the unfinished cell")
	}
	md, _ = os.ReadFile(filepath.Join(out, "table.md"))
	if !strings.Contains(string(md), "| lung-cancer-3w5s (reused) |") || !strings.Contains(string(md), "| lung-cancer-3w8s | 1 |") {
		t.Fatalf("table.md after -resume:\n%s", md)
	}
	args[len(args)-3] = "eval.k=5"
	code, _, se = table(t, append(args, "-resume")...)
	if code != 2 || !strings.Contains(se, "another config") || !strings.Contains(se, "eval.k 3 there, 5 now") {
		t.Fatalf("-resume with another config: exit %d, stderr %q", code, se)
	}
}

// TestTransferResume: -transfer -resume reuses the finished cells and runs
// the others (real MNIST, the quick transfer settings: seconds).
func TestTransferResume(t *testing.T) {
	out := t.TempDir()
	args := []string{"-transfer", "-quick", "-only", "mnist", "-configs", configsDir, "-out", out}
	if code, _, se := table(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	done := filepath.Join(out, "cells", "mnist-5w1s", "results.json")
	before, err := os.ReadFile(done)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(out, "cells", "mnist-5w5s", "results.json")
	if err := os.Remove(again); err != nil {
		t.Fatal(err)
	}
	code, _, se := table(t, append(args, "-resume")...)
	if code != 0 || !strings.Contains(se, "mnist-5w1s") || !strings.Contains(se, "reused") {
		t.Fatalf("-resume: exit %d: %s", code, se)
	}
	if after, err := os.ReadFile(done); err != nil || !bytes.Equal(before, after) {
		t.Fatal("-resume rewrote a finished cell")
	}
	if _, err := os.Stat(again); err != nil {
		t.Fatal("-resume did not run the unfinished cell")
	}
	md, _ := os.ReadFile(filepath.Join(out, "transfer.md"))
	if !strings.Contains(string(md), "| mnist-5w1s (reused) |") || !strings.Contains(string(md), "| mnist-5w5s | 5 |") {
		t.Fatalf("transfer.md:\n%s", md)
	}
}

// TestFailuresExit3: a method that fails in a cell (kernel_smoothing with
// a bandwidth too small for float64, on every repeat of both quick Lung
// Cancer cells) used to leave the exit status 0, the failure only in
// table.csv's status. The table is written in full, each failure is one
// line on stderr naming the cell, repeat and method, and the exit status
// is 3.
func TestFailuresExit3(t *testing.T) {
	out := t.TempDir()
	code, so, se := table(t, "-quick", "-only", "lung-cancer", "-configs", configsDir, "-set", "eval.bandwidth=1e-200",
		"-set", "eval.methods=[drknn,kernel_smoothing]", "-out", out)
	if code != 3 || strings.TrimSpace(so) != filepath.Join(out, "table.md") {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, so, se)
	}
	for _, cell := range []string{"lung-cancer-3w5s", "lung-cancer-3w8s"} {
		if n := strings.Count(se, "drknn-table: failed: cell "+cell+": repeat 1: kernel_smoothing: eval: kernel bandwidth h = 1e-200 is too small"); n != 1 {
			t.Errorf("%s: %d failure lines on stderr:\n%s", cell, n, se)
		}
	}
	if !strings.Contains(se, "drknn-table: 2 failure(s) recorded in "+filepath.Join(out, "table.md")) {
		t.Errorf("stderr %s", se)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(md), "| lung-cancer-3w5s | 0.") || !strings.Contains(string(md), "| lung-cancer-3w8s | 0.") {
		t.Fatalf("table.md: %v\n%s", err, md)
	}
	csv, err := os.ReadFile(filepath.Join(out, "table.csv"))
	if err != nil || strings.Count(string(csv), "kernel_smoothing,,,") != 2 || strings.Count(string(csv), ",ok,") != 2 {
		t.Fatalf("table.csv: %v\n%s", err, csv)
	}
}

// TestCellFailsExit3: a cell that fails as a whole (its MLP's training
// diverges at train.lr = 1e300, on every repeat) used to stop the table
// with exit 1 and no table.md. Now it is recorded — "failed" in table.md,
// its reason in table.csv —, the other cells run, and the exit status is 3
// with the failure on stderr; so with -transfer (both MNIST cells).
func TestCellFailsExit3(t *testing.T) {
	out := t.TempDir()
	code, so, se := table(t, "-quick", "-only", "lung-cancer", "-configs", configsDir, "-set", "model.kind=mlp", "-set", "train.lr=1e300", "-out", out)
	if code != 3 || strings.TrimSpace(so) != filepath.Join(out, "table.md") ||
		!strings.Contains(se, "drknn-table: failed: cell lung-cancer-3w5s: repeat 1: training diverged at step ") || !strings.Contains(se, "drknn-table: failed: cell lung-cancer-3w8s: repeat 1: training diverged at step ") {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, so, se)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(md), "| lung-cancer-3w5s | failed |") || !strings.Contains(string(md), "| lung-cancer-3w8s | failed |") ||
		!strings.Contains(string(md), "- lung-cancer-3w5s: failed: repeat 1: training diverged at step ") {
		t.Fatalf("table.md: %v\n%s", err, md)
	}
	csv, err := os.ReadFile(filepath.Join(out, "table.csv"))
	if err != nil || !strings.Contains(string(csv), "lung-cancer,3,8,,,,,,failed: repeat 1: training diverged at step ") {
		t.Fatalf("table.csv: %v\n%s", err, csv)
	}

	out = t.TempDir()
	code, so, se = table(t, "-transfer", "-quick", "-only", "mnist", "-configs", configsDir, "-set", "train.lr=1e300", "-out", out)
	if code != 3 || strings.TrimSpace(so) != filepath.Join(out, "transfer.md") ||
		!strings.Contains(se, "drknn-table: failed: cell mnist-5w1s: ") || !strings.Contains(se, "drknn-table: failed: cell mnist-5w5s: ") ||
		!strings.Contains(se, "training diverged at step ") || strings.Contains(se, "Failed to execute") {
		t.Fatalf("-transfer: exit %d, stdout %q, stderr %s", code, so, se)
	}
	md, err = os.ReadFile(filepath.Join(out, "transfer.md"))
	if err != nil || !strings.Contains(string(md), "| mnist-5w1s | failed |") || !strings.Contains(string(md), "| mnist-5w5s | failed |") {
		t.Fatalf("transfer.md: %v\n%s", err, md)
	}
	csv, err = os.ReadFile(filepath.Join(out, "transfer.csv"))
	if err != nil || !strings.Contains(string(csv), "mnist,5,5,,,,,,,\"failed: ") {
		t.Fatalf("transfer.csv: %v\n%s", err, csv)
	}
}

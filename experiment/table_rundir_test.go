package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/internal/fixtures"
)

// TestTableDataInsideOut: a table whose data_dir lies inside its -out
// folder (a cell's folder, which a run afresh removes whole), directly or
// through a symbolic link, or whose -out lies inside the data folder, is
// refused before any work (ErrConfig, one line naming both), and the data
// is left byte for byte.
func TestTableDataInsideOut(t *testing.T) {
	src, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(src, "lung-cancer.data"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "t")
	data := filepath.Join(out, "cells", "lung-cancer-3w5s", "mydata")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "lung-cancer.data")
	if err := os.WriteFile(file, want, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "datalink")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	outLink := filepath.Join(root, "outlink")
	if err := os.Symlink(out, outLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, data string }{
		{out, data},
		{out, link},
		{outLink, data},
		{filepath.Join(link, "tab"), link}, // -out inside the data folder
	} {
		_, err := RunTable(t.Context(), TableOptions{OutDir: c.out, Only: []string{"lung-cancer-3w5s"}, Quick: true,
			Sets: []string{"data_dir=" + c.data, "repeats=1", "queries=10", "eval.methods=[embedding_knn]"}})
		if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.data) {
			t.Errorf("-out %s, data_dir %s: %v; want a one-line ErrConfig naming the data", c.out, c.data, err)
		}
		if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("-out %s, data_dir %s: the data file changed (%v)", c.out, c.data, err)
		}
	}
}

// snapshotFiles is every file under dir by its path relative to dir (fixtures.Tree).
func snapshotFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := fixtures.Tree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestTableForceKeepsFailedCell: a table run again over an earlier one
// (-force) whose cell now fails as a whole leaves that cell's earlier run
// in its folder byte for byte (the failure says it was restored); a cell
// that succeeds replaces it with nothing of the earlier run aside.
func TestTableForceKeepsFailedCell(t *testing.T) {
	opts, cell, good := quickLungCell(t, "repeats=1", "eval.methods=[drknn]")
	failingForce(t, opts)
	sameTree(t, "the failed cell's folder", cell, good)
	opts.Sets = append(opts.Sets, "seed=9")
	if _, err := RunTable(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cell, ReplacedDir)); !os.IsNotExist(err) {
		t.Fatalf("the earlier run kept aside after the cell finished: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(cell, "results.json")); bytes.Equal(b, good["results.json"]) {
		t.Fatal("the cell was not run again")
	}
}

// TestTableResumeDamagedCell: -resume over a table one of whose cells has
// a damaged results.json (truncated) no longer stops the table: the cell
// is run again, with one message naming the file, and the other cells are
// reused.
func TestTableResumeDamagedCell(t *testing.T) {
	data, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opts := TableOptions{OutDir: out, Only: []string{"lung-cancer"}, Quick: true,
		Sets: []string{"data_dir=" + data, "repeats=1", "queries=10", "eval.methods=[drknn]"}}
	first, err := RunTable(t.Context(), opts)
	if err != nil || len(first) < 2 {
		t.Fatalf("%v, %d cells", err, len(first))
	}
	damaged := filepath.Join(out, "cells", first[0].Name, "results.json")
	if err := os.Truncate(damaged, 100); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	opts.Resume = true
	opts.Observer = func(e Event) {
		if m, ok := e.(Message); ok {
			msgs = append(msgs, m.Text)
		}
	}
	outs, err := RunTable(t.Context(), opts)
	if err != nil || len(outs) != len(first) {
		t.Fatalf("-resume with a damaged %s: %v", damaged, err)
	}
	if o := outs[0]; o.Reused || o.Results == nil || o.Failed != "" {
		t.Fatalf("the damaged cell: %+v", o)
	}
	for _, o := range outs[1:] {
		if !o.Reused {
			t.Errorf("cell %s was not reused", o.Name)
		}
	}
	n := 0
	for _, m := range msgs {
		if strings.Contains(m, damaged) && strings.Contains(m, "damaged") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d messages naming the damaged file: %q", n, msgs)
	}
	b, err := os.ReadFile(damaged)
	var res Results
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("results.json after the re-run: %v", err)
	}
}

// TestTableResumeSettlesKilledForce: a -force killed after a cell's
// results.json and before its earlier run (set aside in the cell's
// ReplacedDir) was deleted leaves the two side by side; a -resume that
// reuses the cell deletes the set-aside (the results.json beside it is
// the newer run's) and leaves every other file of the cell byte for byte.
func TestTableResumeSettlesKilledForce(t *testing.T) {
	opts, cell, good := quickLungCell(t, "repeats=1", "eval.methods=[embedding_knn]")
	// What the kill leaves: the earlier run aside beside the new results.
	aside := filepath.Join(cell, ReplacedDir)
	if err := os.MkdirAll(aside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aside, "results.json"), []byte(`{"earlier": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Resume = true
	outs, err := RunTable(t.Context(), opts)
	if err != nil || len(outs) != 1 || !outs[0].Reused {
		t.Fatalf("-resume: %v %+v", err, outs)
	}
	if _, err := os.Lstat(aside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the earlier run is still aside after -resume reused the finished cell: %v", err)
	}
	got := snapshotFiles(t, cell)
	if len(got) != len(good) {
		t.Fatalf("the cell's folder has %d files after -resume, %d before", len(got), len(good))
	}
	for p, b := range good {
		if !bytes.Equal(got[p], b) {
			t.Fatalf("%s changed by -resume", p)
		}
	}
}

// quickLungCell runs the one-cell table lung-cancer-3w5s (quick, 10
// queries, the real data) with sets after the data folder's, and returns
// its options, the cell's folder and the cell's files.
func quickLungCell(t *testing.T, sets ...string) (TableOptions, string, map[string][]byte) {
	t.Helper()
	data, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opts := TableOptions{OutDir: out, Only: []string{"lung-cancer-3w5s"}, Quick: true,
		Sets: append([]string{"data_dir=" + data, "queries=10"}, sets...)}
	t.Cleanup(func() { failHook = nil })
	if _, err := RunTable(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	cell := filepath.Join(out, "cells", "lung-cancer-3w5s")
	good := snapshotFiles(t, cell)
	if good["results.json"] == nil {
		t.Fatalf("no results.json in %s", cell)
	}
	return opts, cell, good
}

package experiment

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moveAside moves the entries names of the run folder dir into dir/sub (made
// if missing): what a kill between two renames of a set-aside or of a
// restore leaves.
func moveAside(t *testing.T, dir, sub string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(dir, sub, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// partialCell runs a one-cell table and returns its options, the cell's
// folder, the cell's files and one run output of it besides results.json.
func partialCell(t *testing.T) (TableOptions, string, map[string][]byte, string) {
	t.Helper()
	opts, cell, good := quickLungCell(t, "repeats=1", "eval.methods=[drknn]")
	other := ""
	for _, n := range runEntries {
		if _, err := os.Lstat(filepath.Join(cell, n)); err == nil && n != "results.json" {
			other = n
			break
		}
	}
	if other == "" {
		t.Fatalf("%s holds no run output besides results.json", cell)
	}
	return opts, cell, good, other
}

// failingForce runs the table of opts with -force (no -resume) and a cell
// that fails as a whole, and checks it says the earlier run was restored.
func failingForce(t *testing.T, opts TableOptions) {
	t.Helper()
	failHook = func(r int, m string) error {
		if m == "" {
			return errors.New("repeat broke")
		}
		return nil
	}
	outs, err := RunTable(t.Context(), opts)
	failHook = nil
	if err != nil || len(outs) != 1 || !strings.Contains(outs[0].Failed, "restored") {
		t.Fatalf("-force with a failing cell: %v %+v", err, outs)
	}
}

// TestTableForceInterruptedSetAside: a -force killed between two renames
// of its set-aside leaves the cell's earlier finished run half in
// ReplacedDir+".partial" (results.json first), half in the cell folder.
// The next -force whose cell fails leaves the earlier run in the folder
// byte for byte, and a -resume reuses it, byte for byte, nothing re-run.
func TestTableForceInterruptedSetAside(t *testing.T) {
	opts, cell, good, other := partialCell(t)
	moveAside(t, cell, partialDir, "results.json", other)
	failingForce(t, opts)
	sameTree(t, "-force after an interrupted set-aside, the new run failed", cell, good)

	moveAside(t, cell, partialDir, "results.json", other)
	opts.Resume = true
	outs, err := RunTable(t.Context(), opts)
	if err != nil || len(outs) != 1 || !outs[0].Reused {
		t.Fatalf("-resume after an interrupted set-aside: %v %+v", err, outs)
	}
	sameTree(t, "-resume after an interrupted set-aside", cell, good)
}

// TestTableForceInterruptedRestore: a failed -force killed while putting
// the earlier run back leaves it half in ReplacedDir+".partial", half in
// the cell folder (results.json goes back last). The next -force whose
// cell fails leaves the earlier run byte for byte; one that succeeds
// replaces it with nothing of it aside.
func TestTableForceInterruptedRestore(t *testing.T) {
	opts, cell, good, other := partialCell(t)
	moveAside(t, cell, partialDir, "results.json", other)
	failingForce(t, opts)
	sameTree(t, "-force after an interrupted restore, the new run failed", cell, good)

	moveAside(t, cell, partialDir, "results.json", other)
	opts.Sets = append(opts.Sets, "seed=9")
	if _, err := RunTable(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ReplacedDir, partialDir} {
		if _, err := os.Lstat(filepath.Join(cell, d)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left after the cell finished: %v", d, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(cell, "results.json")); b == nil || bytes.Equal(b, good["results.json"]) {
		t.Fatal("the cell was not run again")
	}
}

// fakeRun writes a run's outputs, as files, in dir.
func fakeRun(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	for n, s := range map[string]string{"results.json": `{"run": 1}`, "train.log": "log\n", "settings.json": "{}", "repeats/00/cv.json": "[]"} {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return snapshotFiles(t, dir)
}

// TestRunDirInterruptedSetAside: -resume (PrepareRunDir, drknn-train) and
// -force (ReplaceRunDir) over a folder whose set-aside a kill interrupted
// see the earlier finished run: -resume refuses it as finished, with every
// file back in place; -force sets all of it aside.
func TestRunDirInterruptedSetAside(t *testing.T) {
	dir := t.TempDir()
	good := fakeRun(t, dir)
	moveAside(t, dir, partialDir, "results.json", "repeats")
	if err := PrepareRunDir(dir, true, false); !errors.Is(err, ErrRunDirInUse) || !strings.Contains(err.Error(), "finished run") {
		t.Fatalf("-resume over an interrupted set-aside of a finished run: %v", err)
	}
	sameTree(t, "-resume", dir, good)

	moveAside(t, dir, partialDir, "results.json", "train.log")
	r, err := ReplaceRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	aside := snapshotFiles(t, filepath.Join(dir, ReplacedDir))
	sameTree(t, "the set-aside", filepath.Join(dir, ReplacedDir), good)
	if len(snapshotFiles(t, dir)) != len(aside) {
		t.Fatalf("-force left files of the earlier run beside its set-aside")
	}
	if err := r.Settle(errors.New("broke")); err == nil || !strings.Contains(err.Error(), "restored") {
		t.Fatalf("Settle: %v", err)
	}
	sameTree(t, "-force that failed", dir, good)
}

// TestRunDirPartialClash: a name both in the interrupted set-aside and in
// the run folder is refused by -force and -resume alike, one line naming
// both files, and nothing is changed.
func TestRunDirPartialClash(t *testing.T) {
	dir := t.TempDir()
	fakeRun(t, dir)
	moveAside(t, dir, partialDir, "results.json", "train.log")
	if err := os.WriteFile(filepath.Join(dir, "train.log"), []byte("newer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshotFiles(t, dir)
	in, aside := filepath.Join(dir, "train.log"), filepath.Join(dir, partialDir, "train.log")
	for name, f := range map[string]func() error{
		"-force":  func() error { _, err := ReplaceRunDir(dir); return err },
		"-resume": func() error { return PrepareRunDir(dir, true, false) },
	} {
		err := f()
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), in) || !strings.Contains(err.Error(), aside) {
			t.Fatalf("%s with %s in both: %v", name, "train.log", err)
		}
		sameTree(t, name, dir, before)
	}
}

package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/fixtures"
)

// newerSets are the settings of the -force run killedAfterCell kills: a
// seed of its own, so that its training differs from the earlier one.
var newerSets = []string{"seed=2"}

// killedAfterCell makes out what a -force run of the quick transfer cell
// mnist-5w1s (newerSets) leaves over an earlier finished run when it is
// killed (SIGKILL, power loss) just after the cell's results.json was
// written, before what it set aside was deleted: the new training in
// OUT/train/mnist and the new results in OUT/cells/mnist-5w1s, with the
// earlier training and the cell's earlier run still in their
// .replaced-run. It runs the -force to the end, then puts back every
// hidden entry (the set-asides, and whatever the run keeps beside them)
// of the two folders as they were at the new training's first step.
// It returns the new training's and the new cell's files.
func killedAfterCell(t *testing.T, out string) (training, results map[string][]byte) {
	t.Helper()
	if _, err := forceTransfer(t.Context(), t, out, false, nil); err != nil {
		t.Fatal(err)
	}
	trainDir, cell := filepath.Join(out, "train", "mnist"), filepath.Join(out, "cells", "mnist-5w1s")
	earlier := snapshotFiles(t, trainDir)
	var during map[string]map[string][]byte
	var duringErr error
	if _, err := forceTransfer(t.Context(), t, out, false, func(e Event) {
		if _, ok := e.(TransferStep); !ok || during != nil {
			return
		}
		during = map[string]map[string][]byte{}
		for _, d := range []string{trainDir, cell} {
			files, err := fixtures.Tree(d)
			during[d], duringErr = files, errors.Join(duringErr, err)
		}
	}, newerSets...); err != nil || duringErr != nil || during == nil {
		t.Fatalf("the newer -force: %v, %v, snapshot %v", err, duringErr, during != nil)
	}
	training, results = snapshotFiles(t, trainDir), snapshotFiles(t, cell)
	if bytes.Equal(training["drknn/checkpoint.bin"], earlier["drknn/checkpoint.bin"]) {
		t.Fatal("the newer training is the earlier one byte for byte: the test could not tell them apart")
	}
	noReplaced(t, out)
	for d, files := range during {
		n := 0
		for p, b := range files {
			if !strings.HasPrefix(p, ".") {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(d, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, p), b, 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("nothing was set aside in %s during the newer -force", d)
		}
	}
	sameTree(t, "the earlier training, as the killed run left it aside", filepath.Join(trainDir, ReplacedDir), earlier)
	return training, results
}

// TestTransferResumeAfterKilledForce: a -resume that reuses every cell of
// a data set after a -force killed between its cell's results.json and
// the deletion of what it replaced deletes the earlier training and the
// cell's earlier run set aside (the reused results were made with the new
// training), and touches nothing else: the training and the cell's files
// byte for byte. It used to keep both set-asides for ever.
func TestTransferResumeAfterKilledForce(t *testing.T) {
	out := t.TempDir()
	training, results := killedAfterCell(t, out)
	outs, err := forceTransfer(t.Context(), t, out, true, nil, newerSets...)
	if err != nil || len(outs) != 1 || !outs[0].Reused {
		t.Fatalf("-resume: %v %+v", err, outs)
	}
	noReplaced(t, out)
	sameTree(t, "the training folder", filepath.Join(out, "train", "mnist"), training)
	sameTree(t, "the cell's folder", filepath.Join(out, "cells", "mnist-5w1s"), results)
}

// TestTransferForceAfterKilledForce: a -force after a -force killed
// between its cell's results.json and the deletion of what it replaced
// takes the training in the folder — the one the finished cell was made
// with — for the one to replace, not the older one still set aside: when
// the new run's cell fails (its training diverges), the training put
// back is that newer one, byte for byte, with the cell's results it made.
// It used to delete the newer training and put back the older.
func TestTransferForceAfterKilledForce(t *testing.T) {
	out := t.TempDir()
	training, results := killedAfterCell(t, out)
	trainDir := filepath.Join(out, "train", "mnist")
	outs, err := forceTransfer(t.Context(), t, out, false, nil, "train.lr=1e300", "train.checkpoint_every=1")
	restored := "the earlier training in " + trainDir + " is restored"
	if err != nil || len(outs) != 1 || !strings.Contains(outs[0].Failed, "training diverged") || !strings.Contains(outs[0].Failed, restored) {
		t.Fatalf("%v %+v", err, outs)
	}
	sameTree(t, "the training folder", trainDir, training)
	sameTree(t, "the cell's folder", filepath.Join(out, "cells", "mnist-5w1s"), results)
	noReplaced(t, out)
}

// TestTransferAsideKeptUntilCellFinishes: the earlier training that a
// -force of one cell (mnist-5w1s) stopped at its first step set aside is
// not taken for replaced by a cell of the data set whose results.json is
// from before that -force: a -resume reusing that other cell (mnist-5w5s)
// keeps it, and the stopped cell's earlier run, byte for byte, and so does
// a -force of that other cell whose training fails (the training put back
// is the earlier one).
func TestTransferAsideKeptUntilCellFinishes(t *testing.T) {
	out := t.TempDir()
	if _, err := transferOnly(t.Context(), t, "mnist", out, false, nil); err != nil {
		t.Fatal(err)
	}
	trainDir, cell := filepath.Join(out, "train", "mnist"), filepath.Join(out, "cells", "mnist-5w1s")
	aside := filepath.Join(trainDir, ReplacedDir)
	training, results := snapshotFiles(t, trainDir), snapshotFiles(t, cell)
	ctx, cancel := context.WithCancel(t.Context())
	_, err := forceTransfer(ctx, t, out, false, func(e Event) {
		if _, ok := e.(TransferStep); ok {
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want an interruption: %v", err)
	}
	outs, err := transferOnly(t.Context(), t, "mnist-5w5s", out, true, nil)
	if err != nil || len(outs) != 1 || !outs[0].Reused {
		t.Fatalf("-resume of the other cell: %v %+v", err, outs)
	}
	sameTree(t, "the training set aside, after -resume", aside, training)
	sameTree(t, "the cell's run set aside, after -resume", filepath.Join(cell, ReplacedDir), results)

	outs, err = transferOnly(t.Context(), t, "mnist-5w5s", out, false, nil, "train.lr=1e300", "train.checkpoint_every=1")
	if err != nil || len(outs) != 1 || !strings.Contains(outs[0].Failed, "the earlier training in "+trainDir+" is restored") {
		t.Fatalf("-force of the other cell: %v %+v", err, outs)
	}
	sameTree(t, "the training folder, after -force of the other cell", trainDir, training)
	sameTree(t, "the cell's run set aside, after -force of the other cell", filepath.Join(cell, ReplacedDir), results)
}

// TestTrainingSuperseded: the earlier training set aside is taken for
// older than a cell's results only when the note written with the
// set-aside exists, is readable, and does not list the cell's
// results.json as it is; without a set-aside, a note, or results, or
// with a damaged note, it is not (and is kept).
func TestTrainingSuperseded(t *testing.T) {
	root := t.TempDir()
	trainDir, cell := filepath.Join(root, "train", "mnist"), filepath.Join(root, "cells", "mnist-5w1s")
	other := filepath.Join(root, "cells", "mnist-5w5s")
	for _, d := range []string{filepath.Join(trainDir, "drknn"), cell, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(trainDir, "drknn", "checkpoint.bin"), "earlier training")
	write(filepath.Join(cell, "results.json"), `{"old": 1}`)
	write(filepath.Join(other, "results.json"), `{"old": 2}`)
	if trainingSuperseded(trainDir, cell) {
		t.Fatal("superseded without a set-aside")
	}
	r, err := replaceTrainDir(trainDir, []string{cell, other})
	if err != nil || r.Aside() == "" {
		t.Fatalf("set-aside: %v %+v", err, r)
	}
	for _, c := range []string{cell, other} {
		if trainingSuperseded(trainDir, c) {
			t.Fatalf("%s: results from before the set-aside taken for newer", c)
		}
	}
	write(filepath.Join(cell, "results.json"), `{"new": 1}`)
	if !trainingSuperseded(trainDir, cell) || trainingSuperseded(trainDir, other) {
		t.Fatal("a results.json written after the set-aside is not taken for newer (or the other cell's is)")
	}
	os.Remove(filepath.Join(other, "results.json"))
	if trainingSuperseded(trainDir, other) {
		t.Fatal("superseded by a cell without results")
	}
	note := filepath.Join(trainDir, asideNote)
	for _, damaged := range []string{"", "{", "{}", "null"} {
		write(note, damaged)
		if trainingSuperseded(trainDir, cell) {
			t.Fatalf("note %q: superseded", damaged)
		}
	}
	os.Remove(note)
	if trainingSuperseded(trainDir, cell) {
		t.Fatal("superseded without a note (a set-aside of an earlier drknn)")
	}
}

// TestRestoreResultsLast: a restore of a cell's earlier run that stops
// part-way puts results.json back only after the rest, so that a
// results.json beside a set-aside is never the earlier run's (-force and
// -resume take the set-aside beside one for older, and delete it).
func TestRestoreResultsLast(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"results.json", "train.log", "zz-stuck"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("earlier "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ReplaceRunDir(dir)
	if err != nil || r.Aside() == "" {
		t.Fatalf("%v %+v", err, r)
	}
	// zz-stuck was not set aside (not a run output); a rename onto it,
	// a folder that is not empty, fails: the restore stops there.
	os.Rename(filepath.Join(dir, "zz-stuck"), filepath.Join(r.Aside(), "zz-stuck"))
	if err := os.MkdirAll(filepath.Join(dir, "zz-stuck", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = r.Settle(errors.New("new run failed"))
	if err == nil || !strings.Contains(err.Error(), "restoring the earlier run") {
		t.Fatalf("want a failed restore: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
		t.Fatal("results.json put back before the rest of the earlier run")
	}
	if _, err := os.Stat(filepath.Join(r.Aside(), "results.json")); err != nil {
		t.Fatalf("results.json lost: %v", err)
	}
}

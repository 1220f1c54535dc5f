package experiment

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// partialTraining makes the finished training of the quick transfer cell
// mnist-5w1s in a new table folder and returns the folder, the training
// folder OUT/train/mnist with its files and the cell's folder with its
// files. The training folder holds two entries (the objectives' folders
// drknn and proto), so that a kill can leave one on either side.
func partialTraining(t *testing.T) (out, trainDir string, training map[string][]byte, cell string, results map[string][]byte) {
	t.Helper()
	out = t.TempDir()
	if _, err := forceTransfer(t.Context(), t, out, false, nil); err != nil {
		t.Fatal(err)
	}
	trainDir, cell = filepath.Join(out, "train", "mnist"), filepath.Join(out, "cells", "mnist-5w1s")
	training, results = snapshotFiles(t, trainDir), snapshotFiles(t, cell)
	for _, p := range []string{"drknn/checkpoint.bin", "proto/checkpoint.bin"} {
		if training[p] == nil {
			t.Fatalf("the first run made no %s in %s", p, trainDir)
		}
	}
	if results["results.json"] == nil {
		t.Fatalf("the first run made no results.json in %s", cell)
	}
	return out, trainDir, training, cell, results
}

// killedTraining leaves in the training folder trainDir of the table
// folder out what a -force killed half-way through moving the training
// aside, or through putting it back, leaves: the note of the set-aside
// (asideNote, written before anything moves and removed after the last
// entry is back) beside the training, with the entries inPartial in
// ReplacedDir+".partial" and the others still in the folder.
func killedTraining(t *testing.T, out, trainDir string, inPartial ...string) {
	t.Helper()
	if err := trainingKind(transferCellDirs(out, "mnist")).writeNote(trainDir); err != nil {
		t.Fatal(err)
	}
	moveAside(t, trainDir, partialDir, inPartial...)
}

// noPartial fails t if the training folder trainDir holds an interrupted
// set-aside or its note.
func noPartial(t *testing.T, trainDir string) {
	t.Helper()
	for _, n := range []string{partialDir, asideNote} {
		if _, err := os.Lstat(filepath.Join(trainDir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s left in %s (%v)", n, trainDir, err)
		}
	}
}

// failingTransferForce runs -force of mnist-5w1s with a training that
// diverges (train.lr 1e300, a checkpoint at step 1) and checks the cell's
// failure says the earlier training was restored.
func failingTransferForce(t *testing.T, out, trainDir string) {
	t.Helper()
	outs, err := forceTransfer(t.Context(), t, out, false, nil, "train.lr=1e300", "train.checkpoint_every=1")
	restored := "the earlier training in " + trainDir + " is restored"
	if err != nil || len(outs) != 1 || !strings.Contains(outs[0].Failed, "training diverged") || !strings.Contains(outs[0].Failed, restored) {
		t.Fatalf("-force with a diverging training: %v %+v", err, outs)
	}
}

// TestTransferForceInterruptedTrainingSetAside: a -force killed while it
// moved a data set's finished training (OUT/train/mnist) aside leaves part
// of it in .replaced-run.partial, the rest in the folder, beside the
// set-aside's note — after the first objective's folder moved, or after
// both, before the folder was renamed .replaced-run. Nothing of that
// training is lost: a -resume reuses the cell with the training back byte
// for byte; a -force whose training diverges puts it back byte for byte;
// a -force stopped at its first step keeps all of it aside, byte for
// byte, and a -resume then finishes the new run, with nothing left aside.
func TestTransferForceInterruptedTrainingSetAside(t *testing.T) {
	for _, inPartial := range [][]string{{"drknn"}, {"drknn", "proto"}} {
		t.Run(strings.Join(inPartial, "+"), func(t *testing.T) {
			out, trainDir, training, cell, results := partialTraining(t)

			resumeAndFailedForce(t, "set-aside", out, trainDir, training, cell, results, inPartial)

			killedTraining(t, out, trainDir, inPartial...)
			ctx, cancel := context.WithCancel(t.Context())
			_, err := forceTransfer(ctx, t, out, false, func(e Event) {
				if _, ok := e.(TransferStep); ok {
					cancel()
				}
			})
			cancel()
			aside := filepath.Join(trainDir, ReplacedDir)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "kept in "+aside) {
				t.Fatalf("want an interruption naming %s: %v", aside, err)
			}
			sameTree(t, "the training set aside by a stopped -force", aside, training)
			if _, err := os.Lstat(filepath.Join(trainDir, partialDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s left beside the set-aside (%v)", partialDir, err)
			}

			resumeContinues(t, out)
			noPartial(t, trainDir)
			noReplaced(t, out)
		})
	}
}

// TestTransferForceInterruptedTrainingRestore: a failed -force killed while
// it put the earlier training back leaves part of it in
// .replaced-run.partial (after the rename of .replaced-run, nothing back
// yet; or the first objective's folder back), the rest in the training
// folder, beside the set-aside's note; the cell's earlier run is back (a
// cell's folder is restored before its training). Nothing of that training
// is lost: a -resume reuses the cell with the training back byte for byte;
// a -force whose training diverges puts it back byte for byte; a -force
// that finishes replaces it, with nothing of it left aside.
func TestTransferForceInterruptedTrainingRestore(t *testing.T) {
	for _, inPartial := range [][]string{{"proto"}, {"drknn", "proto"}} {
		t.Run(strings.Join(inPartial, "+"), func(t *testing.T) {
			out, trainDir, training, cell, results := partialTraining(t)

			resumeAndFailedForce(t, "restore", out, trainDir, training, cell, results, inPartial)

			killedTraining(t, out, trainDir, inPartial...)
			outs, err := forceTransfer(t.Context(), t, out, false, nil, newerSets...)
			if err != nil || len(outs) != 1 || outs[0].Results == nil || outs[0].Failed != "" {
				t.Fatalf("-force after an interrupted restore of the training: %v %+v", err, outs)
			}
			now := snapshotFiles(t, trainDir)
			if len(now) != len(training) || string(now["drknn/checkpoint.bin"]) == string(training["drknn/checkpoint.bin"]) {
				t.Fatalf("the training folder after -force: %d files (want %d), the earlier checkpoint still there: the new training did not replace it",
					len(now), len(training))
			}
			noPartial(t, trainDir)
			noReplaced(t, out)
		})
	}
}

// resumeAndFailedForce checks what both kinds of kill (during the
// set-aside of a training folder or its restore, what) must leave: after
// each, a -resume reuses the cell with the training and the cell's folder
// back byte for byte, and a -force whose training diverges puts both back
// byte for byte, with nothing left in .replaced-run.partial or aside.
func resumeAndFailedForce(t *testing.T, what, out, trainDir string, training map[string][]byte, cell string, results map[string][]byte, inPartial []string) {
	t.Helper()
	killedTraining(t, out, trainDir, inPartial...)
	outs, err := forceTransfer(t.Context(), t, out, true, nil)
	if err != nil || len(outs) != 1 || !outs[0].Reused {
		t.Fatalf("-resume after an interrupted %s of the training: %v %+v", what, err, outs)
	}
	sameTree(t, "the training folder, after -resume", trainDir, training)
	sameTree(t, "the cell's folder, after -resume", cell, results)
	noPartial(t, trainDir)

	killedTraining(t, out, trainDir, inPartial...)
	failingTransferForce(t, out, trainDir)
	sameTree(t, "the training folder, after a failed -force", trainDir, training)
	sameTree(t, "the cell's folder, after a failed -force", cell, results)
	noPartial(t, trainDir)
	noReplaced(t, out)
}

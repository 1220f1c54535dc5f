package experiment

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/internal/fixtures"
)

// forceTransfer runs the quick transfer table's cell mnist-5w1s in out
// (resume: -resume, else -force) with sets added, observe seeing every
// event.
func forceTransfer(ctx context.Context, t *testing.T, out string, resume bool, observe Observer, sets ...string) ([]TransferOutcome, error) {
	t.Helper()
	return transferOnly(ctx, t, "mnist-5w1s", out, resume, observe, sets...)
}

// transferOnly is forceTransfer of the cells -only selects.
func transferOnly(ctx context.Context, t *testing.T, only, out string, resume bool, observe Observer, sets ...string) ([]TransferOutcome, error) {
	t.Helper()
	if _, err := datadir.Require("mnist"); err != nil {
		t.Fatal(err)
	}
	return RunTransferTable(ctx, TableOptions{OutDir: out, Only: []string{only}, Quick: true, Resume: resume, Sets: sets, Observer: observe})
}

// sameTree fails t unless the files under dir are want's, byte for byte.
func sameTree(t *testing.T, what, dir string, want map[string][]byte) {
	t.Helper()
	sameFiles(t, what, snapshotFiles(t, dir), want)
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d files, want the %d of the earlier run", what, len(got), len(want))
	}
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Fatalf("%s: %s differs from the earlier run's", what, p)
		}
	}
}

// resumeContinues runs the transfer table in out with -resume after a
// stopped -force and fails t unless the cell finishes by continuing the
// stopped training (TrainingResumed), not by reusing or training afresh.
func resumeContinues(t *testing.T, out string) {
	t.Helper()
	resumed := false
	outs, err := forceTransfer(t.Context(), t, out, true, func(e Event) {
		if _, ok := e.(TrainingResumed); ok {
			resumed = true
		}
	})
	if err != nil || len(outs) != 1 || outs[0].Results == nil || outs[0].Reused {
		t.Fatalf("-resume of the stopped -force: %v %+v", err, outs)
	}
	if !resumed {
		t.Error("-resume trained afresh instead of continuing the stopped training")
	}
}

// noReplaced fails t if a ReplacedDir is left anywhere under out.
func noReplaced(t *testing.T, out string) {
	t.Helper()
	filepath.WalkDir(out, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Name() == ReplacedDir {
			t.Errorf("%s left behind", p)
		}
		return err
	})
}

// TestTransferForceKeepsTrainingOnFailure: -force over a finished transfer
// table whose new training fails (it diverges at train.lr 1e300, after a
// checkpoint at step 1; the second cell fails on that checkpoint) in both
// MNIST cells leaves the earlier base-class
// training in OUT/train/mnist and the cells' earlier results byte for
// byte; the last cell's failure says the training was restored. It used to
// delete the earlier training before the new one had started.
func TestTransferForceKeepsTrainingOnFailure(t *testing.T) {
	out := t.TempDir()
	if _, err := transferOnly(t.Context(), t, "mnist", out, false, nil); err != nil {
		t.Fatal(err)
	}
	trainDir, cells := filepath.Join(out, "train", "mnist"), filepath.Join(out, "cells")
	training, results := snapshotFiles(t, trainDir), snapshotFiles(t, cells)
	if training["drknn/checkpoint.bin"] == nil || results["mnist-5w1s/results.json"] == nil || results["mnist-5w5s/results.json"] == nil {
		t.Fatalf("the first run made no training or results: %d, %d files", len(training), len(results))
	}
	outs, err := transferOnly(t.Context(), t, "mnist", out, false, nil, "train.lr=1e300", "train.checkpoint_every=1")
	restored := "the earlier training in " + trainDir + " is restored"
	if err != nil || len(outs) != 2 || !strings.Contains(outs[0].Failed, "training diverged") || strings.Contains(outs[0].Failed, restored) ||
		!strings.Contains(outs[1].Failed, restored) {
		t.Fatalf("%v %+v", err, outs)
	}
	sameTree(t, "the training folder", trainDir, training)
	sameTree(t, "the cells' folders", cells, results)
	noReplaced(t, out)
}

// TestTransferForceInterrupted: a -force run stopped at its first training
// step keeps the earlier training (and the cell's earlier results) aside,
// in OUT/train/mnist/.replaced-run, and its error names it; a second -force
// run stopped the same way keeps that same earlier training; a -resume
// then finishes the new run and deletes what was set aside.
func TestTransferForceInterrupted(t *testing.T) {
	out := t.TempDir()
	if _, err := forceTransfer(t.Context(), t, out, false, nil); err != nil {
		t.Fatal(err)
	}
	trainDir, cell := filepath.Join(out, "train", "mnist"), filepath.Join(out, "cells", "mnist-5w1s")
	training, results := snapshotFiles(t, trainDir), snapshotFiles(t, cell)
	aside := filepath.Join(trainDir, ReplacedDir)
	for range 2 {
		ctx, cancel := context.WithCancel(t.Context())
		_, err := forceTransfer(ctx, t, out, false, func(e Event) {
			if _, ok := e.(TransferStep); ok {
				cancel()
			}
		})
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "kept in "+aside) {
			t.Fatalf("want an interruption naming %s: %v", aside, err)
		}
		sameTree(t, "the training set aside", aside, training)
		sameTree(t, "the cell's run set aside", filepath.Join(cell, ReplacedDir), results)
		if _, err := os.Stat(filepath.Join(trainDir, "drknn", "checkpoint.bin")); err != nil {
			t.Fatalf("the stopped training left no checkpoint: %v", err)
		}
	}
	resumeContinues(t, out)
	noReplaced(t, out)
}

// TestTransferForceReplaces: a -force run keeps the earlier training aside
// while it trains, and once it has finished nothing of the earlier run is
// left — no .replaced-run, and no export of the earlier Dr.k-NN embedding
// beside results of an anchor-only run (it used to stay in the cell's
// folder).
func TestTransferForceReplaces(t *testing.T) {
	out := t.TempDir()
	if _, err := forceTransfer(t.Context(), t, out, false, nil); err != nil {
		t.Fatal(err)
	}
	trainDir, cell := filepath.Join(out, "train", "mnist"), filepath.Join(out, "cells", "mnist-5w1s")
	if _, err := os.Stat(filepath.Join(cell, "export")); err != nil {
		t.Fatalf("the first run made no export: %v", err)
	}
	training := snapshotFiles(t, trainDir)
	var during map[string][]byte // the set-aside at the first training step
	var duringErr error
	outs, err := forceTransfer(t.Context(), t, out, false, func(e Event) {
		if _, ok := e.(TransferStep); ok && during == nil && duringErr == nil {
			during, duringErr = fixtures.Tree(filepath.Join(trainDir, ReplacedDir))
		}
	}, "eval.methods=[proto_net]")
	if err != nil || len(outs) != 1 || outs[0].Results == nil {
		t.Fatalf("%v %+v", err, outs)
	}
	if duringErr != nil {
		t.Fatalf("the earlier training is not set aside during the new one: %v", duringErr)
	}
	sameFiles(t, "the training set aside during the new one", during, training)
	noReplaced(t, out)
	for _, p := range []string{filepath.Join(cell, "export"), filepath.Join(trainDir, "drknn")} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of the earlier run is left beside the new one (%v)", p, err)
		}
	}
}

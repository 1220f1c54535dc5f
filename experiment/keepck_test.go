package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// Ctrl-C while a repeat is being evaluated keeps that repeat's finished
// training: its checkpoint is saved then (checkpoint_every: 0 had written
// none, or one steps behind), and -resume evaluates it without a training
// step, with the uninterrupted run's results. Before, the training was lost
// and -resume trained the repeat again from step 0.
func TestStopDuringEvaluationKeepsTraining(t *testing.T) {
	cfg := synthConfig(t, "repeats=1", "train.steps=6", "train.checkpoint_every=0", "queries=40", "eval.methods=[drknn,embedding_knn,pca_knn]")
	want, err := Run(t.Context(), cfg, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	failHook = func(_ int, m string) error {
		if m == "embedding_knn" {
			cancel() // Ctrl-C while the repeat's methods are evaluated
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	_, err = Run(ctx, cfg, Options{OutDir: dir})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "evaluating") {
		t.Fatalf("run stopped during the evaluation: %v", err)
	}
	failHook = nil
	if _, err := os.Stat(filepath.Join(dir, "repeats", "01", "checkpoint.bin")); err != nil {
		t.Fatalf("the finished training was not kept: %v", err)
	}
	var steps atomic.Int32
	got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: func(e Event) {
		if _, ok := e.(StepDone); ok {
			steps.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := steps.Load(); n != 0 {
		t.Fatalf("-resume took %d training steps, want 0 (the training was finished)", n)
	}
	for m, w := range want.Methods {
		if !reflect.DeepEqual(got.Methods[m].PerRepeat, w.PerRepeat) {
			t.Fatalf("%s: resumed %v, uninterrupted %v", m, got.Methods[m].PerRepeat, w.PerRepeat)
		}
	}
	if got.Episodes[0].FinalRisk != want.Episodes[0].FinalRisk {
		t.Fatalf("final risk %v, want %v", got.Episodes[0].FinalRisk, want.Episodes[0].FinalRisk)
	}
}

// Ctrl-C during protocol fit's cross-validation (no test part: the folds
// are trained after the model) keeps the model's finished training: its
// checkpoint is saved then, and -resume trains only the folds again (they
// keep none), with the uninterrupted run's scores and a bit-identical
// model.bin. Before, FitAll did not hand Fit's keep back to runFit: with
// checkpoint_every: 0 the model's checkpoint was missing (or steps behind)
// and -resume trained the model again.
func TestStopDuringFitCrossValidationKeepsTraining(t *testing.T) {
	path := fixtureCSV(t)
	cfg := fitConfig(t, "csv", path, "data.label=kind", "data.missing=mean", "train.cv_folds=3", "train.checkpoint_every=0", "workers=1")
	wantDir := t.TempDir()
	want, err := Run(t.Context(), cfg, Options{OutDir: wantDir})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var main atomic.Int32
	var log strings.Builder
	_, err = Run(ctx, cfg, Options{OutDir: dir, Observer: func(e Event) {
		switch e := e.(type) {
		case StepDone:
			if e.CV {
				cancel() // Ctrl-C during the cross-validation, after the model's training
			} else {
				main.Add(1)
			}
		case Message:
			log.WriteString(e.Text + "\n")
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cross-validation fold") {
		t.Fatalf("run stopped during the cross-validation: %v", err)
	}
	if n := main.Load(); n != int32(cfg.Train.Steps) {
		t.Fatalf("the model ran %d steps before the cross-validation, want %d", n, cfg.Train.Steps)
	}
	ck := filepath.Join(dir, "checkpoint.bin")
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("the finished training was not kept: %v", err)
	}
	if !strings.Contains(log.String(), "checkpoints kept in "+ck) {
		t.Errorf("the log does not name the kept checkpoint:\n%s", log.String())
	}
	main.Store(0)
	var resumed []TrainingResumed
	got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: func(e Event) {
		switch e := e.(type) {
		case StepDone:
			if !e.CV {
				main.Add(1)
			}
		case TrainingResumed:
			resumed = append(resumed, e)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := main.Load(); n != 0 {
		t.Fatalf("-resume took %d training steps of the model, want 0 (its training was finished)", n)
	}
	if len(resumed) != 1 || resumed[0].Step != cfg.Train.Steps {
		t.Fatalf("resume events %+v, want one at step %d", resumed, cfg.Train.Steps)
	}
	if !reflect.DeepEqual(got.Fit.Scores, want.Fit.Scores) || !reflect.DeepEqual(got.Fit.FoldAccuracy, want.Fit.FoldAccuracy) || got.Fit.FinalRisk != want.Fit.FinalRisk {
		t.Fatalf("resumed fit %+v (risk %v), uninterrupted %+v (risk %v)", got.Fit.Scores, got.Fit.FinalRisk, want.Fit.Scores, want.Fit.FinalRisk)
	}
	sameFile(t, filepath.Join(dir, "export", "model.bin"), filepath.Join(wantDir, "export", "model.bin"))
}

// sameFile fails the test unless the files at a and b hold the same bytes.
func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s differs from %s (%d and %d bytes)", a, b, len(x), len(y))
	}
}

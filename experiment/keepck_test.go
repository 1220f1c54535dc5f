package experiment

import (
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

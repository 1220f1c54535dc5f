package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransferSizesCheckedBeforeTraining: task and episode sizes the split
// cannot give (transferYAML: 4 novel classes, 6 base classes of 24
// training and 6 validation samples each, 30 samples per class) are a
// config error naming the key and what the split holds, before a single
// training step.
func TestTransferSizesCheckedBeforeTraining(t *testing.T) {
	for _, c := range []struct {
		set  string
		want []string
	}{
		{"ways=5", []string{"key ways = 5", "4 novel classes", "(block, disc, triangle, dots)"}},
		{"shots=30", []string{"key shots = 30", "has 30 samples", "needs 31"}},
		{"transfer.ways=7", []string{"key transfer.ways = 7", "6 training classes"}},
		{"transfer.shots=23", []string{"key transfer.shots = 23", "has 24 training samples", "= 25 per class"}},
		{"transfer.val_ways=7", []string{"key transfer.val_ways = 7", "6 validation classes"}},
		{"transfer.val_shots=6", []string{"key transfer.val_shots = 6", "has 6 validation samples"}},
	} {
		cfg := transferConfig(t, c.set)
		steps := 0
		dir := t.TempDir()
		_, err := Run(t.Context(), cfg, Options{OutDir: dir, Observer: func(e Event) {
			if _, ok := e.(TransferStep); ok {
				steps++
			}
		}})
		if err == nil || !errors.Is(err, ErrConfig) || steps != 0 {
			t.Errorf("%s: error %v (config error %v) after %d training steps", c.set, err, errors.Is(err, ErrConfig), steps)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.set, err, w)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "train")); !os.IsNotExist(err) {
			t.Errorf("%s: a refused run made its training folder (%v)", c.set, err)
		}
	}
}

// TestTransferResumeOtherSettingsNamesKey: resuming a training folder
// made with other settings is a config error that names the key that
// changed and its two values, in one short line — it printed the two
// training keys, Go structs of about 600 characters each.
func TestTransferResumeOtherSettingsNamesKey(t *testing.T) {
	dir := t.TempDir()
	sets := []string{"train.steps=2", "transfer.validate_every=0", "repeats=2", "eval.methods=[drknn]"}
	if _, err := Run(t.Context(), transferConfig(t, sets...), Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), transferConfig(t, append(sets, "train.lr=0.01")...), Options{OutDir: dir, Resume: true})
	if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "train.lr 0.003 there, 0.01 now") ||
		strings.Contains(err.Error(), "transfer|") || len(err.Error()) > 400 || strings.Contains(err.Error(), "\n") {
		t.Fatalf("resume with another train.lr: %v", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
	// The number of steps is not part of the training's key: more steps
	// resume it.
	if _, err := Run(t.Context(), transferConfig(t, append(sets[1:], "train.steps=3")...), Options{OutDir: dir, Resume: true}); err != nil {
		t.Fatalf("resume with more steps: %v", err)
	}
}

// TestInterruptedNoteTransfer: a transfer run stopped after its first
// training step keeps its checkpoint in train/drknn/, and the note names
// that file (drknn-train named DIR/repeats, which a transfer run never
// makes); a run stopped before any checkpoint says none was written.
func TestInterruptedNoteTransfer(t *testing.T) {
	dir := t.TempDir()
	if note := InterruptedNote(dir); !strings.Contains(note, "no checkpoint was written") {
		t.Fatalf("empty folder: %s", note)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := transferConfig(t, "train.steps=5", "transfer.validate_every=0", "repeats=2", "eval.methods=[drknn]")
	_, err := Run(ctx, cfg, Options{OutDir: dir, Observer: func(e Event) {
		if _, ok := e.(TransferStep); ok {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	ck := filepath.Join(dir, "train", "drknn", "checkpoint.bin")
	if _, err := os.Stat(ck); err != nil {
		t.Fatal(err)
	}
	if note := InterruptedNote(dir); note != "checkpoints kept in "+ck+"; continue with -resume" {
		t.Fatalf("note %q", note)
	}
}

package experiment

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestConv4Augmentation: augmentation is for every network that takes
// images — Conv-4 as much as the CNN — and refused only for models on
// feature rows. A Conv-4 run with augmentation trains on transformed
// images: its losses differ from the same run's without it, step by step
// from the first.
func TestConv4Augmentation(t *testing.T) {
	sets := []string{"model.kind=conv4", "model.dim=0", "model.dtype=float32", "repeats=1", "train.steps=3", "eval.methods=[drknn]"}
	run := func(extra ...string) *Repeat {
		t.Helper()
		cfg := synthConfig(t, append(sets, extra...)...)
		d, err := LoadData(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg, d, err = ForData(cfg, d)
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		rep, err := RunRepeat(t.Context(), cfg, d, 0, RepeatOptions{Methods: []string{"drknn"}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	plain, aug := run(), run("train.augment.shift=2", "train.augment.flip=true")
	if len(plain.History) != 3 || len(aug.History) != 3 {
		t.Fatalf("steps: %d and %d", len(plain.History), len(aug.History))
	}
	for s := range plain.History {
		if plain.History[s].Risk == aug.History[s].Risk {
			t.Errorf("step %d: risk %v with and without augmentation", s+1, plain.History[s].Risk)
		}
	}
	if _, ok := aug.Accuracy["drknn"]; !ok {
		t.Fatalf("no drknn accuracy: %v", aug.Accuracy)
	}
	// Models on feature rows are refused, naming the key and the model.
	for _, kind := range []string{"mlp", "identity"} {
		cfg := synthConfig(t, "model.kind="+kind, "train.steps=1")
		cfg.Train.Augment.Shift = 1 // past the config's own check
		d, err := LoadData(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = ForData(cfg, d)
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "key train.augment") || !strings.Contains(err.Error(), "model.kind is "+kind) {
			t.Errorf("%s with augmentation: %v", kind, err)
		}
	}
}

// TestRegionsRefusesTransferConfig: regions -config draws one episode of
// the episodes protocol; a transfer config (the shipped mnist-transfer,
// Conv-4 with augmentation) is refused for that reason, as a config error
// naming the protocol, before any data is read.
func TestRegionsRefusesTransferConfig(t *testing.T) {
	t.Setenv("DRKNN_DATA", t.TempDir()) // no data: the refusal comes first
	_, err := Figure(t.Context(), FigureRequest{Kind: "regions", Config: "mnist-transfer", Out: filepath.Join(t.TempDir(), "r.png")})
	if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "key protocol = transfer") || strings.Contains(err.Error(), "augment") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("regions -config mnist-transfer: %v", err)
	}
}

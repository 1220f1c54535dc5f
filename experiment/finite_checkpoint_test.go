package experiment

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// A float32 training at train.lr 1e300 takes its weights to ±Inf in the
// first update; the step succeeds (its gradient was finite). With
// train.checkpoint_every 1 its checkpoint used to be written with those
// weights: the run failed at step 2 and -resume met "malformed weights
// file … -Inf". The checkpoint is refused as the divergence of step 1,
// in the words of any diverged training, no checkpoint is left, and a
// -resume trains again and says the same.
func TestDivergedStepWritesNoCheckpoint(t *testing.T) {
	cfg, err := LoadConfig("../configs/mnist.yaml", append(QuickSets(), "model.dtype=float32", "eval.methods=[drknn]",
		"train.lr=1e300", "train.checkpoint_every=1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want := "training diverged at step 1 of 5: non-finite weights (the update took \"model.conv.weight\" "
	hint := "past the float range); lower train.lr (now 1e+300) or check the data for NaN/Inf"
	for _, resume := range []bool{false, true} {
		var lines []string
		_, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: resume, Observer: func(e Event) {
			if m, ok := e.(Message); ok {
				lines = append(lines, m.Text)
			}
		}})
		log := strings.Join(lines, "\n")
		if err == nil {
			t.Fatalf("resume %v: a training at lr 1e300 did not fail", resume)
		}
		if !strings.Contains(log, "repeat 1 failed: "+want) || !strings.Contains(log, hint) || strings.Contains(log, "malformed") {
			t.Errorf("resume %v: the log does not say %q:\n%s", resume, want, log)
		}
		if cks := checkpoints(t, dir); len(cks) != 0 {
			t.Fatalf("resume %v: checkpoints %v written", resume, cks)
		}
	}
}

// checkpoints lists the checkpoint.bin files under dir.
func checkpoints(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.Name() == "checkpoint.bin" {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The transfer protocol's embedding training (whose checkpoint the
// transfer table's later cells share) refuses its checkpoint alike.
func TestTransferDivergedStepWritesNoCheckpoint(t *testing.T) {
	want := "training diverged at step 1 of 3: non-finite weights (the update took \"model.block1.conv.weight\" past the float range); lower train.lr (now 1e+300) or check the data for NaN/Inf"
	// transfer.validate_every 1: the validation of step 1, before its
	// checkpoint, used to fail on the NaN embeddings ("validation at
	// step 1: LFD on the support set: optlayer: invalid input: …")
	for _, validate := range []string{"0", "1"} {
		cfg, err := LoadConfig("../configs/mnist-transfer.yaml", append(TransferQuickSets(), "repeats=1",
			"train.lr=1e300", "train.checkpoint_every=1", "transfer.validate_every="+validate))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, resume := range []bool{false, true} {
			_, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: resume})
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "malformed") {
				t.Errorf("validate_every %s, resume %v: %v, want %q", validate, resume, err, want)
			}
			if cks := checkpoints(t, dir); len(cks) != 0 {
				t.Fatalf("validate_every %s, resume %v: checkpoints %v written", validate, resume, cks)
			}
		}
	}
}

package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/fixtures"
	"github.com/drknn/drknn/train"
)

// checkResumeRefusal: err is the one-line config error of a resume under
// other settings, naming want (the key that changed with its two values)
// and not the long checkpoint keys (Go struct dumps of hundreds of
// characters).
func checkResumeRefusal(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !errors.Is(err, ErrConfig) || !errors.Is(err, train.ErrCheckpointMismatch) ||
		!strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "want \"") ||
		len(err.Error()) > 400 || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: got %v; want one short ErrConfig line naming %q", what, err, want)
	}
	if testing.Verbose() {
		t.Log(err)
	}
}

// TestEpisodesResumeOtherSettingsNamesKey: resuming an episodes run made
// with another train.lr is refused naming train.lr and its two values, from
// the settings.json written beside each repeat's checkpoint; a checkpoint
// without one (written before it existed) is still refused, in one line.
func TestEpisodesResumeOtherSettingsNamesKey(t *testing.T) {
	dir := t.TempDir()
	sets := []string{"train.steps=2", "train.checkpoint_every=1", "repeats=1", "queries=20", "eval.methods=[drknn]"}
	if _, err := Run(t.Context(), synthConfig(t, sets...), Options{OutDir: dir, KeepCheckpoints: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), synthConfig(t, append(sets, "train.lr=0.02")...), Options{OutDir: dir, Resume: true})
	checkResumeRefusal(t, "episodes resume with another train.lr", err, "train.lr 0.01 there, 0.02 now")
	// An older checkpoint, without settings.json: still refused.
	if err := os.Remove(filepath.Join(dir, "repeats", "01", "settings.json")); err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), synthConfig(t, append(sets, "train.lr=0.02")...), Options{OutDir: dir, Resume: true})
	checkResumeRefusal(t, "episodes resume of a checkpoint without settings.json", err, "settings.json is missing")
	// The same settings resume it (and write settings.json again).
	if _, err := Run(t.Context(), synthConfig(t, sets...), Options{OutDir: dir, Resume: true, KeepCheckpoints: true}); err != nil {
		t.Fatalf("resume with the same settings: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "repeats", "01", "settings.json")); err != nil {
		t.Fatalf("a resumed run's checkpoint has no settings.json: %v", err)
	}
}

// TestFitResumeOtherSettingsNamesKey: the same for protocol fit, whose
// checkpoint is the run folder's checkpoint.bin.
func TestFitResumeOtherSettingsNamesKey(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	if _, _, err := fixtures.ImageFolder(data, 8, 5, 4); err != nil {
		t.Fatal(err)
	}
	sets := []string{"train.steps=2", "train.checkpoint_every=1", "eval.methods=[drknn]"}
	if _, err := Run(t.Context(), fitConfig(t, "imagefolder", data, sets...), Options{OutDir: dir, KeepCheckpoints: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), fitConfig(t, "imagefolder", data, append(sets, "model.dim=8")...), Options{OutDir: dir, Resume: true})
	checkResumeRefusal(t, "fit resume with another model.dim", err, "model.dim 16 there, 8 now")
	// A finished run removes its checkpoint, and the settings.json beside
	// it, from the run folder.
	dir = t.TempDir()
	if _, err := Run(t.Context(), fitConfig(t, "imagefolder", data, sets...), Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"checkpoint.bin", "settings.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a finished fit run left %s", name)
		}
	}
}

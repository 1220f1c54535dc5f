package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run that fails outside its repeats (here: its results.json cannot be
// written, a folder being in the way) says why in its log (train.log), in
// one line before it is closed, for every protocol. Before, train.log
// ended without a word and only the terminal had the error.
func TestRunFailureLogged(t *testing.T) {
	csv := fixtureCSV(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"episodes", synthConfig(t, "repeats=1", "train.steps=2", "queries=10", "eval.methods=[drknn]")},
		{"fit", fitConfig(t, "csv", csv, "data.label=kind", "data.missing=mean", "train.cv_folds=2", "train.steps=2")},
		{"transfer", transferConfig(t, "repeats=2", "train.steps=2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "results.json", "in-the-way"), 0o755); err != nil {
				t.Fatal(err)
			}
			var lines []string
			finished := -1
			_, err := Run(t.Context(), tc.cfg, Options{OutDir: dir, Observer: func(e Event) {
				switch e := e.(type) {
				case Message:
					lines = append(lines, e.Text)
				case Finished:
					finished = len(lines)
				}
			}})
			if err != nil {
				t.Logf("run failed as it should: %v", err)
			} else {
				t.Fatal("the run wrote its results.json over a folder")
			}
			want := "failed: " + OneLine(err)
			if finished < 1 || lines[finished-1] != want {
				t.Fatalf("the log's last line before Finished is not %q:\n%s", want, strings.Join(lines, "\n"))
			}
			if strings.Contains(strings.Join(lines, "\n"), "interrupted") {
				t.Fatalf("a failed run logged an interruption:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

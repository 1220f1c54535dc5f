package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/oneline"
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
			want := "failed: " + oneline.Err(err)
			if finished < 1 || lines[finished-1] != want {
				t.Fatalf("the log's last line before Finished is not %q:\n%s", want, strings.Join(lines, "\n"))
			}
			if strings.Contains(strings.Join(lines, "\n"), "interrupted") {
				t.Fatalf("a failed run logged an interruption:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

var errLuck = errors.New("out of luck")

// A run whose every repeat fails logs each repeat's cause once, in that
// repeat's line; the run's own last line says the run failed, all N
// repeats, without repeating a cause (it used to repeat repeat 1's line
// word for word: "failed: repeat 1: …"). The run's error — the terminal's
// line — names each cause once, repeats that failed alike together.
func TestAllRepeatsFailedLoggedOnce(t *testing.T) {
	causes := map[int]string{0: "disk on fire", 1: "disk on fire", 2: "out of luck"}
	failHook = func(r int, m string) error {
		if m == "" {
			if causes[r] == errLuck.Error() {
				return errLuck
			}
			return errors.New(causes[r])
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	for _, tc := range []struct {
		repeats  int
		last     string
		terminal string
	}{
		{3, "failed: the run failed (all 3 repeats failed; each repeat's cause is logged above)",
			"all 3 repeats failed: repeats 1, 2: disk on fire; repeat 3: out of luck"},
		{1, "failed: the run failed (its one repeat failed; the cause is logged above)", "repeat 1: disk on fire"},
	} {
		var lines []string
		finished := -1
		_, err := Run(t.Context(), synthConfig(t, fmt.Sprintf("repeats=%d", tc.repeats), "train.steps=1"), Options{OutDir: t.TempDir(),
			Observer: func(e Event) {
				switch e := e.(type) {
				case Message:
					lines = append(lines, e.Text)
				case Finished:
					finished = len(lines)
				}
			}})
		if err == nil {
			t.Fatal("a run whose every repeat failed did not fail")
		}
		log := strings.Join(lines, "\n")
		if finished < 1 || lines[finished-1] != tc.last {
			t.Errorf("%d repeats: the log's last line is not %q:\n%s", tc.repeats, tc.last, log)
		}
		for r := 0; r < tc.repeats; r++ {
			line := fmt.Sprintf("repeat %d failed: %s", r+1, causes[r])
			if n := strings.Count(log, line); n != 1 {
				t.Errorf("%d repeats: %q is logged %d times:\n%s", tc.repeats, line, n, log)
			}
		}
		for _, c := range []string{"disk on fire", "out of luck"} {
			want := 0
			for r := 0; r < tc.repeats; r++ {
				if causes[r] == c {
					want++
				}
			}
			if n := strings.Count(log, c); n != want {
				t.Errorf("%d repeats: %q is logged %d times, want %d (once in each repeat's line):\n%s", tc.repeats, c, n, want, log)
			}
		}
		if got := oneline.Err(err); got != tc.terminal {
			t.Errorf("%d repeats: the run's error is %q, want %q", tc.repeats, got, tc.terminal)
		}
		if tc.repeats == 3 && !errors.Is(err, errLuck) {
			t.Errorf("%d repeats: the run's error does not wrap the repeats' (errors.Is)", tc.repeats)
		}
	}
}

package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestFitFoldsAsConfigured: train.cv_folds 0 is leave-one-out in protocol
// fit as in every protocol (the key table, the validation message "want 0
// (leave-one-out) or ≥ 2", ChooseTheta) — it was replaced by 5 folds and
// results.json recorded cv_folds 5 —, and a k above the smallest class's
// count is capped visibly: results.json records the folds used and a
// folds_note, and the log a warning (the cap was silent).
func TestFitFoldsAsConfigured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	var b strings.Builder
	b.WriteString("x,y,label\n")
	for c, n := range map[string]int{"a": 3, "b": 4, "c": 4} {
		for i := range n {
			off := map[string]float64{"a": 0, "b": 5, "c": 10}[c]
			fmt.Fprintf(&b, "%g,%g,%s\n", off+0.1*float64(i), off-0.2*float64(i), c)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		folds, want int
		capped      bool
	}{{0, 11, false}, {2, 2, false}, {5, 3, true}} {
		t.Run(fmt.Sprint("cv_folds=", c.folds), func(t *testing.T) {
			out := t.TempDir()
			var mu sync.Mutex
			var log []string
			obs := func(e Event) {
				if m, ok := e.(Message); ok {
					mu.Lock()
					log = append(log, m.Text)
					mu.Unlock()
				}
			}
			cfg := fitConfig(t, "csv", path, fmt.Sprint("train.cv_folds=", c.folds), "train.steps=2", "eval.k=1", "workers=2")
			if _, err := Run(t.Context(), cfg, Options{OutDir: out, Observer: obs}); err != nil {
				t.Fatal(err)
			}
			var res struct {
				Config struct {
					Train struct {
						CVFolds int `json:"cv_folds"`
					} `json:"train"`
				} `json:"config"`
				Fit struct {
					Evaluation   string               `json:"evaluation"`
					Folds        int                  `json:"folds"`
					FoldsNote    string               `json:"folds_note"`
					FoldAccuracy map[string][]float64 `json:"fold_accuracy"`
				} `json:"fit"`
			}
			data, err := os.ReadFile(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			f := res.Fit
			if res.Config.Train.CVFolds != c.folds || f.Evaluation != "cv" || f.Folds != c.want || len(f.FoldAccuracy["drknn"]) != c.want {
				t.Fatalf("results.json: cv_folds %d, fit %+v; want cv_folds %d and %d folds", res.Config.Train.CVFolds, f, c.folds, c.want)
			}
			all := strings.Join(log, "\n")
			warned := strings.Contains(all, "warning: train.cv_folds = 5 capped at 3 folds: class \"a\" has 3 training samples")
			if capped := f.FoldsNote != ""; capped != c.capped || warned != c.capped || (c.capped && !strings.Contains(f.FoldsNote, "capped at 3")) {
				t.Fatalf("folds_note %q, log:\n%s", f.FoldsNote, all)
			}
			if c.folds == 0 && !strings.Contains(all, "leave-one-out cross-validation (train.cv_folds = 0: 11 folds)") {
				t.Fatalf("log:\n%s", all)
			}
		})
	}
}

// TestFitInterruptedLeavesNoEmptyExport: a fit stopped before its export
// is written (here: cancelled at once) leaves no empty RUN/export behind.
func TestFitInterruptedLeavesNoEmptyExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("x,label\n1,a\n2,a\n5,b\n6,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Run(ctx, fitConfig(t, "csv", path, "train.cv_folds=2", "eval.k=1"), Options{OutDir: out}); err == nil {
		t.Fatal("a cancelled fit succeeded")
	}
	if _, err := os.Stat(filepath.Join(out, "export")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("export/ after an interrupted fit: %v", err)
	}
}

// A protocol fit config that leaves train.cv_folds out gets DefaultFitFolds
// (5) — not leave-one-out, which trains one network per training sample —
// while an explicit 0, in the file or by -set, stays 0 (leave-one-out); an
// episodes config without the key keeps 0 (leave-one-out over its few
// training samples).
func TestFitFoldsDefaultOnlyWhenAbsent(t *testing.T) {
	fit := "protocol: fit\ndataset: csv\ndata_dir: t.csv\n"
	for _, c := range []struct {
		src  string
		sets []string
		want int
	}{
		{fit, nil, DefaultFitFolds},
		{fit + "train:\n  steps: 3\n", nil, DefaultFitFolds},
		{fit + "train:\n  cv_folds: 0\n", nil, 0},
		{fit, []string{"train.cv_folds=0"}, 0},
		{fit, []string{"train={cv_folds: 3}"}, 3},
		{"dataset: synthetic-gauss\n", nil, 0},
	} {
		cfg, err := ParseConfig("x.yaml", []byte(c.src), c.sets)
		if err != nil {
			t.Fatalf("%q %v: %v", c.src, c.sets, err)
		}
		if cfg.Train.CVFolds != c.want {
			t.Errorf("%q %v: cv_folds %d, want %d", c.src, c.sets, cfg.Train.CVFolds, c.want)
		}
	}
}

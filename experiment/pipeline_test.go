package experiment

import (
	"context"
	"errors"
	"github.com/drknn/drknn/internal/datadir"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
)

// TestFigureReproducesTrainAccuracy: Figure 5's Dr.k-NN panel is the
// pipeline's repeat, so its query accuracy in the plane is exactly the
// accuracy drknn-train reports for the same config at d = 2 — here with
// augmentation, channel standardisation and a cross-validated ϑ, the
// settings the old figure code ignored.
func TestFigureReproducesTrainAccuracy(t *testing.T) {
	cfg := synthConfig(t, "model.dim=2", "repeats=2", "train.steps=3", "queries=40", "model.channels=4",
		"train.augment.shift=1", "data.standardize=channel", "train.theta_grid=[0.05,0.5]", "train.cv_folds=2",
		"eval.methods=[drknn,embedding_knn]")
	res, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < cfg.Repeats; r++ {
		panels, rep, acc, err := PlaneRegions(t.Context(), cfg, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := res.Methods[eval.MethodDrKNN].PerRepeat[r]; acc[eval.MethodDrKNN] != want {
			t.Fatalf("repeat %d: Dr.k-NN in the figure's plane %v, drknn-train %v", r+1, acc[eval.MethodDrKNN], want)
		}
		if !reflect.DeepEqual(rep.Record.Theta, res.Episodes[r].Theta) || rep.Record.FinalRisk != res.Episodes[r].FinalRisk {
			t.Fatalf("repeat %d: figure trained ϑ %v risk %v, drknn-train ϑ %v risk %v", r+1,
				rep.Record.Theta, rep.Record.FinalRisk, res.Episodes[r].Theta, res.Episodes[r].FinalRisk)
		}
		if rep.Record.Standardize == nil || rep.Record.Standardize.Mode != "channel" || len(panels) != 4 {
			t.Fatalf("repeat %d: standardisation %+v, %d panels", r+1, rep.Record.Standardize, len(panels))
		}
		for _, m := range []string{eval.MethodPCAKNN, eval.MethodSVDKNN, eval.MethodNCAKNN} {
			if a, ok := acc[m]; !ok || !(a > 0) {
				t.Fatalf("repeat %d: %s accuracy %v", r+1, m, a)
			}
		}
	}
}

// TestCancelAfterTrainingIsInterrupted: Ctrl-C after the last training
// step, while a method that does not watch ctx is evaluated (every repeat
// then finishes without an error), still ends the run as interrupted — an
// error wrapping context.Canceled, no results.json — and never as a run
// with neither results nor error (drknn-train dereferenced the nil results;
// drknn-table reported the cell as skipped and exited 0).
func TestCancelAfterTrainingIsInterrupted(t *testing.T) {
	cfg := synthConfig(t, "repeats=2", "train.steps=3", "train.checkpoint_every=0", "queries=20", "eval.methods=[embedding_knn,metaoptnet_rr]", "eval.fewshot_steps=5")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	started := 0
	failHook = func(_ int, m string) error {
		mu.Lock()
		defer mu.Unlock()
		if m == "metaoptnet_rr" { // each repeat's last method, past its ctx check
			if started++; started == 2 {
				cancel() // Ctrl-C while both repeats evaluate it
			}
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	res, err := Run(ctx, cfg, Options{OutDir: dir})
	if res != nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled during the last evaluation: results %v, error %v", res != nil, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); !os.IsNotExist(err) {
		t.Fatalf("a cancelled run wrote results.json (%v)", err)
	}
}

// TestCancelKeepsCheckpointAndResumes: cancelling a run mid-training stops
// it after the current step with an error that wraps context.Canceled,
// writes no results.json, keeps a checkpoint of the steps done; -resume
// then completes it to exactly the results of an uninterrupted run.
func TestCancelKeepsCheckpointAndResumes(t *testing.T) {
	cfg := synthConfig(t, "repeats=1", "train.steps=8", "train.checkpoint_every=0", "queries=40", "eval.methods=[drknn,embedding_knn,pca_knn]")
	want, err := Run(t.Context(), cfg, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var steps atomic.Int32
	observe := func(e Event) {
		if _, ok := e.(StepDone); ok && steps.Add(1) == 3 {
			cancel() // Ctrl-C during step 4
		}
	}
	_, err = Run(ctx, cfg, Options{OutDir: dir, Observer: observe})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after step") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("cancelled run: error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); !os.IsNotExist(err) {
		t.Fatalf("a cancelled run wrote results.json (%v)", err)
	}
	ck := filepath.Join(dir, "repeats", "01", "checkpoint.bin")
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("no checkpoint after the cancelled run: %v", err)
	}
	if n := steps.Load(); n < 3 || n >= int32(cfg.Train.Steps) {
		t.Fatalf("%d steps before stopping", n)
	}

	// Resuming with other data settings (the checkpoint key holds them and
	// a digest of the training samples) is refused, the checkpoint kept.
	// The refusal names the key that changed (settings.json).
	for key, change := range map[string]func(*Config){
		`data.standardize "" there, sample now`: func(c *Config) { c.Data.Standardize = "sample" },
		"data.synthetic 0 there, 7 now":         func(c *Config) { c.Data.Synthetic = 7 },
	} {
		other := cfg
		change(&other)
		if _, err := Run(t.Context(), other, Options{OutDir: dir, Resume: true}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "belongs to another run") ||
			!strings.Contains(err.Error(), key) {
			t.Fatalf("resume with other data settings: %v; want it to name %s", err, key)
		}
	}

	steps.Store(0)
	cfg.Train.CheckpointEvery = 2 // when checkpoints are written is not part of the key
	got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: observe})
	if err != nil {
		t.Fatal(err)
	}
	if n := steps.Load(); n == 0 || n >= int32(cfg.Train.Steps) {
		t.Fatalf("resume took %d steps: it did not continue from the checkpoint", n)
	}
	same := len(got.Methods) == len(want.Methods)
	for m, w := range want.Methods {
		same = same && reflect.DeepEqual(got.Methods[m].PerRepeat, w.PerRepeat)
	}
	if !same || got.Episodes[0].FinalRisk != want.Episodes[0].FinalRisk {
		t.Fatalf("resumed run %+v (risk %v), uninterrupted %+v (risk %v)", got.Methods, got.Episodes[0].FinalRisk, want.Methods, want.Episodes[0].FinalRisk)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
}

// TestEventsCoverTheWork: the Started event announces the work that the
// StepDone and UnitDone events then report, whatever the worker count.
func TestEventsCoverTheWork(t *testing.T) {
	cfg := synthConfig(t, "repeats=3", "workers=2", "train.steps=2", "queries=20", "eval.methods=[drknn,kernel_smoothing]")
	var start Started
	steps, units, finished := 0, map[string]int{}, 0
	_, err := Run(t.Context(), cfg, Options{Observer: func(e Event) {
		switch e := e.(type) {
		case Started:
			start = e
		case StepDone:
			steps++
		case UnitDone:
			units[e.Method]++
		case Finished:
			finished++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if start.Repeats != 3 || start.Steps != 2 || len(start.Methods) != 2 || finished != 1 {
		t.Fatalf("started %+v, finished %d", start, finished)
	}
	if steps != start.Repeats*start.Steps || units["drknn"] != 3 || units["kernel_smoothing"] != 3 {
		t.Fatalf("%d steps and units %v for the announced %d×%d steps, %v", steps, units, start.Repeats, start.Steps, start.Methods)
	}
}

// TestTableSkipsAbsentFailsCorrupt: the table runner skips a data set that
// is not there (datasets.ErrNotFound) with the reason, and fails on one
// that is there but unreadable, with the reader's message.
// TestTableCellSizesAndMethods: -set of what a cell fixes (data set, ways,
// shots) is refused before any work — it used to win over the cell's own
// values while the table still labelled the cell with the paper's size —
// and a cell whose eval.methods leave out drknn shows "not evaluated", not
// an accuracy of 0.000.
func TestTableCellSizesAndMethods(t *testing.T) {
	for _, set := range []string{"ways=2", " shots =3", "dataset=mnist"} {
		out := filepath.Join(t.TempDir(), "t")
		_, err := RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer"}, Quick: true, Sets: []string{set}})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "every cell fixes its own") {
			t.Errorf("-set %s: %v", set, err)
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("-set %s: the refused table made its folder (%v)", set, serr)
		}
		if _, err := RunTransferTable(t.Context(), TableOptions{OutDir: out, Quick: true, Sets: []string{set}}); !errors.Is(err, ErrConfig) {
			t.Errorf("transfer table -set %s: %v", set, err)
		}
	}
	data, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer"}, Quick: true,
		Sets: []string{"data_dir=" + data, "repeats=1", "queries=10", "eval.methods=[embedding_knn]"}})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(md), "| lung-cancer-3w5s | not evaluated | 0.667 |") || strings.Contains(string(md), "| lung-cancer-3w5s | 0.000") {
		t.Fatalf("table.md: %v\n%s", err, md)
	}
	// Run again over it (what -force allows): a cell's folder holds only
	// the new run — here 1 repeat where the earlier file says otherwise.
	stale := filepath.Join(out, "cells", "lung-cancer-3w5s", "repeats", "07")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer-3w5s"}, Quick: true,
		Sets: []string{"data_dir=" + data, "repeats=1", "queries=10", "eval.methods=[embedding_knn]"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a cell run again kept the earlier run's %s (%v)", stale, err)
	}
}

func TestTableSkipsAbsentFailsCorrupt(t *testing.T) {
	configs, data := t.TempDir(), t.TempDir()
	src := "dataset: lung-cancer\nways: 3\ndata_dir: " + data + "\nmodel: {kind: mlp, hidden: 4, dim: 4}\ntrain: {steps: 1}\n"
	if err := os.WriteFile(filepath.Join(configs, "lung-cancer.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cells, err := RunTable(t.Context(), TableOptions{OutDir: out, ConfigDir: configs, Only: []string{"lung-cancer"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].Results != nil || !strings.Contains(cells[0].Skipped, "data not available") {
		t.Fatalf("cells %+v", cells)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(md), "Cells not run") || !strings.Contains(string(md), "lung-cancer-3w5s") {
		t.Fatalf("table.md: %v\n%s", err, md)
	}

	if err := os.WriteFile(filepath.Join(data, "lung-cancer.data"), []byte("1,0,3\nnot,a,row\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = RunTable(t.Context(), TableOptions{OutDir: t.TempDir(), ConfigDir: configs, Only: []string{"lung-cancer"}})
	if err == nil || !errors.Is(err, datasets.ErrCorrupt) || !strings.Contains(err.Error(), "lung-cancer.data") {
		t.Fatalf("corrupt data set: error %v, want the reader's message", err)
	}
}

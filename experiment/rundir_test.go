package experiment

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/model"
)

// TestFailuresRecorded: a method failing on one repeat and a repeat failing
// as a whole are recorded in results.json (their errors, no accuracy) while
// every other method and repeat completes.
func TestFailuresRecorded(t *testing.T) {
	failHook = func(r int, m string) error {
		switch {
		case r == 1 && m == "embedding_knn":
			return errors.New("singular\nmatrix")
		case r == 2 && m == "":
			return errors.New("repeat broke")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	dir := t.TempDir()
	cfg := synthConfig(t, "repeats=3", "train.steps=2", "train.checkpoint_every=2", "queries=20", "eval.methods=[drknn,embedding_knn]")
	res, err := Run(t.Context(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"repeat 2: embedding_knn: singular; matrix", "repeat 3: repeat broke"}
	if !slices.Equal(res.Errors, want) {
		t.Fatalf("errors %q, want %q", res.Errors, want)
	}
	var onDisk Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &onDisk); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Results{res, &onDisk} {
		dr, ek := r.Methods["drknn"], r.Methods["embedding_knn"]
		if len(dr.PerRepeat) != 3 || math.IsNaN(dr.PerRepeat[0]) || math.IsNaN(dr.PerRepeat[1]) || !math.IsNaN(dr.PerRepeat[2]) ||
			!slices.Equal(dr.Failed, []int{3}) || dr.Error != "repeat 3: repeat broke" || dr.Mean != (dr.PerRepeat[0]+dr.PerRepeat[1])/2 {
			t.Fatalf("drknn: %+v", dr)
		}
		if len(ek.Completed()) != 1 || !slices.Equal(ek.Failed, []int{2, 3}) || !strings.HasPrefix(ek.Error, "repeat 2: singular") || !math.IsNaN(ek.CI95) {
			t.Fatalf("embedding_knn: %+v", ek)
		}
		if ep := r.Episodes; len(ep) != 3 || ep[2].Error != "repeat broke" || ep[1].MethodErrors["embedding_knn"] == "" || ep[0].Error != "" {
			t.Fatalf("episodes: %+v", ep)
		}
	}
	if !strings.Contains(string(b), `"per_repeat": [`) || !strings.Contains(string(b), "null") {
		t.Fatalf("results.json has no null for the failed repeats:\n%s", b)
	}
	// The failed repeat keeps its folder's state; finished ones lose their
	// checkpoint (the export holds the weights).
	if _, err := os.Stat(filepath.Join(dir, "repeats", "01", "checkpoint.bin")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("finished repeat kept its checkpoint: %v", err)
	}

	// The table's readers cope: a method with an error and fewer values.
	tab := t.TempDir()
	cell := CellOutcome{Column: eval.Column{Dataset: "mnist", M: 2, K: 5}, Name: "mnist-2w5s", Results: &onDisk}
	if err := writeTable(TableOptions{OutDir: tab}, []CellOutcome{cell}, 0); err != nil {
		t.Fatalf("table of a run with failures: %v", err)
	}
	tm, _ := os.ReadFile(filepath.Join(tab, "table.md"))
	if !strings.Contains(string(tm), "| embedding_knn | 0.") || !strings.Contains(string(tm), " [1 of 3 repeats] (") ||
		!strings.Contains(string(tm), " [2 of 3 repeats] (") || !strings.Contains(string(tm), "| 2 of 3 |") {
		t.Fatalf("table.md does not mark the means over fewer repeats:\n%s", tm)
	}
	tc, _ := os.ReadFile(filepath.Join(tab, "table.csv"))
	if !strings.Contains(string(tc), "failed on 2 of 3 repeats: repeat 2: singular; matrix") {
		t.Fatalf("table.csv does not show the failure:\n%s", tc)
	}
	if p, ok, err := PairedDiff(&onDisk, "drknn", "embedding_knn"); err != nil || !ok || p.Wins+p.Ties+p.Losses != 1 {
		t.Fatalf("paired difference over the one repeat both completed: %+v %v %v", p, ok, err)
	}

	// A method that fails on every repeat has no accuracy (null).
	failHook = func(r int, m string) error {
		if m == "embedding_knn" {
			return errors.New("always")
		}
		return nil
	}
	res, err = Run(t.Context(), synthConfig(t, "repeats=2", "train.steps=1", "queries=20", "eval.methods=[drknn,embedding_knn]"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ek := res.Methods["embedding_knn"]; !math.IsNaN(ek.Mean) || ek.LogLoss != nil || len(ek.Failed) != 2 {
		t.Fatalf("embedding_knn failed everywhere: %+v", ek)
	}
	b, err = json.Marshal(res.Methods["embedding_knn"])
	if err != nil || !strings.Contains(string(b), `"mean":null`) {
		t.Fatalf("%s %v", b, err)
	}
	// Every repeat failing is the run's failure: nothing to record. Its
	// error gives the cause once for the repeats that failed alike.
	failHook = func(r int, m string) error {
		if m == "" {
			return errors.New("no luck")
		}
		return nil
	}
	if _, err := Run(t.Context(), synthConfig(t, "repeats=2", "train.steps=1"), Options{OutDir: t.TempDir()}); err == nil || err.Error() != "all 2 repeats failed: repeats 1, 2: no luck" {
		t.Fatalf("all repeats failed: %v", err)
	}
}

// TestRunFolder: a run's files are complete (renamed into place) with mode
// 0644, finished checkpoints are deleted unless KeepCheckpoints, stale
// temporaries are removed on start, and PrepareRunDir refuses a folder in
// use unless resume or force.
func TestRunFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	stale := []string{filepath.Join(dir, ".results.json.tmp-123"), filepath.Join(dir, "repeats", "01", ".checkpoint.bin.tmp-9"),
		filepath.Join(dir, "repeats", "01", "export", ".model.bin.tmp77")}
	for _, p := range stale {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(dir, "notes.tmp") // not a temporary of ours
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Nor are these: a dot file of another kind, and one in a folder that
	// is not a run folder.
	for _, p := range []string{filepath.Join(dir, ".vimrc.tmp"), filepath.Join(dir, "mine", ".results.json.tmp-1")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s removed: %v", p, err)
			}
		})
	}
	cfg := synthConfig(t, "repeats=1", "train.steps=2", "train.checkpoint_every=1", "queries=20", "eval.methods=[drknn]")
	if _, err := Run(t.Context(), cfg, Options{OutDir: dir, KeepCheckpoints: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale temporary %s survived the start", p)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file that is not a temporary was removed: %v", err)
	}
	files := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		files++
		if isTemp(e.Name()) && filepath.Base(filepath.Dir(p)) != "mine" {
			t.Errorf("temporary left: %s", p)
		}
		if info, err := e.Info(); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", p, info.Mode().Perm())
		}
		return nil
	})
	if files < 8 {
		t.Fatalf("only %d files in the run folder", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "repeats", "01", "checkpoint.bin")); err != nil {
		t.Fatalf("KeepCheckpoints: %v", err)
	}

	// The folder now holds a finished run.
	for _, c := range []struct {
		resume, force bool
		want          string
	}{
		{false, false, "is not empty"},
		{true, false, "already holds a finished run"},
	} {
		err := PrepareRunDir(dir, c.resume, c.force)
		if !errors.Is(err, ErrRunDirInUse) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("resume %v force %v: %v", c.resume, c.force, err)
		}
	}
	if err := PrepareRunDir(dir, false, true); err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{".vimrc.tmp", "mine", "notes.tmp"}) {
		t.Fatalf("-force left %v (want only the unrelated files)", left)
	}
	for _, d := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		if err := PrepareRunDir(d, false, false); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	// An unfinished run (no results.json) may be resumed.
	part := t.TempDir()
	os.MkdirAll(filepath.Join(part, "repeats", "01"), 0o755)
	if err := PrepareRunDir(part, true, false); err != nil {
		t.Fatal(err)
	}
	if err := PrepareRunDir(part, false, false); !errors.Is(err, ErrRunDirInUse) {
		t.Fatalf("unfinished run without -resume: %v", err)
	}
}

// TestAutoCheckpointPeriod: train.checkpoint_every 0 checkpoints when the
// training since the last one took 50 times a checkpoint's write time
// (≤ 2% of the training time); the first write time is estimated from the
// network's size.
func TestAutoCheckpointPeriod(t *testing.T) {
	if AutoCheckpointDue(49*time.Second, time.Second) || !AutoCheckpointDue(50*time.Second, time.Second) {
		t.Fatal("due at 50 × the write time, not before")
	}
	cfg := synthConfig(t)
	small, err := model.New(cfg.NetConfig([]int{1, 16, 16}), 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model.Dim = 4000
	big, err := model.New(cfg.NetConfig([]int{1, 16, 16}), 1)
	if err != nil {
		t.Fatal(err)
	}
	a, b := checkpointCostEstimate(small), checkpointCostEstimate(big)
	if !(a >= 20*time.Millisecond && b > a) {
		t.Fatalf("estimates %v (%d params) and %v (%d params)", a, small.NumParams(), b, big.NumParams())
	}
}

// TestCheckRunDirData: a run folder that is the data folder, holds the data
// in one of the outputs -force removes (a split image folder's train/), or
// lies inside the data folder is refused; neighbours and parents of the data
// are fine.
func TestCheckRunDirData(t *testing.T) {
	root := t.TempDir()
	photos := filepath.Join(root, "photos")
	for _, d := range []string{filepath.Join(photos, "train", "cat"), filepath.Join(photos, "test", "cat")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	csv := filepath.Join(root, "table.csv")
	if err := os.WriteFile(csv, []byte("a,y\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out, data string
		refused   bool
	}{
		{photos, photos, true},                                   // -force would remove photos/train
		{photos, filepath.Join(photos, "train"), true},           // the data is a run output's folder
		{root, filepath.Join(root, "train", "x.csv"), true},      // likewise, below it
		{filepath.Join(photos, "runs"), photos, true},            // the run would become a class folder
		{filepath.Join(root, "runs"), photos, false},             // beside the data
		{root, photos, false},                                    // a parent, the data not in an output
		{root, csv, false},                                       // a CSV file beside the run's outputs
		{filepath.Join(root, "runs"), "", false},                 // the data root: not checked
		{filepath.Join(root, "photos2"), photos, false},          // a name sharing a prefix
		{filepath.Join(photos, "..", "runs"), photos, false},     // outside, through ..
		{filepath.Join(photos, "test", "..", "x"), photos, true}, // inside, through ..
	} {
		err := CheckRunDirData(c.out, c.data)
		if got := err != nil; got != c.refused || (err != nil && (!errors.Is(err, ErrRunDirInUse) || strings.Contains(err.Error(), "\n"))) {
			t.Errorf("-out %s, data_dir %s: %v, want refused %v", c.out, c.data, err, c.refused)
		}
	}
}

// TestCheckRunDirDataLinks: the check compares resolved paths, so a
// symbolic link to the data folder (as -out or as data_dir), or a link to a
// folder above it, does not get past it — -force would otherwise remove the
// data's train/ through the link, and a run would write its outputs into
// an .npy data folder.
func TestCheckRunDirDataLinks(t *testing.T) {
	root := t.TempDir()
	photos := filepath.Join(root, "photos") // a split image folder
	npys := filepath.Join(root, "npys")     // an .npy data folder
	for _, d := range []string{filepath.Join(photos, "train", "cat"), filepath.Join(photos, "test", "cat"), npys} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name, target string) string {
		p := filepath.Join(root, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	photosLink := link("photoslink", "photos") // relative, as `ln -s photos photoslink`
	npysLink := link("npyslink", npys)
	rootLink := link("rootlink", root)
	for _, c := range []struct {
		out, data string
		refused   bool
	}{
		{photosLink, photos, true},                                      // -out a link to the data folder
		{photos, photosLink, true},                                      // data_dir a link to -out
		{npysLink, npys, true},                                          // outputs into the data folder
		{npys, npysLink, true},                                          // likewise, the other way
		{filepath.Join(photosLink, "runs"), photos, true},               // inside the data, through a link
		{filepath.Join(photosLink, "runs", "new"), photos, true},        // likewise, not there yet
		{filepath.Join(rootLink, "photos", "train", "x"), photos, true}, // through a link above
		{filepath.Join(rootLink, "runs"), photosLink, false},            // beside the data
		{filepath.Join(root, "runs"), npysLink, false},
	} {
		err := CheckRunDirData(c.out, c.data)
		if got := err != nil; got != c.refused || (err != nil && (!errors.Is(err, ErrRunDirInUse) || strings.Contains(err.Error(), "\n"))) {
			t.Errorf("-out %s, data_dir %s: %v, want refused %v", c.out, c.data, err, c.refused)
		}
	}
}

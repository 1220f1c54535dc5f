package experiment

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/npy"
)

func synthConfig(t *testing.T, sets ...string) Config {
	t.Helper()
	cfg, err := LoadConfig("../configs/synthetic.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRunExportReproducesAccuracy runs the synthetic experiment, then
// recomputes the Dr.k-NN vote from the exported arrays alone and checks
// it gives exactly the accuracy in results.json.
func TestRunExportReproducesAccuracy(t *testing.T) {
	dir := t.TempDir()
	cfg := synthConfig(t)
	res, err := Run(t.Context(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	onDisk := readResults(t, dir)
	if len(onDisk.Episodes) != cfg.Repeats || onDisk.Methods["drknn"].Mean != res.Methods["drknn"].Mean {
		t.Fatalf("results.json disagrees with the run: %+v", onDisk.Methods["drknn"])
	}
	for r := 0; r < cfg.Repeats; r++ {
		ex := filepath.Join(dir, "repeats", []string{"01", "02"}[r], "export")
		et, n, d, err := npy.ReadMatrix(filepath.Join(ex, "train_embeddings.npy"), true)
		if err != nil {
			t.Fatal(err)
		}
		p, m, n2, err := npy.ReadMatrix(filepath.Join(ex, "lfd_weights.npy"), true)
		if err != nil || n2 != n || m != cfg.Ways {
			t.Fatalf("lfd_weights: %v (%d×%d)", err, m, n2)
		}
		eq, nq, _, err := npy.ReadMatrix(filepath.Join(ex, "query_embeddings.npy"), true)
		if err != nil {
			t.Fatal(err)
		}
		yt, _ := npy.ReadInt64(filepath.Join(ex, "train_labels.npy"))
		yq, _ := npy.ReadInt64(filepath.Join(ex, "query_labels.npy"))
		if len(yq) != nq || nq != len(onDisk.Episodes[r].QueryIndex) || n != len(onDisk.Episodes[r].TrainIndex) {
			t.Fatalf("export sizes disagree with the episode record")
		}
		c := &eval.DrKNN{K: cfg.Eval.K, P: p}
		acc, _, err := eval.Evaluate(c, et, n, d, ints(yt), cfg.Ways, eq, nq, ints(yq))
		if err != nil {
			t.Fatal(err)
		}
		if acc != onDisk.Methods["drknn"].PerRepeat[r] {
			t.Fatalf("repeat %d: Dr.k-NN on the exported arrays %v, results.json %v", r+1, acc, onDisk.Methods["drknn"].PerRepeat[r])
		}
		if _, err := os.Stat(filepath.Join(ex, "manifest.json")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunDeterministicAcrossWorkers(t *testing.T) {
	a, err := Run(t.Context(), synthConfig(t, "workers=1", "train.steps=5"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(t.Context(), synthConfig(t, "workers=2", "train.steps=5"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for m, ra := range a.Methods {
		rb := b.Methods[m]
		for i := range ra.PerRepeat {
			if ra.PerRepeat[i] != rb.PerRepeat[i] {
				t.Fatalf("%s repeat %d: %v with 1 worker, %v with 2", m, i+1, ra.PerRepeat[i], rb.PerRepeat[i])
			}
		}
	}
	for i := range a.Episodes {
		if a.Episodes[i].FinalRisk != b.Episodes[i].FinalRisk {
			t.Fatalf("episode %d final risk differs", i+1)
		}
	}
}

// TestTrainingBeatsUntrained: on synthetic images, the trained embedding's
// Dr.k-NN accuracy (mean of 4 repeats) beats the same untrained network.
func TestTrainingBeatsUntrained(t *testing.T) {
	sets := []string{"repeats=4", "data.synthetic=60", "queries=100", "eval.methods=[drknn]"}
	trained, err := Run(t.Context(), synthConfig(t, append(sets, "train.steps=40")...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A config refuses train.steps = 0 (except model.kind identity); the
	// untrained network is the same repeats with no step taken.
	ucfg := synthConfig(t, sets...)
	ucfg.Train.Steps = 0
	d, err := LoadData(ucfg)
	if err != nil {
		t.Fatal(err)
	}
	b := 0.0
	for r := range ucfg.Repeats {
		rep, err := RunRepeat(t.Context(), ucfg, d, r, RepeatOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b += rep.Accuracy["drknn"] / float64(ucfg.Repeats)
	}
	a := trained.Methods["drknn"].Mean
	t.Logf("Dr.k-NN accuracy: trained %.4f, untrained %.4f", a, b)
	if !(a > b) {
		t.Fatalf("trained %.4f does not beat untrained %.4f", a, b)
	}
}

// TestMNISTShort is the short real-data run: MNIST 2-way 5-shot, a few
// steps, one repeat.
func TestMNISTShort(t *testing.T) {
	cfg, err := LoadConfig("../configs/mnist.yaml", []string{"repeats=1", "train.steps=30", "queries=200"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), cfg, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ep := res.Episodes[0]
	if len(ep.TrainIndex) != 10 || len(ep.QueryIndex) != 200 || len(ep.Classes) != 2 {
		t.Fatalf("episode: %d train, %d queries, classes %v", len(ep.TrainIndex), len(ep.QueryIndex), ep.Classes)
	}
	if acc := res.Methods["drknn"].Mean; !(acc > 0.75) {
		t.Fatalf("MNIST 2-way 5-shot Dr.k-NN accuracy %.3f: no better than chance", acc)
	}
}

func ints(x []int64) []int {
	out := make([]int, len(x))
	for i, v := range x {
		out[i] = int(v)
	}
	return out
}

// TestResumeReproducesRun: a run continued with Resume from its checkpoints
// (here the final ones, kept by KeepCheckpoints, after results.json is
// lost) gives the same results as the uninterrupted run; a checkpoint of
// another config is refused (every repeat fails: the run fails).
func TestResumeReproducesRun(t *testing.T) {
	dir := t.TempDir()
	cfg := synthConfig(t, "train.steps=6", "train.checkpoint_every=3", "eval.methods=[drknn,embedding_knn]")
	a, err := Run(t.Context(), cfg, Options{OutDir: dir, KeepCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
	b, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, KeepCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Episodes {
		if a.Episodes[i].FinalRisk != b.Episodes[i].FinalRisk || a.Methods["drknn"].PerRepeat[i] != b.Methods["drknn"].PerRepeat[i] {
			t.Fatalf("repeat %d differs after resume: %+v vs %+v", i+1, a.Episodes[i], b.Episodes[i])
		}
	}
	other := synthConfig(t, "train.steps=6", "train.checkpoint_every=3", "train.lr=0.02", "eval.methods=[drknn]")
	if _, err := Run(t.Context(), other, Options{OutDir: dir, Resume: true}); err == nil {
		t.Fatal("resume accepted checkpoints written under another config")
	}
}

// readResults decodes dir/results.json.
func readResults(t *testing.T, dir string) Results {
	t.Helper()
	var r Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

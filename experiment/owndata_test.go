package experiment

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/fixtures"
)

// ownConfig is a small config for your own data at data_dir.
func ownConfig(t *testing.T, dataset, dir string, sets ...string) Config {
	t.Helper()
	src := "dataset: " + dataset + "\ndata_dir: " + dir + "\nways: 3\nshots: 4\nqueries: 100\nrepeats: 2\n" +
		"model: {channels: 4, hidden: 16, dim: 16}\ntrain: {steps: 15, minisets: 4, lr: 0.02}\neval: {k: 3, methods: [drknn, embedding_knn]}\n"
	return mustParseConfig(t, "own.yaml", src, sets...)
}

// TestEpisodesOnImageFolder: the episodes protocol pools train/ and test/
// of a split folder, chooses the CNN by itself and logs the files the reader
// skipped; accuracy is above chance (1/3).
func TestEpisodesOnImageFolder(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := fixtures.ImageFolder(dir, 6, 4, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "train", "hbar", ".DS_Store"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log []string
	res, err := Run(t.Context(), ownConfig(t, "imagefolder", dir), Options{Observer: func(e Event) {
		if m, ok := e.(Message); ok {
			log = append(log, m.Text)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Model.Kind != "cnn" {
		t.Fatalf("model.kind %q recorded, want cnn chosen for images", res.Config.Model.Kind)
	}
	if n := len(res.Episodes[0].TrainIndex) + len(res.Episodes[0].QueryIndex); n != 3*10 {
		t.Fatalf("episode uses %d samples, want all 30 of train/ and test/", n)
	}
	if acc := res.Methods["drknn"].Mean; acc < 0.6 {
		t.Fatalf("drknn accuracy %.3f on an easy image folder", acc)
	}
	joined := strings.Join(log, "\n")
	if !strings.Contains(joined, "imagefolder: skipped 1 hidden (files)") || !strings.Contains(joined, "model cnn") {
		t.Fatalf("log does not report the skipped file and the model:\n%s", joined)
	}
	// A corrupt image is an ErrCorrupt error naming the file.
	bad := filepath.Join(dir, "test", "vbar", "broken.png")
	if err := fixtures.Corrupt(bad); err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), ownConfig(t, "imagefolder", dir), Options{})
	if !errors.Is(err, datasets.ErrCorrupt) || !strings.Contains(err.Error(), "broken.png") {
		t.Fatalf("corrupt image: %v", err)
	}
}

// TestEpisodesOnCSVImputes: a CSV with text labels in a middle column and
// missing cells runs with data.missing: mean, each episode filled from its
// own training rows (recorded in results.json and the export), the MLP
// chosen by itself; without data.missing the run fails naming the cell.
func TestEpisodesOnCSVImputes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table.csv")
	if _, _, err := fixtures.CSV(path, 20, 2); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cfg := ownConfig(t, "csv", path, "data.label=kind", "data.missing=mean")
	res, err := Run(t.Context(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Model.Kind != "mlp" {
		t.Fatalf("model.kind %q recorded, want mlp chosen for feature rows", res.Config.Model.Kind)
	}
	if acc := res.Methods["drknn"].Mean; acc < 0.6 {
		t.Fatalf("drknn accuracy %.3f on separable classes", acc)
	}
	// The recorded fill is the mean of each column over the episode's
	// training rows only.
	d, err := LoadData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for r, ep := range res.Episodes {
		if ep.Impute == nil || ep.Impute.Mode != "mean" || len(ep.Impute.Values) != 4 {
			t.Fatalf("repeat %d: impute record %+v", r+1, ep.Impute)
		}
		for j := 0; j < 4; j++ {
			sum, n := 0.0, 0
			for _, i := range ep.TrainIndex {
				if v := d.Sample(i)[j]; v == v {
					sum += float64(v)
					n++
				}
			}
			if want := float64(float32(sum / float64(n))); ep.Impute.Values[j] != want {
				t.Fatalf("repeat %d column %d: fill %v, want the training mean %v", r+1, j, ep.Impute.Values[j], want)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "repeats", "01", "export", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Episode struct{ Impute struct{ Values []float64 } }
	}
	if err := json.Unmarshal(b, &man); err != nil || len(man.Episode.Impute.Values) != 4 {
		t.Fatalf("manifest impute: %v %+v", err, man)
	}
	_, err = Run(t.Context(), ownConfig(t, "csv", path, "data.label=kind"), Options{})
	if err == nil || !strings.Contains(err.Error(), "missing value") || !strings.Contains(err.Error(), "line") {
		t.Fatalf("missing cells without data.missing: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/fixtures"
	"github.com/drknn/drknn/predict"
)

// An MLP fitted on an image folder takes images: the export records the
// images' [C, H, W], and drknn-predict -images on the split folder's test/
// gives, file by file, the fit's own predictions of its test part (the
// export's query embeddings) and the run's accuracy.
func TestFitMLPThenPredictImages(t *testing.T) {
	data, run := t.TempDir(), t.TempDir()
	files, labels, err := fixtures.ImageFolder(data, 8, 5, 9)
	check(t, err)
	cfg, err := experiment.ParseConfig("fit.yaml", []byte("dataset: imagefolder\ndata_dir: "+data+"\nprotocol: fit\n"+
		"data: {size: 8}\nmodel: {kind: mlp, hidden: 16, dim: 8}\ntrain: {steps: 10, minisets: 4, lr: 0.02}\neval: {k: 3}\n"), nil)
	check(t, err)
	res, err := experiment.Run(t.Context(), cfg, experiment.Options{OutDir: run})
	check(t, err)
	exp := filepath.Join(run, "export")
	e, err := predict.Load(exp)
	check(t, err)
	if in := e.Settings.Input; in == nil || in.Kind != predict.InputImages || len(in.Shape) != 3 || in.Shape[1] != 8 || in.Shape[2] != 8 {
		t.Fatalf("recorded input %+v, want images of [C 8 8]", in)
	}
	code, so, se := runCmd("-model", exp, "-images", filepath.Join(data, "test"), "-format", "json")
	if code != 0 {
		t.Fatalf("-images: exit %d: %s", code, se)
	}
	got := decodeJSON(t, so)
	code, so, se = runCmd("-model", exp, "-embeddings", filepath.Join(exp, "query_embeddings.npy"), "-format", "json")
	if code != 0 {
		t.Fatalf("-embeddings: exit %d: %s", code, se)
	}
	want := decodeJSON(t, so)
	if len(got) != len(files) || len(want) != len(files) {
		t.Fatalf("%d predictions from images, %d from the query embeddings, %d test files", len(got), len(want), len(files))
	}
	correct := 0
	for i, p := range got {
		if p.Input != files[i] || p.Class != want[i].Class {
			t.Fatalf("%s: class %d, the fit's %d (input %s)", p.Input, p.Class, want[i].Class, files[i])
		}
		for m := range p.Proba {
			if d := p.Proba[m] - want[i].Proba[m]; d > 1e-6 || d < -1e-6 {
				t.Fatalf("%s: probabilities %v, the fit's %v", p.Input, p.Proba, want[i].Proba)
			}
		}
		if p.Class == labels[i] {
			correct++
		}
	}
	if acc := float64(correct) / float64(len(files)); acc != res.Fit.Scores["drknn"].Accuracy {
		t.Fatalf("accuracy %v through drknn-predict, %v in the run", acc, res.Fit.Scores["drknn"].Accuracy)
	}
	// The manifest says so too.
	b, err := os.ReadFile(filepath.Join(exp, "manifest.json"))
	check(t, err)
	if !strings.Contains(string(b), `"kind": "images"`) {
		t.Fatalf("manifest input: %s", b)
	}
}

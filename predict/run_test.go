package predict_test

import (
	"path/filepath"
	"testing"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/predict"
)

// TestReproducesRun trains a small synthetic experiment with package
// experiment and checks that classifying each repeat's exported query
// embeddings reproduces the accuracies in results.json, for every method
// predict offers that the run evaluated.
func TestReproducesRun(t *testing.T) {
	cfg, err := experiment.ParseConfig("tiny.yaml", []byte(`
dataset: synthetic-images
ways: 3
shots: 4
queries: 60
repeats: 2
seed: 3
data: {size: 12}
model: {kind: cnn, channels: 4, dim: 16, dtype: float64}
train: {steps: 3, minisets: 2, theta: [0.2], theta_relative: true}
eval: {k: 3, tau: 0.5}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := experiment.Run(t.Context(), cfg, experiment.Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for r := 0; r < cfg.Repeats; r++ {
		e, err := predict.Load(filepath.Join(dir, "repeats", []string{"01", "02"}[r], "export"))
		if err != nil {
			t.Fatal(err)
		}
		q, nq, y, err := e.Queries()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range predict.Methods() {
			want, ok := res.Methods[m]
			if !ok {
				continue
			}
			preds, err := e.Classify(q, nq, nil, predict.Options{Method: m})
			if err != nil {
				t.Fatal(err)
			}
			cls := make([]int, nq)
			for i, p := range preds {
				cls[i] = p.Class
			}
			acc, err := eval.Accuracy(cls, y)
			if err != nil {
				t.Fatal(err)
			}
			if acc != want.PerRepeat[r] {
				t.Fatalf("repeat %d %s: accuracy %v from the export, results.json %v", r+1, m, acc, want.PerRepeat[r])
			}
			checked++
		}
	}
	if checked < 2*3 {
		t.Fatalf("compared %d method×repeat accuracies", checked)
	}
}

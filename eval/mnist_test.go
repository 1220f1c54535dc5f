package eval_test

import (
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
)

// TestBaselinesOnMNIST runs the pixel baselines of the paper's Table 1
// (k-NN, PCA+k-NN, SVD+k-NN, NCA+k-NN) on real MNIST episodes drawn by the
// datasets package — 10 repeats of M-way 5-shot with 1,000 queries — and
// checks they behave as few-shot k-NN should: far above chance, below
// perfect, and deterministic. It fails (never skips) without the data.
func TestBaselinesOnMNIST(t *testing.T) {
	ds := loadMNIST(t)
	d := ds.SampleSize()
	rows := func(idx []int) []float64 { return pixelRows(ds, idx) }
	for _, ways := range []int{2, 5} {
		for _, method := range []string{eval.MethodEmbeddingKNN, eval.MethodPCAKNN, eval.MethodSVDKNN, eval.MethodNCAKNN} {
			accs := make([]float64, 0, 10)
			for seed := int64(1); seed <= 10; seed++ {
				ep, err := datasets.NewEpisode(ds, datasets.EpisodeSettings{Ways: ways, Shots: 5, Queries: 1000, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				c, err := eval.New(method, eval.Settings{K: 1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				x, q := rows(ep.TrainIndex), rows(ep.QueryIndex)
				acc, _, err := eval.Evaluate(c, x, len(ep.TrainIndex), d, ep.TrainLabels, ways,
					q, len(ep.QueryIndex), ep.QueryLabels)
				if err != nil {
					t.Fatalf("%s %d-way seed %d: %v", method, ways, seed, err)
				}
				if seed == 1 {
					again, _, _ := eval.Evaluate(c, x, len(ep.TrainIndex), d, ep.TrainLabels, ways,
						q, len(ep.QueryIndex), ep.QueryLabels)
					if again != acc {
						t.Fatalf("%s: refit changed accuracy %v → %v", method, acc, again)
					}
				}
				accs = append(accs, acc)
			}
			s, err := eval.Summarize(accs)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("MNIST %d-way 5-shot, k=1, %-13s %s", ways, method, s)
			chance := 1 / float64(ways)
			if s.Mean < chance+0.2 || s.Mean > 0.99 {
				t.Errorf("%s %d-way: mean accuracy %v implausible for few-shot k-NN (chance %v)", method, ways, s.Mean, chance)
			}
		}
	}
}

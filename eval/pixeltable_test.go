package eval_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/datadir"
)

// TestPixelTable regenerates the README's pixel-baseline table (real MNIST,
// 10 episodes with seeds 1…10, 1,000 queries, k = 1, default dimensions).
// It takes about a minute, so it runs only with DRKNN_PIXEL_TABLE=1:
//
//	DRKNN_PIXEL_TABLE=1 go test -run TestPixelTable -v ./eval/
func TestPixelTable(t *testing.T) {
	if os.Getenv("DRKNN_PIXEL_TABLE") == "" {
		t.Skip("set DRKNN_PIXEL_TABLE=1 to regenerate the README's pixel-baseline table")
	}
	ds := loadMNIST(t)
	methods := []string{eval.MethodEmbeddingKNN, eval.MethodPCAKNN, eval.MethodSVDKNN, eval.MethodNCAKNN, eval.MethodNearestCentroid}
	var b strings.Builder
	b.WriteString("| task | k-NN | PCA+k-NN | SVD+k-NN | NCA+k-NN | nearest centroid |\n|---|---|---|---|---|---|\n")
	for _, ways := range []int{2, 5} {
		for _, shots := range []int{5, 10} {
			fmt.Fprintf(&b, "| %d-way %d-shot |", ways, shots)
			for _, method := range methods {
				accs := make([]float64, 0, 10)
				for seed := int64(1); seed <= 10; seed++ {
					ep, err := datasets.NewEpisode(ds, datasets.EpisodeSettings{Ways: ways, Shots: shots, Queries: 1000, Seed: seed})
					if err != nil {
						t.Fatal(err)
					}
					c, err := eval.New(method, eval.Settings{K: 1}, nil)
					if err != nil {
						t.Fatal(err)
					}
					x, q := pixelRows(ds, ep.TrainIndex), pixelRows(ds, ep.QueryIndex)
					acc, _, err := eval.Evaluate(c, x, len(ep.TrainIndex), ds.SampleSize(), ep.TrainLabels, ways,
						q, len(ep.QueryIndex), ep.QueryLabels)
					if err != nil {
						t.Fatal(err)
					}
					accs = append(accs, acc)
				}
				s, err := eval.Summarize(accs)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, " %.3f ± %.3f |", s.Mean, s.HalfWidth)
			}
			b.WriteString("\n")
		}
	}
	t.Log("\n" + b.String())
}

// loadMNIST reads the real MNIST test split (t10k, the README's data); it
// fails, never skips, without the data.
func loadMNIST(t *testing.T) *datasets.Dataset {
	t.Helper()
	dir, err := datadir.Require("mnist")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Load("mnist", dir, datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// pixelRows returns the samples idx of ds as float64 rows.
func pixelRows(ds *datasets.Dataset, idx []int) []float64 {
	d := ds.SampleSize()
	out := make([]float64, 0, len(idx)*d)
	for _, i := range idx {
		for _, v := range ds.Sample(i) {
			out = append(out, float64(v))
		}
	}
	return out
}

package eval_test

import (
	"testing"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/model"
)

// TestFewShotOnMNIST trains the few-shot network baselines (the paper's
// single-conv body, 32 channels, d = 400) on real MNIST 2-way 5-shot
// episodes — 3 repeats with 1,000 queries, 50 Adam steps — and checks they
// classify far better than chance and that training lowers the
// pseudo-episode loss. The accuracy of the untrained body is logged for
// comparison (training on 10 samples barely moves it). It fails (never
// skips) without the data.
func TestFewShotOnMNIST(t *testing.T) {
	ds := loadMNIST(t)
	eps, err := datasets.NewEpisodes(ds, datasets.EpisodeSettings{Ways: 2, Shots: 5, Queries: 1000, Seed: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range eval.FewShotMethods() {
		var accs, accs0 []float64
		var fitTime time.Duration
		var first, last float64
		for r, ep := range eps {
			tr, qs := ep.Train(ds), ep.Query(ds)
			for _, steps := range []int{0, 50} {
				s := eval.DefaultFewShotSettings()
				s.Model = model.Config{DType: model.Float32}
				s.Steps = steps
				s.Seed = int64(r + 1)
				f, err := eval.NewFewShot(method, s)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				if err := f.Fit(tr.X, ds.Shape, ep.TrainLabels, 2); err != nil {
					t.Fatalf("%s repeat %d: %v", method, r, err)
				}
				el := time.Since(start)
				pred, err := f.Predict(qs.X, len(ep.QueryLabels))
				if err != nil {
					t.Fatal(err)
				}
				acc, err := eval.Accuracy(pred, ep.QueryLabels)
				if err != nil {
					t.Fatal(err)
				}
				if steps == 0 {
					accs0 = append(accs0, acc)
					continue
				}
				fitTime += el
				accs = append(accs, acc)
				l := f.Losses()
				for k := 0; k < 5; k++ {
					first += l[k]
					last += l[len(l)-1-k]
				}
				t.Logf("%s repeat %d: accuracy %.3f, fit %v, loss %.3f → %.3f", method, r+1, acc, el.Round(time.Millisecond), l[0], l[len(l)-1])
			}
		}
		s, err := eval.Summarize(accs)
		if err != nil {
			t.Fatal(err)
		}
		s0, _ := eval.Summarize(accs0)
		t.Logf("MNIST 2-way 5-shot %-13s trained %s, untrained %.3f, %v per fit", method, s, s0.Mean, (fitTime / time.Duration(len(eps))).Round(time.Millisecond))
		if s.Mean < 0.75 {
			t.Errorf("%s: mean accuracy %.3f on MNIST 2-way 5-shot, want ≥ 0.75 (chance 0.5)", method, s.Mean)
		}
		if !(last < 0.5*first) {
			t.Errorf("%s: training did not halve the pseudo-episode loss: first five steps %.4f, last five %.4f (sums over repeats)", method, first, last)
		}
	}
}

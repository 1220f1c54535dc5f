package train

import (
	"math/rand"
	"testing"

	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
)

// BenchmarkTrainStep is one Algorithm 1 step on the paper's network and
// MNIST-sized input: 50 samples of 1×28×28 (5-way 10-shot), 32 channels,
// 2×2 pool, linear to 400, the worst-case risk of the mini-sets through the
// LFD layer, and Adam. "minisets=1" is closest to a plain network step
// (one LFD solve on all 50 points); "minisets=32" is the paper's batch.
func BenchmarkTrainStep(b *testing.B) {
	for _, dt := range []model.DType{model.Float32, model.Float64} {
		for _, ms := range []int{1, 32} {
			b.Run(string(dt)+"/minisets="+map[int]string{1: "1", 32: "32"}[ms], func(b *testing.B) {
				rng := rand.New(rand.NewSource(1))
				n := 50
				x := make([]float32, n*28*28)
				for i := range x {
					x[i] = rng.Float32()
				}
				labels := make([]int, n)
				for i := range labels {
					labels[i] = i / 10
				}
				net, err := model.New(model.Config{Kind: model.CNN, InShape: []int{1, 28, 28}, Channels: 32, Dim: 400, DType: dt}, 1)
				if err != nil {
					b.Fatal(err)
				}
				size := 0
				if ms > 1 {
					size = 25
				}
				tr, err := NewTrainer(net, x, labels, Settings{Steps: b.N + 1, LR: 1e-3, Minisets: ms, MinisetSize: size, Seed: 1,
					Ways: 5, LFD: gop.Settings{Metric: optlayer.Euclidean, Theta: []float64{0.1}, Normalize: true,
						Solver: optlayer.Settings{Epsilon: 0.01, Tol: 1e-3}, Workers: 1}})
				if err != nil {
					b.Fatal(err)
				}
				benchSteps(b, tr.Step)
			})
		}
	}
}

// benchSteps times b.N calls of step after one warm-up call.
func benchSteps(b *testing.B, step func() (StepStats, error)) {
	b.Helper()
	if _, err := step(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := step(); err != nil {
			b.Fatal(err)
		}
	}
}

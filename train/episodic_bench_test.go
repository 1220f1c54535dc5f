package train

import (
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
)

// BenchmarkEpisodicStep is one step of the shipped omniglot-transfer
// training: Conv-4 (64 channels, float32) on 1×28×28 images, 4 episodes of
// 5 base classes × 10 images (200 images per step), rotations, and either
// Algorithm 1's worst-case risk of 2 mini-sets of all 50 images per
// episode (ϑ = 0.5 relative, drknn) or the prototypical loss with 5
// supports and 5 queries per class (proto), then Adam.
func BenchmarkEpisodicStep(b *testing.B) {
	d, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 10, PerClass: 20, Size: 28, Noise: 0.3, Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	base := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	idx := make([]int, d.Len())
	for i := range idx {
		idx[i] = i
	}
	for _, obj := range []string{ObjectiveDrKNN, ObjectiveProto} {
		b.Run(obj, func(b *testing.B) {
			s := EpisodicSettings{Objective: obj, Steps: b.N + 1, LR: 3e-3, Ways: 5, Shots: 10, Episodes: 4, Rotate: true, Seed: 1,
				Minisets: 2, LFD: gop.Settings{Metric: optlayer.Euclidean, Theta: []float64{0.5}, Normalize: true,
					Solver: optlayer.Settings{Epsilon: 0.01, Tol: 1e-3}}}
			if obj == ObjectiveProto {
				s.Shots, s.Queries, s.Minisets = 5, 5, 0
			}
			net, err := model.New(model.Config{Kind: model.Conv4, InShape: d.Shape, Channels: 64, DType: model.Float32}, 1)
			if err != nil {
				b.Fatal(err)
			}
			tr, err := NewEpisodicTrainer(net, d, base, idx, s)
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			benchSteps(b, tr.Step)
		})
	}
}

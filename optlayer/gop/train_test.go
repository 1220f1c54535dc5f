package gop

import (
	"math/rand"
	"testing"

	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// synth draws n 1×8×8 images: class 0 has bright rows 1 and 5, class 1
// bright columns 2 and 6, both under heavy uniform noise.
func synth(rng *rand.Rand, labels []int) []float64 {
	x := make([]float64, len(labels)*64)
	for s, y := range labels {
		img := x[s*64 : (s+1)*64]
		for i := range img {
			img[i] = 0.8 * rng.Float64()
		}
		for k := 0; k < 8; k++ {
			if y == 0 {
				img[1*8+k] += 0.5
				img[5*8+k] += 0.5
			} else {
				img[k*8+2] += 0.5
				img[k*8+6] += 0.5
			}
		}
	}
	return x
}

// TestTrainingReducesRisk trains a tiny CNN with the LFD layer (Algorithm
// 1: maximise Σ_i max_m P_m(i), i.e. minimise the worst-case risk) on
// synthetic two-class images and checks the worst-case risk on held-out
// mini-sets goes down.
func TestTrainingReducesRisk(t *testing.T) {
	net, err := model.New(model.Config{Kind: model.CNN, InShape: []int{1, 8, 8}, Channels: 4, Dim: 8, DType: model.Float64}, 1)
	if err != nil {
		t.Fatal(err)
	}
	labels := []int{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}
	n := len(labels)
	s := Settings{Labels: labels, Theta: []float64{0.3}, Normalize: true, Solver: optlayer.Settings{Epsilon: 0.02, Tol: 0.05}}

	g := G.NewGraph()
	xn := G.NewTensor(g, tensor.Float64, 4, G.WithShape(n, 1, 8, 8), G.WithName("x"))
	emb, L, err := net.Build(g, xn)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := LFD(emb, s)
	if err != nil {
		t.Fatal(err)
	}
	J := G.Must(G.Sum(G.Must(G.Max(layer.Output, 0))))
	loss := G.Must(G.Neg(J))
	if _, err := G.Grad(loss, L...); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(L...))
	defer vm.Close()
	adam, err := model.NewAdam(model.AdamSettings{LR: 3e-3}, L)
	if err != nil {
		t.Fatal(err)
	}

	// Worst-case risk M − J (Lemma 1) averaged over fixed held-out mini-sets,
	// computed without Gorgonia.
	evalRng := rand.New(rand.NewSource(99))
	var evalX [][]float64
	for k := 0; k < 8; k++ {
		evalX = append(evalX, synth(evalRng, labels))
	}
	risk := func() float64 {
		tot := 0.0
		for _, x := range evalX {
			e, err := net.Embed64(x, n)
			if err != nil {
				t.Fatal(err)
			}
			P := refP(t, e, n, 8, s)
			j := 0.0
			for i := 0; i < n; i++ {
				j += max(P[i], P[n+i])
			}
			tot += 2 - j
		}
		return tot / float64(len(evalX))
	}
	before := risk()
	rng := rand.New(rand.NewSource(5))
	for step := 0; step < 150; step++ {
		if err := G.Let(xn, tensor.New(tensor.WithShape(n, 1, 8, 8), tensor.WithBacking(synth(rng, labels)))); err != nil {
			t.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if err := adam.Step(); err != nil {
			t.Fatal(err)
		}
		vm.Reset()
	}
	after := risk()
	t.Logf("worst-case risk on held-out mini-sets: %.4f → %.4f", before, after)
	if !(after < 0.7*before) {
		t.Errorf("worst-case risk %.4f → %.4f after 150 steps, want a drop of ≥ 30%%", before, after)
	}
}

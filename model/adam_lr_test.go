package model

import (
	"math"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamSetLR: a learning rate changed between steps (a step decay)
// applies from the next step on, moments kept: the weights follow the
// reference update with lr 0.05 for steps 1–2 and 0.01 for steps 3–4.
func TestAdamSetLR(t *testing.T) {
	g := G.NewGraph()
	w0 := []float64{0.5, -1, 2}
	wn := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("w"), G.WithValue(tensorOfDT(tensor.Float64, w0)))
	cost := G.Must(G.Sum(G.Must(G.Cube(wn))))
	if _, err := G.Grad(cost, wn); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(wn))
	defer vm.Close()
	opt, err := NewAdam(AdamSettings{LR: 0.05}, G.Nodes{wn})
	if err != nil {
		t.Fatal(err)
	}
	w := append([]float64(nil), w0...)
	m, v := make([]float64, 3), make([]float64, 3)
	for step := 1; step <= 4; step++ {
		lr := 0.05
		if step > 2 {
			lr = 0.01
			if err := opt.SetLR(lr); err != nil {
				t.Fatal(err)
			}
		}
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			t.Fatal(err)
		}
		vm.Reset()
		for j := range w {
			gj := 3 * w[j] * w[j]
			m[j] = 0.9*m[j] + 0.1*gj
			v[j] = 0.999*v[j] + 0.001*gj*gj
			w[j] -= lr * (m[j] / (1 - math.Pow(0.9, float64(step)))) / (math.Sqrt(v[j]/(1-math.Pow(0.999, float64(step)))) + 1e-8)
		}
		if e := maxRelErr(toF64(wn.Value().Data()), w); e > 1e-12 {
			t.Fatalf("step %d: weights %v, reference %v", step, wn.Value().Data(), w)
		}
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := opt.SetLR(bad); err == nil {
			t.Errorf("SetLR(%v) accepted", bad)
		}
	}
}

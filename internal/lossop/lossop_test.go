package lossop

import (
	"errors"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// TestGradientReachesWeights: loss(e) = Σ c·e with e = x·W; the op's
// gradient must arrive at W as xᵀc, and two losses in one graph must stay
// separate ops.
func TestGradientReachesWeights(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		xv := []float64{1, 2, 3, 4} // 2×2
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(xv))))
		w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 0, 0, 1}))))
		if dt == tensor.Float32 {
			g = G.NewGraph()
			x = G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))))
			w = G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 0, 0, 1}))))
		}
		e := G.Must(G.Mul(x, w))
		c := []float64{1, -1, 2, 0.5}
		lin := func(e []float64, n, d int) (float64, []float64, error) {
			var s float64
			for i := range e {
				s += c[i] * e[i]
			}
			return s, append([]float64(nil), c...), nil
		}
		a, b := New("A", lin), New("B", lin)
		la, err := a.Apply(e)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := b.Apply(e)
		if err != nil {
			t.Fatal(err)
		}
		sum := G.Must(G.Add(la, lb))
		if _, err := G.Grad(sum, w); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(w))
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		// e = x (W = I), loss = Σ c·x = 1 − 2 + 6 + 2 = 7 per op.
		if v, _ := a.Last(); v != 7 {
			t.Fatalf("%v: loss %v, want 7", dt, v)
		}
		gv, _ := w.Grad()
		want := []float64{2 * (1*1 + 3*2), 2 * (1*-1 + 3*0.5), 2 * (2*1 + 4*2), 2 * (2*-1 + 4*0.5)} // 2·xᵀc
		var got []float64
		switch d := gv.Data().(type) {
		case []float64:
			got = d
		case []float32:
			for _, v := range d {
				got = append(got, float64(v))
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: ∂/∂W = %v, want %v", dt, got, want)
			}
		}
		vm.Close()
	}
}

func TestErrorsPropagate(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"), G.WithInit(G.RangedFrom(0)))
	boom := errors.New("boom")
	l := New("L", func(e []float64, n, d int) (float64, []float64, error) { return 0, nil, boom })
	out, err := l.Apply(x)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("RunAll error %v, want boom (Gorgonia wraps it)", err)
	}
	if _, err := l.Last(); !errors.Is(err, boom) {
		t.Fatalf("Last error %v, want boom", err)
	}
	_ = out
	short := New("S", func(e []float64, n, d int) (float64, []float64, error) { return 1, []float64{1}, nil })
	g2 := G.NewGraph()
	x2 := G.NewMatrix(g2, tensor.Float64, G.WithShape(2, 3), G.WithName("x"), G.WithInit(G.RangedFrom(0)))
	if _, err := short.Apply(x2); err != nil {
		t.Fatal(err)
	}
	vm2 := G.NewTapeMachine(g2)
	defer vm2.Close()
	if err := vm2.RunAll(); err == nil {
		t.Fatal("a gradient of the wrong length was accepted")
	}
	if _, err := New("V", nil).Apply(G.NewVector(g2, tensor.Float64, G.WithShape(3), G.WithName("v"))); err == nil {
		t.Fatal("a vector input was accepted")
	}
}

package model

import (
	"path/filepath"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// The identity embedding is the input itself: Embed, Embed64 and the graph
// return the samples unchanged (float64 input keeps its precision), Dim is
// the input size, there are no weights, and a weights file round-trips.
func TestIdentity(t *testing.T) {
	for _, cfg := range []Config{
		{Kind: Identity, InShape: []int{56}, DType: Float64},
		{Kind: Identity, InShape: []int{1, 4, 3}, DType: Float32},
		{Kind: Identity, InShape: []int{5}, Dim: 5},
	} {
		net, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		in := net.Config().InSize()
		if net.Dim() != in || len(net.Params()) != 0 || net.NumParams() != 0 {
			t.Fatalf("%v: dim %d, %d params; want %d and none", cfg, net.Dim(), net.NumParams(), in)
		}
		const n = 3
		x := make([]float32, n*in)
		x64 := make([]float64, n*in)
		for i := range x {
			x[i] = float32(i%7) / 7
			x64[i] = float64(i%7)/7 + 1e-12 // not representable in float32
		}
		e, err := net.Embed(x, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if e[i] != float64(x[i]) {
				t.Fatalf("%v: Embed[%d] = %v, want %v", cfg, i, e[i], x[i])
			}
		}
		e64, err := net.Embed64(x64, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x64 {
			if e64[i] != x64[i] {
				t.Fatalf("%v: Embed64[%d] = %v, want %v", cfg, i, e64[i], x64[i])
			}
		}
		path := filepath.Join(t.TempDir(), "w.bin")
		if err := net.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Config().String() != net.Config().String() || got.Dim() != in {
			t.Fatalf("reloaded %v, saved %v", got.Config(), net.Config())
		}

		g := G.NewGraph()
		xs := append([]int{n}, net.Config().InShape...)
		var data any = x64
		if net.Dtype() == tensor.Float32 {
			data = x
		}
		xn := G.NewTensor(g, net.Dtype(), len(xs), G.WithShape(xs...), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(xs...), tensor.WithBacking(data))))
		y, learn, err := net.Build(g, xn)
		if err != nil {
			t.Fatal(err)
		}
		if len(learn) != 0 || !y.Shape().Eq(tensor.Shape{n, in}) {
			t.Fatalf("graph: %d learnables, output shape %v; want none and (%d, %d)", len(learn), y.Shape(), n, in)
		}
		vm := G.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		out := y.Value().Data()
		for i := range n * in {
			var v float64
			switch o := out.(type) {
			case []float32:
				v = float64(o[i])
			case []float64:
				v = o[i]
			}
			if want := e[i]; net.Dtype() == tensor.Float64 {
				want = x64[i]
				if v != want {
					t.Fatalf("graph output %d = %v, want %v", i, v, want)
				}
			} else if v != want {
				t.Fatalf("graph output %d = %v, want %v", i, v, want)
			}
		}
		vm.Close()
	}
}

func TestIdentityBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: Identity, InShape: []int{56}, Dim: 400}, "identity dim = 400"},
		{Config{Kind: Identity, InShape: []int{56}, Hidden: 64}, "no layers"},
		{Config{Kind: Identity, InShape: []int{1, 8, 8}, Channels: 4}, "no layers"},
		{Config{Kind: Identity}, "input shape"},
		{Config{Kind: "linear", InShape: []int{56}}, `"identity"`},
	} {
		_, err := New(c.cfg, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%v): %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

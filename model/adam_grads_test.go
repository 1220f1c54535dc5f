package model

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
)

// TestAdamReadMatchesAccumulated: reading a gradient as g + 0 (Adam from
// NewMinimiser) updates exactly like accumulating it into a zeroed dual
// value first — including gradients of ±0, NaN-free edge values and
// denormals — on the vector and scalar paths.
func TestAdamReadMatchesAccumulated(t *testing.T) {
	testAdamRead[float32](t)
	testAdamRead[float64](t)
}

func testAdamRead[T Float](t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	n := 4096 + 7
	negZero := T(math.Copysign(0, -1))
	mk := func(scale float64) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = T(rng.NormFloat64() * scale)
		}
		return x
	}
	w, g, m, v := mk(1), mk(1e-2), mk(1e-3), mk(1e-2)
	for i := range v {
		v[i] *= v[i]
		switch i % 5 {
		case 0:
			g[i] = negZero
		case 1:
			g[i] = 0
		case 2:
			m[i] = 0
		}
	}
	g[3] = T(math.SmallestNonzeroFloat32)
	w2, m2, v2 := append([]T(nil), w...), append([]T(nil), m...), append([]T(nil), v...)
	acc := make([]T, n) // the zeroed dual value
	for i := range acc {
		acc[i] += g[i] // what Gorgonia's accumulation does
	}
	g0 := append([]T(nil), g...)
	s := AdamSettings{}.withDefaults()
	for step := 1; step <= 3; step++ {
		c1, c2 := 1/(1-math.Pow(0.9, float64(step))), 1/(1-math.Pow(0.999, float64(step)))
		adamUpdate(w, g, m, v, s, c1, c2, true)
		adamUpdate(w2, acc, m2, v2, s, c1, c2, false)
		for i := range w {
			if !sameBitsT(w[i], w2[i]) || !sameBitsT(m[i], m2[i]) || !sameBitsT(v[i], v2[i]) || !sameBitsT(g[i], g0[i]) {
				t.Fatalf("%T step %d element %d (g %v): read (w %v m %v v %v), accumulated (w %v m %v v %v)", T(0), step, i, g0[i], w[i], m[i], v[i], w2[i], m2[i], v2[i])
			}
		}
		for i := range acc {
			acc[i] += g[i] // next step: the same gradient accumulated again into the zeroed value
		}
	}
}

func sameBitsT[T Float](x, y T) bool {
	switch any(x).(type) {
	case float32:
		return math.Float32bits(float32(x)) == math.Float32bits(float32(y))
	}
	return math.Float64bits(float64(x)) == math.Float64bits(float64(y))
}

// TestMinimiserMatchesDualValues: NewMinimiser (Adam reading the gradient
// nodes) trains every network kind to exactly the weights of the
// dual-value form it replaced (G.BindDualValues and Adam on n.Grad()).
func TestMinimiserMatchesDualValues(t *testing.T) {
	for _, cfg := range []Config{
		{Kind: CNN, InShape: []int{1, 10, 10}, Channels: 4, Dim: 6, DType: Float64},
		{Kind: CNN, InShape: []int{3, 8, 8}, Channels: 4, Dim: 5, DType: Float32},
		{Kind: MLP, InShape: []int{12}, Hidden: 9, Dim: 4, DType: Float64},
		{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 4, DType: Float32},
	} {
		var got [2][]float64
		for form := 0; form < 2; form++ {
			net, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			c := net.Config()
			n := 6
			x := make([]float32, n*c.InSize())
			rng := rand.New(rand.NewSource(4))
			g := G.NewGraph()
			in, err := net.NewInput(g, "x", n, x)
			if err != nil {
				t.Fatal(err)
			}
			emb, learn, err := net.Build(g, in.Node)
			if err != nil {
				t.Fatal(err)
			}
			loss := G.Must(G.Sum(G.Must(G.Square(G.Must(G.Sub(emb, G.Must(G.Tanh(emb))))))))
			var vm G.VM
			var adam *Adam
			if form == 0 {
				vm, adam, err = NewMinimiser(g, loss, learn, AdamSettings{LR: 0.01})
			} else {
				if _, err = G.Grad(loss, learn...); err == nil {
					vm = G.NewTapeMachine(g, G.BindDualValues(learn...))
					adam, err = NewAdam(AdamSettings{LR: 0.01}, learn)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 4; step++ {
				for i := range x {
					x[i] = rng.Float32()
				}
				in.Set(x)
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				vm.Reset()
				if err := adam.Step(); err != nil {
					t.Fatal(err)
				}
			}
			vm.Close()
			for _, p := range net.tensors() {
				for i := 0; i < p.Len(); i++ {
					got[form] = append(got[form], p.At(i))
				}
			}
		}
		if len(got[0]) != len(got[1]) || len(got[0]) == 0 {
			t.Fatalf("%v: %d and %d weights", cfg.Kind, len(got[0]), len(got[1]))
		}
		for i := range got[0] {
			if math.Float64bits(got[0][i]) != math.Float64bits(got[1][i]) {
				t.Fatalf("%v %v: weight %d = %v, dual-value form %v", cfg.Kind, cfg.DType, i, got[0][i], got[1][i])
			}
		}
	}
}

// TestAdamMarshalSameBytes: encoding the float64 moments in place (no
// widened copies, a presized buffer) writes the bytes of the copying form.
func TestAdamMarshalSameBytes(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		net, err := New(Config{Kind: MLP, InShape: []int{5}, Hidden: 7, Dim: 3, DType: dt}, 1)
		if err != nil {
			t.Fatal(err)
		}
		g := G.NewGraph()
		gr, err := net.NewGraph(g, "m")
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewAdam(AdamSettings{}, gr.Learnables)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(2))
		for i := range a.m {
			for j := 0; j < lenOf(a.m[i]); j++ {
				switch m := a.m[i].(type) {
				case []float32:
					m[j], a.v[i].([]float32)[j] = float32(rng.NormFloat64()), float32(rng.Float64())
				case []float64:
					m[j], a.v[i].([]float64)[j] = rng.NormFloat64(), rng.Float64()
				}
			}
		}
		a.t = 7
		got, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		st := adamState{Version: 1, T: a.t}
		for i := range a.m {
			st.M, st.V = append(st.M, widen(a.m[i])), append(st.V, widen(a.v[i]))
		}
		var want bytes.Buffer
		if err := gob.NewEncoder(&want).Encode(st); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%v: %d bytes, the copying form %d", dt, len(got), want.Len())
		}
	}
}

// TestFirstNonFinite: the index of the first NaN or ±Inf, −1 for finite
// data (extremes, subnormals and −0 included), for every length up to 100
// and every position of the bad value, with the AVX pass and without it.
func TestFirstNonFinite(t *testing.T) {
	testFirstNonFinite[float32](t)
	testFirstNonFinite[float64](t)
}

func testFirstNonFinite[T Float](t *testing.T) {
	saved := useAdamAsm
	defer func() { useAdamAsm = saved }()
	finite := []T{0, T(math.Copysign(0, -1)), 1, -3.5, T(math.SmallestNonzeroFloat32), T(math.MaxFloat32), -T(math.MaxFloat32)}
	bad := []T{T(math.NaN()), T(math.Inf(1)), T(math.Inf(-1))}
	for _, asm := range []bool{false, saved} {
		useAdamAsm = asm
		for n := 0; n <= 100; n++ {
			x := make([]T, n)
			for i := range x {
				x[i] = finite[i%len(finite)]
			}
			if got := firstNonFinite(x); got != -1 {
				t.Fatalf("%T asm=%v n=%d finite: got %d, want -1", T(0), asm, n, got)
			}
			for pos := 0; pos < n; pos++ {
				for _, b := range bad {
					keep := x[pos]
					x[pos] = b
					if got := firstNonFinite(x); got != pos {
						t.Fatalf("%T asm=%v n=%d: %v at %d, got %d", T(0), asm, n, b, pos, got)
					}
					x[pos] = keep
				}
			}
		}
	}
}

// BenchmarkFirstNonFinite: the finiteness pass over a gradient the size of
// the CIFAR-10 CNN's linear layer (8192×400 float64), with the AVX pass
// and with the scalar sums alone.
func BenchmarkFirstNonFinite(b *testing.B) {
	saved := useAdamAsm
	defer func() { useAdamAsm = saved }()
	x := make([]float64, 8192*400)
	for i := range x {
		x[i] = float64(i%97) - 48
	}
	for _, asm := range []bool{false, saved} {
		b.Run(fmt.Sprintf("asm=%v", asm), func(b *testing.B) {
			useAdamAsm = asm
			b.SetBytes(int64(8 * len(x)))
			for b.Loop() {
				if firstNonFinite(x) != -1 {
					b.Fatal("finite data reported")
				}
			}
		})
	}
}

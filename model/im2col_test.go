package model

import (
	"math"
	"math/rand"
	"testing"
)

// im2colRef is im2col element by element (its form before the row
// copies): the reference of TestIm2colRows.
func im2colRef(g convGeom, x, cols []float64) {
	hw := g.hw()
	for c := 0; c < g.c; c++ {
		for kh := 0; kh < 3; kh++ {
			for kw := 0; kw < 3; kw++ {
				row := cols[((c*3+kh)*3+kw)*hw:][:hw]
				for oh := 0; oh < g.ho; oh++ {
					for ow := 0; ow < g.wo; ow++ {
						ih, iw := oh+kh-g.pad, ow+kw-g.pad
						v := 0.0
						if ih >= 0 && ih < g.h && iw >= 0 && iw < g.w {
							v = x[(c*g.h+ih)*g.w+iw]
						}
						row[oh*g.wo+ow] = v
					}
				}
			}
		}
	}
}

// TestIm2colRows: the row-copy im2col writes exactly the reference's
// patches (padding 0 and 1, square and oblong images, 1 and 3 channels),
// over a buffer full of garbage.
func TestIm2colRows(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, pad := range []int{0, 1} {
		for _, sz := range [][3]int{{1, 3, 3}, {1, 4, 7}, {3, 8, 8}, {1, 28, 28}, {3, 32, 32}, {2, 5, 3}} {
			cfg := Config{Kind: CNN, InShape: []int{sz[0], sz[1], sz[2]}, Padding: &pad}.WithDefaults()
			g := cfg.geom()
			x := make([]float64, g.c*g.h*g.w)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			got, want := make([]float64, g.c9()*g.hw()), make([]float64, g.c9()*g.hw())
			for i := range got {
				got[i] = rng.NormFloat64()
			}
			im2col(g, x, got)
			im2colRef(g, x, want)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("pad %d shape %v: cols[%d] = %v, want %v", pad, sz, i, got[i], want[i])
				}
			}
		}
	}
}

// TestConvGradWScratchReuse: the weight gradient, whose scratch is now
// pooled and zeroed only where each sample wrote, equals bit for bit the
// gradient formed with a freshly cleared scratch per sample (the form
// before), over repeated calls that reuse the pool.
func TestConvGradWScratchReuse(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	cfg := Config{Kind: CNN, InShape: []int{3, 12, 12}, Channels: 5}.WithDefaults()
	g := cfg.geom()
	n, in, fl := 19, g.c*g.h*g.w, g.flat()
	for rep := 0; rep < 3; rep++ {
		x, w, bias := make([]float64, n*in), make([]float64, g.k*g.c9()), make([]float64, g.k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		out, arg, dout := make([]float64, n*fl), make([]int32, n*fl), make([]float64, n*fl)
		convReluPoolForward(g, n, x, w, bias, out, arg)
		for i := range dout {
			dout[i] = rng.NormFloat64()
		}
		dw := make([]float64, len(w))
		convReluPoolGradW(g, n, x, dout, arg, dw, nil)
		// reference: one block at a time, scratch cleared per sample
		hw, c9, K := g.hw(), g.c9(), g.k
		want := make([]float64, len(w))
		for b0 := 0; b0 < n; b0 += blockSize {
			pw := make([]float64, c9*K)
			s := newConvScratch[float64](g)
			for i := b0; i < min(b0+blockSize, n); i++ {
				clear(s.convT)
				for o, ai := range arg[i*fl : (i+1)*fl] {
					if ai >= 0 {
						s.convT[ai] = dout[i*fl+o]
					}
				}
				im2col(g, x[i*in:(i+1)*in], s.cols)
				gemm(false, false, c9, K, hw, 1, s.cols, hw, s.convT, K, 1, pw, K)
			}
			for j := 0; j < c9; j++ {
				for k := 0; k < K; k++ {
					want[k*c9+j] += pw[j*K+k]
				}
			}
		}
		for i := range dw {
			if math.Float64bits(dw[i]) != math.Float64bits(want[i]) {
				t.Fatalf("call %d: dw[%d] = %v, want %v", rep, i, dw[i], want[i])
			}
		}
	}
}

// TestPoolReluSameBits: the float64 conv layer's pooling in AVX
// (kern.PoolReluD) gives the bits and indices of the Go loop — Go's max
// with NaN, ±0, ties and ±Inf in the windows included — on CIFAR-sized
// (3×32×32) and MNIST-sized inputs with 32 channels.
func TestPoolReluSameBits(t *testing.T) {
	if !usePoolAsm {
		t.Skip("no AVX2: the Go loop is the only path")
	}
	rng := rand.New(rand.NewSource(3))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1}
	for _, shape := range [][]int{{3, 32, 32}, {1, 28, 28}} {
		cfg := Config{Kind: CNN, InShape: shape}.WithDefaults()
		g := cfg.geom()
		in := shape[0] * shape[1] * shape[2]
		for trial := 0; trial < 20; trial++ {
			x := make([]float64, in)
			for i := range x {
				switch r := rng.Intn(10); {
				case trial%2 == 1 && r == 0:
					x[i] = special[rng.Intn(len(special))]
				case r < 4:
					x[i] = 0 // ties: an image's empty background
				default:
					x[i] = rng.NormFloat64()
				}
			}
			w := make([]float64, g.k*g.c9())
			for i := range w {
				w[i] = rng.NormFloat64() * 0.5
			}
			bias := make([]float64, g.k)
			for i := range bias {
				bias[i] = rng.NormFloat64() * 0.1
				if trial%3 == 2 && i%5 == 0 {
					bias[i] = special[rng.Intn(len(special))]
				}
			}
			run := func(asm bool) ([]float64, []int32) {
				saved := usePoolAsm
				defer func() { usePoolAsm = saved }()
				usePoolAsm = asm
				s := newConvScratch[float64](g)
				transposeW(g, w, s.wT)
				out, arg := make([]float64, g.flat()), make([]int32, g.flat())
				convReluPoolSample(g, x, bias, out, arg, s)
				return out, arg
			}
			wantO, wantA := run(false)
			gotO, gotA := run(true)
			for i := range wantO {
				if math.Float64bits(gotO[i]) != math.Float64bits(wantO[i]) || gotA[i] != wantA[i] {
					t.Fatalf("shape %v trial %d: out[%d] = %v (arg %d), the Go loop gives %v (arg %d)", shape, trial, i, gotO[i], gotA[i], wantO[i], wantA[i])
				}
			}
		}
	}
}

// TestReluSumSameBits: reluSum (the bias gradient's branch-free sum) gives
// the bits of the loop it replaced, "if a[o] >= 0 { sum += d[o] }", with
// NaN, ±Inf and ±0 among both the kept and the skipped terms.
func TestReluSumSameBits(t *testing.T) {
	testReluSum[float64](t)
	testReluSum[float32](t)
}

func testReluSum[T Float](t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}
	for trial := 0; trial < 2000; trial++ {
		n := rng.Intn(300)
		d, a := make([]T, n), make([]int32, n)
		for o := range d {
			switch r := rng.Intn(20); {
			case trial%4 == 3 && r == 0:
				d[o] = T(special[rng.Intn(len(special))])
			case r < 3:
				d[o] = T(math.Copysign(0, float64(rng.Intn(2)*2-1)))
			default:
				d[o] = T(rng.NormFloat64())
			}
			a[o] = int32(rng.Intn(200)) - 100
		}
		var want T
		for o := range d {
			if a[o] >= 0 {
				want += d[o]
			}
		}
		got := reluSum(d, a)
		if math.Float64bits(float64(got)) != math.Float64bits(float64(want)) && !(got != got && want != want) {
			t.Fatalf("%T trial %d: reluSum = %v, the loop gives %v", T(0), trial, got, want)
		}
	}
}

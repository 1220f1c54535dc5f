package model

import (
	"fmt"
	"math/rand"
	"testing"
)

// Component benchmarks of one training step's kernels (batch 50,
// 1×28×28, 32 channels, d = 400), float32.
func benchSetup() (convGeom, []float32, []float32, []float32, []float32, []float32, []int32, []float32) {
	cfg := Config{Kind: CNN, InShape: []int{1, 28, 28}}.WithDefaults()
	g := cfg.geom()
	rng := rand.New(rand.NewSource(1))
	n := 50
	x := make([]float32, n*784)
	for i := range x {
		x[i] = rng.Float32()
	}
	w := make([]float32, g.k*9)
	for i := range w {
		w[i] = float32(rng.NormFloat64()) * 0.4
	}
	b := make([]float32, g.k)
	out := make([]float32, n*g.flat())
	arg := make([]int32, n*g.flat())
	wl := make([]float32, g.flat()*400)
	for i := range wl {
		wl[i] = float32(rng.NormFloat64()) * 0.01
	}
	y := make([]float32, n*400)
	return g, x, w, b, out, wl, arg, y
}

func BenchmarkKernelConvForward(b *testing.B) {
	g, x, w, bias, out, _, arg, _ := benchSetup()
	for i := 0; i < b.N; i++ {
		convReluPoolForward(g, 50, x, w, bias, out, arg)
	}
}

func BenchmarkKernelConvGradW(b *testing.B) {
	g, x, w, bias, out, _, arg, _ := benchSetup()
	convReluPoolForward(g, 50, x, w, bias, out, arg)
	dw := make([]float32, len(w))
	db := make([]float32, len(bias))
	for i := 0; i < b.N; i++ {
		convReluPoolGradW(g, 50, x, out, arg, dw, nil)
		convReluPoolGradW(g, 50, x, out, arg, nil, db)
	}
}

func BenchmarkKernelLinear(b *testing.B) {
	g, x, w, bias, out, wl, arg, y := benchSetup()
	convReluPoolForward(g, 50, x, w, bias, out, arg)
	f := g.flat()
	bl := make([]float32, 400)
	dx := make([]float32, len(out))
	dw := make([]float32, len(wl))
	b.Run("forward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			linearForward(50, f, 400, out, wl, bl, y, false)
		}
	})
	b.Run("gradX", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			linearGradX(50, f, 400, wl, y, dx)
		}
	})
	b.Run("gradW", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			linearGradW(50, f, 400, out, y, dw)
		}
	})
}

func BenchmarkKernelAdam(b *testing.B) {
	n := 6272 * 400
	w, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	s := AdamSettings{}.withDefaults()
	for i := 0; i < b.N; i++ {
		adamUpdate(w, g, m, v, s, 1.1, 1.01, false)
	}
}

// BenchmarkKernelConv4Block times each Conv-4 block's forward (training
// mode) and backward kernels on the Omniglot batch (100×1×28×28, 64
// channels); run with -cpu 1 for per-core costs.
func BenchmarkKernelConv4Block(b *testing.B) {
	cfg := Config{Kind: Conv4, InShape: []int{1, 28, 28}}.WithDefaults()
	rng := rand.New(rand.NewSource(1))
	n := 100
	x := make([]float32, n*cfg.InSize())
	for i := range x {
		x[i] = rng.Float32()
	}
	for i, g := range cfg.blocks() {
		w := make([]float32, g.k*g.c*9)
		for j := range w {
			w[j] = float32(rng.NormFloat64()) * 0.2
		}
		gamma, beta := make([]float32, g.k), make([]float32, g.k)
		for j := range gamma {
			gamma[j] = 1
		}
		rm, rv := make([]float32, g.k), make([]float32, g.k)
		vb := make([]float64, g.k)
		var buf blockBuf[float32]
		first, last := i == 0, i == Conv4Blocks-1
		b.Run(fmt.Sprintf("block%d/forward", i+1), func(b *testing.B) {
			c0 := cpuTime()
			for it := 0; it < b.N; it++ {
				blockForward(g, n, x, w, gamma, beta, first, last, true, rm, rv, vb, &buf)
			}
			b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
		})
		blockForward(g, n, x, w, gamma, beta, first, last, true, rm, rv, vb, &buf)
		out := append([]float32(nil), buf.out...)
		b.Run(fmt.Sprintf("block%d/backward", i+1), func(b *testing.B) {
			c0 := cpuTime()
			for it := 0; it < b.N; it++ {
				blockBackward(g, x, gamma, out, first, last, !first, &buf)
			}
			b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
		})
		x = out
	}
}

// BenchmarkKernelConvForward64 is the forward conv layer in float64 (the
// paper's table runs float64), with the pooling in AVX (kern.PoolReluD)
// and in the Go loop.
func BenchmarkKernelConvForward64(b *testing.B) {
	g, x32, w32, bias32, _, _, arg, _ := benchSetup()
	x, w, bias := to64(x32), to64(w32), to64(bias32)
	out := make([]float64, 50*g.flat())
	saved := usePoolAsm
	defer func() { usePoolAsm = saved }()
	for _, asm := range []bool{false, saved} {
		b.Run(fmt.Sprintf("asm=%v", asm), func(b *testing.B) {
			usePoolAsm = asm
			for b.Loop() {
				convReluPoolForward(g, 50, x, w, bias, out, arg)
			}
		})
	}
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// BenchmarkGemmUnits is the linear layer's forward product in float64 at
// the table's batch sizes (and an embedding chunk of 128) with the
// CIFAR-10 network's 8192×400 weights: gemmUnits splits the few row tiles
// of these products by columns, so that the 26 MB of weights are read once.
func BenchmarkGemmUnits(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const f, d = 8192, 400
	w := randT[float64](rng, f*d)
	bias := make([]float64, d)
	for _, n := range []int{10, 25, 50, 128} {
		x := randT[float64](rng, n*f)
		y := make([]float64, n*d)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				linearForward(n, f, d, x, w, bias, y, false)
			}
			b.ReportMetric(float64(2*n*f*d)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

package model

import (
	"math/rand"
	"syscall"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// trainStep is one forward/backward/Adam step on a reusable TapeMachine
// with the loss Σ emb².
type trainStep struct {
	net  *Net
	g    *G.ExprGraph
	x    *G.Node
	emb  *G.Node
	cost *G.Node
	L    G.Nodes
	vm   G.VM
	adam *Adam
}

func newTrainStep(tb testing.TB, cfg Config, batch int, seed int64) *trainStep {
	tb.Helper()
	net, err := New(cfg, seed)
	if err != nil {
		tb.Fatal(err)
	}
	s := &trainStep{net: net, g: G.NewGraph()}
	shape := append([]int{batch}, net.cfg.InShape...)
	s.x = G.NewTensor(s.g, net.Dtype(), len(shape), G.WithShape(shape...), G.WithName("x"))
	if s.emb, s.L, err = net.Build(s.g, s.x); err != nil {
		tb.Fatal(err)
	}
	s.cost = G.Must(G.Sum(G.Must(G.Square(s.emb))))
	if _, err = G.Grad(s.cost, s.L...); err != nil {
		tb.Fatal(err)
	}
	s.vm = G.NewTapeMachine(s.g, G.BindDualValues(s.L...))
	if s.adam, err = NewAdam(AdamSettings{LR: 1e-4}, s.L); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed + 1))
	n := batch * net.cfg.InSize()
	var xv *tensor.Dense
	if net.cfg.DType == Float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = rng.Float32()
		}
		xv = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	} else {
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.Float64()
		}
		xv = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	if err := G.Let(s.x, xv); err != nil {
		tb.Fatal(err)
	}
	return s
}

func (s *trainStep) run(tb testing.TB) float64 {
	if err := s.vm.RunAll(); err != nil {
		tb.Fatal(err)
	}
	var c float64
	switch v := s.cost.Value().Data().(type) {
	case float32:
		c = float64(v)
	case float64:
		c = v
	}
	if err := s.adam.Step(); err != nil {
		tb.Fatal(err)
	}
	s.vm.Reset()
	return c
}

// benchSteps times b.N runs of s after one warm-up run, reporting the CPU
// time per step beside the wall time.
func benchSteps(b *testing.B, s *trainStep) {
	s.run(b)
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.run(b)
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
}

// BenchmarkTrainStep is one training step of the paper's network on MNIST-
// sized input: 50×1×28×28, 32 channels, pool, linear to 400, loss Σ emb²,
// Adam. Run with -tags openblas for the OpenBLAS build.
func BenchmarkTrainStep(b *testing.B) {
	for _, dt := range []DType{Float32, Float64} {
		b.Run(string(dt), func(b *testing.B) {
			s := newTrainStep(b, Config{Kind: CNN, InShape: []int{1, 28, 28}, DType: dt}, 50, 1)
			benchSteps(b, s)
		})
	}
}

// BenchmarkTrainStepConv4 is one training step of the Conv-4 backbone
// (64 channels, batch normalisation in training mode, no linear layer,
// loss Σ emb², Adam): batch 100 (a 5-way 5-shot episode with 15 queries
// per class) of 1×28×28 (Omniglot) and of 3×84×84 (miniImageNet).
// scripts/conv4_bench.py times the same step in PyTorch.
func BenchmarkTrainStepConv4(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape []int
		batch int
	}{
		{"1x28x28-b100", []int{1, 28, 28}, 100},
		{"3x84x84-b100", []int{3, 84, 84}, 100},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := newTrainStep(b, Config{Kind: Conv4, InShape: c.shape}, c.batch, 1)
			benchSteps(b, s)
		})
	}
}

// cpuTime is the process's user+system CPU time in seconds (all threads,
// OpenBLAS's included). On a shared machine CPU time per step is a steadier
// measure of work than wall time; wall ≈ CPU/2 when both cores are free.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkAdam compares this package's Adam with Gorgonia's AdamSolver on
// the network's big tensor (linear.weight, 6272×400 float32).
func BenchmarkAdam(b *testing.B) {
	setup := func(b *testing.B) (G.Nodes, G.VM) {
		g := G.NewGraph()
		shape := []int{6272, 400}
		d := make([]float32, shape[0]*shape[1])
		rng := rand.New(rand.NewSource(1))
		for i := range d {
			d[i] = rng.Float32() - 0.5
		}
		w := G.NewMatrix(g, G.Float32, G.WithShape(shape...), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))))
		cost := G.Must(G.Sum(G.Must(G.Square(w))))
		if _, err := G.Grad(cost, w); err != nil {
			b.Fatal(err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(w))
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		return G.Nodes{w}, vm
	}
	b.Run("model.Adam", func(b *testing.B) {
		L, vm := setup(b)
		defer vm.Close()
		a, err := NewAdam(AdamSettings{}, L)
		if err != nil {
			b.Fatal(err)
		}
		c0 := cpuTime()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := a.Step(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
	})
	b.Run("gorgonia.AdamSolver", func(b *testing.B) {
		L, vm := setup(b)
		defer vm.Close()
		s := G.NewAdamSolver(G.WithLearnRate(1e-3))
		c0 := cpuTime()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.Step(G.NodesToValueGrads(L)); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
	})
}

// BenchmarkTrainStepGorgoniaStock is the same step built from Gorgonia's
// own ops (Conv2d, Rectify, MaxPool2D, Reshape, Mul; no biases) with
// Gorgonia's AdamSolver, for comparison.
func BenchmarkTrainStepGorgoniaStock(b *testing.B) {
	g := G.NewGraph()
	rng := rand.New(rand.NewSource(1))
	rnd := func(n int, scale float32) []float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = (rng.Float32() - 0.5) * scale
		}
		return d
	}
	x := G.NewTensor(g, G.Float32, 4, G.WithShape(50, 1, 28, 28), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(50, 1, 28, 28), tensor.WithBacking(rnd(50*784, 2)))))
	wc := G.NewTensor(g, G.Float32, 4, G.WithShape(32, 1, 3, 3), G.WithName("wc"), G.WithValue(tensor.New(tensor.WithShape(32, 1, 3, 3), tensor.WithBacking(rnd(288, 1)))))
	wl := G.NewMatrix(g, G.Float32, G.WithShape(6272, 400), G.WithName("wl"), G.WithValue(tensor.New(tensor.WithShape(6272, 400), tensor.WithBacking(rnd(6272*400, 0.05)))))
	c := G.Must(G.Conv2d(x, wc, tensor.Shape{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}))
	r := G.Must(G.Rectify(c))
	p := G.Must(G.MaxPool2D(r, tensor.Shape{2, 2}, []int{0, 0}, []int{2, 2}))
	f := G.Must(G.Reshape(p, tensor.Shape{50, 6272}))
	e := G.Must(G.Mul(f, wl))
	cost := G.Must(G.Sum(G.Must(G.Square(e))))
	L := G.Nodes{wc, wl}
	if _, err := G.Grad(cost, L...); err != nil {
		b.Fatal(err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(L...))
	defer vm.Close()
	s := G.NewAdamSolver(G.WithLearnRate(1e-4))
	step := func() {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		if err := s.Step(G.NodesToValueGrads(L)); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	step()
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
}

// BenchmarkEmbed embeds 1,000 MNIST-sized samples (the evaluation path).
func BenchmarkEmbed(b *testing.B) {
	for _, dt := range []DType{Float32, Float64} {
		b.Run(string(dt), func(b *testing.B) {
			net, err := New(Config{Kind: CNN, InShape: []int{1, 28, 28}, DType: dt}, 1)
			if err != nil {
				b.Fatal(err)
			}
			x := make([]float32, 1000*784)
			rng := rand.New(rand.NewSource(2))
			for i := range x {
				x[i] = rng.Float32()
			}
			c0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := net.Embed(x, 1000); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

package model

import (
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// refForward is an independent, loop-by-loop implementation of the
// network (direct convolution, ReLU, 2×2 floor max-pool, flatten, linear;
// or linear–ReLU–linear) in float64, used to check the fast kernels.
func refForward(net *Net, x []float64, n int) []float64 {
	cfg := net.cfg
	P := make([][]float64, len(net.params))
	for i, p := range net.params {
		P[i] = make([]float64, p.Len())
		for j := range P[i] {
			P[i][j] = p.At(j)
		}
	}
	d := cfg.Dim
	out := make([]float64, n*d)
	for s := 0; s < n; s++ {
		xs := x[s*cfg.InSize() : (s+1)*cfg.InSize()]
		var h []float64
		if cfg.Kind == CNN {
			C, H, W, K, pad := cfg.InShape[0], cfg.InShape[1], cfg.InShape[2], cfg.Channels, *cfg.Padding
			Ho, Wo := H+2*pad-2, W+2*pad-2
			conv := func(k, oh, ow int) float64 {
				v := P[1][k]
				for c := 0; c < C; c++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							ih, iw := oh+kh-pad, ow+kw-pad
							if ih >= 0 && ih < H && iw >= 0 && iw < W {
								v += P[0][((k*C+c)*3+kh)*3+kw] * xs[(c*H+ih)*W+iw]
							}
						}
					}
				}
				return math.Max(v, 0)
			}
			for k := 0; k < K; k++ {
				for ph := 0; ph < Ho/2; ph++ {
					for pw := 0; pw < Wo/2; pw++ {
						m := math.Inf(-1)
						for i := 0; i < 2; i++ {
							for j := 0; j < 2; j++ {
								m = math.Max(m, conv(k, 2*ph+i, 2*pw+j))
							}
						}
						h = append(h, m)
					}
				}
			}
		} else {
			F, Hd := cfg.InShape[0], cfg.Hidden
			for j := 0; j < Hd; j++ {
				v := P[1][j]
				for f := 0; f < F; f++ {
					v += xs[f] * P[0][f*Hd+j]
				}
				h = append(h, math.Max(v, 0))
			}
		}
		wi, bi := 2, 3
		for j := 0; j < d; j++ {
			v := P[bi][j]
			for f := range h {
				v += h[f] * P[wi][f*d+j]
			}
			out[s*d+j] = v
		}
	}
	return out
}

func randInput(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64()
	}
	return x
}

// runGraph builds the graph for a batch, runs it once and returns the
// embedding as float64.
func runGraph(t *testing.T, net *Net, x []float64, n int, shape []int) []float64 {
	t.Helper()
	g := G.NewGraph()
	xn := G.NewTensor(g, net.Dtype(), len(shape), G.WithShape(shape...), G.WithName("x"))
	emb, _, err := net.Build(g, xn)
	if err != nil {
		t.Fatal(err)
	}
	if err := G.Let(xn, tensorOf(net, x, shape)); err != nil {
		t.Fatal(err)
	}
	var ev G.Value
	G.Read(emb, &ev)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if s := ev.Shape(); !s.Eq(tensor.Shape{n, net.Dim()}) {
		t.Fatalf("embedding shape %v, want (%d, %d)", s, n, net.Dim())
	}
	return toF64(ev.Data())
}

func tensorOf(net *Net, x []float64, shape []int) *tensor.Dense {
	if net.cfg.DType == Float32 {
		d := make([]float32, len(x))
		for i, v := range x {
			d[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
}

func toF64(d any) []float64 {
	switch d := d.(type) {
	case []float32:
		r := make([]float64, len(d))
		for i, v := range d {
			r[i] = float64(v)
		}
		return r
	case []float64:
		return append([]float64(nil), d...)
	}
	panic("toF64")
}

func maxRelErr(a, b []float64) float64 {
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(v))
	}
	e := 0.0
	for i := range a {
		e = math.Max(e, math.Abs(a[i]-b[i]))
	}
	return e / math.Max(scale, 1e-300)
}

// TestShapes checks the graph and Embed against the reference for the
// data sets' input shapes, both dtypes, and both graph input layouts.
func TestShapes(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		n    int
	}{
		{"mnist-1x28x28", Config{Kind: CNN, InShape: []int{1, 28, 28}, Channels: 4, Dim: 16}, 3},
		{"cifar-3x32x32", Config{Kind: CNN, InShape: []int{3, 32, 32}, Channels: 4, Dim: 16}, 2},
		{"omniglot-1x105x105", Config{Kind: CNN, InShape: []int{1, 105, 105}, Channels: 2, Dim: 8}, 2},
		{"odd-nopad-2x9x12", Config{Kind: CNN, InShape: []int{2, 9, 12}, Channels: 3, Padding: IntPtr(0), Dim: 5}, 4},
		{"pad2-1x5x5", Config{Kind: CNN, InShape: []int{1, 5, 5}, Channels: 3, Padding: IntPtr(2), Dim: 5}, 2},
		{"lung-mlp-56", Config{Kind: MLP, InShape: []int{56}, Hidden: 32, Dim: 16}, 5},
	}
	rng := rand.New(rand.NewSource(7))
	for _, c := range cases {
		for _, dt := range []DType{Float32, Float64} {
			t.Run(c.name+"/"+string(dt), func(t *testing.T) {
				cfg := c.cfg
				cfg.DType = dt
				net, err := New(cfg, 1)
				if err != nil {
					t.Fatal(err)
				}
				x := randInput(rng, c.n*net.cfg.InSize())
				want := refForward(net, x, c.n)
				tol := 1e-12
				if dt == Float32 {
					tol = 1e-5
				}
				shapes := [][]int{{c.n, net.cfg.InSize()}}
				if cfg.Kind == CNN {
					shapes = append(shapes, append([]int{c.n}, net.cfg.InShape...))
				}
				for _, sh := range shapes {
					got := runGraph(t, net, x, c.n, sh)
					if e := maxRelErr(got, want); e > tol {
						t.Errorf("graph with input %v: max rel error %g vs reference", sh, e)
					}
				}
				emb, err := net.Embed64(x, c.n)
				if err != nil {
					t.Fatal(err)
				}
				if e := maxRelErr(emb, want); e > tol {
					t.Errorf("Embed64: max rel error %g vs reference", e)
				}
				x32 := make([]float32, len(x))
				for i, v := range x {
					x32[i] = float32(v)
				}
				emb32, err := net.Embed(x32, c.n)
				if err != nil {
					t.Fatal(err)
				}
				if e := maxRelErr(emb32, want); e > 1e-5 {
					t.Errorf("Embed: max rel error %g vs reference", e)
				}
			})
		}
	}
}

// TestEmbedChunks checks that Embed's chunking (more than embedChunk
// samples) gives the per-sample answers.
func TestEmbedChunks(t *testing.T) {
	net, err := New(Config{Kind: CNN, InShape: []int{1, 6, 6}, Channels: 2, Dim: 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	n := 2*embedChunk + 5
	x := make([]float32, n*36)
	rng := rand.New(rand.NewSource(1))
	for i := range x {
		x[i] = rng.Float32()
	}
	all, err := net.Embed(x, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, embedChunk - 1, embedChunk, n - 1} {
		one, err := net.Embed(x[i*36:(i+1)*36], 1)
		if err != nil {
			t.Fatal(err)
		}
		if !sameEmbedding(one, all[i*3:i*3+3]) {
			t.Fatalf("sample %d: batched %v, alone %v", i, all[i*3:i*3+3], one)
		}
	}
}

func TestBadInput(t *testing.T) {
	net, err := New(Config{Kind: CNN, InShape: []int{1, 6, 6}, Channels: 2, Dim: 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.Embed(make([]float32, 35), 1); err == nil {
		t.Error("Embed accepted 35 values for one 1×6×6 sample")
	}
	x := make([]float32, 72)
	x[40] = float32(math.NaN())
	if _, err := net.Embed(x, 2); err == nil || !strings.Contains(err.Error(), "sample 1") {
		t.Errorf("Embed with NaN in sample 1: err = %v", err)
	}
	g := G.NewGraph()
	for _, c := range []struct {
		dt    tensor.Dtype
		shape []int
	}{
		{tensor.Float64, []int{2, 1, 6, 6}},
		{tensor.Float32, []int{2, 1, 6, 5}},
		{tensor.Float32, []int{2, 35}},
		{tensor.Float32, []int{2, 6, 6}},
	} {
		x := G.NewTensor(g, c.dt, len(c.shape), G.WithShape(c.shape...), G.WithName("x"))
		if _, _, err := net.Build(g, x); err == nil {
			t.Errorf("Build accepted a %v input of shape %v", c.dt, c.shape)
		}
	}
	bad := []Config{
		{Kind: "rnn", InShape: []int{1, 6, 6}},
		{Kind: CNN, InShape: []int{6, 6}},
		{Kind: CNN, InShape: []int{1, 2, 2}, Padding: IntPtr(0)},
		{Kind: CNN, InShape: []int{1, 6, 6}, Padding: IntPtr(3)},
		{Kind: CNN, InShape: []int{1, 6, 6}, Channels: -1},
		{Kind: CNN, InShape: []int{1, 0, 6}},
		{Kind: CNN, InShape: []int{1, 6, 6}, DType: "float16"},
		{Kind: CNN, InShape: []int{1, 6, 6}, Dim: -4},
		{Kind: CNN, InShape: []int{1, 6, 6}, Hidden: 3},
		{Kind: CNN, InShape: []int{1, 1 << 20, 1 << 20}},
		{Kind: MLP, InShape: []int{56, 1}},
		{Kind: MLP, InShape: []int{56}, Channels: 3},
	}
	for _, c := range bad {
		if _, err := New(c, 1); err == nil {
			t.Errorf("New accepted %v", c)
		}
	}
}

// lossGrads runs loss = Σ_ij c_ij·emb_ij + ½Σ emb² on the graph (training
// mode, as Net.Build) and returns the loss and the gradients of every
// parameter (as float64).
func lossGrads(t *testing.T, net *Net, x []float64, n int, c []float64) (float64, [][]float64) {
	t.Helper()
	_, loss, grads, _ := conv4Run(t, net, x, n, c, Train, false, false)
	return loss, grads
}

// refLoss is the same loss computed with the reference forward pass.
func refLoss(net *Net, x []float64, n int, c []float64) float64 {
	e := refForward(net, x, n)
	s := 0.0
	for i, v := range e {
		s += c[i]*v + 0.5*v*v
	}
	return s
}

// checkFD compares got, the gradient of loss with respect to v, with
// central finite differences of loss (step 1e-6, relative tolerance 1e-6)
// in every entry of v, and wants some gradient non-zero.
func checkFD(t *testing.T, name string, v, got []float64, loss func() float64) {
	t.Helper()
	const h = 1e-6
	nz := 0
	for j := range v {
		old := v[j]
		v[j] = old + h
		lp := loss()
		v[j] = old - h
		lm := loss()
		v[j] = old
		fd := (lp - lm) / (2 * h)
		if math.Abs(got[j]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s[%d]: gradient %.10g, finite difference %.10g", name, j, got[j], fd)
		}
		if got[j] != 0 {
			nz++
		}
	}
	if nz == 0 {
		t.Errorf("%s: all gradients zero", name)
	}
}

// TestGradientFD compares the graph's gradients (hand-written backward
// ops) with central finite differences of the reference forward pass, for
// every weight of small networks, in float64.
func TestGradientFD(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		n    int
	}{
		{"cnn-pad1", Config{Kind: CNN, InShape: []int{2, 7, 6}, Channels: 3, Dim: 4}, 3},
		{"cnn-pad0-odd", Config{Kind: CNN, InShape: []int{1, 9, 8}, Channels: 2, Padding: IntPtr(0), Dim: 3}, 2},
		{"cnn-batch>block", Config{Kind: CNN, InShape: []int{1, 5, 5}, Channels: 2, Dim: 3}, blockSize*2 + 3},
		{"mlp", Config{Kind: MLP, InShape: []int{6}, Hidden: 5, Dim: 4}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.DType = Float64
			net, err := New(cfg, 11)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(5))
			// Non-zero biases so that the bias gradients are exercised away
			// from the initial zeros.
			for _, p := range net.params {
				if strings.HasSuffix(p.Name, "bias") {
					for j := range p.F64 {
						p.F64[j] = 0.1 * rng.NormFloat64()
					}
				}
			}
			x := randInput(rng, c.n*net.cfg.InSize())
			cc := make([]float64, c.n*net.Dim())
			for i := range cc {
				cc[i] = rng.NormFloat64()
			}
			loss, grads := lossGrads(t, net, x, c.n, cc)
			if want := refLoss(net, x, c.n, cc); math.Abs(loss-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Fatalf("graph loss %v, reference %v", loss, want)
			}
			for pi, p := range net.params {
				checkFD(t, p.Name, p.F64, grads[pi], func() float64 { return refLoss(net, x, c.n, cc) })
			}
		})
	}
}

// TestGradientF32 checks the float32 graph's gradients (and Conv-4's input
// gradient) against the float64 graph's.
func TestGradientF32(t *testing.T) {
	for _, c := range []struct {
		name      string
		cfg       Config
		n         int
		inputGrad bool
		tol       float64
	}{
		{"cnn", Config{Kind: CNN, InShape: []int{3, 8, 8}, Channels: 4, Dim: 6}, 5, false, 1e-4},
		{"conv4", Config{Kind: Conv4, InShape: []int{3, 20, 20}, Channels: 8, Dim: 5}, 6, true, 1e-3},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.DType = Float64
			n64, err := New(cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			cfg.DType = Float32
			n32, err := New(cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(9))
			x := randInput(rng, c.n*cfg.InSize())
			cc := make([]float64, c.n*cfg.Dim)
			for i := range cc {
				cc[i] = rng.NormFloat64()
			}
			_, _, g64, dx64 := conv4Run(t, n64, x, c.n, cc, Train, false, c.inputGrad)
			_, _, g32, dx32 := conv4Run(t, n32, x, c.n, cc, Train, false, c.inputGrad)
			for i := range g64 {
				if e := maxRelErr(g32[i], g64[i]); e > c.tol {
					t.Errorf("%s: float32 gradient max rel error %g", n64.params[i].Name, e)
				}
			}
			if e := maxRelErr(dx32, dx64); c.inputGrad && e > c.tol {
				t.Errorf("input: float32 gradient max rel error %g", e)
			}
		})
	}
}

// TestDeterminism: same seed → same weights; different seed → different;
// training steps give bit-identical weights with 1 or 2 goroutines.
func TestDeterminism(t *testing.T) {
	cfg := Config{Kind: CNN, InShape: []int{1, 12, 12}, Channels: 4, Dim: 8}
	a, _ := New(cfg, 42)
	b, _ := New(cfg, 42)
	c, _ := New(cfg, 43)
	if !sameWeights(a, b) {
		t.Error("same seed gave different weights")
	}
	if sameWeights(a, c) {
		t.Error("different seeds gave the same weights")
	}
	train := func(procs int) *Net {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		s := newTrainStep(t, cfg, 3*blockSize+1, 42)
		for i := 0; i < 3; i++ {
			s.run(t)
		}
		return s.net
	}
	n1, n2, n2b := train(1), train(2), train(2)
	if !sameWeights(n1, n2) || !sameWeights(n2, n2b) {
		t.Error("training is not bit-reproducible across runs and GOMAXPROCS")
	}
	if sameWeights(n1, a) {
		t.Error("training did not change the weights")
	}
}

// sameWeights compares every parameter and buffer bit for bit.
func sameWeights(a, b *Net) bool {
	at, bt := a.tensors(), b.tensors()
	if len(at) != len(bt) {
		return false
	}
	for i, p := range at {
		if !sameParam(p, bt[i]) {
			return false
		}
	}
	return true
}

// sameParam compares two tensors bit for bit.
func sameParam(p, q *Param) bool {
	if p.Len() != q.Len() {
		return false
	}
	for j := 0; j < p.Len(); j++ {
		if math.Float64bits(p.At(j)) != math.Float64bits(q.At(j)) {
			return false
		}
	}
	return true
}

// TestTrainingReducesLoss: Adam on Σ emb² through the graph drives the
// loss down, for every body (Conv-4 with batch normalisation in training
// mode) and both dtypes.
func TestTrainingReducesLoss(t *testing.T) {
	for _, cfg := range []Config{
		{Kind: CNN, InShape: []int{1, 10, 10}, Channels: 4, Dim: 8, DType: Float32},
		{Kind: CNN, InShape: []int{3, 8, 8}, Channels: 4, Dim: 8, DType: Float64},
		{Kind: MLP, InShape: []int{56}, Hidden: 16, Dim: 8, DType: Float32},
		{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 4, Dim: 4, DType: Float32},
		{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 4, Dim: 4, DType: Float64},
	} {
		s := newTrainStep(t, cfg, 6, 3)
		s.adam.s.LR = 1e-2
		first := s.run(t)
		last := first
		for i := 0; i < 30; i++ {
			last = s.run(t)
		}
		if !(last < 0.5*first) {
			t.Errorf("%v: loss %g → %g after 30 Adam steps", cfg, first, last)
		}
	}
}

// TestAdamReference compares Adam.Step with the textbook update computed
// in float64, over several steps with changing gradients, and checks the
// gradients are zeroed.
func TestAdamReference(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		w0 := []float64{0.5, -1, 2, 0, 3e-3}
		wn := G.NewVector(g, dt, G.WithShape(len(w0)), G.WithName("w"), G.WithValue(tensorOfDT(dt, w0)))
		cost := G.Must(G.Sum(G.Must(G.Cube(wn))))
		if _, err := G.Grad(cost, wn); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(wn))
		s := AdamSettings{LR: 0.05, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6}
		opt, err := NewAdam(s, G.Nodes{wn})
		if err != nil {
			t.Fatal(err)
		}
		w := append([]float64(nil), w0...)
		m := make([]float64, len(w))
		v := make([]float64, len(w))
		for step := 1; step <= 5; step++ {
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			if err := opt.Step(); err != nil {
				t.Fatal(err)
			}
			vm.Reset()
			for j := range w {
				gj := 3 * w[j] * w[j]
				m[j] = s.Beta1*m[j] + (1-s.Beta1)*gj
				v[j] = s.Beta2*v[j] + (1-s.Beta2)*gj*gj
				mh := m[j] / (1 - math.Pow(s.Beta1, float64(step)))
				vh := v[j] / (1 - math.Pow(s.Beta2, float64(step)))
				w[j] -= s.LR * mh / (math.Sqrt(vh) + s.Eps)
			}
			got := toF64(wn.Value().Data())
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 1e-5
			}
			if e := maxRelErr(got, w); e > tol {
				t.Fatalf("%v step %d: weights %v, reference %v", dt, step, got, w)
			}
			gv, _ := wn.Grad()
			for _, x := range toF64(gv.Data()) {
				if x != 0 {
					t.Fatalf("gradient not zeroed after step: %v", gv)
				}
			}
		}
		vm.Close()
	}
	if _, err := NewAdam(AdamSettings{LR: -1}, nil); err == nil {
		t.Error("NewAdam accepted lr = -1")
	}
	if _, err := NewAdam(AdamSettings{Beta1: 1}, nil); err == nil {
		t.Error("NewAdam accepted beta1 = 1")
	}
}

func tensorOfDT(dt tensor.Dtype, x []float64) *tensor.Dense {
	if dt == tensor.Float32 {
		d := make([]float32, len(x))
		for i, v := range x {
			d[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(d))
	}
	return tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(append([]float64(nil), x...)))
}

// TestAdamVectorMatchesScalar: the AVX update equals the scalar Go update
// bit for bit (odd lengths exercise the scalar tail).
func TestAdamVectorMatchesScalar(t *testing.T) {
	testAdamVec[float32](t)
	testAdamVec[float64](t)
}

func testAdamVec[T Float](t *testing.T) {
	for _, read := range []bool{false, true} {
		testAdamVecRead[T](t, read)
	}
}

func testAdamVecRead[T Float](t *testing.T, read bool) {
	rng := rand.New(rand.NewSource(3))
	n := 1000 + 13
	mk := func(scale float64) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = T(rng.NormFloat64() * scale)
		}
		return x
	}
	w, g, m := mk(1), mk(1e-2), mk(1e-3)
	v := mk(1e-4)
	for i := range v {
		v[i] *= v[i]
	}
	w2, g2, m2, v2 := append([]T(nil), w...), append([]T(nil), g...), append([]T(nil), m...), append([]T(nil), v...)
	s := AdamSettings{}.withDefaults()
	c1, c2 := 1/(1-0.9*0.9), 1/(1-0.999*0.999)
	g0 := append([]T(nil), g...)
	adamUpdate(w, g, m, v, s, c1, c2, read)
	var p [8]T
	p[0], p[1] = T(s.Beta1), T(1-s.Beta1)
	p[2], p[3] = T(s.Beta2), T(1-s.Beta2)
	p[4], p[5], p[6] = T(s.LR*c1), T(math.Sqrt(c2)), T(s.Eps)
	adamScalar(w2, g2, m2, v2, &p, read)
	for i := range w {
		gw := T(0)
		if read {
			gw = g0[i] // read: the gradient is left as it was
		}
		if w[i] != w2[i] || m[i] != m2[i] || v[i] != v2[i] || g[i] != gw || g2[i] != gw {
			t.Fatalf("%T read %v element %d: vector (w %v m %v v %v), scalar (w %v m %v v %v)", T(0), read, i, w[i], m[i], v[i], w2[i], m2[i], v2[i])
		}
	}
	if !useAdamAsm {
		t.Log("AVX not available: vector path not exercised")
	}
}

// TestSharedApply: two Apply calls on one Graph share the weights, so the
// gradient of L1(emb(x1)) + L2(emb(x2)) is the sum of the separate
// gradients; and each embedding equals the reference.
func TestSharedApply(t *testing.T) {
	cfg := Config{Kind: CNN, InShape: []int{1, 7, 7}, Channels: 3, Dim: 4, DType: Float64}
	net, err := New(cfg, 8)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(4))
	x1, x2 := randInput(rng, 3*49), randInput(rng, 5*49)
	c1, c2 := make([]float64, 3*4), make([]float64, 5*4)
	for i := range c1 {
		c1[i] = rng.NormFloat64()
	}
	for i := range c2 {
		c2[i] = rng.NormFloat64()
	}
	_, g1 := lossGrads(t, net, x1, 3, c1)
	_, g2 := lossGrads(t, net, x2, 5, c2)

	g := G.NewGraph()
	gr, err := net.NewGraph(g, "")
	if err != nil {
		t.Fatal(err)
	}
	term := func(x []float64, n int, c []float64, name string) (*G.Node, *G.Node) {
		xn := G.NewTensor(g, tensor.Float64, 4, G.WithShape(n, 1, 7, 7), G.WithName(name), G.WithValue(tensorOf(net, x, []int{n, 1, 7, 7})))
		emb, err := gr.Apply(xn)
		if err != nil {
			t.Fatal(err)
		}
		cn := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 4), G.WithName("c"+name), G.WithValue(tensorOf(net, c, []int{n, 4})))
		lin := G.Must(G.Sum(G.Must(G.HadamardProd(cn, emb))))
		sq := G.Must(G.Mul(G.NewConstant(0.5), G.Must(G.Sum(G.Must(G.Square(emb))))))
		return G.Must(G.Add(lin, sq)), emb
	}
	l1, e1 := term(x1, 3, c1, "x1")
	l2, e2 := term(x2, 5, c2, "x2")
	cost := G.Must(G.Add(l1, l2))
	if _, err := G.Grad(cost, gr.Learnables...); err != nil {
		t.Fatal(err)
	}
	var v1, v2 G.Value
	G.Read(e1, &v1)
	G.Read(e2, &v2)
	vm := G.NewTapeMachine(g, G.BindDualValues(gr.Learnables...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if e := maxRelErr(toF64(v1.Data()), refForward(net, x1, 3)); e > 1e-12 {
		t.Errorf("first embedding: rel error %g", e)
	}
	if e := maxRelErr(toF64(v2.Data()), refForward(net, x2, 5)); e > 1e-12 {
		t.Errorf("second embedding: rel error %g", e)
	}
	for i, l := range gr.Learnables {
		gv, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		got := toF64(gv.Data())
		want := make([]float64, len(got))
		for j := range want {
			want[j] = g1[i][j] + g2[i][j]
		}
		if e := maxRelErr(got, want); e > 1e-12 {
			t.Errorf("%s: shared gradient rel error %g vs sum of separate gradients", l.Name(), e)
		}
	}
}

// sameEmbedding reports whether got is want: bit for bit in the pure-Go
// build, where every element of a matrix product is one fixed sequence of
// operations whatever the shapes and the CPU (fastgemm.go; gonum's loops
// without AVX2); with OpenBLAS (the openblas build) within 1e-5 of want's
// largest magnitude, since OpenBLAS picks its kernels, and so the order of
// each sum, by CPU and by the product's shape (on an Intel Xeon with
// AVX-512 an embedding of one sample and of a batch differed in the last
// float32 bit; on the AMD EPYC host they agreed). A wrong weight or a
// mixed-up sample moves an embedding by far more than 1e-5.
func sameEmbedding(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	tol := 0.0
	if BLAS == "openblas" {
		for _, w := range want {
			tol = math.Max(tol, 1e-5*math.Abs(w))
		}
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			return false
		}
	}
	return true
}

package gop

import (
	"math"
	"math/rand"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"gorgonia.org/tensor"
)

var tight = optlayer.Settings{Epsilon: 0.05, Tol: 0.5, RegTol: 1e-12, CGTol: 1e-13}

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

func dense(dt tensor.Dtype, x []float64, shape ...int) *tensor.Dense {
	if dt == tensor.Float32 {
		d := make([]float32, len(x))
		for i, v := range x {
			d[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
}

// refP computes PReg from features the long way (no Gorgonia).
func refP(t *testing.T, emb []float64, n, d int, s Settings) []float64 {
	t.Helper()
	c, err := optlayer.Costs(emb, n, d, s.Metric)
	if err != nil {
		t.Fatal(err)
	}
	return refPCost(t, c, n, s)
}

func refPCost(t *testing.T, c []float64, n int, s Settings) []float64 {
	t.Helper()
	c = append([]float64(nil), c...)
	if s.Normalize {
		m := 0.0
		for _, v := range c {
			m += v
		}
		m /= float64(len(c))
		for k := range c {
			c[k] /= m
		}
	}
	st := s.Solver
	r, err := optlayer.Solve(&optlayer.Problem{N: n, Cost: c, Labels: s.Labels, Theta: s.Theta}, &st)
	if err != nil {
		t.Fatal(err)
	}
	return r.PReg
}

func weighted(w, p []float64) float64 {
	s := 0.0
	for i := range w {
		s += w[i] * p[i]
	}
	return s
}

// graphGrads builds emb = net(x), P = LFD(emb), loss = Σ W⊙P and returns
// the loss, P and the gradients of the net's learnables.
func graphGrads(t *testing.T, net *model.Net, x []float64, n int, W []float64, s Settings) (float64, []float64, [][]float64, *Layer) {
	t.Helper()
	dt := net.Dtype()
	g := G.NewGraph()
	shape := append([]int{n}, net.Config().InShape...)
	xn := G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName("x"), G.WithValue(dense(dt, x, shape...)))
	emb, L, err := net.Build(g, xn)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := LFD(emb, s)
	if err != nil {
		t.Fatal(err)
	}
	M := layer.M()
	wn := G.NewMatrix(g, dt, G.WithShape(M, n), G.WithName("w"), G.WithValue(dense(dt, W, M, n)))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(wn, layer.Output))))
	if _, err := G.Grad(cost, L...); err != nil {
		t.Fatal(err)
	}
	var pv G.Value
	G.Read(layer.Output, &pv)
	vm := G.NewTapeMachine(g, G.BindDualValues(L...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var grads [][]float64
	for _, l := range L {
		gv, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, toF64(gv.Data()))
	}
	loss := 0.0
	switch v := cost.Value().Data().(type) {
	case float32:
		loss = float64(v)
	case float64:
		loss = v
	}
	return loss, toF64(pv.Data()), grads, layer
}

// TestGradientThroughConvNet: ∂(Σ W⊙P)/∂θ for the conv and linear weights
// of a small CNN, through the LFD op, against central finite differences of
// the plain forward (net.Embed64 → optlayer.Solve).
func TestGradientThroughConvNet(t *testing.T) {
	for _, c := range []struct {
		name      string
		metric    optlayer.Metric
		normalize bool
		theta     []float64
	}{
		{"euclid-normalised", optlayer.Euclidean, true, []float64{0.3}},
		{"sqeuclid-raw", optlayer.SqEuclidean, false, []float64{0.4, 0.8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			net, err := model.New(model.Config{Kind: model.CNN, InShape: []int{1, 6, 6}, Channels: 2, Dim: 3, DType: model.Float64}, 4)
			if err != nil {
				t.Fatal(err)
			}
			n := 6
			rng := rand.New(rand.NewSource(1))
			x := make([]float64, n*36)
			for i := range x {
				x[i] = rng.Float64()
			}
			s := Settings{Labels: []int{0, 1, 0, 1, 1, 0}, Theta: c.theta, Metric: c.metric, Normalize: c.normalize, Solver: tight}
			W := make([]float64, 2*n)
			for i := range W {
				W[i] = rng.NormFloat64()
			}
			lossOf := func() float64 {
				emb, err := net.Embed64(x, n)
				if err != nil {
					t.Fatal(err)
				}
				return weighted(W, refP(t, emb, n, 3, s))
			}
			loss, _, grads, layer := graphGrads(t, net, x, n, W, s)
			if r := layer.Result(); r == nil || r.Residual > 1e-9 {
				t.Fatalf("forward solve not converged: %+v", r)
			}
			if want := lossOf(); math.Abs(loss-want) > 1e-9 {
				t.Fatalf("graph loss %v, plain forward %v", loss, want)
			}
			const h = 1e-5
			for pi, p := range net.Params() {
				scale := 0.0
				for _, g := range grads[pi] {
					scale = math.Max(scale, math.Abs(g))
				}
				if p.Name == "linear.bias" {
					// Shifting every embedding by the same vector leaves the
					// costs unchanged: the gradient is zero.
					if scale > 1e-9 {
						t.Errorf("linear.bias: gradient %v, want 0 (translation invariance)", grads[pi])
					}
					continue
				}
				if scale == 0 {
					t.Errorf("%s: gradient is zero", p.Name)
					continue
				}
				step := 1
				if p.Len() > 40 {
					step = p.Len() / 40
				}
				for j := 0; j < p.Len(); j += step {
					old := p.F64[j]
					p.F64[j] = old + h
					lp := lossOf()
					p.F64[j] = old - h
					lm := lossOf()
					p.F64[j] = old
					fd := (lp - lm) / (2 * h)
					if math.Abs(grads[pi][j]-fd) > 1e-5*scale+1e-8 {
						t.Errorf("%s[%d]: gradient %.8g, finite difference %.8g (scale %.3g)", p.Name, j, grads[pi][j], fd, scale)
					}
				}
			}
		})
	}
}

// TestFloat32 runs the op in a float32 graph and compares with float64.
func TestFloat32(t *testing.T) {
	cfg := model.Config{Kind: model.CNN, InShape: []int{1, 6, 6}, Channels: 2, Dim: 3, DType: model.Float64}
	n64, _ := model.New(cfg, 4)
	cfg.DType = model.Float32
	n32, _ := model.New(cfg, 4)
	n := 6
	rng := rand.New(rand.NewSource(2))
	x := make([]float64, n*36)
	for i := range x {
		x[i] = rng.Float64()
	}
	W := make([]float64, 2*n)
	for i := range W {
		W[i] = rng.NormFloat64()
	}
	s := Settings{Labels: []int{0, 1, 0, 1, 1, 0}, Theta: []float64{0.3}, Normalize: true, Solver: tight}
	_, p64, g64, _ := graphGrads(t, n64, x, n, W, s)
	_, p32, g32, _ := graphGrads(t, n32, x, n, W, s)
	for i := range p64 {
		if math.Abs(p64[i]-p32[i]) > 1e-4 {
			t.Fatalf("P float32 %v, float64 %v", p32, p64)
		}
	}
	for k := range g64 {
		scale := 0.0
		for _, v := range g64[k] {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range g64[k] {
			if math.Abs(g64[k][j]-g32[k][j]) > 1e-3*scale+1e-6 {
				t.Fatalf("param %d grad[%d]: float32 %v, float64 %v", k, j, g32[k][j], g64[k][j])
			}
		}
	}
}

// TestCostInput: LFDCost's gradient w.r.t. every cost entry vs finite
// differences.
func TestCostInput(t *testing.T) {
	n := 5
	rng := rand.New(rand.NewSource(3))
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				c[i*n+j] = 0.2 + rng.Float64()
			}
		}
	}
	s := Settings{Labels: []int{0, 1, 2, 0, 1}, Theta: []float64{0.2}, Normalize: true, Solver: tight}
	W := make([]float64, 3*n)
	for i := range W {
		W[i] = rng.NormFloat64()
	}
	g := G.NewGraph()
	cn := G.NewMatrix(g, tensor.Float64, G.WithShape(n, n), G.WithName("c"), G.WithValue(dense(tensor.Float64, c, n, n)))
	layer, err := LFDCost(cn, s)
	if err != nil {
		t.Fatal(err)
	}
	wn := G.NewMatrix(g, tensor.Float64, G.WithShape(3, n), G.WithName("w"), G.WithValue(dense(tensor.Float64, W, 3, n)))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(wn, layer.Output))))
	grads, err := G.Grad(cost, cn)
	if err != nil {
		t.Fatal(err)
	}
	var gv G.Value
	G.Read(grads[0], &gv)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := toF64(gv.Data())
	scale := 0.0
	for _, v := range got {
		scale = math.Max(scale, math.Abs(v))
	}
	const h = 1e-5
	for k := range c {
		if k/n == k%n {
			continue // the solver requires c(i,i) = 0
		}
		old := c[k]
		c[k] = old + h
		lp := weighted(W, refPCost(t, c, n, s))
		c[k] = old - h
		lm := weighted(W, refPCost(t, c, n, s))
		c[k] = old
		fd := (lp - lm) / (2 * h)
		if math.Abs(got[k]-fd) > 1e-5*scale+1e-8 {
			t.Errorf("∂L/∂c[%d][%d] = %.8g, finite difference %.8g", k/n, k%n, got[k], fd)
		}
	}
}

// TestNormalizeScaleInvariant: with Normalize, P does not change when the
// embedding is scaled; without it, it does.
func TestNormalizeScaleInvariant(t *testing.T) {
	n, d := 6, 3
	rng := rand.New(rand.NewSource(4))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	run := func(scale float64, norm bool) []float64 {
		g := G.NewGraph()
		xs := make([]float64, len(x))
		for i, v := range x {
			xs[i] = scale * v
		}
		xn := G.NewMatrix(g, tensor.Float64, G.WithShape(n, d), G.WithName("x"), G.WithValue(dense(tensor.Float64, xs, n, d)))
		l, err := LFD(xn, Settings{Labels: []int{0, 0, 0, 1, 1, 1}, Theta: []float64{0.5}, Normalize: norm, Solver: tight})
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		return toF64(l.Output.Value().Data())
	}
	a, b := run(1, true), run(10, true)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-8 {
			t.Fatalf("normalised P changed under scaling: %v vs %v", a, b)
		}
	}
	a, b = run(1, false), run(10, false)
	diff := 0.0
	for i := range a {
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
	}
	if diff < 1e-3 {
		t.Errorf("unnormalised P did not change under scaling (max diff %g); test is vacuous", diff)
	}
}

// TestHashDistinguishesParameters: ops differing in one parameter must not
// be merged by Gorgonia's hash-consing.
func TestHashDistinguishesParameters(t *testing.T) {
	g := G.NewGraph()
	xn := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"))
	base := Settings{Labels: []int{0, 1, 0, 1}, Theta: []float64{0.5}, Solver: tight}
	variants := []Settings{base}
	for _, change := range []func(*Settings){
		func(v *Settings) { v.Theta = []float64{0.6} },
		func(v *Settings) { v.Labels = []int{1, 0, 0, 1} },
		func(v *Settings) { v.Metric = optlayer.SqEuclidean },
		func(v *Settings) { v.Normalize = true },
		func(v *Settings) { v.Solver.Epsilon = 0.01 },
		func(v *Settings) { v.Solver.Tol = 1e-4 },
		func(v *Settings) { v.Solver.MaxIter = 7 },
		func(v *Settings) { v.Solver.RegTol = 1e-8 },
		func(v *Settings) { v.Solver.CGTol = 1e-9 },
	} {
		v := base
		change(&v)
		variants = append(variants, v)
	}
	seen := map[*G.Node]int{}
	for i, s := range variants {
		l, err := LFD(xn, s)
		if err != nil {
			t.Fatal(err)
		}
		if j, ok := seen[l.Output]; ok {
			t.Errorf("variant %d merged with variant %d", i, j)
		}
		seen[l.Output] = i
	}
	// Same parameters do merge (same function of the same input).
	l1, _ := LFD(xn, base)
	if _, ok := seen[l1.Output]; !ok {
		t.Log("identical op not merged (allowed)")
	}
}

func TestBadSettings(t *testing.T) {
	g := G.NewGraph()
	xn := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"))
	for i, s := range []Settings{
		{Labels: []int{0, 1, 0}, Theta: []float64{0.5}},
		{Labels: []int{0, 0, 0, 0}, Theta: []float64{0.5}, Metric: 7},
		{Labels: []int{0, 1, 0, 1}, Theta: []float64{-1}},
		{Labels: []int{0, 1, 0, 1}, Theta: []float64{0.5, 0.5, 0.5}},
		{Labels: []int{0, 2, 0, 2}, Theta: []float64{0.5}},
		{Labels: []int{0, 1, 0, 1}, Theta: []float64{0.5}, Solver: optlayer.Settings{Epsilon: math.NaN()}},
		{Labels: []int{0, 1, 0, 1}, Theta: []float64{0.5}, Solver: optlayer.Settings{MaxIter: -1}},
	} {
		if _, err := LFD(xn, s); err == nil {
			t.Errorf("case %d: LFD accepted %+v", i, s)
		}
	}
	if _, err := LFDCost(xn, Settings{Labels: []int{0, 1, 0, 1}, Theta: []float64{0.5}}); err == nil {
		t.Error("LFDCost accepted a 4×2 cost matrix")
	}
	// Identical points: normalisation is impossible; the run fails with an
	// error instead of a panic.
	xz := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("xz"), G.WithValue(dense(tensor.Float64, make([]float64, 8), 4, 2)))
	l, err := LFD(xz, Settings{Labels: []int{0, 1, 0, 1}, Theta: []float64{0.5}, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = l
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err == nil {
		t.Error("normalising all-zero costs: no error")
	}
}

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

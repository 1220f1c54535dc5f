package model

import (
	"math"
	"math/rand"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// refConv4 is an independent, loop-by-loop float64 implementation of the
// Conv-4 body (direct convolution with zero padding 1, batch normalisation
// with the batch's biased variance in Train mode or the running statistics
// in Inference mode, ReLU, floor 2×2 max-pool, NCHW flatten, optional
// linear layer). It also returns each block's batch mean and biased
// variance.
func refConv4(net *Net, x []float64, n int, mode Mode) (out []float64, means, vars [][]float64) {
	cfg := net.cfg
	P := map[string][]float64{}
	for _, p := range net.tensors() {
		v := make([]float64, p.Len())
		for j := range v {
			v[j] = p.At(j)
		}
		P[p.Name] = v
	}
	C, H, W := cfg.InShape[0], cfg.InShape[1], cfg.InShape[2]
	K := cfg.Channels
	act := append([]float64(nil), x...)
	for b := 1; b <= Conv4Blocks; b++ {
		pre := "block" + string(rune('0'+b)) + "."
		w := P[pre+"conv.weight"]
		z := make([]float64, n*K*H*W)
		for s := 0; s < n; s++ {
			for k := 0; k < K; k++ {
				for h := 0; h < H; h++ {
					for ww := 0; ww < W; ww++ {
						v := 0.0
						for c := 0; c < C; c++ {
							for kh := 0; kh < 3; kh++ {
								for kw := 0; kw < 3; kw++ {
									ih, iw := h+kh-1, ww+kw-1
									if ih >= 0 && ih < H && iw >= 0 && iw < W {
										v += w[((k*C+c)*3+kh)*3+kw] * act[((s*C+c)*H+ih)*W+iw]
									}
								}
							}
						}
						z[((s*K+k)*H+h)*W+ww] = v
					}
				}
			}
		}
		mean, vr := make([]float64, K), make([]float64, K)
		for k := 0; k < K; k++ {
			cnt := 0.0
			for s := 0; s < n; s++ {
				for i := 0; i < H*W; i++ {
					mean[k] += z[(s*K+k)*H*W+i]
					cnt++
				}
			}
			mean[k] /= cnt
			for s := 0; s < n; s++ {
				for i := 0; i < H*W; i++ {
					d := z[(s*K+k)*H*W+i] - mean[k]
					vr[k] += d * d
				}
			}
			vr[k] /= cnt
		}
		means, vars = append(means, mean), append(vars, vr)
		mu, va := mean, vr
		if mode == Inference {
			mu, va = P[pre+"bn.running_mean"], P[pre+"bn.running_var"]
		}
		gamma, beta := P[pre+"bn.weight"], P[pre+"bn.bias"]
		Hp, Wp := H/2, W/2
		next := make([]float64, n*K*Hp*Wp)
		for s := 0; s < n; s++ {
			for k := 0; k < K; k++ {
				for ph := 0; ph < Hp; ph++ {
					for pw := 0; pw < Wp; pw++ {
						m := math.Inf(-1)
						for i := 0; i < 2; i++ {
							for j := 0; j < 2; j++ {
								v := z[((s*K+k)*H+2*ph+i)*W+2*pw+j]
								y := gamma[k]*(v-mu[k])/math.Sqrt(va[k]+BNEps) + beta[k]
								m = math.Max(m, math.Max(y, 0))
							}
						}
						next[((s*K+k)*Hp+ph)*Wp+pw] = m
					}
				}
			}
		}
		act, C, H, W = next, K, Hp, Wp
	}
	if cfg.Dim == 0 {
		return act, means, vars
	}
	f, d := C*H*W, cfg.Dim
	out = make([]float64, n*d)
	for s := 0; s < n; s++ {
		for j := 0; j < d; j++ {
			v := P["linear.bias"][j]
			for i := 0; i < f; i++ {
				v += act[s*f+i] * P["linear.weight"][i*d+j]
			}
			out[s*d+j] = v
		}
	}
	return out, means, vars
}

// randomizeBN gives the BN parameters and running statistics non-trivial
// values, so that their gradients and uses are exercised.
func randomizeBN(net *Net, rng *rand.Rand) {
	for _, p := range net.tensors() {
		switch {
		case strings.HasSuffix(p.Name, "bn.weight"):
			for j := 0; j < p.Len(); j++ {
				p.Set(j, 0.5+rng.Float64())
			}
		case strings.HasSuffix(p.Name, "bn.bias"), strings.HasSuffix(p.Name, "running_mean"), p.Name == "linear.bias":
			for j := 0; j < p.Len(); j++ {
				p.Set(j, 0.2*rng.NormFloat64())
			}
		case strings.HasSuffix(p.Name, "running_var"):
			for j := 0; j < p.Len(); j++ {
				p.Set(j, 0.5+rng.Float64())
			}
		}
	}
}

// conv4Run builds a graph for one batch in the given mode and returns the
// embedding, the loss Σ c⊙emb + ½Σ emb², the gradients of every learnable
// and (when inputGrad) of the input. Every kind of network, not only
// Conv-4, is tested through it (lossGrads).
func conv4Run(t *testing.T, net *Net, x []float64, n int, c []float64, mode Mode, flat, inputGrad bool) (emb []float64, loss float64, grads [][]float64, dx []float64) {
	t.Helper()
	g := G.NewGraph()
	shape := append([]int{n}, net.cfg.InShape...)
	if flat {
		shape = []int{n, net.cfg.InSize()}
	}
	xn := G.NewTensor(g, net.Dtype(), len(shape), G.WithShape(shape...), G.WithName("x"), G.WithValue(tensorOf(net, x, shape)))
	gr, err := net.NewGraph(g, "")
	if err != nil {
		t.Fatal(err)
	}
	gr.InputGrad = inputGrad
	e, err := gr.ApplyMode(xn, mode)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dim()
	cn := G.NewMatrix(g, net.Dtype(), G.WithShape(n, d), G.WithName("c"), G.WithValue(tensorOf(net, c, []int{n, d})))
	half := G.NewConstant(0.5, G.WithName("half"))
	if net.Dtype() == tensor.Float32 {
		half = G.NewConstant(float32(0.5), G.WithName("half"))
	}
	lin := G.Must(G.Sum(G.Must(G.HadamardProd(cn, e))))
	sq := G.Must(G.Mul(half, G.Must(G.Sum(G.Must(G.Square(e))))))
	cost := G.Must(G.Add(lin, sq))
	wrt := append(G.Nodes(nil), gr.Learnables...)
	if inputGrad {
		wrt = append(wrt, xn)
	}
	if _, err := G.Grad(cost, wrt...); err != nil {
		t.Fatal(err)
	}
	var ev G.Value
	G.Read(e, &ev)
	vm := G.NewTapeMachine(g, G.BindDualValues(wrt...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for _, l := range gr.Learnables {
		gv, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, toF64(gv.Data()))
	}
	if inputGrad {
		gv, err := xn.Grad()
		if err != nil {
			t.Fatal(err)
		}
		dx = toF64(gv.Data())
	}
	switch v := cost.Value().Data().(type) {
	case float32:
		loss = float64(v)
	case float64:
		loss = v
	}
	return toF64(ev.Data()), loss, grads, dx
}

func conv4RefLoss(net *Net, x []float64, n int, c []float64, mode Mode) float64 {
	e, _, _ := refConv4(net, x, n, mode)
	s := 0.0
	for i, v := range e {
		s += c[i]*v + 0.5*v*v
	}
	return s
}

// TestConv4Forward checks the graph in both modes, both dtypes and both
// input layouts, and Embed, against the loop-by-loop reference; and that a
// training-mode run updates the running statistics exactly as PyTorch's
// BatchNorm2d does (momentum 0.1, unbiased variance), twice.
func TestConv4Forward(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		n    int
	}{
		{"omniglot-1x28x28", Config{Kind: Conv4, InShape: []int{1, 28, 28}, Channels: 5}, 3},
		{"rgb-3x20x17-linear", Config{Kind: Conv4, InShape: []int{3, 20, 17}, Channels: 4, Dim: 6}, 2},
		{"min-2x16x16", Config{Kind: Conv4, InShape: []int{2, 16, 16}, Channels: 3}, 4},
		{"many-units-1x16x18", Config{Kind: Conv4, InShape: []int{1, 16, 18}, Channels: 2}, 2*maxUnits + 3},
	}
	rng := rand.New(rand.NewSource(3))
	for _, c := range cases {
		for _, dt := range []DType{Float64, Float32} {
			t.Run(c.name+"/"+string(dt), func(t *testing.T) {
				cfg := c.cfg
				cfg.DType = dt
				net, err := New(cfg, 2)
				if err != nil {
					t.Fatal(err)
				}
				randomizeBN(net, rng)
				tol := 1e-11
				if dt == Float32 {
					tol = 2e-4
				}
				x := randInput(rng, c.n*net.cfg.InSize())
				cc := make([]float64, c.n*net.Dim())
				for _, mode := range []Mode{Inference, Train} {
					for _, flat := range []bool{false, true} {
						before := net.Clone()
						want, means, vars := refConv4(net, x, c.n, mode)
						got, _, _, _ := conv4Run(t, net, x, c.n, cc, mode, flat, false)
						if e := maxRelErr(got, want); e > tol {
							t.Errorf("%s flat=%v: max rel error %g vs reference", mode, flat, e)
						}
						if mode == Inference {
							if !sameWeights(net, before) {
								t.Errorf("inference-mode run changed the net")
							}
							continue
						}
						// Running statistics: r ← 0.9 r + 0.1 s (variance unbiased).
						g := net.cfg.blocks()
						for b := 0; b < Conv4Blocks; b++ {
							m := float64(c.n * g[b].h * g[b].w)
							rm, rv := net.buffers[2*b], net.buffers[2*b+1]
							om, ov := before.buffers[2*b], before.buffers[2*b+1]
							for k := 0; k < rm.Len(); k++ {
								wm := 0.9*om.At(k) + 0.1*means[b][k]
								wv := 0.9*ov.At(k) + 0.1*vars[b][k]*m/(m-1)
								if math.Abs(rm.At(k)-wm) > tol*math.Max(1, math.Abs(wm)) || math.Abs(rv.At(k)-wv) > tol*math.Max(1, wv) {
									t.Fatalf("block %d channel %d: running (%v, %v), want (%v, %v)", b+1, k, rm.At(k), rv.At(k), wm, wv)
								}
							}
						}
						if sameWeights(net, before) {
							t.Error("training-mode run left the running statistics unchanged")
						}
						for i, p := range net.params {
							if !sameParam(p, before.params[i]) {
								t.Errorf("forward run changed learnable %s", p.Name)
							}
						}
					}
				}
				// Embed runs inference mode.
				want, _, _ := refConv4(net, x, c.n, Inference)
				emb, err := net.Embed64(x, c.n)
				if err != nil {
					t.Fatal(err)
				}
				if e := maxRelErr(emb, want); e > tol {
					t.Errorf("Embed64: max rel error %g vs reference", e)
				}
				if len(emb) != c.n*net.Dim() {
					t.Errorf("Embed64 gave %d values, want %d×%d", len(emb), c.n, net.Dim())
				}
			})
		}
	}
}

// TestConv4Dims checks the embedding widths of the standard inputs.
func TestConv4Dims(t *testing.T) {
	for _, c := range []struct {
		shape  []int
		dim    int
		want   int
		params int
	}{
		{[]int{1, 28, 28}, 0, 64, 9*64 + 3*9*64*64 + 4*2*64},
		{[]int{3, 84, 84}, 0, 1600, 27*64 + 3*9*64*64 + 4*2*64},
		{[]int{1, 105, 105}, 0, 6 * 6 * 64, 9*64 + 3*9*64*64 + 4*2*64},
		{[]int{1, 28, 28}, 32, 32, 9*64 + 3*9*64*64 + 4*2*64 + 64*32 + 32},
	} {
		net, err := New(Config{Kind: Conv4, InShape: c.shape, Dim: c.dim}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if net.Dim() != c.want || net.NumParams() != c.params || len(net.Buffers()) != 8 {
			t.Errorf("%v dim %d: Dim %d, %d params, %d buffers; want %d, %d, 8", c.shape, c.dim, net.Dim(), net.NumParams(), len(net.Buffers()), c.want, c.params)
		}
	}
}

// TestConv4GradientFD compares every gradient of the graph (conv weights,
// BN γ and β of every block, the optional linear layer, and the input)
// with central finite differences of the reference, in float64, in both
// modes.
func TestConv4GradientFD(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		n         int
		inputGrad bool
	}{
		{"2x16x16", Config{Kind: Conv4, InShape: []int{2, 16, 16}, Channels: 3}, 3, true},
		{"odd-1x17x19-linear", Config{Kind: Conv4, InShape: []int{1, 17, 19}, Channels: 2, Dim: 3}, 2, true},
		{"batch>units-1x16x16", Config{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 2}, maxUnits + 5, false},
	}
	for _, c := range cases {
		for _, mode := range []Mode{Train, Inference} {
			t.Run(c.name+"/"+mode.String(), func(t *testing.T) {
				cfg := c.cfg
				cfg.DType = Float64
				net, err := New(cfg, 11)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewSource(5))
				randomizeBN(net, rng)
				x := randInput(rng, c.n*net.cfg.InSize())
				cc := make([]float64, c.n*net.Dim())
				for i := range cc {
					cc[i] = rng.NormFloat64()
				}
				ref := net.Clone() // the graph's training-mode run updates net's running statistics
				_, loss, grads, dx := conv4Run(t, net, x, c.n, cc, mode, false, c.inputGrad)
				if want := conv4RefLoss(ref, x, c.n, cc, mode); math.Abs(loss-want) > 1e-10*math.Max(1, math.Abs(want)) {
					t.Fatalf("graph loss %v, reference %v", loss, want)
				}
				lossAt := func() float64 { return conv4RefLoss(ref, x, c.n, cc, mode) }
				for pi, p := range ref.params {
					checkFD(t, p.Name, p.F64, grads[pi], lossAt)
				}
				if c.inputGrad {
					checkFD(t, "input", x, dx, lossAt)
				}
			})
		}
	}
}

// TestConv4Determinism: training steps (weights, Adam, running
// statistics) are bit-identical with 1 or 2 goroutines and across runs;
// Adam does not touch the running statistics.
func TestConv4Determinism(t *testing.T) {
	cfg := Config{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 4}
	train := func(procs int) *trainStep {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		s := newTrainStep(t, cfg, 2*maxUnits+5, 42)
		for i := 0; i < 3; i++ {
			s.run(t)
		}
		return s
	}
	s1, s2, s2b := train(1), train(2), train(2)
	if !sameWeights(s1.net, s2.net) || !sameWeights(s2.net, s2b.net) {
		t.Error("training is not bit-reproducible across runs and GOMAXPROCS")
	}
	if len(s1.L) != 3*Conv4Blocks || len(s1.adam.m) != 3*Conv4Blocks {
		t.Errorf("%d learnables, Adam over %d tensors; want %d (running statistics are not learnable)", len(s1.L), len(s1.adam.m), 3*Conv4Blocks)
	}
	fresh, _ := New(cfg, 42)
	for i, p := range s1.net.buffers {
		if sameParam(p, fresh.buffers[i]) {
			t.Errorf("%s unchanged by 4 training-mode runs", p.Name)
		}
	}
}

// TestConv4EmbedChunks: Embed's chunking gives each sample's answer alone
// (inference mode has no cross-sample dependence).
func TestConv4EmbedChunks(t *testing.T) {
	net, err := New(Config{Kind: Conv4, InShape: []int{3, 84, 84}, Channels: 4}, 3)
	if err != nil {
		t.Fatal(err)
	}
	randomizeBN(net, rand.New(rand.NewSource(2)))
	ch := conv4EmbedChunk(net.cfg)
	n := ch + 3
	in := net.cfg.InSize()
	x := make([]float32, n*in)
	rng := rand.New(rand.NewSource(1))
	for i := range x {
		x[i] = rng.Float32()
	}
	all, err := net.Embed(x, n)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dim()
	for _, i := range []int{0, ch - 1, ch, n - 1} {
		one, err := net.Embed(x[i*in:(i+1)*in], 1)
		if err != nil {
			t.Fatal(err)
		}
		for j := range one {
			if one[j] != all[i*d+j] {
				t.Fatalf("sample %d: batched %v, alone %v", i, all[i*d:i*d+3], one[:3])
			}
		}
	}
}

// TestConv4Config: defaults and clear errors for impossible shapes.
func TestConv4Config(t *testing.T) {
	c := Config{Kind: Conv4, InShape: []int{1, 28, 28}}.WithDefaults()
	if c.Channels != 64 || c.Dim != 0 || *c.Padding != 1 || c.DType != Float32 {
		t.Errorf("defaults %v", c)
	}
	for _, bad := range []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: Conv4, InShape: []int{1, 8, 8}}, "block 4 gets a 1×1 input"},
		{Config{Kind: Conv4, InShape: []int{1, 28, 15}}, "block 4 gets a 3×1 input"},
		{Config{Kind: Conv4, InShape: []int{28, 28}}, "conv4 in_shape [28 28]"},
		{Config{Kind: Conv4, InShape: []int{1, 28, 28}, Padding: IntPtr(0)}, "conv4 padding 0, want 1"},
		{Config{Kind: Conv4, InShape: []int{1, 28, 28}, Hidden: 5}, "hidden"},
		{Config{Kind: Conv4, InShape: []int{1, 28, 28}, Dim: -1}, "dim = -1"},
		{Config{Kind: Conv4, InShape: []int{1, 28, 28}, Channels: 5000}, "channels = 5000"},
		{Config{Kind: Conv4, InShape: []int{1, 1 << 20, 1 << 20}}, "too large"},
	} {
		_, err := New(bad.cfg, 1)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: err = %v, want it to mention %q", bad.cfg, err, bad.want)
		}
	}
	net, _ := New(Config{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 2}, 1)
	g := G.NewGraph()
	x := G.NewTensor(g, tensor.Float32, 4, G.WithShape(1, 1, 16, 16), G.WithName("x"))
	gr, _ := net.NewGraph(g, "")
	if _, err := gr.ApplyMode(x, Mode(7)); err == nil {
		t.Error("ApplyMode accepted mode 7")
	}
	if _, err := gr.ApplyMode(G.NewTensor(g, tensor.Float32, 4, G.WithShape(1, 2, 16, 16), G.WithName("x2")), Train); err == nil {
		t.Error("Apply accepted 2 channels for a 1-channel net")
	}
}

// TestConv4SaveLoad: weights files and LoadWeights carry the running
// statistics; a net with other running statistics embeds differently.
func TestConv4SaveLoad(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		s := newTrainStep(t, Config{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 3, Dim: 2, DType: dt}, 5, 1)
		s.run(t)
		s.run(t)
		path := filepath.Join(t.TempDir(), "w.bin")
		if err := s.net.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !sameWeights(got, s.net) {
			t.Errorf("%s: loaded weights or running statistics differ", dt)
		}
		other, _ := New(s.net.Config(), 9)
		if err := other.LoadWeights(path); err != nil {
			t.Fatal(err)
		}
		if !sameWeights(other, s.net) {
			t.Errorf("%s: LoadWeights did not restore everything", dt)
		}
		x := make([]float32, 256)
		for i := range x {
			x[i] = float32(i%17) / 17
		}
		a, _ := s.net.Embed(x, 1)
		fresh, _ := New(s.net.Config(), 1)
		for i, p := range fresh.params {
			copy(p.F32, s.net.params[i].F32)
			copy(p.F64, s.net.params[i].F64)
		}
		b, _ := fresh.Embed(x, 1)
		same := true
		for i := range a {
			same = same && a[i] == b[i]
		}
		if same {
			t.Errorf("%s: embedding does not depend on the running statistics", dt)
		}
	}
}

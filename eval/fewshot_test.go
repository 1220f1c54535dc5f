package eval

import (
	"github.com/drknn/drknn/internal/lossop"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model"
	"gorgonia.org/tensor"
)

// heads under test, with non-default parameters so that every factor in
// the gradients matters.
func testHeads() map[string]fewShotHead {
	return map[string]fewShotHead{
		"proto":      protoHead{},
		"matching":   matchingHead{scale: 1},
		"matching-τ": matchingHead{scale: 3.5},
		"ridge":      ridgeHead{lambda: 0.7, rho: 0.3},
		"svm":        svmHead{c: 0.1, eps: 1, rho: 0.3},
		"svm-C":      svmHead{c: 2, eps: 0.5, rho: -0.2},
	}
}

// withRho returns a constructor of h with another log-scale ρ, for the
// heads that have one.
func withRho(h fewShotHead) (func(rho float64) fewShotHead, bool) {
	switch h := h.(type) {
	case ridgeHead:
		return func(rho float64) fewShotHead { h.rho = rho; return h }, true
	case svmHead:
		return func(rho float64) fewShotHead { h.rho = rho; return h }, true
	}
	return nil, false
}

func randEpisodes(rng *rand.Rand, byClass [][]int, k int) [][2][]int {
	eps := make([][2][]int, k)
	for i := range eps {
		eps[i][0], eps[i][1] = drawEpisode(byClass, rng)
	}
	return eps
}

// TestFewShotHeadGradient checks the gradient of the mean pseudo-episode
// loss with respect to every embedding coordinate (and the ridge head's
// log-scale) against central finite differences.
func TestFewShotHeadGradient(t *testing.T) {
	const n, d, m = 11, 4, 3
	rng := rand.New(rand.NewSource(3))
	y := []int{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 2}
	byClass := make([][]int, m)
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	eps := randEpisodes(rng, byClass, 3)
	e := make([]float64, n*d)
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	for name, h := range testHeads() {
		t.Run(name, func(t *testing.T) {
			var drho float64
			loss, grad, err := meanEpisodeLoss(h, e, n, d, m, y, eps, &drho)
			if err != nil {
				t.Fatal(err)
			}
			if !(loss > 0) {
				t.Fatalf("loss %v, want > 0", loss)
			}
			f := func(e []float64) float64 {
				var r float64
				l, _, err := meanEpisodeLoss(h, e, n, d, m, y, eps, &r)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			const step = 1e-6
			var maxErr, maxG float64
			for i := range e {
				ep := append([]float64(nil), e...)
				em := append([]float64(nil), e...)
				ep[i] += step
				em[i] -= step
				fd := (f(ep) - f(em)) / (2 * step)
				maxErr = math.Max(maxErr, math.Abs(fd-grad[i]))
				maxG = math.Max(maxG, math.Abs(grad[i]))
			}
			if maxG == 0 {
				t.Fatal("gradient is identically zero")
			}
			if maxErr > 1e-7*math.Max(1, maxG) {
				t.Errorf("max |analytic − finite difference| = %.3g (max |grad| %.3g)", maxErr, maxG)
			}
			if sv, ok := h.(svmHead); ok {
				// The episodes must exercise free and bound components.
				var free, bound int
				for _, ep := range eps {
					sup := ep[0]
					ns := len(sup)
					kt := make([]float64, ns*ns)
					ys := make([]int, ns)
					for a, i := range sup {
						ys[a] = y[i]
						for b, j := range sup {
							for k := 0; k < d; k++ {
								kt[a*ns+b] += e[i*d+k] * e[j*d+k]
							}
						}
						kt[a*ns+a] += sv.eps
					}
					sol, err := solveSVM(kt, ys, m, sv.c)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range sol.free {
						if f {
							free++
						} else {
							bound++
						}
					}
				}
				t.Logf("SVM components: %d free, %d at a bound", free, bound)
				if free == 0 || bound == 0 {
					t.Errorf("SVM episodes have %d free and %d bound components; want both", free, bound)
				}
			}
			if at, ok := withRho(h); ok {
				fr := func(rho float64) float64 {
					var dr float64
					l, _, err := meanEpisodeLoss(at(rho), e, n, d, m, y, eps, &dr)
					if err != nil {
						t.Fatal(err)
					}
					return l
				}
				rho := 0.3
				if sv, ok := h.(svmHead); ok {
					rho = sv.rho
				}
				fd := (fr(rho+step) - fr(rho-step)) / (2 * step)
				if math.Abs(fd-drho) > 1e-7*math.Max(1, math.Abs(fd)) || drho == 0 {
					t.Errorf("∂loss/∂ρ = %v, finite difference %v", drho, fd)
				}
			}
		})
	}
}

// TestFewShotHeadsHandWorked checks each head's probabilities on small
// cases worked by hand.
func TestFewShotHeadsHandWorked(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	// Proto, d = 1: prototypes 0 (mean of −1, 1) and 2; query 0.5 has
	// logits −0.25 and −2.25, so p₀ = 1/(1+e⁻²).
	z, _, err := protoHead{}.apply([]float64{-1, 1, 2}, []int{0, 0, 1}, []float64{0.5}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	softmaxRows(z, 2)
	if want := 1 / (1 + math.Exp(-2)); !near(z[0], want) || !near(z[1], 1-want) {
		t.Errorf("proto probabilities %v, want [%v %v]", z, want, 1-want)
	}
	// Matching, d = 2: supports (1,0) class 0, (0,1) and (−1,0) class 1;
	// query (2,0) has cosines 1, 0, −1, so p₀ = e/(e + 1 + e⁻¹).
	z, _, err = matchingHead{scale: 1}.apply([]float64{1, 0, 0, 1, -1, 0}, []int{0, 1, 1}, []float64{2, 0}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	softmaxRows(z, 2)
	if want := math.E / (math.E + 1 + 1/math.E); !near(z[0], want) || !near(z[1], 1-want) {
		t.Errorf("matching probabilities %v, want [%v %v]", z, want, 1-want)
	}
	// Ridge, d = 1: supports 1 (class 0) and −1 (class 1), λ = 1.
	// K = [[2, −1], [−1, 2]], K⁻¹ = [[2, 1], [1, 2]]/3, A = K⁻¹, W = XᵀA =
	// [1/3, −1/3]; query 3 at scale e^ρ = 2 has logits 2, −2.
	z, _, err = ridgeHead{lambda: 1, rho: math.Log(2)}.apply([]float64{1, -1}, []int{0, 1}, []float64{3}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(z[0], 2) || !near(z[1], -2) {
		t.Errorf("ridge logits %v, want [2 −2]", z)
	}
}

// TestFewShotGraphGradient checks the whole training graph — body, loss op
// and its backward op — against finite differences of the plain-Go loss on
// the network's own Embed, for a few weights of a small float64 CNN.
func TestFewShotGraphGradient(t *testing.T) {
	const n, m = 6, 2
	shape := []int{1, 6, 6}
	rng := rand.New(rand.NewSource(5))
	x := make([]float32, n*36)
	for i := range x {
		x[i] = rng.Float32()
	}
	y := []int{0, 0, 0, 1, 1, 1}
	byClass := [][]int{{0, 1, 2}, {3, 4, 5}}
	eps := randEpisodes(rng, byClass, 2)
	for name, h := range testHeads() {
		t.Run(name, func(t *testing.T) {
			net, err := model.New(model.Config{Kind: model.CNN, InShape: shape, Channels: 2, Dim: 3, DType: model.Float64}, 7)
			if err != nil {
				t.Fatal(err)
			}
			g := G.NewGraph()
			x64 := make([]float64, len(x))
			for i, v := range x {
				x64[i] = float64(v)
			}
			full := append([]int{n}, shape...)
			xn := G.NewTensor(g, tensor.Float64, 4, G.WithShape(full...), G.WithName("x"),
				G.WithValue(tensor.New(tensor.WithShape(full...), tensor.WithBacking(x64))))
			emb, learn, err := net.Build(g, xn)
			if err != nil {
				t.Fatal(err)
			}
			var drho float64
			spec := lossop.New("FewShotLoss", func(e []float64, n, d int) (float64, []float64, error) {
				return meanEpisodeLoss(h, e, n, d, m, y, eps, &drho)
			})
			loss, err := spec.Apply(emb)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := G.Grad(loss, learn...); err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g, G.BindDualValues(learn...))
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			plain := func() float64 {
				e, err := net.Embed(x, n)
				if err != nil {
					t.Fatal(err)
				}
				var r float64
				l, _, err := meanEpisodeLoss(h, e, n, 3, m, y, eps, &r)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			if got, want := lastLoss(t, spec), plain(); math.Abs(got-want) > 1e-10 {
				t.Fatalf("graph loss %v, plain-Go loss on Embed %v", got, want)
			}
			checked := 0
			for pi, p := range net.Params() {
				gv, err := learn[pi].Grad()
				if err != nil {
					t.Fatal(err)
				}
				gd := gv.Data().([]float64)
				for _, i := range []int{0, p.Len() / 2, p.Len() - 1} {
					v := p.At(i)
					const step = 1e-6
					p.Set(i, v+step)
					lp := plain()
					p.Set(i, v-step)
					lm := plain()
					p.Set(i, v)
					fd := (lp - lm) / (2 * step)
					if math.Abs(fd-gd[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
						t.Errorf("%s[%d]: graph gradient %v, finite difference %v", p.Name, i, gd[i], fd)
					}
					checked++
				}
			}
			if checked < 12 {
				t.Fatalf("checked %d weights", checked)
			}
		})
	}
}

// syntheticEpisode is a 2-way episode of the built-in synthetic images.
func syntheticEpisode(t *testing.T, shots, queries int, seed int64) (x []float32, y []int, q []float32, yq []int, shape []int) {
	t.Helper()
	ds, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 4, PerClass: 80, Size: 12, Noise: 0.25, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := datasets.NewEpisode(ds, datasets.EpisodeSettings{Ways: 2, Shots: shots, Queries: queries, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	tr, qs := ep.Train(ds), ep.Query(ds)
	return tr.X, ep.TrainLabels, qs.X, ep.QueryLabels, ds.Shape
}

func smallSettings(steps int) FewShotSettings {
	return FewShotSettings{Model: model.Config{Channels: 4, Dim: 16}, Steps: steps, LR: 1e-2, Seed: 1}
}

// TestFewShotLearnsSynthetic trains each method on a 2-way 5-shot episode
// of the synthetic images: training lowers the loss on the first step's
// pseudo-episodes well below its untrained value, and the trained method
// classifies unseen queries far better than chance and better than its
// untrained body.
func TestFewShotLearnsSynthetic(t *testing.T) {
	x, y, q, yq, shape := syntheticEpisode(t, 5, 200, 2)
	for _, method := range FewShotMethods() {
		t.Run(method, func(t *testing.T) {
			untrained, err := TrainFewShot(method, smallSettings(0), shape, x, y, 2)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := untrained.Predict(q, len(yq))
			if err != nil {
				t.Fatal(err)
			}
			acc0, _ := Accuracy(pred, yq)
			f, err := NewFewShot(method, smallSettings(40))
			if err != nil {
				t.Fatal(err)
			}
			acc, _, err := EvaluateFewShot(f, x, shape, y, 2, q, len(yq), yq)
			if err != nil {
				t.Fatal(err)
			}
			losses := f.Losses()
			if len(losses) != 40 {
				t.Fatalf("%d losses, want 40", len(losses))
			}
			// The loss of step 0's pseudo-episodes, at the trained weights.
			e, err := f.Net().Embed(x, len(y))
			if err != nil {
				t.Fatal(err)
			}
			byClass := [][]int{nil, nil}
			for i, c := range y {
				byClass[c] = append(byClass[c], i)
			}
			eps := randEpisodes(stepRand(1, 0), byClass, f.Settings().Episodes)
			var r float64
			after, _, err := meanEpisodeLoss(f.head(f.rho), e, len(y), f.Net().Dim(), 2, y, eps, &r)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: accuracy untrained %.3f, trained %.3f; step-0 episodes' loss %.4f → %.4f", method, acc0, acc, losses[0], after)
			if !(after < 0.5*losses[0]) {
				t.Errorf("training did not halve the loss of the first pseudo-episodes: %v → %v", losses[0], after)
			}
			if acc < 0.8 {
				t.Errorf("trained accuracy %v on a 2-way synthetic task, want ≥ 0.8", acc)
			}
			if acc <= acc0 {
				t.Errorf("training did not improve accuracy: untrained %v, trained %v", acc0, acc)
			}
		})
	}
}

// TestFewShotDeterministic: the same seed gives the same votes, whatever
// the number of workers; another seed gives other weights.
func TestFewShotDeterministic(t *testing.T) {
	x, y, q, yq, shape := syntheticEpisode(t, 3, 300, 4)
	for _, method := range FewShotMethods() {
		s := smallSettings(5)
		s.Workers = 1
		a, err := TrainFewShot(method, s, shape, x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		s.Workers = 3
		b, err := TrainFewShot(method, s, shape, x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		va, err := a.Votes(q, len(yq))
		if err != nil {
			t.Fatal(err)
		}
		vb, err := b.Votes(q, len(yq))
		if err != nil {
			t.Fatal(err)
		}
		for i := range va {
			if va[i] != vb[i] {
				t.Fatalf("%s: vote %d differs between runs: %v vs %v", method, i, va[i], vb[i])
			}
		}
		// Refitting the same baseline gives the same votes.
		if err := a.Fit(x, shape, y, 2); err != nil {
			t.Fatal(err)
		}
		vr, err := a.Votes(q, len(yq))
		if err != nil {
			t.Fatal(err)
		}
		for i := range va {
			if va[i] != vr[i] {
				t.Fatalf("%s: vote %d differs after a refit: %v vs %v", method, i, va[i], vr[i])
			}
		}
		for j := 0; j < len(yq); j++ {
			if s := va[2*j] + va[2*j+1]; math.Abs(s-1) > 1e-12 {
				t.Fatalf("%s: votes of query %d sum to %v", method, j, s)
			}
		}
		s.Seed = 2
		c, err := TrainFewShot(method, s, shape, x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		if c.Losses()[0] == a.Losses()[0] {
			t.Errorf("%s: seeds 1 and 2 gave the same first loss %v", method, a.Losses()[0])
		}
	}
}

// TestFewShotMLP fits the MLP body on feature rows.
func TestFewShotMLP(t *testing.T) {
	ds, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 2, PerClass: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := datasets.NewEpisode(ds, datasets.EpisodeSettings{Ways: 2, Shots: 6, Queries: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range FewShotMethods() {
		f, err := NewFewShot(method, FewShotSettings{Model: model.Config{Hidden: 16, Dim: 8}, Steps: 10, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		acc, _, err := EvaluateFewShot(f, ep.Train(ds).X, ds.Shape, ep.TrainLabels, 2, ep.Query(ds).X, len(ep.QueryLabels), ep.QueryLabels)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if f.Net().Config().Kind != model.MLP {
			t.Errorf("%s: body %s for feature rows, want mlp", method, f.Net().Config().Kind)
		}
		t.Logf("%s on synthetic-gauss rows: accuracy %.3f", method, acc)
	}
}

// TestFewShotErrors: bad settings, shapes, values and labels are errors.
func TestFewShotErrors(t *testing.T) {
	x, y, q, _, shape := syntheticEpisode(t, 3, 10, 1)
	nan := append([]float32(nil), x...)
	nan[7] = float32(math.NaN())
	if _, err := NewFewShot("relation_net", FewShotSettings{}); err == nil || !strings.Contains(err.Error(), "relation_net") {
		t.Errorf("unknown method: %v", err)
	}
	for _, s := range []FewShotSettings{{Steps: -1}, {LR: math.NaN()}, {LR: -1}, {Episodes: -2}, {Lambda: -1}, {MatchingScale: math.Inf(1)}} {
		if _, err := NewFewShot(MethodMetaOptNetRR, s); err == nil {
			t.Errorf("settings %+v accepted", s)
		}
	}
	f, err := NewFewShot(MethodProtoNet, smallSettings(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Predict(q, 10); err != ErrNotFitted {
		t.Errorf("Predict before Fit: %v", err)
	}
	cases := []struct {
		name  string
		x     []float32
		shape []int
		y     []int
		m     int
	}{
		{"2-D shape", x, []int{12, 12}, y, 2},
		{"zero dimension", x, []int{1, 0, 12}, y, 2},
		{"negative dimension", x, []int{-1, 12, 12}, y, 2},
		{"short data", x[:len(x)-1], shape, y, 2},
		{"labels for more samples", x, shape, append(append([]int(nil), y...), 0), 2},
		{"NaN pixel", nan, shape, y, 2},
		{"label out of range", x, shape, []int{0, 0, 0, 1, 1, 2}, 2},
		{"negative label", x, shape, []int{0, 0, 0, 1, 1, -1}, 2},
		{"no classes", x, shape, y, 0},
		{"empty class", x, shape, y, 3},
		{"one sample in a class", x, shape, []int{0, 0, 0, 0, 0, 1}, 2},
		{"no samples", nil, shape, nil, 2},
		{"too small for the conv body", x[:6], []int{1, 1, 1}, y, 2},
	}
	for _, c := range cases {
		if err := f.Fit(c.x, c.shape, c.y, c.m); err == nil {
			t.Errorf("%s: Fit accepted it", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	// The CNN body refuses feature rows.
	g, err := NewFewShot(MethodMatchingNet, FewShotSettings{Model: model.Config{Kind: model.CNN}, Steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Fit(x, []int{144}, y, 2); err == nil {
		t.Error("CNN body fitted on [F] rows")
	}
	if err := f.Fit(x, shape, y, 2); err != nil {
		t.Fatal(err)
	}
	qn := append([]float32(nil), q...)
	qn[3] = float32(math.Inf(1))
	for name, c := range map[string]struct {
		q  []float32
		nq int
	}{"short": {q[:len(q)-1], 10}, "count": {q, 11}, "negative": {q, -1}, "Inf": {qn, 10}} {
		if _, err := f.Predict(c.q, c.nq); err == nil {
			t.Errorf("Predict %s: accepted", name)
		}
	}
	// A failed Fit leaves the baseline unfitted.
	if err := f.Fit(nan, shape, y, 2); err == nil {
		t.Fatal("NaN accepted")
	}
	if _, err := f.Predict(q, 10); err != ErrNotFitted {
		t.Errorf("Predict after a failed Fit: %v", err)
	}
	// One sample per class is enough without training.
	one := x[:2*144]
	if _, err := TrainFewShot(MethodProtoNet, smallSettings(0), shape, one, []int{0, 1}, 2); err != nil {
		t.Errorf("untrained fit on one sample per class: %v", err)
	}
}

// svmDual is the dual objective of the Crammer–Singer SVM.
func svmDual(kt, alpha []float64, ys []int, m int) float64 {
	ns := len(ys)
	var v float64
	for i := 0; i < ns; i++ {
		v += alpha[i*m+ys[i]]
		for j := 0; j < ns; j++ {
			for c := 0; c < m; c++ {
				v -= 0.5 * kt[i*ns+j] * alpha[i*m+c] * alpha[j*m+c]
			}
		}
	}
	return v
}

// TestSVMDualSolver checks the SVM dual solution against the KKT
// conditions, computed here independently, and against projected gradient
// ascent (another algorithm) run to convergence; the cases cover both
// bounds active and free components.
func TestSVMDualSolver(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var totalUpper, totalZero int
	for _, tc := range []struct {
		ns, m, d int
		C, eps   float64
	}{{6, 2, 3, 0.1, 1}, {9, 3, 4, 2, 0.5}, {12, 4, 20, 1, 1}, {20, 5, 8, 0.3, 0.05}} {
		s := make([]float64, tc.ns*tc.d)
		for i := range s {
			s[i] = rng.NormFloat64()
		}
		ys := make([]int, tc.ns)
		for i := range ys {
			ys[i] = i % tc.m
		}
		kt := make([]float64, tc.ns*tc.ns)
		for i := 0; i < tc.ns; i++ {
			for j := 0; j < tc.ns; j++ {
				for k := 0; k < tc.d; k++ {
					kt[i*tc.ns+j] += s[i*tc.d+k] * s[j*tc.d+k]
				}
			}
			kt[i*tc.ns+i] += tc.eps
		}
		sol, err := solveSVM(kt, ys, tc.m, tc.C)
		if err != nil {
			t.Fatal(err)
		}
		a := sol.alpha
		atUpper, atZero, free := 0, 0, 0
		for i := 0; i < tc.ns; i++ {
			var sum float64
			// ν_i from any free component; then every KKT condition.
			grad := make([]float64, tc.m)
			for c := 0; c < tc.m; c++ {
				sum += a[i*tc.m+c]
				if c == ys[i] {
					grad[c] = 1
				}
				for j := 0; j < tc.ns; j++ {
					grad[c] -= kt[i*tc.ns+j] * a[j*tc.m+c]
				}
			}
			if math.Abs(sum) > 1e-12 {
				t.Errorf("Σ_c α_%d = %v", i, sum)
			}
			nu := math.Inf(-1)
			for c := 0; c < tc.m; c++ {
				bound := 0.0
				if c == ys[i] {
					bound = tc.C
				}
				if a[i*tc.m+c] > bound+1e-12 {
					t.Errorf("α_%d[%d] = %v above its bound %v", i, c, a[i*tc.m+c], bound)
				}
				if a[i*tc.m+c] < bound-1e-9 {
					nu = grad[c]
				}
			}
			for c := 0; c < tc.m; c++ {
				bound := 0.0
				if c == ys[i] {
					bound = tc.C
				}
				switch {
				case a[i*tc.m+c] < bound-1e-9:
					free++
					if math.Abs(grad[c]-nu) > 1e-9 {
						t.Errorf("free α_%d[%d]: gradient %v ≠ ν %v", i, c, grad[c], nu)
					}
				case c == ys[i]:
					atUpper++
					if grad[c] < nu-1e-9 {
						t.Errorf("α_%d[%d] at C: gradient %v < ν %v", i, c, grad[c], nu)
					}
				default:
					atZero++
					if grad[c] < nu-1e-9 {
						t.Errorf("α_%d[%d] at 0: gradient %v < ν %v", i, c, grad[c], nu)
					}
				}
			}
		}
		// Projected gradient ascent from zero with step 1/‖K̃‖.
		var lmax float64
		for i := 0; i < tc.ns; i++ {
			var r float64
			for j := 0; j < tc.ns; j++ {
				r += math.Abs(kt[i*tc.ns+j])
			}
			lmax = math.Max(lmax, r)
		}
		b := make([]float64, tc.ns*tc.m)
		v := make([]float64, tc.m)
		for it := 0; it < 20000; it++ {
			nb := make([]float64, len(b))
			for i := 0; i < tc.ns; i++ {
				for c := 0; c < tc.m; c++ {
					g := 0.0
					if c == ys[i] {
						g = 1
					}
					for j := 0; j < tc.ns; j++ {
						g -= kt[i*tc.ns+j] * b[j*tc.m+c]
					}
					// β = C·e_y − α, projected onto the C-simplex.
					v[c] = -(b[i*tc.m+c] + g/lmax)
					if c == ys[i] {
						v[c] += tc.C
					}
				}
				projectSimplex(v, tc.C)
				for c := 0; c < tc.m; c++ {
					nb[i*tc.m+c] = -v[c]
					if c == ys[i] {
						nb[i*tc.m+c] += tc.C
					}
				}
			}
			b = nb
		}
		got, ref := svmDual(kt, a, ys, tc.m), svmDual(kt, b, ys, tc.m)
		if got < ref-1e-12*math.Max(1, math.Abs(ref)) || got-ref > 1e-9*math.Max(1, math.Abs(ref)) {
			t.Errorf("%+v: dual %v, projected gradient ascent %v", tc, got, ref)
		}
		t.Logf("%+v: dual %.12g (PGA %.12g); %d free, %d at C, %d at 0", tc, got, ref, free, atUpper, atZero)
		if free == 0 || atUpper+atZero == 0 {
			t.Errorf("%+v: the case does not exercise both free and bound components", tc)
		}
		totalUpper += atUpper
		totalZero += atZero
	}
	if totalUpper == 0 || totalZero == 0 {
		t.Errorf("no case has components at C (%d) or at 0 (%d)", totalUpper, totalZero)
	}
}

// TestProjectSimplex checks the simplex projection on hand-worked cases.
func TestProjectSimplex(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		r    float64
		want []float64
	}{
		{[]float64{0.5, 0.2, -1}, 1, []float64{0.65, 0.35, 0}},
		{[]float64{0.2, 0.3}, 1, []float64{0.45, 0.55}},
		{[]float64{3, 0, 0}, 0.1, []float64{0.1, 0, 0}},
		{[]float64{1, 1, 1, 1}, 2, []float64{0.5, 0.5, 0.5, 0.5}},
	} {
		v := append([]float64(nil), c.v...)
		projectSimplex(v, c.r)
		for k := range v {
			if math.Abs(v[k]-c.want[k]) > 1e-15 {
				t.Errorf("projection of %v onto the %v-simplex: %v, want %v", c.v, c.r, v, c.want)
				break
			}
		}
	}
}

// BenchmarkFewShotFit is one fit of each method with the paper's body (32
// channels, d = 400, float32 and float64) and 50 Adam steps on a 2-way 5-shot episode
// of 28×28 synthetic images — the size of an MNIST episode — followed by
// classifying 1,000 queries. Run with -benchtime=1x.
func BenchmarkFewShotFit(b *testing.B) {
	ds, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 2, PerClass: 600, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ep, err := datasets.NewEpisode(ds, datasets.EpisodeSettings{Ways: 2, Shots: 5, Queries: 1000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	tr, qs := ep.Train(ds), ep.Query(ds)
	for _, method := range FewShotMethods() {
		for _, dt := range []model.DType{model.Float32, model.Float64} {
			b.Run(method+"/"+string(dt), func(b *testing.B) {
				s := DefaultFewShotSettings()
				s.Model.DType = dt
				s.Steps = 50
				for i := 0; i < b.N; i++ {
					f, err := TrainFewShot(method, s, ds.Shape, tr.X, ep.TrainLabels, 2)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.Predict(qs.X, len(ep.QueryLabels)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func lastLoss(t *testing.T, l *lossop.Loss) float64 {
	t.Helper()
	v, err := l.Last()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSVMSweepBudgetFallback checks the path taken when the sweep budget runs
// out before the KKT polish certifies the optimum: the returned iterate is
// flagged approximate, is dual feasible (Σ_c α_i[c] = 0, α_i[c] ≤ C·[c = y_i]),
// its dual objective lies between that of α = 0 and the certified optimum,
// and it improves with more sweeps.
func TestSVMSweepBudgetFallback(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	ns, m, d, C := 15, 3, 6, 1.0
	s := make([]float64, ns*d)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	ys := make([]int, ns)
	for i := range ys {
		ys[i] = i % m
	}
	kt := make([]float64, ns*ns)
	for i := 0; i < ns; i++ {
		for j := 0; j < ns; j++ {
			for k := 0; k < d; k++ {
				kt[i*ns+j] += s[i*d+k] * s[j*d+k]
			}
		}
		kt[i*ns+i] += 0.1
	}
	dual := func(a []float64) float64 { return svmDual(kt, a, ys, m) }
	opt, err := solveSVM(kt, ys, m, C)
	if err != nil {
		t.Fatal(err)
	}
	if opt.approximate {
		t.Fatalf("the full budget should certify this problem (sweeps %d)", opt.sweeps)
	}
	dOpt := dual(opt.alpha)
	prev := 0.0 // D(0)
	for _, budget := range []int{1, 3, 9} {
		sol, err := solveSVMSweeps(kt, ys, m, C, budget)
		if err != nil {
			t.Fatal(err)
		}
		if !sol.approximate || sol.sweeps != budget {
			t.Fatalf("budget %d: approximate %v, sweeps %d", budget, sol.approximate, sol.sweeps)
		}
		for i := 0; i < ns; i++ {
			var sum float64
			for c := 0; c < m; c++ {
				a := sol.alpha[i*m+c]
				sum += a
				bound := 0.0
				if c == ys[i] {
					bound = C
				}
				if a > bound+1e-12 {
					t.Fatalf("budget %d: α_%d[%d] = %v above its bound %v", budget, i, c, a, bound)
				}
			}
			if math.Abs(sum) > 1e-12 {
				t.Fatalf("budget %d: Σ_c α_%d = %v", budget, i, sum)
			}
		}
		dv := dual(sol.alpha)
		if !(dv > prev) || dv > dOpt+1e-12 {
			t.Fatalf("budget %d: dual %v, want in (%v, %v]", budget, dv, prev, dOpt)
		}
		prev = dv
	}
}

// BenchmarkFewShotHeads times one forward and backward pass of each head
// at the sizes of training (a 5-way 10-shot pseudo-episode: 25 supports, 25
// queries) and of prediction (50 supports, a 128-query chunk), d = 400.
func BenchmarkFewShotHeads(b *testing.B) {
	const d, m = 400, 5
	for _, size := range []struct {
		name   string
		ns, nq int
	}{{"train", 25, 25}, {"predict", 50, 128}} {
		rng := rand.New(rand.NewSource(1))
		s := make([]float64, size.ns*d)
		q := make([]float64, size.nq*d)
		for i := range s {
			s[i] = rng.NormFloat64() / 20
		}
		for i := range q {
			q[i] = rng.NormFloat64() / 20
		}
		ys := make([]int, size.ns)
		for i := range ys {
			ys[i] = i % m
		}
		dz := make([]float64, size.nq*m)
		for i := range dz {
			dz[i] = rng.NormFloat64()
		}
		for _, name := range []string{"proto", "matching", "svm", "ridge"} {
			h := testHeads()[name]
			b.Run(name+"/"+size.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					_, back, err := h.apply(s, ys, q, d, m)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, _, err := back(dz); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

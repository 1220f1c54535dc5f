package optlayer

import (
	"math"
	"math/rand"
	"testing"
)

// fdSettings solve the regularised problem to near machine precision so that
// central differences of PReg are meaningful.
func fdSettings(eps float64) *Settings {
	return &Settings{Epsilon: eps, Tol: 1, RegTol: 1e-14}
}

func perturbed(p *Problem, i, j int, h float64) *Problem {
	q := *p
	q.Cost = append([]float64(nil), p.Cost...)
	q.Cost[i*p.N+j] += h
	return &q
}

func sumMax(P []float64, M, n int) float64 {
	var s float64
	for i := 0; i < n; i++ {
		mx := 0.0
		for m := 0; m < M; m++ {
			mx = math.Max(mx, P[m*n+i])
		}
		s += mx
	}
	return s
}

// entries picks off-diagonal cost entries, favouring those with mass.
func entries(rng *rand.Rand, n, k int) [][2]int {
	var out [][2]int
	for len(out) < k {
		i, j := rng.Intn(n), rng.Intn(n)
		if i != j {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

func checkVJP(t *testing.T, p *Problem, eps float64, forceCG bool, seed int64) {
	t.Helper()
	in, _ := p.instance()
	cfg, _ := fdSettings(eps).config(in)
	cfg.forceCG = forceCG
	r := solveInstance(in, cfg)
	if r.Residual > 1e-11 {
		t.Fatalf("regularised residual %g too large for finite differences", r.Residual)
	}
	rng := rand.New(rand.NewSource(seed))
	M, n := r.M, r.N
	gp := make([]float64, M*n)
	for k := range gp {
		gp[k] = rng.NormFloat64()
	}
	gc, err := r.VJP(gp)
	if err != nil {
		t.Fatal(err)
	}
	loss := func(q *Problem) float64 {
		inq, _ := q.instance()
		rq := solveInstance(inq, cfg)
		var l float64
		for k, g := range gp {
			l += g * rq.PReg[k]
		}
		return l
	}
	h := 1e-6
	var maxAbs, maxErr float64
	for _, e := range append(entries(rng, n, 12), [2]int{0, 1}) {
		i, j := e[0], e[1]
		fd := (loss(perturbed(p, i, j, h)) - loss(perturbed(p, i, j, -h))) / (2 * h)
		maxAbs = math.Max(maxAbs, math.Abs(fd))
		if d := math.Abs(fd - gc[i*n+j]); d > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂L/∂c(%d,%d): VJP %.8g, finite differences %.8g", i, j, gc[i*n+j], fd)
		}
		maxErr = math.Max(maxErr, math.Abs(fd-gc[i*n+j]))
	}
	if maxAbs < 1e-3 {
		t.Fatalf("degenerate check: all finite differences ≈ 0 (max %g)", maxAbs)
	}
	t.Logf("max |FD| %.3g, max error %.3g", maxAbs, maxErr)
}

func TestVJPFiniteDifferences(t *testing.T) {
	for k, c := range []struct {
		n, M int
		eps  float64
		rel  float64
	}{{8, 2, 0.05, 0.1}, {10, 3, 0.02, 0.1}, {12, 4, 0.01, 0.2}, {9, 3, 0.05, 0.5}} {
		p := gaussProblem(int64(40+k), c.n, c.M, 3, c.rel)
		checkVJP(t, p, c.eps, false, int64(k))
		checkVJP(t, p, c.eps, true, int64(k))
	}
	// target ε below smallEps: exact Newton steps and the sparse direct
	// backward solve (densekkt.go)
	for k, eps := range []float64{0.005, 0.002} {
		p := gaussProblem(int64(50+k), 16, 3, 3, 0.3)
		checkVJP(t, p, eps, false, int64(10+k))
	}
	// asymmetric costs, per-class radii, one class pinned at ϑ = 0
	rng := rand.New(rand.NewSource(9))
	p := randomCostProblem(rng, 10, 3)
	p.Theta = []float64{0.05, 0, 0.1}
	checkVJP(t, p, 0.03, false, 5)
}

// The dense and the iterative backward solves must agree.
func TestVJPDenseMatchesCG(t *testing.T) {
	p := gaussProblem(77, 60, 4, 6, 0.1)
	in, _ := p.instance()
	cfg, _ := (&Settings{RegTol: 1e-10, CGTol: 1e-12}).config(in)
	rd := solveInstance(in, cfg)
	cfg.forceCG = true
	rc := solveInstance(in, cfg)
	rng := rand.New(rand.NewSource(1))
	gp := make([]float64, rd.M*rd.N)
	for k := range gp {
		gp[k] = rng.NormFloat64()
	}
	a, err := rd.VJP(gp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rc.VJP(gp)
	if err != nil {
		t.Fatal(err)
	}
	var na, nd float64
	for k := range a {
		na = math.Max(na, math.Abs(a[k]))
		nd = math.Max(nd, math.Abs(a[k]-b[k]))
	}
	if na == 0 || nd > 1e-6*na {
		t.Fatalf("dense vs CG: max |dense| %g, max difference %g", na, nd)
	}
}

func TestAssembleMatchesApply(t *testing.T) {
	st := solvedState(t)
	for _, reg := range []float64{0, 0.3} {
		st.reg = reg
		H, _ := st.assemble()
		dim := st.n + st.L
		rng := rand.New(rand.NewSource(3))
		x := make([]float64, dim)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		y := make([]float64, dim)
		st.apply(x, y, st.newWork())
		for a := 0; a < dim; a++ {
			var s float64
			for b := 0; b < dim; b++ {
				s += H.At(a, b) * x[b]
			}
			if math.Abs(s-y[a]) > 1e-10*(1+math.Abs(y[a])) {
				t.Fatalf("reg %g row %d: assembled %g, operator %g", reg, a, s, y[a])
			}
		}
	}
	st.reg = 0
}

// ObjectiveGrad is the envelope derivative of the regularised value; the
// general VJP with ḡ = α is the derivative of Σ_i max_m PReg. Both are
// checked against finite differences of the quantities they claim to
// differentiate.
func TestObjectiveGradEnvelope(t *testing.T) {
	p := gaussProblem(51, 10, 3, 3, 0.15)
	set := fdSettings(0.02)
	r, err := Solve(p, set)
	if err != nil {
		t.Fatal(err)
	}
	og, err := r.ObjectiveGrad()
	if err != nil {
		t.Fatal(err)
	}
	gen, err := r.VJP(r.Dual.Alpha)
	if err != nil {
		t.Fatal(err)
	}
	n, M := r.N, r.M
	rng := rand.New(rand.NewSource(8))
	h := 1e-6
	var maxOG float64
	for _, e := range entries(rng, n, 15) {
		i, j := e[0], e[1]
		rp, _ := Solve(perturbed(p, i, j, h), set)
		rm, _ := Solve(perturbed(p, i, j, -h), set)
		fdV := (rp.RegValue - rm.RegValue) / (2 * h)
		fdS := (sumMax(rp.PReg, M, n) - sumMax(rm.PReg, M, n)) / (2 * h)
		if math.Abs(fdV-og[i*n+j]) > 1e-6*math.Max(1, math.Abs(fdV)) {
			t.Errorf("∂V/∂c(%d,%d): envelope %.8g, FD %.8g", i, j, og[i*n+j], fdV)
		}
		if math.Abs(fdS-gen[i*n+j]) > 1e-5*math.Max(1, math.Abs(fdS)) {
			t.Errorf("∂Σmax/∂c(%d,%d): VJP(α) %.8g, FD %.8g", i, j, gen[i*n+j], fdS)
		}
		maxOG = math.Max(maxOG, math.Abs(og[i*n+j]))
	}
	if maxOG == 0 {
		t.Fatal("envelope gradient vanished on the sampled entries")
	}
	// As ε → 0 the regularised value tends to the LP value and the two
	// derivatives approach each other: their difference is the derivative of
	// the entropy term, which must be small relative to either at small ε.
	rs, err := Solve(p, &Settings{Epsilon: 1e-4, RegTol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	ogs, _ := rs.ObjectiveGrad()
	gens, _ := rs.VJP(rs.Dual.Alpha)
	var tot, diff float64
	for k := range ogs {
		tot += math.Abs(ogs[k])
		diff += math.Abs(ogs[k] - gens[k])
	}
	if diff > 0.1*tot {
		t.Errorf("ε = 1e-4: |envelope − VJP(α)|₁ = %g vs |envelope|₁ = %g", diff, tot)
	}
}

func TestCostGradFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	n, dim := 7, 4
	x := make([]float64, n*dim)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	copy(x[5*dim:6*dim], x[2*dim:3*dim]) // a duplicate point: zero distance
	gc := make([]float64, n*n)
	for k := range gc {
		gc[k] = rng.NormFloat64()
	}
	for _, metric := range []Metric{Euclidean, SqEuclidean} {
		g, err := CostGrad(x, n, dim, metric, gc)
		if err != nil {
			t.Fatal(err)
		}
		f := func(x []float64) float64 {
			c, err := Costs(x, n, dim, metric)
			if err != nil {
				t.Fatal(err)
			}
			var s float64
			for k := range c {
				s += gc[k] * c[k]
			}
			return s
		}
		for k := range x {
			if metric == Euclidean && (k/dim == 2 || k/dim == 5) {
				continue // not differentiable at the duplicate pair
			}
			h := 1e-6
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[k] += h
			xm[k] -= h
			fd := (f(xp) - f(xm)) / (2 * h)
			if math.Abs(fd-g[k]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("metric %d: ∂/∂x[%d] = %g, FD %g", metric, k, g[k], fd)
			}
		}
		for k, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("metric %d: gradient[%d] = %v at a zero distance", metric, k, v)
			}
		}
	}
}

// FeatureGrad(VJP(·)) against finite differences of the whole pipeline
// features → costs → regularised LFD → loss.
func TestFeatureGradPipeline(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	n, dim := 9, 3
	x := make([]float64, n*dim)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	labels := []int{0, 1, 2, 0, 1, 2, 0, 1, 2}
	set := fdSettings(0.03)
	for _, metric := range []Metric{Euclidean, SqEuclidean} {
		th := 0.3
		if metric == SqEuclidean {
			th = 0.6
		}
		prob := func(x []float64) *Problem {
			return &Problem{N: n, Features: x, Dim: dim, Metric: metric, Labels: labels, Theta: []float64{th}}
		}
		r, err := Solve(prob(x), set)
		if err != nil {
			t.Fatal(err)
		}
		gp := make([]float64, r.M*n)
		for k := range gp {
			gp[k] = rng.NormFloat64()
		}
		gc, err := r.VJP(gp)
		if err != nil {
			t.Fatal(err)
		}
		gx, err := r.FeatureGrad(gc)
		if err != nil {
			t.Fatal(err)
		}
		loss := func(x []float64) float64 {
			rr, err := Solve(prob(x), set)
			if err != nil {
				t.Fatal(err)
			}
			var l float64
			for k, g := range gp {
				l += g * rr.PReg[k]
			}
			return l
		}
		var mx float64
		for k := 0; k < len(x); k += 2 {
			h := 1e-6
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[k] += h
			xm[k] -= h
			fd := (loss(xp) - loss(xm)) / (2 * h)
			mx = math.Max(mx, math.Abs(fd))
			if math.Abs(fd-gx[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("metric %d: ∂L/∂x[%d] = %.8g, FD %.8g", metric, k, gx[k], fd)
			}
		}
		if mx < 1e-4 {
			t.Fatalf("metric %d: all finite differences ≈ 0", metric)
		}
	}
}

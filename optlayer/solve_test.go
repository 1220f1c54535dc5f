package optlayer

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// randomCostProblem draws an arbitrary (asymmetric) non-negative cost matrix
// with zero diagonal, random labels with every class present and random radii.
func randomCostProblem(rng *rand.Rand, n, M int) *Problem {
	labels := make([]int, n)
	perm := rng.Perm(n)
	for k, i := range perm {
		if k < M {
			labels[i] = k
		} else {
			labels[i] = rng.Intn(M)
		}
	}
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				c[i*n+j] = rng.ExpFloat64()
			}
		}
	}
	th := make([]float64, M)
	for m := range th {
		u := rng.Float64()
		th[m] = 0.3 * rng.ExpFloat64() * u * u
	}
	return &Problem{N: n, Cost: c, Labels: labels, Theta: th}
}

// checkFeasible verifies that P is a feasible LFD: P ≥ 0, rows sum to 1 and,
// through the returned plans, the transport constraints and budgets hold.
func checkFeasible(t *testing.T, p *Problem, r *Result) {
	t.Helper()
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	n, M := in.n, in.m
	cnt := make([]int, M)
	for _, y := range in.labels {
		cnt[y]++
	}
	for m := 0; m < M; m++ {
		var sum float64
		for i := 0; i < n; i++ {
			x := r.P[m*n+i]
			if x < 0 || math.IsNaN(x) {
				t.Fatalf("P[%d][%d] = %v", m, i, x)
			}
			sum += x
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("row %d of P sums to %.15g", m, sum)
		}
	}
	var obj float64
	for i := 0; i < n; i++ {
		mx := 0.0
		for m := 0; m < M; m++ {
			mx = math.Max(mx, r.P[m*n+i])
		}
		obj += mx
	}
	if math.Abs(obj-r.Objective) > 1e-9*obj {
		t.Fatalf("Objective %.12g but Σ max P = %.12g", r.Objective, obj)
	}
	if r.Plans == nil {
		return
	}
	for m := 0; m < M; m++ {
		g := r.Plans[m]
		var cost float64
		for i := 0; i < n; i++ {
			var row float64
			for j := 0; j < n; j++ {
				x := g[i*n+j]
				if x < 0 {
					t.Fatalf("plan %d (%d,%d) = %v", m, i, j, x)
				}
				if in.labels[j] != m && x != 0 {
					t.Fatalf("plan %d moves mass from column %d of class %d", m, j, in.labels[j])
				}
				row += x
				cost += x * in.cost[i*n+j]
			}
			if math.Abs(row-r.P[m*n+i]) > 1e-12 {
				t.Fatalf("plan %d row %d sums to %v, P has %v", m, i, row, r.P[m*n+i])
			}
		}
		for j := 0; j < n; j++ {
			if in.labels[j] != m {
				continue
			}
			var col float64
			for i := 0; i < n; i++ {
				col += g[i*n+j]
			}
			if math.Abs(col-1/float64(cnt[m])) > 1e-12 {
				t.Fatalf("plan %d column %d sums to %v, want 1/%d", m, j, col, cnt[m])
			}
		}
		if cost > in.theta[m]*(1+1e-12)+1e-300 {
			t.Fatalf("plan %d costs %.15g > ϑ = %.15g", m, cost, in.theta[m])
		}
	}
}

func checkAgainstLP(t *testing.T, name string, p *Problem, s *Settings) *Result {
	t.Helper()
	if s == nil {
		s = &Settings{}
	}
	s.Plans = true
	r, err := Solve(p, s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	v := exactLP(t, p)
	slack := 1e-9 * math.Max(1, v)
	if r.LowerBound > v+slack || v > r.Objective+slack {
		t.Errorf("%s: bounds do not bracket the LP value: LB %.10g, LP %.10g, UB %.10g", name, r.LowerBound, v, r.Objective)
	}
	if r.Objective-v > r.Gap+slack {
		t.Errorf("%s: objective − LP = %.3g exceeds the reported gap %.3g", name, r.Objective-v, r.Gap)
	}
	tol := s.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	if r.Status != Optimal || r.RelGap > tol {
		t.Errorf("%s: status %d, relative gap %.3g > %.3g", name, r.Status, r.RelGap, tol)
	}
	checkFeasible(t, p, r)
	return r
}

func TestSolveMatchesExactLP(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	count := 0
	for trial := 0; trial < 40; trial++ {
		n := 3 + rng.Intn(14)
		M := 1 + rng.Intn(4)
		if M > n {
			M = n
		}
		var p *Problem
		if trial%2 == 0 {
			p = randomCostProblem(rng, n, M)
		} else {
			p = gaussProblem(int64(trial), n, M, 1+rng.Intn(5), []float64{0.02, 0.1, 0.3, 1}[rng.Intn(4)])
		}
		checkAgainstLP(t, "trial", p, nil)
		count++
	}
	if count != 40 {
		t.Fatal("not all trials ran")
	}
}

func TestSolveTightTolerance(t *testing.T) {
	p := gaussProblem(3, 16, 3, 4, 0.1)
	r := checkAgainstLP(t, "tight", p, &Settings{Tol: 1e-6})
	if r.RelGap > 1e-6 {
		t.Fatalf("rel gap %g", r.RelGap)
	}
}

func TestDegenerateThetaZero(t *testing.T) {
	p := gaussProblem(5, 12, 3, 3, 0)
	p.Theta = []float64{0}
	r := checkAgainstLP(t, "theta0", p, nil)
	if math.Abs(r.Objective-3) > 1e-9 || math.Abs(r.LowerBound-3) > 1e-9 {
		t.Fatalf("ϑ = 0: objective %v, lower bound %v, want 3", r.Objective, r.LowerBound)
	}
	n := p.N
	cnt := make([]float64, 3)
	for _, y := range p.Labels {
		cnt[y]++
	}
	for m := 0; m < 3; m++ {
		for i := 0; i < n; i++ {
			want := 0.0
			if p.Labels[i] == m {
				want = 1 / cnt[m]
			}
			if math.Abs(r.P[m*n+i]-want) > 1e-12 || math.Abs(r.PReg[m*n+i]-want) > 1e-12 {
				t.Fatalf("ϑ = 0: P[%d][%d] = %v, PReg = %v, want P̂ = %v", m, i, r.P[m*n+i], r.PReg[m*n+i], want)
			}
		}
	}
	// mixed radii: one class pinned, the others free
	p.Theta = []float64{0, 0.5, 0.2}
	checkAgainstLP(t, "mixed", p, nil)
}

func TestDegenerateThetaHuge(t *testing.T) {
	p := gaussProblem(6, 12, 3, 3, 0)
	p.Theta = []float64{1e6}
	r := checkAgainstLP(t, "huge", p, nil)
	if math.Abs(r.Objective-1) > 1e-3 {
		t.Fatalf("ϑ huge: objective %v, want 1", r.Objective)
	}
	if r.Dual.Lambda[0] != 0 {
		t.Fatalf("slack budget has λ = %v", r.Dual.Lambda[0])
	}
}

func TestDegenerateDuplicatesAndSingletons(t *testing.T) {
	// points 0,1,2 coincide (zero costs between them), class 2 has one point
	x := []float64{0, 0, 0, 0, 0, 0, 1, 0, 2, 1, 0, 3, 5, 5}
	labels := []int{0, 1, 0, 1, 0, 1, 2}
	for _, metric := range []Metric{Euclidean, SqEuclidean} {
		c, err := Costs(x, 7, 2, metric)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range []float64{0, 0.05, 0.3, 2} {
			p := &Problem{N: 7, Cost: c, Labels: labels, Theta: []float64{th}}
			r := checkAgainstLP(t, "dup", p, nil)
			if th == 0 && r.Objective > 3-1e-9 {
				// duplicates allow free mass exchange at zero cost
				t.Fatalf("ϑ = 0 with duplicates: objective %v, want < 3", r.Objective)
			}
		}
	}
}

func TestDegenerateSingleClassAndPoint(t *testing.T) {
	p := &Problem{N: 4, Cost: make([]float64, 16), Labels: []int{0, 0, 0, 0}, Theta: []float64{0.1}}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if i != j {
				p.Cost[i*4+j] = float64(i + j)
			}
		}
	}
	r := checkAgainstLP(t, "M=1", p, nil)
	if math.Abs(r.Objective-1) > 1e-12 {
		t.Fatalf("M = 1: objective %v", r.Objective)
	}
	r, err := Solve(&Problem{N: 1, Cost: []float64{0}, Labels: []int{0}, Theta: []float64{1}}, nil)
	if err != nil || r.Objective != 1 || r.P[0] != 1 {
		t.Fatalf("n = 1: %v %+v", err, r)
	}
}

func TestInvalidInputs(t *testing.T) {
	good := func() *Problem {
		return &Problem{N: 3, Cost: []float64{0, 1, 2, 1, 0, 1, 2, 1, 0}, Labels: []int{0, 1, 1}, Theta: []float64{0.1}}
	}
	cases := map[string]func(p *Problem){
		"nil cost and features": func(p *Problem) { p.Cost = nil },
		"both":                  func(p *Problem) { p.Features = []float64{1, 2, 3}; p.Dim = 1 },
		"short cost":            func(p *Problem) { p.Cost = p.Cost[:8] },
		"NaN cost":              func(p *Problem) { p.Cost[1] = math.NaN() },
		"Inf cost":              func(p *Problem) { p.Cost[1] = math.Inf(1) },
		"negative cost":         func(p *Problem) { p.Cost[5] = -1 },
		"diagonal":              func(p *Problem) { p.Cost[4] = 0.5 },
		"label gap":             func(p *Problem) { p.Labels = []int{0, 2, 2} },
		"negative label":        func(p *Problem) { p.Labels[0] = -1 },
		"short labels":          func(p *Problem) { p.Labels = p.Labels[:2] },
		"negative theta":        func(p *Problem) { p.Theta = []float64{-0.1} },
		"NaN theta":             func(p *Problem) { p.Theta = []float64{math.NaN()} },
		"Inf theta":             func(p *Problem) { p.Theta = []float64{math.Inf(1)} },
		"theta length":          func(p *Problem) { p.Theta = []float64{1, 2, 3} },
		"N zero":                func(p *Problem) { p.N = 0 },
		"N mismatch":            func(p *Problem) { p.N = 4 },
		"features NaN": func(p *Problem) {
			p.Cost = nil
			p.Features = []float64{0, math.NaN(), 1}
			p.Dim = 1
		},
		"features shape": func(p *Problem) { p.Cost = nil; p.Features = []float64{0, 1}; p.Dim = 1 },
		"features dim":   func(p *Problem) { p.Cost = nil; p.Features = []float64{0, 1, 2}; p.Dim = 0 },
		"metric":         func(p *Problem) { p.Cost = nil; p.Features = []float64{0, 1, 2}; p.Dim = 1; p.Metric = 7 },
		"overflow": func(p *Problem) {
			p.Cost = nil
			p.Features = []float64{0, 1e300, -1e300}
			p.Dim = 1
			p.Metric = SqEuclidean
		},
	}
	for name, mod := range cases {
		p := good()
		mod(p)
		if _, err := Solve(p, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
	if _, err := Solve(nil, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil problem: %v", err)
	}
	// the first bad cost is named, with what is wrong with it
	for _, c := range []struct {
		k    int
		v    float64
		want string
	}{{1, math.NaN(), "Cost[1] (i=0, j=1) = NaN is not finite"}, {3, math.Inf(-1), "Cost[3] (i=1, j=0) = -Inf is not finite"},
		{5, -1, "Cost[5] (i=1, j=2) = -1 is negative"}, {8, math.Inf(1), "Cost[8] (i=2, j=2) = +Inf is not finite"}} {
		p := good()
		p.Cost[c.k] = c.v
		p.Cost[7] = -2 // a later bad entry is not the one reported
		if c.k == 8 {
			p.Cost[7] = 1
		}
		if _, err := Solve(p, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cost %d = %v: got %v, want %q", c.k, c.v, err, c.want)
		}
	}
	bad := []*Settings{{Epsilon: -1}, {Epsilon: math.NaN()}, {Tol: math.Inf(1)}, {MaxIter: -3}, {Epsilon: 1e-9},
		{Warm: &Dual{G: []float64{0}}}, {Warm: &Dual{G: make([]float64, 3), Lambda: []float64{-1, 0}, Alpha: make([]float64, 6)}}}
	for k, s := range bad {
		if _, err := Solve(good(), s); !errors.Is(err, ErrInvalid) {
			t.Errorf("settings %d: got %v, want ErrInvalid", k, err)
		}
	}
	if _, err := SolveBatch([]*Problem{good(), nil}, nil, 2); !errors.Is(err, ErrInvalid) {
		t.Errorf("batch with nil: %v", err)
	}
	if _, err := (&Result{}).VJP(nil); !errors.Is(err, ErrNoState) {
		t.Errorf("VJP on empty result: %v", err)
	}
	r, err := Solve(good(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.VJP(make([]float64, 5)); !errors.Is(err, ErrInvalid) {
		t.Errorf("VJP wrong length: %v", err)
	}
	if _, err := r.VJP([]float64{0, 0, math.NaN(), 0, 0, 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("VJP NaN: %v", err)
	}
	if _, err := r.FeatureGrad(make([]float64, 9)); !errors.Is(err, ErrInvalid) {
		t.Errorf("FeatureGrad on a Cost problem: %v", err)
	}
}

func TestScaleInvariance(t *testing.T) {
	p := gaussProblem(11, 30, 3, 8, 0.1)
	r0, err := Solve(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []float64{1e-4, 3e-2, 50, 1e5} {
		q := *p
		q.Cost = make([]float64, len(p.Cost))
		for k, c := range p.Cost {
			q.Cost[k] = c * s
		}
		q.Theta = []float64{p.Theta[0] * s}
		r, err := Solve(&q, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range r.PReg {
			if math.Abs(r.PReg[k]-r0.PReg[k]) > 1e-6 {
				t.Fatalf("scale %g: PReg[%d] = %v vs %v", s, k, r.PReg[k], r0.PReg[k])
			}
		}
		if math.Abs(r.Objective-r0.Objective) > 1e-6*r0.Objective || r.Status != Optimal {
			t.Fatalf("scale %g: objective %v vs %v (status %d)", s, r.Objective, r0.Objective, r.Status)
		}
		if math.Abs(r.Dual.Lambda[0]*s-r0.Dual.Lambda[0]) > 1e-6*r0.Dual.Lambda[0] {
			t.Fatalf("scale %g: λ·s = %v vs %v", s, r.Dual.Lambda[0]*s, r0.Dual.Lambda[0])
		}
	}
}

func TestSolveBatchDeterministic(t *testing.T) {
	var ps []*Problem
	for k := 0; k < 7; k++ {
		ps = append(ps, gaussProblem(int64(100+k), 20+3*k, 2+k%3, 5, 0.1))
	}
	var ref []*Result
	for _, w := range []int{1, 2, 3, 8} {
		rs, err := SolveBatch(ps, &Settings{Plans: true}, w)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = rs
			for k, r := range rs {
				single, _ := Solve(ps[k], &Settings{Plans: true})
				if single.Objective != r.Objective {
					t.Fatalf("batch result %d differs from Solve", k)
				}
			}
			continue
		}
		for k := range rs {
			a, b := ref[k], rs[k]
			if a.Objective != b.Objective || a.LowerBound != b.LowerBound || a.Iterations != b.Iterations {
				t.Fatalf("workers=%d problem %d: %v/%v vs %v/%v", w, k, a.Objective, a.LowerBound, b.Objective, b.LowerBound)
			}
			for i := range a.PReg {
				if a.PReg[i] != b.PReg[i] || a.P[i] != b.P[i] {
					t.Fatalf("workers=%d problem %d: P differs at %d", w, k, i)
				}
			}
		}
	}
}

func TestWarmStart(t *testing.T) {
	p := gaussProblem(21, 40, 4, 6, 0.1)
	r0, err := Solve(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := *p
	rng := rand.New(rand.NewSource(2))
	q.Cost = append([]float64(nil), p.Cost...)
	for i := 0; i < p.N; i++ {
		for j := i + 1; j < p.N; j++ {
			d := 1 + 0.01*rng.NormFloat64()
			q.Cost[i*p.N+j] *= d
			q.Cost[j*p.N+i] *= d
		}
	}
	cold, err := Solve(&q, nil)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := Solve(&q, &Settings{Warm: &r0.Dual})
	if err != nil {
		t.Fatal(err)
	}
	if warm.Status != Optimal || math.Abs(warm.Objective-cold.Objective) > 2e-3*cold.Objective {
		t.Fatalf("warm %v (status %d) vs cold %v", warm.Objective, warm.Status, cold.Objective)
	}
	for k := range warm.PReg {
		if math.Abs(warm.PReg[k]-cold.PReg[k]) > 1e-4 {
			t.Fatalf("warm PReg[%d] = %v vs cold %v", k, warm.PReg[k], cold.PReg[k])
		}
	}
	if warm.Iterations >= cold.Iterations {
		t.Errorf("warm start took %d iterations, cold %d", warm.Iterations, cold.Iterations)
	}
}

func TestFeaturesProblem(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	n, dim := 15, 3
	x := make([]float64, n*dim)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
	}
	for _, metric := range []Metric{Euclidean, SqEuclidean} {
		p := &Problem{N: n, Features: x, Dim: dim, Metric: metric, Labels: labels, Theta: []float64{0.3}}
		c, _ := Costs(x, n, dim, metric)
		r := checkAgainstLP(t, "features", &Problem{N: n, Cost: c, Labels: labels, Theta: p.Theta}, nil)
		rf, err := Solve(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rf.Objective != r.Objective {
			t.Fatalf("features vs cost objective %v vs %v", rf.Objective, r.Objective)
		}
	}
}

// Medium instances of the benchmark family (and harder radii) must be
// certified well inside the iteration budget.
func TestSolveConvergesMedium(t *testing.T) {
	for k := 0; k < 8; k++ {
		rel := []float64{0.02, 0.1, 0.3, 1}[k%4]
		p := gaussProblem(int64(200+k), 120+20*k, 3+k, 16, rel)
		r, err := Solve(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Optimal || r.RelGap > DefaultTol || r.Iterations > 2000 || r.Residual > defaultRegTol(DefaultTol) {
			t.Errorf("instance %d (n=%d, M=%d, ϑ=%g·median): status %d, rel gap %.3g, %d iterations, residual %.3g",
				k, p.N, 3+k, rel, r.Status, r.RelGap, r.Iterations, r.Residual)
		}
	}
}

// A large ε leaves the regularised optimum far from the LP value: the
// certificate must still be reached (ε lowered for the certificate only)
// while PReg and Dual stay at the requested ε.
func TestLargeEpsilonCertifiesLP(t *testing.T) {
	p := gaussProblem(31, 14, 3, 3, 0.2)
	r := checkAgainstLP(t, "eps=0.2", p, &Settings{Epsilon: 0.2})
	if r.Epsilon != 0.2 {
		t.Fatalf("Result.Epsilon = %v, want 0.2", r.Epsilon)
	}
	// the regularised solution really is different from the LP answer
	if math.Abs(sumMax(r.PReg, r.M, r.N)-r.Objective) < 1e-3 {
		t.Fatalf("PReg objective %v equals the LP objective %v: ε had no effect?", sumMax(r.PReg, r.M, r.N), r.Objective)
	}
}

// Stopping early still returns valid bounds and a feasible P.
func TestIterationLimitBoundsValid(t *testing.T) {
	p := gaussProblem(32, 16, 4, 3, 0.1)
	v := exactLP(t, p)
	for _, it := range []int{1, 3, 8, 15} {
		r, err := Solve(p, &Settings{MaxIter: it, Plans: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.LowerBound > v+1e-9 || v > r.Objective+1e-9 {
			t.Fatalf("MaxIter %d: LB %v, LP %v, UB %v", it, r.LowerBound, v, r.Objective)
		}
		if r.Status == Optimal && r.RelGap > DefaultTol {
			t.Fatalf("MaxIter %d: status Optimal with gap %v", it, r.RelGap)
		}
		checkFeasible(t, p, r)
		if r.Iterations > it+1 {
			t.Fatalf("MaxIter %d: ran %d iterations", it, r.Iterations)
		}
	}
}

// A large single solve splits class work over two goroutines; the answer
// must be bit-for-bit the serial one.
func TestParallelSolveMatchesSerial(t *testing.T) {
	p := gaussProblem(61, parMin+20, 5, 8, 0.1)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := (&Settings{}).config(in)
	par := solveInstance(in, cfg)
	cfg.serial = true
	ser := solveInstance(in, cfg)
	if !par.st.par || ser.st.par {
		t.Fatal("parallel flag not set as intended")
	}
	if par.Objective != ser.Objective || par.LowerBound != ser.LowerBound || par.Iterations != ser.Iterations {
		t.Fatalf("parallel %v/%v/%d vs serial %v/%v/%d", par.Objective, par.LowerBound, par.Iterations,
			ser.Objective, ser.LowerBound, ser.Iterations)
	}
	for k := range par.PReg {
		if par.PReg[k] != ser.PReg[k] || par.P[k] != ser.P[k] {
			t.Fatalf("P differs at %d", k)
		}
	}
	// LPOnly: the certificate after every Newton step (upperPhi, lower,
	// lowerDense split over the classes too)
	lcfg, _ := (&Settings{LPOnly: true}).config(in)
	lpar := solveInstance(in, lcfg)
	lcfg.serial = true
	lser := solveInstance(in, lcfg)
	if lpar.Objective != lser.Objective || lpar.LowerBound != lser.LowerBound || lpar.Iterations != lser.Iterations {
		t.Fatalf("LPOnly: parallel %v/%v/%d vs serial %v/%v/%d", lpar.Objective, lpar.LowerBound, lpar.Iterations,
			lser.Objective, lser.LowerBound, lser.Iterations)
	}
	for k := range lpar.P {
		if lpar.P[k] != lser.P[k] {
			t.Fatalf("LPOnly: P differs at %d", k)
		}
	}
	g := benchGrad(par.M, par.N)
	a, err := par.VJP(g)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ser.VJP(g)
	if err != nil {
		t.Fatal(err)
	}
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("VJP differs at %d: %v vs %v", k, a[k], b[k])
		}
	}
}

// LPOnly stops at the LP certificate: the same certified bracket of the LP
// value, sooner, and no backward through an unconverged regularised solution.
func TestLPOnly(t *testing.T) {
	p := gaussProblem(12, 24, 3, 4, 0.1)
	v := exactLP(t, p)
	full, err := Solve(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := Solve(p, &Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if lp.Status != Optimal || lp.RelGap > DefaultTol || lp.LowerBound > v+1e-9 || lp.Objective < v-1e-9 {
		t.Fatalf("LPOnly: status %d, bounds [%v, %v] around LP %v", lp.Status, lp.LowerBound, lp.Objective, v)
	}
	checkFeasible(t, p, lp)
	if lp.Iterations >= full.Iterations {
		t.Fatalf("LPOnly took %d iterations, the full solve %d", lp.Iterations, full.Iterations)
	}
	if lp.Residual <= defaultRegTol(DefaultTol) {
		t.Fatalf("LPOnly converged the regularised problem anyway (residual %g): nothing tested", lp.Residual)
	}
	if _, err := lp.VJP(make([]float64, lp.M*lp.N)); !errors.Is(err, ErrNotConverged) {
		t.Fatalf("VJP after LPOnly: %v, want ErrNotConverged", err)
	}
	if _, err := lp.ObjectiveGrad(); !errors.Is(err, ErrNotConverged) {
		t.Fatalf("ObjectiveGrad after LPOnly: %v, want ErrNotConverged", err)
	}
}

// rowWeights (evalPhi's row pass below smallEps) against math.Exp: within a
// few ulp in vexp's domain, math.Exp itself for a class with an exponent
// above it, 0 below e^−vexpCut.
func TestRowWeights(t *testing.T) {
	p := gaussProblem(3, 40, 2, 4, 0.1)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	s := newSolver(in)
	n := s.n
	rng := rand.New(rand.NewSource(1))
	for k := range s.alpha0 {
		s.alpha0[k] = 40 * rng.NormFloat64()
		s.alpha[k] = rng.Float64()
		s.s[k] = rng.Float64()
	}
	ie := 1 / 0.01
	s.alpha0[3] = 800 + s.alpha[3]*ie      // class 0: one exponent of 800, beyond vexp's domain
	s.alpha0[n+5] = -720 + s.alpha[n+5]*ie // class 1: e^−720 (a subnormal) is 0
	for m := 0; m < 2; m++ {
		s.rowWeights(m, ie)
	}
	for k, u := range s.u {
		x := s.alpha0[k] - s.alpha[k]*ie
		want := math.Exp(x)
		switch {
		case k == n+5:
			if u != 0 {
				t.Errorf("u[%d] = e^%v = %v, want 0 (below the cut)", k, x, u)
			}
		case k < n: // the class beyond the domain: math.Exp exactly
			if u != want {
				t.Errorf("u[%d] = %v, want math.Exp(%v) = %v", k, u, x, want)
			}
		default:
			if math.Abs(u-want) > 4e-16*want {
				t.Errorf("u[%d] = %v, math.Exp(%v) = %v", k, u, x, want)
			}
		}
		if s.p[k] != u*s.s[k] {
			t.Errorf("p[%d] = %v, want u·s = %v", k, s.p[k], u*s.s[k])
		}
	}
}

// TestForClassesW checks that a team's forClassesW calls f once per class,
// with a goroutine index of 0 or 1 (0 alone on a nil team), and that it
// balances: while class 0 holds one goroutine, the other runs every other
// class (a fixed even/odd split would leave classes 2, 4, … waiting behind
// class 0).
func TestForClassesW(t *testing.T) {
	tm := newTeam()
	defer tm.close()
	for _, par := range []bool{false, true} {
		tp := tm
		if !par {
			tp = nil
		}
		for _, M := range []int{1, 2, 3, 10} {
			calls := make([]int32, M)
			var bad atomic.Bool
			tp.forClassesW(M, nil, func(m, w int) {
				atomic.AddInt32(&calls[m], 1)
				if w < 0 || w > 1 || (!par || M < 2) && w != 0 {
					bad.Store(true)
				}
			})
			for m, c := range calls {
				if c != 1 {
					t.Errorf("par %v, M = %d: class %d ran %d times", par, M, m, c)
				}
			}
			if bad.Load() {
				t.Errorf("par %v, M = %d: a goroutine index outside {0, 1} (or ≠ 0 serially)", par, M)
			}
		}
	}
	if tm == nil {
		return // GOMAXPROCS=1: no helper to balance with
	}
	const M = 10
	var others atomic.Int32
	allRan := make(chan struct{})
	waited := true
	tm.forClassesW(M, nil, func(m, w int) {
		if m != 0 {
			if others.Add(1) == M-1 {
				close(allRan)
			}
			return
		}
		select {
		case <-allRan:
		case <-time.After(10 * time.Second):
			waited = false
		}
	})
	if !waited {
		t.Errorf("classes 1…%d did not all run while class 0 held a goroutine (%d ran)", M-1, others.Load())
	}
}

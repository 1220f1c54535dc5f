package optlayer

import (
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// otCost is the least cost of moving 1/|src| from every point of src to q
// (n points), by gonum's simplex: cost c(i,j), i receiving, j sending.
func otCost(t *testing.T, cost []float64, n int, src []int, q []float64) float64 {
	t.Helper()
	ns := len(src)
	nv := ns * n // γ(i, s): variable i·ns + s
	A := mat.NewDense(n+ns, nv, nil)
	b := make([]float64, n+ns)
	c := make([]float64, nv)
	for i := 0; i < n; i++ {
		for k, j := range src {
			v := i*ns + k
			c[v] = cost[i*n+j]
			A.Set(i, v, 1)
			A.Set(n+k, v, 1)
		}
		b[i] = q[i]
	}
	for k := range src {
		b[n+k] = 1 / float64(ns)
	}
	// the row sums duplicate the column sums' total: drop the last row
	v, _, err := lp.Simplex(c, A.Slice(0, n+ns-1, 0, nv), b[:n+ns-1], 1e-10, nil)
	if err != nil {
		t.Fatalf("transport LP: %v", err)
	}
	return v
}

// The pooled mixture on Gaussian classes with one class shifted far away:
// radii set so that μ = (0.6 on u, 0.4 on the far class's points) is within
// every budget by a margin (the exact transport costs × 1.15) while u alone
// is not. Checked: the lower bounds of every column against the exact
// transport costs, that the uniform candidate fails, that the mixture
// certifies the LP value 1 (against the exact LP) with a P whose every row
// is within its class's budget (exact transport LPs), and at radii 0.9 and
// 0.8 × those that it never claims a certificate when the LP value exceeds
// 1 (it does at 0.9 ×, not at 0.8 ×, where the LP value is 1.04–1.06).
func TestPooledMixture(t *testing.T) {
	tested := 0
	for trial := 0; trial < 6; trial++ {
		n, M := 18+trial, 3+trial%2
		far := trial % M
		rng := rand.New(rand.NewSource(int64(100 + trial)))
		labels := everyClassLabels(rng, n, M)
		x := make([]float64, n*3)
		for i, y := range labels {
			for d := 0; d < 3; d++ {
				x[i*3+d] = rng.NormFloat64() + float64(y)*0.5
				if y == far {
					x[i*3+d] += 4
				}
			}
		}
		c, err := Costs(x, n, 3, Euclidean)
		if err != nil {
			t.Fatal(err)
		}
		p := &Problem{N: n, Cost: c, Labels: labels, Theta: []float64{1}}
		in, err := p.instance()
		if err != nil {
			t.Fatal(err)
		}
		s := newSolver(in)
		// exact costs of class m to u (column 0) and to e_k (column k+1)
		u := make([]float64, n)
		for i := range u {
			u[i] = 1 / float64(n)
		}
		members := make([][]int, M)
		for i, y := range in.labels {
			members[y] = append(members[y], i)
		}
		exact := make([][]float64, M+1)
		for j := range exact {
			exact[j] = make([]float64, M)
			q := u
			if j > 0 {
				q = make([]float64, n)
				for _, i := range members[j-1] {
					q[i] = 1 / float64(len(members[j-1]))
				}
			}
			for m := 0; m < M; m++ {
				exact[j][m] = otCost(t, in.cost, n, members[m], q)
			}
		}
		// bounds: valid for every column and class
		nanM := make([]float64, M)
		for m := range nanM {
			nanM[m] = math.NaN()
		}
		cols := s.mixColumns(s.pooledCosts(s.pooledWeights()), nanM)
		for j, col := range cols {
			for m := 0; m < M; m++ {
				if col.lo[m] > exact[j][m]+1e-9 {
					t.Fatalf("trial %d: column %d class %d: bound %v above the exact cost %v", trial, j, m, col.lo[m], exact[j][m])
				}
			}
		}
		theta := make([]float64, M)
		for m := range theta {
			theta[m] = 1.15 * (0.6*exact[0][m] + 0.4*exact[far+1][m])
		}
		for _, f := range []float64{1, 0.9, 0.8} {
			p.Theta = make([]float64, M)
			for m := range theta {
				p.Theta[m] = f * theta[m]
			}
			if in, err = p.instance(); err != nil {
				t.Fatal(err)
			}
			s = newSolver(in)
			try := s.pooledFeasible(true, false)
			if try.ok {
				t.Fatalf("trial %d ×%g: u is within every budget: nothing tested", trial, f)
			}
			res := &Result{P: make([]float64, M*n)}
			ok := s.pooledMixture(res, try.spread, try.uni)
			v := exactLP(t, p)
			t.Logf("trial %d: n %d, M %d, radii ×%g: LP %.9f, mixture %v", trial, n, M, f, v, ok)
			if f == 1 && !ok {
				t.Fatalf("trial %d: the mixture within 1/1.15 of the budgets was not found", trial)
			}
			if !ok {
				continue
			}
			if math.Abs(v-1) > 1e-9 || math.Abs(res.Objective-1) > 1e-12 {
				t.Fatalf("trial %d ×%g: the mixture certifies 1 (objective %v) but the LP value is %v", trial, f, res.Objective, v)
			}
			for m := 0; m < M; m++ {
				for i := 0; i < n; i++ {
					if res.P[m*n+i] != res.P[i] {
						t.Fatalf("trial %d: P[%d] differs from P[0] at %d", trial, m, i)
					}
				}
				if c := otCost(t, in.cost, n, members[m], res.P[:n]); c > in.theta[m]*(1+1e-9) {
					t.Fatalf("trial %d ×%g: class %d needs %v to reach P, budget %v", trial, f, m, c, in.theta[m])
				}
			}
			// the driver takes it (transports allowed at this n)
			cfg, err := (&Settings{LPOnly: true}).config(in)
			if err != nil {
				t.Fatal(err)
			}
			cfg.pooledTransport = true
			r := solveInstance(in, cfg)
			checkFeasible(t, p, r)
			if r.Status != Optimal || r.Objective != res.Objective || r.LowerBound != 1 {
				t.Fatalf("trial %d ×%g: solve: status %d, bounds [%v, %v], the mixture's objective %v", trial, f, r.Status, r.LowerBound, r.Objective, res.Objective)
			}
			tested++
		}
	}
	if tested < 6 {
		t.Fatalf("the mixture certified %d instances: nothing tested", tested)
	}
}

// The budgets are checked on the plans in hand (hi), never on the bounds
// (lo) the LP over μ uses, and the LP reports the least t over μ.
func TestMixWithinAndWeights(t *testing.T) {
	p := hardProblem("overlap", 1, 12, 2)
	p.Theta = []float64{1, 1}
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	s := newSolver(in)
	cols := []mixColumn{
		{lo: []float64{0.5, 2}, hi: []float64{1.5, 3}, done: make([]bool, 2)},
		{lo: []float64{2, 0.5}, hi: []float64{2, 0.5}, done: []bool{true, true}},
	}
	// the bounds: μ = (0.6, 0.4) gives 0.5·0.6 + 2·0.4 = 1.1 and
	// 2·0.6 + 0.5·0.4 = 1.4; the least max is at 0.5μ + 2(1−μ) = 2μ +
	// 0.5(1−μ): μ = 0.5, t = 1.25 > 1
	if _, ok := s.mixWeights(cols); ok {
		t.Fatal("the LP over the bounds reports t ≤ 1; its least t is 1.25")
	}
	cols[0].lo[1] = 0.25 // now max(2 − 1.5μ, 0.5 − 0.25μ) is least at μ = 1: t = 0.5
	mu, ok := s.mixWeights(cols)
	if !ok || math.Abs(mu[0]-1) > 1e-9 || math.Abs(mu[0]+mu[1]-1) > 1e-12 {
		t.Fatalf("weights %v, %v; want (1, 0)", mu, ok)
	}
	// with the plans in hand class 0 costs 1.5 > 1
	if s.mixWithin(cols, mu) {
		t.Fatal("mixWithin accepted the bounds' mixture; the plans in hand exceed class 0's budget")
	}
	cols[0].hi = []float64{0.5, 0.25}
	if !s.mixWithin(cols, mu) {
		t.Fatal("mixWithin rejected a mixture within both budgets")
	}
}

package optlayer

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// overlapProblem is the hard family: features from one distribution, random
// labels (every class present), Euclidean costs, ϑ = thetaRel × median cost.
func overlapProblem(seed int64, n, M, dim int, thetaRel float64) *Problem {
	rng := rand.New(rand.NewSource(seed))
	labels := make([]int, n)
	for i := range labels {
		if i < M {
			labels[i] = i
		} else {
			labels[i] = rng.Intn(M)
		}
	}
	x := make([]float64, n*dim)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	c, err := Costs(x, n, dim, Euclidean)
	if err != nil {
		panic(err)
	}
	return &Problem{N: n, Cost: c, Labels: labels, Theta: []float64{thetaRel * medianSample(c, n)}}
}

// medianSample is the median off-diagonal cost, from 200,000 random pairs
// when there are more.
func medianSample(c []float64, n int) float64 {
	if n*n <= 200000 {
		return medianOffDiag(c, n)
	}
	rng := rand.New(rand.NewSource(1))
	v := make([]float64, 0, 200000)
	for len(v) < 200000 {
		if i, j := rng.Intn(n), rng.Intn(n); i != j {
			v = append(v, c[i*n+j])
		}
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// Above candFull a solve starts from a few candidates per column and may
// treat slack budgets as rank-one classes; its answer must be the one of the
// dense start with general classes (regularised solution to the residual,
// certificate, gradient).
func TestLargeMatchesDense(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 1100 twice")
	}
	n, M := candFull+100, 4
	p := overlapProblem(3, n, M, 8, 0.1)
	// class 3 gets a radius no plan can exceed: a slack (rank-one) class
	th := []float64{p.Theta[0], p.Theta[0] * 0.5, p.Theta[0] * 2, 1e3}
	p.Theta = th
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := (&Settings{}).config(in)
	fast := solveInstance(in, cfg)
	cfg.denseStart, cfg.noSlack = true, true
	ref := solveInstance(in, cfg)
	if fast.Status != Optimal || ref.Status != Optimal {
		t.Fatalf("status %d / %d", fast.Status, ref.Status)
	}
	if !fast.st.slack[3] {
		t.Fatal("class 3 was not treated as slack")
	}
	for _, r := range []*Result{fast, ref} {
		if r.LowerBound > r.Objective || r.RelGap > DefaultTol {
			t.Fatalf("bounds %v %v", r.LowerBound, r.Objective)
		}
	}
	// both certificates bracket the same LP value
	if fast.LowerBound > ref.Objective+1e-12 || ref.LowerBound > fast.Objective+1e-12 {
		t.Fatalf("certificates disagree: [%v, %v] vs [%v, %v]", fast.LowerBound, fast.Objective, ref.LowerBound, ref.Objective)
	}
	var d float64
	for k := range fast.PReg {
		d = math.Max(d, math.Abs(fast.PReg[k]-ref.PReg[k]))
	}
	if d > 1e-6 {
		t.Fatalf("PReg differs by %g", d)
	}
	g := benchGrad(M, n)
	a, err := fast.VJP(g)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ref.VJP(g)
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for k := range a {
		num += (a[k] - b[k]) * (a[k] - b[k])
		den += b[k] * b[k]
	}
	if math.Sqrt(num/den) > 1e-3 {
		t.Fatalf("VJP relative difference %g", math.Sqrt(num/den))
	}
	t.Logf("PReg max diff %.2g, VJP rel diff %.2g, iterations %d vs %d", d, math.Sqrt(num/den), fast.Iterations, ref.Iterations)
}

package optlayer

import (
	"math"
	"testing"
)

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

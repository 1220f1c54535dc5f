package optlayer

import "testing"

// TestMiniSetsConverge solves the trainer's kind of batch (BenchmarkMiniSets:
// mean-normalised costs, ϑ = 0.1, ε = 0.01) and checks every answer against
// the exact LP (n ≤ 25), the regularised residual and an iteration budget. Mini-set
// 11 of the n = 50 family once looped until MaxIter: Newton saw its residual
// below RegTol while the column-exact one after the final column step was
// not.
func TestMiniSetsConverge(t *testing.T) {
	for _, c := range []struct{ count, n, M int }{{8, 10, 2}, {8, 25, 5}, {16, 50, 5}} {
		ps := miniSets(c.count, c.n, c.M)
		set := &Settings{Epsilon: 0.01, Tol: 1e-3}
		rs, err := SolveBatch(ps, set, 2)
		if err != nil {
			t.Fatal(err)
		}
		for k, r := range rs {
			if r.Status != Optimal || r.RelGap > 1e-3 || r.Residual > defaultRegTol(1e-3) || r.Iterations > 200 {
				t.Errorf("n=%d set %d: status %v, gap %.3g, residual %.3g, %d iterations", c.n, k, r.Status, r.RelGap, r.Residual, r.Iterations)
			}
			if c.n > 25 {
				continue // gonum's simplex takes seconds from here on
			}
			v := exactLP(t, ps[k])
			if r.LowerBound > v*(1+1e-9)+1e-12 || r.Objective < v*(1-1e-9)-1e-12 {
				t.Errorf("n=%d set %d: bounds [%.10g, %.10g] do not bracket the LP value %.10g", c.n, k, r.LowerBound, r.Objective, v)
			}
		}
	}
}

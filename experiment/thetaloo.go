package experiment

import (
	"errors"
	"fmt"
	"math"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/optlayer"
)

// LFDSolver solves the LFD on n support embeddings e (n×dim, the dim being
// the caller's) with labels y and one radius theta for every class; warm,
// when not nil, is a warm start of the right size. ChooseThetaLOO calls it
// once per grid value on the whole support set and once per grid value and
// left-out point on the other n−1 points.
type LFDSolver func(e []float64, n int, y []int, theta float64, warm *optlayer.Dual) (*optlayer.Result, error)

// ThetaChoice is the test-time radius chosen by leave-one-out on an
// episode's support set (ChooseThetaLOO), with the evidence behind it.
type ThetaChoice struct {
	Grid    []float64 `json:"grid"`    // the candidates, in the order given
	Correct []int     `json:"correct"` // per candidate: left-out support points Dr.k-NN classified correctly
	Counted int       `json:"counted"` // support points left out (those whose class keeps at least one other point)
	Default float64   `json:"default"` // the configured radius, preferred among tied candidates
	Theta   float64   `json:"theta"`   // the choice
}

// ChooseThetaLOO chooses the radius of the test-time LFD by leave-one-out
// on the support set: for every candidate ϑ in grid and every support point
// i, it solves the LFD on the other n−1 points (warm-started from the
// solve on all n) and classifies point i with their Dr.k-NN vote, k
// neighbours (at most n−1). The candidate with the most correct left-out
// points wins. Ties go to def when def is among the best (the configured
// radius stays unless the support set gives evidence against it), then to
// the smallest tied candidate. Points whose class has no other point cannot
// be left out and are not counted (for every candidate alike).
//
// e is n×dim row-major, y holds 0-based labels with every one of the ways
// classes present. The embedding is the one trained on all n points: the
// estimate is optimistic, but it ranks the radii on the same embedding the
// queries see, at the cost of len(grid)·(n+1) LFD solves of size ≤ n and no
// retraining. Queries are never looked at.
func ChooseThetaLOO(e []float64, n, dim int, y []int, ways, k int, grid []float64, def float64, solve LFDSolver) (*ThetaChoice, error) {
	switch {
	case len(grid) == 0:
		return nil, errors.New("theta leave-one-out: empty grid")
	case n < 2:
		return nil, fmt.Errorf("theta leave-one-out: %d support points, want ≥ 2", n)
	case dim < 1 || len(e) != n*dim:
		return nil, fmt.Errorf("theta leave-one-out: %d embedding values for %d points of width %d", len(e), n, dim)
	case len(y) != n:
		return nil, fmt.Errorf("theta leave-one-out: %d labels for %d points", len(y), n)
	case k < 1:
		return nil, fmt.Errorf("theta leave-one-out: k = %d, want ≥ 1", k)
	case solve == nil:
		return nil, errors.New("theta leave-one-out: no solver")
	}
	for j, t := range grid {
		if !(t >= 0) || math.IsInf(t, 1) {
			return nil, fmt.Errorf("theta leave-one-out: grid[%d] = %v, want a finite radius ≥ 0", j, t)
		}
	}
	count := make([]int, ways)
	for i, l := range y {
		if l < 0 || l >= ways {
			return nil, fmt.Errorf("theta leave-one-out: label %d of point %d outside 0…%d", l, i, ways-1)
		}
		count[l]++
	}
	kk := min(k, n-1)
	out := &ThetaChoice{Grid: append([]float64(nil), grid...), Correct: make([]int, len(grid)), Default: def}
	for i := range n {
		if count[y[i]] > 1 {
			out.Counted++
		}
	}
	sub := make([]float64, 0, (n-1)*dim)
	suby := make([]int, 0, n-1)
	for g, theta := range grid {
		full, err := solve(e, n, y, theta, nil)
		if err != nil {
			return nil, fmt.Errorf("theta leave-one-out: ϑ = %g, all %d points: %w", theta, n, err)
		}
		for i := range n {
			if count[y[i]] < 2 {
				continue
			}
			sub, suby = sub[:0], suby[:0]
			for j := range n {
				if j != i {
					sub = append(sub, e[j*dim:(j+1)*dim]...)
					suby = append(suby, y[j])
				}
			}
			r, err := solve(sub, n-1, suby, theta, dropDual(full.Dual, full.M, n, i))
			if err != nil {
				return nil, fmt.Errorf("theta leave-one-out: ϑ = %g, without point %d: %w", theta, i, err)
			}
			c := &eval.DrKNN{K: kk, P: r.P, Workers: 1}
			if err := c.Fit(sub, n-1, dim, suby, ways); err != nil {
				return nil, fmt.Errorf("theta leave-one-out: ϑ = %g, without point %d: %w", theta, i, err)
			}
			p, err := c.Predict(e[i*dim:(i+1)*dim], 1)
			if err != nil {
				return nil, fmt.Errorf("theta leave-one-out: ϑ = %g, point %d: %w", theta, i, err)
			}
			if p[0] == y[i] {
				out.Correct[g]++
			}
		}
	}
	out.Theta = pickTheta(grid, out.Correct, def)
	return out, nil
}

// pickTheta returns the candidate with the most correct points; ties go to
// def when it is among them, then to the smallest.
func pickTheta(grid []float64, correct []int, def float64) float64 {
	best := -1
	for _, c := range correct {
		best = max(best, c)
	}
	choice := math.Inf(1)
	for g, t := range grid {
		if correct[g] != best {
			continue
		}
		if t == def {
			return def
		}
		choice = min(choice, t)
	}
	return choice
}

// dropDual returns the dual d of an n-point solve without point i: a warm
// start for the (n−1)-point problem (nil when d is empty).
func dropDual(d optlayer.Dual, m, n, i int) *optlayer.Dual {
	if len(d.G) != n || len(d.Alpha) != m*n {
		return nil
	}
	w := &optlayer.Dual{Lambda: append([]float64(nil), d.Lambda...)}
	w.G = append(append(make([]float64, 0, n-1), d.G[:i]...), d.G[i+1:]...)
	w.Alpha = make([]float64, 0, m*(n-1))
	for c := range m {
		row := d.Alpha[c*n : (c+1)*n]
		w.Alpha = append(append(w.Alpha, row[:i]...), row[i+1:]...)
	}
	return w
}

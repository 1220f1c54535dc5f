package train

import (
	"fmt"
	"math"

	"github.com/drknn/drknn/optlayer"
)

// MiniSet is one mini-set of a training step: rows of the step's embedding
// matrix and their labels 0…M−1 (every class present).
type MiniSet struct {
	Index  []int
	Labels []int
}

// RiskSettings control the worst-case risk of a step.
type RiskSettings struct {
	Ways   int             // M
	Metric optlayer.Metric // cost from embeddings
	Theta  []float64       // radii: one for all classes or one per class
	// Normalize divides each mini-set's costs by their mean over the n×n
	// matrix, so Theta is relative to the mini-set's typical distance and
	// the risk is invariant to a rescaling of the embedding (DESIGN.md §5).
	Normalize bool
	Solver    optlayer.Settings
	Workers   int // goroutines for the mini-sets; never changes results
}

// RiskResult is the mean worst-case risk over a step's mini-sets and its
// gradient with respect to the embedding.
type RiskResult struct {
	Risk       float64   // mean over mini-sets of M − Σ_i max_m PReg_m(i)
	Grad       []float64 // ∂Risk/∂E, n×d row-major
	MeanRelGap float64   // mean certified relative gap of the LFD solves
	MaxRelGap  float64
	Iterations int // total solver iterations
	NotOptimal int // solves that stopped at the iteration cap
}

// WorstCaseRisk solves the LFD of every mini-set (in parallel, with
// deterministic results) on the embedding rows e (n×d) and returns the mean
// worst-case risk M − Σ_i max_m P*_m(i) under the regularised LFD and its
// exact gradient (implicit differentiation through the solver, the cost
// normalisation and the metric). Minimising it is maximising J of the paper
// (DESIGN.md §5, the sign trap).
func WorstCaseRisk(e []float64, n, d int, sets []MiniSet, s RiskSettings) (RiskResult, error) {
	if n < 1 || d < 1 || len(e) != n*d {
		return RiskResult{}, fmt.Errorf("risk: embedding has %d values, want %d×%d", len(e), n, d)
	}
	if len(sets) == 0 {
		return RiskResult{}, fmt.Errorf("risk: no mini-sets")
	}
	feats := make([][]float64, len(sets))
	scales := make([]float64, len(sets))
	problems := make([]*optlayer.Problem, len(sets))
	for k, ms := range sets {
		if len(ms.Index) != len(ms.Labels) || len(ms.Index) == 0 {
			return RiskResult{}, fmt.Errorf("risk: mini-set %d has %d indices and %d labels", k, len(ms.Index), len(ms.Labels))
		}
		x := make([]float64, len(ms.Index)*d)
		for r, i := range ms.Index {
			if i < 0 || i >= n {
				return RiskResult{}, fmt.Errorf("risk: mini-set %d row %d out of 0…%d", k, i, n-1)
			}
			copy(x[r*d:(r+1)*d], e[i*d:(i+1)*d])
		}
		feats[k] = x
		c, err := optlayer.Costs(x, len(ms.Index), d, s.Metric)
		if err != nil {
			return RiskResult{}, fmt.Errorf("risk: mini-set %d: %w", k, err)
		}
		scales[k] = 1
		if s.Normalize {
			scales[k] = meanOf(c)
			if !(scales[k] > 0) {
				return RiskResult{}, fmt.Errorf("risk: mini-set %d: all its points coincide in the embedding (mean cost %g)", k, scales[k])
			}
			for j := range c {
				c[j] /= scales[k]
			}
		}
		problems[k] = &optlayer.Problem{N: len(ms.Index), Cost: c, Labels: ms.Labels, Theta: s.Theta}
	}
	settings := s.Solver
	results, err := optlayer.SolveBatch(problems, &settings, s.Workers)
	if err != nil {
		return RiskResult{}, fmt.Errorf("risk: %w", err)
	}
	out := RiskResult{Grad: make([]float64, n*d)}
	grads := make([][]float64, len(sets))
	err = parallelFor(len(sets), s.Workers, func(k int) error {
		res := results[k]
		m, np := res.M, res.N
		gradP := make([]float64, m*np)
		for i := 0; i < np; i++ {
			best := 0
			for c := 1; c < m; c++ {
				if res.PReg[c*np+i] > res.PReg[best*np+i] {
					best = c
				}
			}
			gradP[best*np+i] = -1 // ∂(M − Σ_i max_m P_m(i))/∂P
		}
		gc, err := res.VJP(gradP)
		if err != nil {
			return fmt.Errorf("risk: mini-set %d backward: %w", k, err)
		}
		if s.Normalize { // c̃ = c/s̄ with s̄ = mean(c): chain through both
			sc := scales[k]
			var dot float64
			for j := range gc {
				dot += gc[j] * problems[k].Cost[j] // Σ g·c̃
			}
			shift := dot / float64(len(gc))
			for j := range gc {
				gc[j] = (gc[j] - shift) / sc
			}
		}
		gx, err := optlayer.CostGrad(feats[k], np, d, s.Metric, gc)
		if err != nil {
			return fmt.Errorf("risk: mini-set %d: %w", k, err)
		}
		grads[k] = gx
		return nil
	})
	if err != nil {
		return RiskResult{}, err
	}
	inv := 1 / float64(len(sets))
	for k, ms := range sets { // fixed order: deterministic sums
		res := results[k]
		var j float64
		for i := 0; i < res.N; i++ {
			mx := math.Inf(-1)
			for c := 0; c < res.M; c++ {
				mx = math.Max(mx, res.PReg[c*res.N+i])
			}
			j += mx
		}
		out.Risk += (float64(res.M) - j) * inv
		out.MeanRelGap += res.RelGap * inv
		out.MaxRelGap = math.Max(out.MaxRelGap, res.RelGap)
		out.Iterations += res.Iterations
		if res.Status != optlayer.Optimal {
			out.NotOptimal++
		}
		for r, i := range ms.Index {
			for t := 0; t < d; t++ {
				out.Grad[i*d+t] += grads[k][r*d+t] * inv
			}
		}
	}
	return out, nil
}

func meanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

package eval

import (
	"errors"
	"fmt"
	"math"
)

// DrKNN is the Dr.k-NN classifier (Step 2 of Algorithm 1, eq. (4)): for a
// query ξ take its K nearest training points τ₁…τ_K and vote
//
//	p̃_m(ξ) = (1/K) Σ_{i=1..K} P*_m(ξ^{τ_i}),
//
// predicting argmax_m p̃_m(ξ). P* — the least-favourable distributions,
// solved once on the whole training set by the optlayer package — is given
// as data, so this package does not depend on the solver.
type DrKNN struct {
	K      int     // neighbours, 1 ≤ K ≤ n (the paper uses 5)
	Metric Metric  // nil means Euclidean
	Tie    TieRule // default TieVanillaCount
	// P is M×n row-major: P[m*n+i] = P*_m(ξⁱ). Row m is class m's
	// least-favourable distribution over the n training points and must
	// sum to 1 within SumTol.
	P       []float64
	SumTol  float64 // 0 means DefaultSumTol
	Workers int     // goroutines for Predict/Votes; ≤ 0 means GOMAXPROCS

	base knnBase
	p    []float64
}

// Fit stores the training set after checking it, K and P.
func (c *DrKNN) Fit(x []float64, n, d int, y []int, m int) error {
	c.base = knnBase{}
	if err := checkK(c.K, n); err != nil {
		return err
	}
	if err := checkP(c.P, m, n, c.SumTol); err != nil {
		return err
	}
	if err := c.base.fit(x, n, d, y, m); err != nil {
		return err
	}
	c.p = append([]float64(nil), c.P...)
	return nil
}

func (c *DrKNN) votes(q []float64, nq int) ([]float64, []int, error) {
	n := c.base.n
	return c.base.weightedVotes(c.Metric, c.K, c.Workers, nil,
		func(m, i int) float64 { return c.p[m*n+i] }, q, nq)
}

// Votes returns p̃(ξ) for each query, nq rows of M values.
func (c *DrKNN) Votes(q []float64, nq int) ([]float64, error) {
	v, _, err := c.votes(q, nq)
	return v, err
}

// Predict returns argmax_m p̃_m(ξ) for each query under c.Tie.
func (c *DrKNN) Predict(q []float64, nq int) ([]int, error) {
	return predictWithTie(c.votes, q, nq, c.base.m, c.Tie)
}

// EntropyNorm says how TruncatedDrKNN normalises the entropy of a training
// point's masses.
type EntropyNorm int

const (
	// NormLogM divides the entropy H(π(i)) by its maximum log M, so the
	// normalised entropy is in [0, 1] with 1 for a point carrying equal
	// mass in every class. The default: its threshold τ means the same
	// thing on every training set.
	NormLogM EntropyNorm = iota
	// NormMinMax is the paper's Appendix B rule:
	// (H(i) − H_min)/(H_max − H_min) over the training set. When all
	// entropies are equal every point gets 1 and is kept.
	NormMinMax
)

// ErrNothingKept is returned by TruncatedDrKNN.Fit in Strict mode when no
// training point reaches the entropy threshold.
var ErrNothingKept = errors.New("eval: truncation keeps no training point")

// TruncatedDrKNN is the truncated Dr.k-NN of Appendix B: keep only the
// training points whose normalised entropy of (P*_1(i)…P*_M(i)) — the
// column normalised over classes first, π_m(i) = P*_m(i)/Σ_m' P*_m'(i) — is
// at least Tau, then vote as DrKNN over the kept points.
//
// Edge cases, unless Strict is set:
//   - A point with zero mass in every class has no distribution; its
//     normalised entropy is taken as 0 (kept only when Tau ≤ 0).
//   - If fewer than K points are kept, the vote uses all kept points
//     (K_eff = #kept) and divides by K_eff.
//   - If no point is kept, the classifier falls back to plain Dr.k-NN on
//     every training point (FellBack reports it).
//
// With Strict, the last two cases are errors from Fit.
type TruncatedDrKNN struct {
	DrKNN
	Tau    float64     // threshold in [0, 1]; the paper uses 0.9
	Norm   EntropyNorm // default NormLogM
	Strict bool

	keep     []int
	k        int
	fellBack bool
}

// NormalisedEntropy returns, for each of the n training points, the
// normalised entropy of its masses under P (M×n row-major) as defined for
// TruncatedDrKNN. M must be at least 2.
func NormalisedEntropy(p []float64, m, n int, norm EntropyNorm) ([]float64, error) {
	if m < 2 {
		return nil, fmt.Errorf("eval: entropy truncation needs M ≥ 2 classes, got %d", m)
	}
	if len(p) != m*n {
		return nil, fmt.Errorf("eval: P has %d entries, want M×n = %d×%d", len(p), m, n)
	}
	h := make([]float64, n)
	valid := make([]bool, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for c := 0; c < m; c++ {
			s += math.Max(p[c*n+i], 0)
		}
		if s <= 0 {
			continue
		}
		valid[i] = true
		e := 0.0
		for c := 0; c < m; c++ {
			if pi := math.Max(p[c*n+i], 0) / s; pi > 0 {
				e -= pi * math.Log(pi)
			}
		}
		h[i] = e
	}
	switch norm {
	case NormLogM:
		for i := range h {
			h[i] /= math.Log(float64(m))
		}
	case NormMinMax:
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, e := range h {
			if valid[i] {
				lo, hi = math.Min(lo, e), math.Max(hi, e)
			}
		}
		for i := range h {
			switch {
			case !valid[i]:
				h[i] = 0
			case hi > lo:
				h[i] = (h[i] - lo) / (hi - lo)
			default:
				h[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("eval: unknown entropy normalisation %d", norm)
	}
	return h, nil
}

// Fit checks the inputs, selects the kept points and stores the training
// set.
func (c *TruncatedDrKNN) Fit(x []float64, n, d int, y []int, m int) error {
	c.keep, c.k, c.fellBack = nil, 0, false
	c.base = knnBase{}
	if math.IsNaN(c.Tau) || c.Tau < 0 || c.Tau > 1 {
		return fmt.Errorf("eval: truncation level τ = %v, want 0 ≤ τ ≤ 1", c.Tau)
	}
	if err := c.DrKNN.Fit(x, n, d, y, m); err != nil {
		return err
	}
	h, err := NormalisedEntropy(c.p, m, n, c.Norm)
	if err != nil {
		c.base = knnBase{}
		return err
	}
	keep := []int{}
	for i, e := range h {
		if e >= c.Tau {
			keep = append(keep, i)
		}
	}
	switch {
	case len(keep) == 0 && c.Strict:
		c.base = knnBase{}
		return fmt.Errorf("%w (τ = %v, largest normalised entropy %v)", ErrNothingKept, c.Tau, maxOf(h))
	case len(keep) == 0:
		c.fellBack = true
		keep = nil
		c.k = c.K
	case len(keep) < c.K && c.Strict:
		c.base = knnBase{}
		return fmt.Errorf("eval: truncation at τ = %v keeps %d points, fewer than k = %d", c.Tau, len(keep), c.K)
	default:
		c.k = min(c.K, len(keep))
	}
	c.keep = keep
	return nil
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// Kept returns the indices of the training points the vote uses (all of
// them after a fall-back) and the effective number of neighbours.
func (c *TruncatedDrKNN) Kept() (idx []int, k int) {
	if c.keep == nil {
		all := make([]int, c.base.n)
		for i := range all {
			all[i] = i
		}
		return all, c.k
	}
	return append([]int(nil), c.keep...), c.k
}

// FellBack reports whether the last Fit kept no point and fell back to
// plain Dr.k-NN.
func (c *TruncatedDrKNN) FellBack() bool { return c.fellBack }

func (c *TruncatedDrKNN) votes(q []float64, nq int) ([]float64, []int, error) {
	n := c.base.n
	return c.base.weightedVotes(c.Metric, c.k, c.Workers, c.keep,
		func(m, i int) float64 { return c.p[m*n+i] }, q, nq)
}

// Votes returns p̃(ξ) over the kept points for each query.
func (c *TruncatedDrKNN) Votes(q []float64, nq int) ([]float64, error) {
	v, _, err := c.votes(q, nq)
	return v, err
}

// Predict returns argmax_m p̃_m(ξ) over the kept points under c.Tie.
func (c *TruncatedDrKNN) Predict(q []float64, nq int) ([]int, error) {
	return predictWithTie(c.votes, q, nq, c.base.m, c.Tie)
}

// predictWithTie computes the votes and takes their argmax under tie: the
// vanilla k-NN count breaks class ties unless tie is TieLowestIndex.
func predictWithTie(votes func([]float64, int) ([]float64, []int, error), q []float64, nq, m int, tie TieRule) ([]int, error) {
	v, counts, err := votes(q, nq)
	if err != nil {
		return nil, err
	}
	if tie == TieLowestIndex {
		counts = nil
	}
	return predictFromVotes(v, nq, m, counts), nil
}

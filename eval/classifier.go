package eval

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/drknn/drknn/internal/par"
)

// Classifier learns from n labelled points and labels queries.
//
// Points are row-major: x holds n rows of d values, q holds nq rows of the
// same d. Labels are 0-based class indices in [0, m) (the paper's class m
// is our m−1). Fit may be called again to refit; Predict before a
// successful Fit is an error. Predict is deterministic and safe to call
// from several goroutines once Fit has returned.
type Classifier interface {
	Fit(x []float64, n, d int, y []int, m int) error
	Predict(q []float64, nq int) ([]int, error)
}

// Voter is a Classifier that exposes the vote vector p̃(ξ) behind each
// prediction and class probabilities derived from it.
//
// Votes returns nq rows of m values, row-major, and Predict returns the
// argmax of each row under the classifier's tie rule. The votes are on the
// classifier's own scale (Dr.k-NN's sum to about M/n, not 1).
//
// Proba returns nq rows of m class probabilities, each row non-negative
// and summing to 1 (within rounding), ordered by class index; the class
// Predict returns has the largest probability (ties aside). Each
// classifier documents its formula.
type Voter interface {
	Classifier
	Votes(q []float64, nq int) ([]float64, error)
	Proba(q []float64, nq int) ([]float64, error)
}

// ErrNotFitted is returned by Predict and Votes before a successful Fit.
var ErrNotFitted = errors.New("eval: classifier used before Fit")

// TieRule says how a prediction is chosen among classes whose votes tie.
//
// The paper's eq. (4) (tie-break rule, Section 2) allows any probability
// distribution over the tied set M₀(ξ); we pick one deterministic member so
// that results are reproducible. Votes tie when they differ by at most
// tieTol relative to the largest vote, so that sums of the same weights
// accumulated in different orders still tie.
type TieRule int

const (
	// TieVanillaCount picks, among the tied classes, the one with most of
	// the k nearest neighbours labelled with it (the vanilla k-NN vote),
	// then the lowest class index. It is the default for Dr.k-NN. For
	// classifiers without a neighbour set (kernel smoothing) and for
	// vanilla k-NN, whose votes are those counts, it reduces to
	// TieLowestIndex.
	TieVanillaCount TieRule = iota
	// TieLowestIndex picks the tied class with the lowest index.
	TieLowestIndex
)

func (t TieRule) String() string {
	switch t {
	case TieVanillaCount:
		return "vanilla-count"
	case TieLowestIndex:
		return "lowest-index"
	}
	return fmt.Sprintf("TieRule(%d)", int(t))
}

// tieTol is the relative tolerance under which two votes tie.
const tieTol = 1e-12

// argmax returns the index of the largest vote, breaking ties (votes within
// tieTol·max) by the larger count (when counts is non-nil), then by the
// lowest index.
func argmax(votes []float64, counts []int) int {
	best := math.Inf(-1)
	for _, v := range votes {
		if v > best {
			best = v
		}
	}
	tol := tieTol * math.Abs(best)
	arg := -1
	for m, v := range votes {
		if v < best-tol {
			continue
		}
		if arg < 0 || counts != nil && counts[m] > counts[arg] {
			arg = m
		}
	}
	if arg < 0 {
		// Every vote is −Inf: fall back to the lowest index.
		arg = 0
	}
	return arg
}

// checkTrain validates a training set.
func checkTrain(x []float64, n, d int, y []int, m int) error {
	switch {
	case n < 1:
		return fmt.Errorf("eval: n = %d training points, want ≥ 1", n)
	case d < 1:
		return fmt.Errorf("eval: dimension d = %d, want ≥ 1", d)
	case m < 1:
		return fmt.Errorf("eval: m = %d classes, want ≥ 1", m)
	case n > math.MaxInt/d || len(x) != n*d:
		return fmt.Errorf("eval: training data has %d values, want n·d = %d·%d", len(x), n, d)
	case len(y) != n:
		return fmt.Errorf("eval: %d labels for %d training points", len(y), n)
	}
	for i, v := range y {
		if v < 0 || v >= m {
			return fmt.Errorf("eval: label y[%d] = %d outside [0, %d)", i, v, m)
		}
	}
	return checkFinite("training point", x, d)
}

// checkQuery validates nq query rows of dimension d.
func checkQuery(q []float64, nq, d int) error {
	if nq < 0 || nq > 0 && nq > math.MaxInt/d || len(q) != nq*d {
		return fmt.Errorf("eval: query data has %d values, want nq·d = %d·%d", len(q), nq, d)
	}
	return checkFinite("query", q, d)
}

func checkFinite(what string, x []float64, d int) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("eval: %s %d has non-finite coordinate %d (%v)", what, i/d, i%d, v)
		}
	}
	return nil
}

func checkK(k, n int) error {
	if k < 1 || k > n {
		return fmt.Errorf("eval: k = %d, want 1 ≤ k ≤ n = %d", k, n)
	}
	return nil
}

// DefaultSumTol is the default tolerance on the total mass of each class's
// least-favourable distribution P*_m.
const DefaultSumTol = 1e-3

// checkP validates P*, an M×n row-major matrix whose row m is the
// least-favourable distribution of class m over the n training points: it
// must be finite, non-negative (down to −tol) and each row must sum to 1
// within tol. A column (one point's masses over the classes) need not sum
// to anything in particular.
func checkP(p []float64, m, n int, tol float64) error {
	if tol <= 0 {
		tol = DefaultSumTol
	}
	if len(p) != m*n {
		return fmt.Errorf("eval: P has %d entries, want M×n = %d×%d", len(p), m, n)
	}
	for c := 0; c < m; c++ {
		s := 0.0
		for i := 0; i < n; i++ {
			v := p[c*n+i]
			if math.IsNaN(v) || math.IsInf(v, 0) || v < -tol {
				return fmt.Errorf("eval: P[%d][%d] = %v, want a finite non-negative mass", c, i, v)
			}
			s += v
		}
		if math.Abs(s-1) > tol {
			return fmt.Errorf("eval: row %d of P (class %d's distribution over the training points) sums to %v, want 1 ± %g", c, c, s, tol)
		}
	}
	return nil
}

// parallel calls f(lo, hi) on consecutive chunks of [0, n), one chunk per
// worker, from up to workers goroutines (GOMAXPROCS when workers ≤ 0;
// par.For). Each index is handled by exactly one call and results are
// written by index, so they do not depend on the number of workers. It
// returns the error of the chunk with the lowest start, whatever the
// goroutines' timing.
func parallel(n, workers int, f func(lo, hi int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, n), 1)
	if n <= 0 {
		return nil
	}
	chunk := (n + workers - 1) / workers
	return par.For((n+chunk-1)/chunk, workers, func(c int) error {
		return f(c*chunk, min((c+1)*chunk, n))
	})
}

// normaliseVotes turns nq rows of m votes into probabilities in place:
// negative votes (P* may hold masses down to −SumTol) are taken as 0 and
// each row is divided by its sum. A row whose votes are all 0 takes
// the fractions of the neighbours' labels instead (counts/k, the vanilla
// k-NN vote), or the uniform distribution when counts is nil.
func normaliseVotes(votes []float64, counts []int, nq, m, k int) []float64 {
	for j := 0; j < nq; j++ {
		row := votes[j*m : (j+1)*m]
		s := 0.0
		for c, v := range row {
			row[c] = math.Max(v, 0)
			s += row[c]
		}
		switch {
		case s > 0:
			for c := range row {
				row[c] /= s
			}
		case counts != nil:
			for c := range row {
				row[c] = float64(counts[j*m+c]) / float64(k)
			}
		default:
			for c := range row {
				row[c] = 1 / float64(m)
			}
		}
	}
	return votes
}

// argmaxOf returns a function that turns the result of a Votes call — rows
// of m votes and an error — into each row's argmax (ties to the lowest
// index), passing an error through: return argmaxOf(m)(c.Votes(q, nq)).
func argmaxOf(m int) func([]float64, error) ([]int, error) {
	return func(v []float64, err error) ([]int, error) {
		if err != nil {
			return nil, err
		}
		return predictFromVotes(v, len(v)/m, m, nil), nil
	}
}

// predictFromVotes turns an nq×m vote matrix into labels with argmax.
func predictFromVotes(votes []float64, nq, m int, counts []int) []int {
	pred := make([]int, nq)
	for j := range pred {
		var c []int
		if counts != nil {
			c = counts[j*m : (j+1)*m]
		}
		pred[j] = argmax(votes[j*m:(j+1)*m], c)
	}
	return pred
}

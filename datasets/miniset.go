package datasets

import (
	"fmt"
	"math"
	"math/rand"
)

// MiniSet is one mini-set of Algorithm 1: positions into the training set
// it was drawn from, grouped by class (class 0's points first), with their
// labels and the split n₁…n_M.
type MiniSet struct {
	Index  []int // positions into the labels slice given to NewMiniSetSampler
	Labels []int // label of each point, 0…M−1, non-decreasing
	Counts []int // n_m ≥ 1 points of class m; sums to the mini-set size
}

// MiniSetSampler draws mini-sets of a fixed size n′ from a labelled training
// set (an episode's training samples with local labels 0…M−1).
//
// The split n₁…n_M is drawn uniformly among all splits with
// Σ n_m = n′ and 1 ≤ n_m ≤ (points of class m): Algorithm 1 asks for "M
// random positive integers summing to n′", and this is that choice made
// exactly, honouring what each class can supply. (The authors' prototype
// drew n_m = 1 + randint(remaining − 1) class by class and gave the last
// class the rest: it reserved nothing for the classes still to come, so with
// M ≥ 3 a later class could be left with 0 points or randint(0) failed, and
// it never checked that a class had that many points.) The n_m points of
// class m are then drawn uniformly
// without replacement. All randomness comes from the *rand.Rand passed to
// Draw, so a seeded generator gives a reproducible sequence of mini-sets.
type MiniSetSampler struct {
	size    int
	byClass [][]int
	// ways[m][s] is proportional to the number of ways to split s points
	// among classes m…M−1 within their bounds; each row is rescaled to keep
	// the numbers finite (only ratios within a row are used).
	ways [][]float64
	// logWays replaces ways (nil then) when the rescaled counts underflow:
	// the logarithms of the counts.
	logWays [][]float64
}

// NewMiniSetSampler prepares draws of size-n′ mini-sets from points with
// labels 0…classes−1. Every class must have at least one point, and
// classes ≤ n′ ≤ len(labels) must hold.
func NewMiniSetSampler(labels []int, classes, size int) (*MiniSetSampler, error) {
	if classes < 1 {
		return nil, fmt.Errorf("mini-set: %d classes, want ≥ 1", classes)
	}
	byClass := make([][]int, classes)
	for i, y := range labels {
		if y < 0 || y >= classes {
			return nil, fmt.Errorf("mini-set: point %d has label %d outside 0…%d", i, y, classes-1)
		}
		byClass[y] = append(byClass[y], i)
	}
	for m, idx := range byClass {
		if len(idx) == 0 {
			return nil, fmt.Errorf("mini-set: class %d has no training points", m)
		}
	}
	if size < classes {
		return nil, fmt.Errorf("mini-set: size n′ = %d is smaller than the %d classes (every class needs ≥ 1 point)", size, classes)
	}
	if size > len(labels) {
		return nil, fmt.Errorf("mini-set: size n′ = %d exceeds the %d available training points", size, len(labels))
	}
	s := &MiniSetSampler{size: size, byClass: byClass, ways: make([][]float64, classes+1)}
	// ways[M][0] = 1: nothing left to split among no classes.
	s.ways[classes] = make([]float64, size+1)
	s.ways[classes][0] = 1
	for m := classes - 1; m >= 0; m-- {
		next := s.ways[m+1]
		row := make([]float64, size+1)
		hi := len(byClass[m])
		maxv := 0.0
		for t := 1; t <= size; t++ {
			// Direct sums of non-negative terms: a feasible state never
			// rounds to zero (prefix-sum differences could cancel).
			sum := 0.0
			for v := 1; v <= min(hi, t); v++ {
				sum += next[t-v]
			}
			row[t] = sum
			maxv = max(maxv, sum)
		}
		if maxv > 0 {
			for t := range row {
				row[t] /= maxv
			}
		}
		s.ways[m] = row
	}
	if s.underflows() {
		// Many classes: the counts of a row span more than float64's range
		// (3000 classes of 2 points: up to 2³⁰⁰⁰ ways in the middle of a
		// row, 1 at its ends), and feasible states rounded to zero. The
		// table is kept in logarithms instead; the linear table stays the
		// one used whenever it is exact, so its draws do not change.
		s.ways, s.logWays = nil, logWaysTable(byClass, size)
	}
	if s.ways != nil && s.ways[0][size] <= 0 || s.logWays != nil && math.IsInf(s.logWays[0][size], -1) {
		// Unreachable given the checks above; kept as a guard.
		return nil, fmt.Errorf("mini-set: no split of %d points respects the class sizes", size)
	}
	return s, nil
}

// underflows reports whether a feasible state of the linear table rounded
// to zero: ways[m][t] must be positive for every t from M−m (a point per
// class) to the points classes m…M−1 hold (at most n′).
func (s *MiniSetSampler) underflows() bool {
	M := len(s.byClass)
	hold := 0
	for m := M - 1; m >= 0; m-- {
		hold += len(s.byClass[m])
		for t := M - m; t <= min(hold, s.size); t++ {
			if s.ways[m][t] <= 0 {
				return true
			}
		}
	}
	return false
}

// logWaysTable is the table of ways in natural logarithms (−Inf: none),
// each row's sums taken by log-sum-exp about the largest term.
func logWaysTable(byClass [][]int, size int) [][]float64 {
	M := len(byClass)
	lw := make([][]float64, M+1)
	lw[M] = make([]float64, size+1)
	for t := 1; t <= size; t++ {
		lw[M][t] = math.Inf(-1)
	}
	for m := M - 1; m >= 0; m-- {
		next, row := lw[m+1], make([]float64, size+1)
		row[0] = math.Inf(-1)
		for t := 1; t <= size; t++ {
			row[t] = logSumExp(next, t-min(len(byClass[m]), t), t-1)
		}
		lw[m] = row
	}
	return lw
}

// logSumExp is log Σ exp(x[i]) for i = lo…hi.
func logSumExp(x []float64, lo, hi int) float64 {
	top := math.Inf(-1)
	for _, v := range x[lo : hi+1] {
		top = max(top, v)
	}
	if math.IsInf(top, -1) {
		return top
	}
	sum := 0.0
	for _, v := range x[lo : hi+1] {
		sum += math.Exp(v - top)
	}
	return top + math.Log(sum)
}

// Size returns n′.
func (s *MiniSetSampler) Size() int { return s.size }

// Split draws n₁…n_M (see MiniSetSampler).
func (s *MiniSetSampler) Split(rng *rand.Rand) []int {
	M := len(s.byClass)
	counts := make([]int, M)
	left := s.size
	var w []float64
	for m := 0; m < M; m++ {
		hi := min(len(s.byClass[m]), left)
		if m == M-1 {
			counts[m] = left
			break
		}
		// w[v]: the weight of n_m = v, the ways to split the rest
		w = w[:0]
		w = append(w, 0)
		if s.logWays == nil {
			next := s.ways[m+1]
			for v := 1; v <= hi; v++ {
				w = append(w, next[left-v])
			}
		} else {
			// relative to the largest, from the log table
			lw := s.logWays[m+1]
			top := math.Inf(-1)
			for v := 1; v <= hi; v++ {
				top = max(top, lw[left-v])
			}
			for v := 1; v <= hi; v++ {
				w = append(w, math.Exp(lw[left-v]-top))
			}
		}
		total := 0.0
		for _, x := range w[1:] {
			total += x
		}
		u := rng.Float64() * total
		pick := 0
		for v := 1; v <= hi; v++ {
			if w[v] <= 0 {
				continue
			}
			pick = v
			u -= w[v]
			if u < 0 {
				break
			}
		}
		counts[m] = pick
		left -= pick
	}
	return counts
}

// Draw returns a mini-set: a split from Split, then n_m points of each
// class m drawn without replacement.
func (s *MiniSetSampler) Draw(rng *rand.Rand) MiniSet {
	counts := s.Split(rng)
	ms := MiniSet{Counts: counts, Index: make([]int, 0, s.size), Labels: make([]int, 0, s.size)}
	for m, n := range counts {
		idx := append([]int(nil), s.byClass[m]...)
		partialShuffle(rng, idx, n)
		for _, i := range idx[:n] {
			ms.Index = append(ms.Index, i)
			ms.Labels = append(ms.Labels, m)
		}
	}
	return ms
}

// DrawMiniSet is a one-off NewMiniSetSampler(labels, classes, size).Draw(rng).
func DrawMiniSet(labels []int, classes, size int, rng *rand.Rand) (MiniSet, error) {
	s, err := NewMiniSetSampler(labels, classes, size)
	if err != nil {
		return MiniSet{}, err
	}
	return s.Draw(rng), nil
}

package optlayer

// The pooled mixture: the pooled candidate for radii just below those where
// the uniform distribution fits every budget.
//
// The LP value is 1 exactly when some distribution q is within every
// class's budget (pooled.go). The uniform q = 1/n is one choice; when a
// class that lies far from the others (MNIST's zeros) cannot reach it, a q
// leaning towards that class often can, at a cost the other classes' slack
// absorbs. The mixture tries
//
//	q = μ_0·u + Σ_k μ_k·e_k,  μ ≥ 0, Σ μ = 1,
//
// u the uniform distribution and e_k class k's empirical distribution (1/n_k
// on each of its points). Class m reaches q by the same mixture of plans:
// its plan to u (the even spread, or the transport of pooledot.go), its
// transport to e_k (Sinkhorn iterations on the n_k × n_m block, rounded to
// exact marginals) and, for k = m, no move at all. The mixed plan is exactly
// feasible and costs Σ_j μ_j C_j(m), so a μ with Σ_j μ_j C_j(m) ≤ ϑ_m for
// every m is an LP optimum with gap 0: a small LP over μ (M+1 variables).
//
// The transports cost far more than the LP, so the costs start from lower
// bounds and are computed only where the LP wants them (column
// generation): the LP over the bounds is solved; the class whose budget its
// μ uses most gets its transports to the columns μ uses (two goroutines
// taking them in turn); and again, until the LP meets every budget with
// plans in hand (the candidate) or not even with the bounds (none). The
// bounds are dual points of each transport: f_i = the nearest cost from
// class m into receiving point i, then its c-transform g_j on the sending
// points (one pass over the costs for all of them; 2–4% above the nearest
// costs alone on CIFAR-10 pixels, and where the LP fails, it then mostly
// fails on the bounds: CIFAR-10 n = 3000 at 0.6 × median 1.1 s → 26 ms).
// For e_k also the bound of every sending point's nearest point of k.
// Measured (MNIST and CIFAR-10 pixels, n = 2000 / 3000, the radius 0.8 /
// 0.7 × the median cost, where u misses one class's budget by 3–9%): the
// mixture meets every budget with 1–3% to spare, where the solver took
// 3.6–7.2 s and up to 290 MB to certify a gap of 1e-3.

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// pooledMixTol is the tolerance of the LP over the weights μ; the answer's
// budgets are checked again on the exact mixture (within, pooledSlack).
const pooledMixTol = 1e-10

// pooledMixRounds bounds the LP rounds of the mixture at this many per
// column; pooledMixMaxM is the most classes it is tried with (the LP is
// dense, (M+1) × (2M+2), and solved once per round).
const (
	pooledMixRounds = 4
	pooledMixMaxM   = 32
)

// mixColumn is one candidate distribution's costs: for every class m a
// lower bound lo[m] on its plan's cost and the cost hi[m] of a plan in hand
// (+Inf: none yet); done[m]: hi[m] is final (its transport ran) and lo[m] =
// hi[m].
type mixColumn struct {
	lo, hi []float64
	done   []bool
}

// pooledMixture writes the pooled mixture into res (P_m = q for every m,
// objective Σ_i q(i) = 1) when one meets every budget, and reports whether
// it did. spread[m] is the cost of class m's even spread (pooled.go), and
// uni[m] the cost of its transport to u where pooledFeasible ran it (NaN
// where not).
func (s *solver) pooledMixture(res *Result, spread, uni []float64) bool {
	n, M := s.n, s.M
	if M > pooledMixMaxM {
		return false
	}
	for m := 0; m < M; m++ {
		if s.zero[m] || s.off[m+1] == s.off[m] {
			return false
		}
	}
	cols := s.mixColumns(spread, uni)
	labels := s.in.labels
	var buf [2][]float64
	var mu []float64
	// at most pooledMixRounds·(M+1) LP rounds (MNIST n = 3000 at 0.8 ×
	// median took 16 with M = 10): each round computes at least one cost,
	// but there are M·(M+1) of them
	for round := 0; ; round++ {
		if round >= pooledMixRounds*(M+1) {
			return false
		}
		var ok bool
		mu, ok = s.mixWeights(cols)
		if !ok {
			return false // not even the bounds meet every budget
		}
		if s.mixWithin(cols, mu) {
			break
		}
		// the class whose budget the LP's μ uses most, among those with
		// a cost still to compute in a column μ uses: its transports to
		// those columns, then the LP again (the bounds only rise, so the
		// LP fails as early as it can)
		best, most := -1, 0.0
		for m := 0; m < M; m++ {
			var r float64
			open := false
			for j, col := range cols {
				if mu[j] > 0 {
					r += mu[j] * col.lo[m] / s.theta[m]
					open = open || !col.done[m]
				}
			}
			if open && (best < 0 || r > most) {
				best, most = m, r
			}
		}
		if best < 0 {
			return false // every cost it uses is computed: LP tolerance
		}
		var js []int
		for j, col := range cols {
			if mu[j] > 0 && !col.done[best] {
				js = append(js, j)
			}
		}
		if buf[0] == nil {
			buf[0] = make([]float64, s.mixBufSize())
			if s.par {
				buf[1] = make([]float64, len(buf[0]))
			}
		}
		if !s.mixTransports(cols, js, best, buf) {
			return false
		}
	}
	q := make([]float64, n)
	for i := range q {
		q[i] = mu[0]/float64(n) + mu[labels[i]+1]*s.ninv[labels[i]]
	}
	var obj float64
	for m := 0; m < M; m++ {
		copy(res.P[m*n:(m+1)*n], q)
	}
	for _, x := range q {
		obj += x
	}
	res.Objective = obj
	return true
}

// mixColumns returns the columns u, e_0, …, e_{M−1} with their lower
// bounds, and u's costs in hand (spread, uni as for pooledMixture).
func (s *solver) mixColumns(spread, uni []float64) []mixColumn {
	n, M := s.n, s.M
	// the nearest costs between every point and every class, both ways:
	// into[i·M+k] = min_{j ∈ k} c(i,j) (i receives from class k) and
	// from[j·M+k] = min_{i ∈ k} c(i,j) (j sends to class k); then the
	// c-transform gt[j·M+k] = min_{i ∈ k} c(i,j) − into[i·M+y_j] ≥ 0
	labels := s.in.labels
	into := make([]float64, n*M)
	from := make([]float64, n*M)
	gt := make([]float64, n*M)
	for k := range into {
		into[k], from[k], gt[k] = math.Inf(1), math.Inf(1), math.Inf(1)
	}
	for i := 0; i < n; i++ {
		ri, li := into[i*M:(i+1)*M], labels[i]
		for j, c := range s.in.cost[i*n : (i+1)*n] {
			lj := labels[j]
			ri[lj] = min(ri[lj], c)
			if f := &from[j*M+li]; c < *f {
				*f = c
			}
		}
	}
	for i := 0; i < n; i++ {
		ri, li := into[i*M:(i+1)*M], labels[i]
		for j, c := range s.in.cost[i*n : (i+1)*n] {
			if g := &gt[j*M+li]; c-ri[labels[j]] < *g {
				*g = c - ri[labels[j]]
			}
		}
	}
	cols := make([]mixColumn, M+1)
	for j := range cols {
		cols[j] = mixColumn{lo: make([]float64, M), hi: make([]float64, M), done: make([]bool, M)}
	}
	// column 0: u. The dual point f_i = into[i·M+m] (i ∉ m), g_j = min over
	// the other classes of gt (j ∈ m) bounds every plan of m's rest.
	for i := 0; i < n; i++ {
		li := labels[i]
		for m := 0; m < M; m++ {
			if li != m {
				cols[0].lo[m] += into[i*M+m] / float64(n)
				continue
			}
			g := math.Inf(1)
			for k, x := range gt[i*M : (i+1)*M] {
				if k != m {
					g = min(g, x)
				}
			}
			cols[0].lo[m] += g * (s.ninv[m] - 1/float64(n))
		}
	}
	for m := 0; m < M; m++ {
		cols[0].hi[m] = spread[m]
		if !math.IsNaN(uni[m]) {
			cols[0].hi[m] = min(spread[m], uni[m])
		}
		cols[0].lo[m] = min(cols[0].lo[m], cols[0].hi[m])
		if !math.IsNaN(uni[m]) {
			cols[0].lo[m], cols[0].done[m] = cols[0].hi[m], true // its transport ran: final
		}
	}
	// column k+1: e_k. The larger of two bounds: every point of m sends to
	// its nearest point of k (from), and the dual point f_i = into[i·M+m]
	// (i ∈ k), g_j = gt[j·M+k] (j ∈ m).
	for k := 0; k < M; k++ {
		c := &cols[k+1]
		for m := 0; m < M; m++ {
			if m == k {
				c.done[m] = true // no move: lo = hi = 0
				continue
			}
			var out, in, g float64
			for _, j := range s.order[s.off[m]:s.off[m+1]] {
				out += from[j*M+k]
				g += gt[j*M+k]
			}
			for _, i := range s.order[s.off[k]:s.off[k+1]] {
				in += into[i*M+m]
			}
			c.lo[m] = max(out*s.ninv[m], in*s.ninv[k]+g*s.ninv[m])
			c.hi[m] = math.Inf(1)
		}
	}
	return cols
}

// mixWeights solves the LP over μ: the least t with Σ_j μ_j C_j(m) ≤ t·ϑ_m
// for every m, C = the columns' lower bounds, and reports
// whether t ≤ 1 (with the weights, clipped at 0 and summing to 1).
func (s *solver) mixWeights(cols []mixColumn) ([]float64, bool) {
	M, K := s.M, len(cols)
	// variables μ (K), t, slacks (M); rows: the M budgets, Σ μ = 1
	nv := K + 1 + M
	A := mat.NewDense(M+1, nv, nil)
	b := make([]float64, M+1)
	c := make([]float64, nv)
	c[K] = 1
	for m := 0; m < M; m++ {
		for j, col := range cols {
			x := col.lo[m]
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, false
			}
			A.Set(m, j, x/s.theta[m])
		}
		A.Set(m, K, -1)
		A.Set(m, K+1+m, 1)
	}
	for j := 0; j < K; j++ {
		A.Set(M, j, 1)
	}
	b[M] = 1
	t, x, err := lp.Simplex(c, A, b, pooledMixTol, nil)
	if err != nil || !(t <= 1) {
		return nil, false
	}
	mu := make([]float64, K)
	var sum float64
	for j := range mu {
		mu[j] = max(0, x[j])
		sum += mu[j]
	}
	if !(sum > 0) {
		return nil, false
	}
	for j := range mu {
		mu[j] /= sum
	}
	return mu, true
}

// mixWithin reports whether the mixture μ of the plans in hand meets every
// budget.
func (s *solver) mixWithin(cols []mixColumn, mu []float64) bool {
	for m := 0; m < s.M; m++ {
		var S float64
		for j, col := range cols {
			if mu[j] > 0 {
				S += mu[j] * col.hi[m]
			}
		}
		if !s.within(m, S) {
			return false
		}
	}
	return true
}

// mixBufSize is the largest transport block of the mixture's columns.
func (s *solver) mixBufSize() int {
	size := 0
	for m := 0; m < s.M; m++ {
		nm := s.off[m+1] - s.off[m]
		size = max(size, nm*(s.n-nm))
		for k := 0; k < s.M; k++ {
			size = max(size, nm*(s.off[k+1]-s.off[k]))
		}
	}
	return size
}

// mixTransports runs class m's transports to the columns js (j = 0: u;
// j = k+1: e_k; u's, the largest, first) and sets their costs; false when a
// transport failed numerically. With s.par two goroutines take the next
// column in turn (buf: one kernel buffer each); every transport writes only
// its own column's entry, so the result does not depend on the scheduling.
func (s *solver) mixTransports(cols []mixColumn, js []int, m int, buf [2][]float64) bool {
	failed := make([]bool, len(js))
	var next atomic.Int64
	work := func(g int) {
		for x := int(next.Add(1) - 1); x < len(js); x = int(next.Add(1) - 1) {
			j := js[x]
			var t *transportBlock
			if j == 0 {
				t = s.transport(m, buf[g])
			} else {
				k := j - 1
				t = s.sinkhorn(s.order[s.off[k]:s.off[k+1]], s.order[s.off[m]:s.off[m+1]], s.ninv[m], s.ninv[k], s.theta[m], buf[g])
			}
			if t == nil {
				failed[x] = true
				continue
			}
			col := &cols[j]
			col.hi[m] = min(col.hi[m], t.cost(s.in.cost, s.n, nil))
			col.lo[m], col.done[m] = col.hi[m], true
		}
	}
	if s.par && len(js) > 1 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(1)
		}()
		work(0)
		wg.Wait()
	} else {
		work(0)
	}
	return !slices.Contains(failed, true)
}

package optlayer

// The pooled candidate: a primal answer tried before the solve.
//
// Every feasible P has Σ_i max_m P_m(i) ≥ max_m Σ_i P_m(i) = 1, so the LP
// value is 1 exactly when one distribution q is within every class's budget
// (P_m = q for all m), and the certificate's starting lower bound 1 (the
// dual point α = 1/M, λ = 0) is then tight. With a large radius (ϑ of the
// order of the typical cost) the pooled distribution, uniform on all n
// points, often is: class m keeps 1/n on each of its own points (cost 0)
// and spreads the rest of each point's mass, 1/n_m − 1/n, evenly over the
// n − n_m points of the other classes, a plan of cost
//
//	S_m = (1/n_m − 1/n)/(n − n_m) · Σ_{j: y_j = m} Σ_{i: y_i ≠ m} c(i,j)
//	    = (1 − n_m/n) · (mean cost from class m to the other classes).
//
// When S_m ≤ ϑ_m for every class, P_m = 1/n is an LP optimum with gap 0,
// found in one pass over the costs. On large problems (isLarge), a class whose even
// spread exceeds its budget gets a second chance: a near-optimal transport
// of the same masses (pooledot.go). The regularised problem at ε still has
// a dense plan there, and its rounding is not within Tol of 1 until ε is far
// below the target (Phase C of the driver, on n² entries): the candidate
// ends that. It is taken only when it certifies, never changes PReg, Dual or
// the backward pass, and with LPOnly the solve stops after its first ε
// stage.

import (
	"cmp"
	"math"
	"slices"
)

// pooledSlack is the relative margin by which S_m must stay below ϑ_m: it
// covers the rounding of the n² additions behind S_m (≤ 2n·2⁻⁵³ relative).
const pooledSlack = 1e-9

// pooledWeights returns, for every class m, the mass w_m that the even
// spread moves from each point j of class m to each point i outside it.
func (s *solver) pooledWeights() []float64 {
	n, M := s.n, s.M
	w := make([]float64, M)
	for m := 0; m < M; m++ {
		nm := s.off[m+1] - s.off[m]
		if nm < n {
			w[m] = (s.ninv[m] - 1/float64(n)) / float64(n-nm)
		}
	}
	return w
}

// pooledCosts returns S_m, the cost of class m's even spread with weights
// w, in one row-major pass over the costs.
func (s *solver) pooledCosts(w []float64) []float64 {
	n, M := s.n, s.M
	labels := s.in.labels
	row := make([]float64, M)
	tot := make([]float64, M)
	for i := 0; i < n; i++ {
		clear(row)
		for j, c := range s.in.cost[i*n : (i+1)*n] {
			row[labels[j]] += c
		}
		for m, x := range row {
			if m != labels[i] {
				tot[m] += x
			}
		}
	}
	for m := range tot {
		tot[m] *= w[m]
	}
	return tot
}

// within reports whether a plan of cost S meets class m's budget.
func (s *solver) within(m int, S float64) bool {
	return S <= s.theta[m]*(1-pooledSlack) || S <= 0
}

// pooledTry is pooledFeasible's answer: the even spread's weights w and
// costs spread, the transport blocks (blocks[m] == nil: the even spread;
// kept only with keep), the costs uni of the transports it ran (NaN for
// the others), and whether every class reaches u within its budget.
type pooledTry struct {
	w, spread, uni []float64
	blocks         []*transportBlock
	ok             bool
}

// pooledFeasible decides how each class reaches the pooled LFD: by the even
// spread w or, with transport, by a transport block (pooledot.go) where the
// spread exceeds the budget. It reports false when some class cannot be
// shown to reach it within its budget.
func (s *solver) pooledFeasible(transport, keep bool) pooledTry {
	p := pooledTry{w: s.pooledWeights()}
	p.spread = s.pooledCosts(p.w)
	p.uni = make([]float64, s.M)
	for m := range p.uni {
		p.uni[m] = math.NaN()
	}
	var over []int
	for m, x := range p.spread {
		if !s.within(m, x) {
			if !transport || s.zero[m] {
				return p
			}
			over = append(over, m)
		}
	}
	if len(over) == 0 {
		p.ok = true
		return p
	}
	// the cheap bound first, for every class; then the worst class's
	// transport, so that a failure costs as little as possible
	nb := make([]float64, s.M)
	for _, m := range over {
		if nb[m] = s.nearestBound(m); !s.within(m, nb[m]) {
			return p
		}
	}
	if !keep {
		// few locations: the exact transports between them (pooledloc.go)
		if lc, ok := s.locationTransports(over); ok {
			exact := true
			for _, m := range over {
				if math.IsNaN(lc[m]) {
					exact = false // the simplex failed: the Sinkhorn transports
					break
				}
				p.uni[m] = lc[m]
				if !s.within(m, lc[m]) {
					return p // u is out of the class's reach
				}
			}
			if exact {
				p.ok = true
				return p
			}
		}
	}
	slices.SortStableFunc(over, func(a, b int) int { return cmp.Compare(nb[b]/s.theta[b], nb[a]/s.theta[a]) })
	blocks := make([]*transportBlock, s.M)
	// two classes at a time with s.par (one kernel buffer per goroutine,
	// unless the blocks are kept), checked in order: a failure stops the
	// rest, and the answer does not depend on the scheduling
	var buf [2][]float64
	if !keep {
		size := 0
		for _, m := range over {
			nm := s.off[m+1] - s.off[m]
			size = max(size, nm*(s.n-nm))
		}
		buf[0] = make([]float64, size)
		if s.par && len(over) > 1 {
			buf[1] = make([]float64, size)
		}
	}
	step := 1
	if s.par {
		step = 2
	}
	var ts [2]*transportBlock
	for x := 0; x < len(over); x += step {
		pair := over[x:min(x+step, len(over))]
		forClasses(len(pair), s.par, func(g int) {
			ts[g] = s.transport(pair[g], buf[g])
		})
		for g, m := range pair {
			if ts[g] != nil {
				p.uni[m] = ts[g].cost(s.in.cost, s.n, nil)
			}
		}
		for g, m := range pair {
			if ts[g] == nil || !s.within(m, p.uni[m]) {
				return p
			}
			if keep {
				blocks[m] = ts[g]
			}
		}
	}
	p.blocks, p.ok = blocks, true
	return p
}

// pooledAnswer writes the pooled candidate into res (P_m = 1/n, its
// objective, and with plans its transport plans) when it meets every
// budget, and reports whether it did. transport allows the transport
// blocks of pooledot.go and, without plans, the mixture of pooledmix.go
// (large problems only, isLarge: below it the solver's dense path is as cheap
// as the Sinkhorn iterations).
func (s *solver) pooledAnswer(res *Result, plans, transport bool) bool {
	p := s.pooledFeasible(transport, plans)
	if !p.ok {
		return transport && !plans && s.pooledMixture(res, p.spread, p.uni)
	}
	n := s.n
	q := 1 / float64(n)
	for k := range res.P {
		res.P[k] = q
	}
	res.Objective = float64(n) * q // Σ_i max_m P_m(i), rounded once
	if plans {
		res.Plans = s.pooledPlans(p.w, p.blocks)
	}
	return true
}

// pooledPlans materialises the pooled plans in the n×n layout of Plans.
func (s *solver) pooledPlans(w []float64, blocks []*transportBlock) [][]float64 {
	n, M := s.n, s.M
	labels := s.in.labels
	q := 1 / float64(n)
	dst := make([][]float64, M)
	for m := range dst {
		pm := make([]float64, n*n)
		for _, j := range s.order[s.off[m]:s.off[m+1]] {
			pm[j*n+j] = q
		}
		if blocks != nil && blocks[m] != nil {
			blocks[m].cost(s.in.cost, n, pm)
			dst[m] = pm
			continue
		}
		for i := 0; i < n; i++ {
			if labels[i] == m {
				continue
			}
			for _, j := range s.order[s.off[m]:s.off[m+1]] {
				pm[i*n+j] = w[m]
			}
		}
		dst[m] = pm
	}
	return dst
}

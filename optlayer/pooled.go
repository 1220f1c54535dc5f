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
// found in one pass over the costs. The regularised problem at ε still has
// a dense plan there, and its rounding is not within Tol of 1 until ε is far
// below the target (Phase C of the driver, on n² entries): the candidate
// ends that. It never changes PReg, Dual or the backward pass; with LPOnly
// the solve stops after its first ε stage.

// pooledSlack is the relative margin by which S_m must stay below ϑ_m: it
// covers the rounding of the n² additions behind S_m (≤ 2n·2⁻⁵³ relative).
const pooledSlack = 1e-9

// pooledWeights returns, for every class m, the mass w_m that the pooled
// plan moves from each point j of class m to each point i outside it, and
// whether the pooled plan meets every budget.
func (s *solver) pooledWeights() (w []float64, ok bool) {
	n, M := s.n, s.M
	w = make([]float64, M)
	for m := 0; m < M; m++ {
		nm := s.off[m+1] - s.off[m]
		if nm < n {
			w[m] = (s.ninv[m] - 1/float64(n)) / float64(n-nm)
		}
	}
	cost := s.pooledCosts(w)
	for m, S := range cost {
		if S > s.theta[m]*(1-pooledSlack) && S > 0 {
			return w, false
		}
	}
	return w, true
}

// pooledCosts returns S_m, the cost of class m's pooled plan with weights
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

// pooledAnswer writes the pooled candidate into res (P_m = 1/n, its
// objective, and with plans its transport plans) when it meets every
// budget, and reports whether it did.
func (s *solver) pooledAnswer(res *Result, plans bool) bool {
	w, ok := s.pooledWeights()
	if !ok {
		return false
	}
	n := s.n
	q := 1 / float64(n)
	for k := range res.P {
		res.P[k] = q
	}
	res.Objective = float64(n) * q // Σ_i max_m P_m(i), rounded once
	if plans {
		res.Plans = s.pooledPlans(w)
	}
	return true
}

// pooledPlans materialises the pooled plans in the n×n layout of Plans.
func (s *solver) pooledPlans(w []float64) [][]float64 {
	n, M := s.n, s.M
	labels := s.in.labels
	q := 1 / float64(n)
	dst := make([][]float64, M)
	for m := range dst {
		pm := make([]float64, n*n)
		for i := 0; i < n; i++ {
			if labels[i] == m {
				pm[i*n+i] = q
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

package optlayer

// The class coarse space of Newton's preconditioner.
//
// Newton's system (backward.go's reduced operator H in g and the active λ)
// has, for every class m, a direction that it hardly resists: g raised by
// the same amount on every column of m. Where every row class m reaches is
// active, H₀'s diagonal (the column masses, summing to 1) and the row terms
// −Σ_i u_m(i)u_m(i)ᵀ/p_m(i) (u_m(i)'s entries summing to p_m(i)) cancel on
// it exactly, and only the rows' coupling Σ_i w_i w_iᵀ/D_i is left; on a
// class whose plan hardly depends on the cost (λ_m near 0: dense, nearly
// rank-one plans) that is small against the diagonal the Jacobi
// preconditioner scales by. CG then spends most of its iterations on these
// M directions late in each stage, when the Levenberg–Marquardt term
// (proportional to the residual) no longer lifts them (50–128 iterations
// a step on TestRandomSweep seed 42's trial 16).
//
// The two-level preconditioner adds the exact solve on their span to
// Jacobi's: P⁻¹ = D⁻¹ + Z E⁻¹ Zᵀ, Z the n × M class indicators on g, E =
// ZᵀHZ. E costs no operator product: with 1_mᵀu_k(i) = [k = m]·p_m(i) and
// 1_mᵀw_i = [m ∈ A_i],
//
//	E_km = [k = m]·(Σ_{q∈m} colsum_q + reg·Σ_{q∈m} dg_q − Σ_{i: m∈A_i} p_m(i))
//	     + Σ_{i: k,m∈A_i} 1/D_i,
//
// one pass over the active set (TestCoarseMatrix checks it against ZᵀHZ
// from the operator). P⁻¹ stays symmetric positive definite, so CG's
// guarantees hold; where E is not numerically positive definite the
// preconditioner is Jacobi's alone. It changes only Newton's directions:
// every certificate is computed as before. Used by LPOnly solves above
// lpLargeMin (solveInstance's lpLarge) only, so the regularised solves, and
// with them training and Table 1, take the same iterates as without it.
//
// Measured (docs/PERFORMANCE.md, session of 2026-11-29; one solve each,
// quiet): TestRandomSweep seed 25's trial 12 594 → 506 iterations, 48.6 →
// 29.5 s; seed 10's trial 0 764 → 406, 30.1 → 19.4 s; seed 9's trial 29
// 22.9 → 16.8 s (the same 384 iterations, fewer CG iterations); seed 42's
// trial 16 22.4 → 20.5 s; slower: seed 25's trial 24 (25.2 → 29.6 s, 454
// → 448 iterations), seed 33's trial 24 (9.2 → 10.8 s), seed 24's trial 13
// (8.1 → 9.8 s). The 16 sweeps of the sessions before (480 instances)
// 35,150 → 34,159 iterations, all certified; BenchmarkHard's kinds at n =
// 2000 / 3000 971 → 952; exact `separated` n = 10,000 582 → 492
// iterations, 100 → 104 s; real pixels at n = 3000 the same or fewer
// iterations. Only after steps of many CG iterations (more than 15 in the
// last solve) lost the gains: seed 25's trial 12 took 52.2 s.

import "gonum.org/v1/gonum/mat"

// coarseSpace holds the factor of E and the coarse vector.
type coarseSpace struct {
	e    *mat.SymDense
	chol mat.Cholesky
	y    *mat.VecDense
}

// matrix fills E = ZᵀHZ for st's current system.
func (c *coarseSpace) matrix(st *state) *mat.SymDense {
	n, M := st.n, st.M
	if c.e == nil || c.e.SymmetricDim() != M {
		c.e = mat.NewSymDense(M, nil)
		c.y = mat.NewVecDense(M, nil)
	}
	e := c.e
	for k := 0; k < M; k++ {
		for m := k; m < M; m++ {
			e.SetSym(k, m, 0)
		}
	}
	for m := 0; m < M; m++ {
		var d float64
		for q := st.off[m]; q < st.off[m+1]; q++ {
			d += st.colsum[q] + st.reg*st.dg[q]
		}
		e.SetSym(m, m, d)
	}
	var act [64]int
	for i := 0; i < n; i++ {
		var D float64
		a := act[:0]
		for m := 0; m < M; m++ {
			if k := m*n + i; st.active[k] {
				D += 1 / st.p[k]
				e.SetSym(m, m, e.At(m, m)-st.p[k])
				a = append(a, m)
			}
		}
		if D == 0 {
			continue
		}
		for x, k := range a {
			for _, m := range a[x:] {
				e.SetSym(k, m, e.At(k, m)+1/D)
			}
		}
	}
	return e
}

// coarseCond is the largest condition number of E the coarse space is used
// with: beyond it Zᵀr's solve would carry more rounding than correction.
const coarseCond = 1e12

// factor forms and factors E; false (Jacobi alone) when it is not
// numerically positive definite or too ill-conditioned.
func (c *coarseSpace) factor(st *state) bool {
	return c.chol.Factorize(c.matrix(st)) && c.chol.Cond() <= coarseCond
}

// add adds Z E⁻¹ Zᵀ r to z.
func (c *coarseSpace) add(st *state, r, z []float64) {
	M := st.M
	for m := 0; m < M; m++ {
		var sum float64
		for _, x := range r[st.off[m]:st.off[m+1]] {
			sum += x
		}
		c.y.SetVec(m, sum)
	}
	// factor rejected an ill-conditioned E, so the only error SolveVecTo
	// could report (a condition-number warning) does not arise, and the
	// same P⁻¹ applies at every iteration
	_ = c.chol.SolveVecTo(c.y, c.y)
	for m := 0; m < M; m++ {
		y := c.y.AtVec(m)
		for q := st.off[m]; q < st.off[m+1]; q++ {
			z[q] += y
		}
	}
}

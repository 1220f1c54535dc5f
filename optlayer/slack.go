package optlayer

// Classes whose budget cannot bind.
//
// If ϑ_m ≥ (1/n_m) Σ_{j in class m} max_i c(i,j), every plan of class m meets
// its budget: the constraint is redundant, λ_m = 0 is optimal and stays 0,
// and γ(i,j) = e^{(g_j − α_m(i))/ε} is a rank-one matrix A_i·B_j — dense (a
// large ϑ spreads the LFD over every point), but O(n) to hold and to apply.
// Such a class keeps no candidate entries: its kernel is the row factor
// sa[m·n+i] and the column factor sb[q] (γ = sa·u·sb·v in the stabilised
// form), its Newton and backward blocks are rank-one products, and it has no
// λ variable. Problems that start dense (not isLarge) keep the general
// dense path.

import "math"

// markSlack flags the classes whose budget is redundant (called for large
// problems only: isLarge). It also sets every column's largest cost, cmax,
// in one pass split over the classes like the solver's other passes (the
// first selection then need not take it again).
func (s *solver) markSlack() {
	n := s.n
	s.forClasses(func(m int) {
		buf := s.gbuf[m&1][0] // forClasses' fixed split: one per goroutine
		for q := s.off[m]; q < s.off[m+1]; q++ {
			mx := 0.0
			for _, c := range s.fullCol(q, buf) {
				mx = max(mx, c)
			}
			s.cmax[q] = mx
		}
	})
	s.cmaxSet = true
	any := false
	for m := 0; m < s.M; m++ {
		if s.zero[m] {
			continue
		}
		var worst float64 // the costliest plan: each column to its farthest row
		for q := s.off[m]; q < s.off[m+1]; q++ {
			worst += s.cmax[q]
		}
		worst *= s.ninv[m]
		if s.theta[m] >= worst*(1+1e-9) {
			s.slack[m] = true
			s.lam[m] = 0
			any = true
		}
	}
	if any {
		s.sa = make([]float64, s.M*n)
		s.sb = make([]float64, n)
	}
}

// fixedLam reports whether λ_m is not a variable (ϑ_m = 0 or a slack budget).
func (s *solver) fixedLam(m int) bool { return s.zero[m] || s.slack[m] }

// rebuildSlack is rebuild for a slack class: exact column step from (g, α).
func (s *solver) rebuildSlack(m int) {
	s.rebuilds++
	n := s.n
	ie := 1 / s.eps
	am := s.alpha[m*n : (m+1)*n]
	a := s.sa[m*n : (m+1)*n]
	amin := math.Inf(1)
	for _, x := range am {
		amin = min(amin, x)
	}
	var sumA float64
	for i, x := range am {
		a[i] = math.Exp(-(x - amin) * ie)
		sumA += a[i]
	}
	ninv := s.ninv[m]
	lninv := math.Log(ninv)
	for q := s.off[m]; q < s.off[m+1]; q++ {
		lcs := (s.g[q]-amin)*ie + math.Log(sumA)
		s.resid += ninv * math.Abs(math.Expm1(math.Min(700, lcs-lninv)))
		s.g[q] = amin + s.eps*(lninv-math.Log(sumA))
		s.sb[q] = ninv / sumA
		s.g0[q] = s.g[q]
		s.v[q] = 1
	}
	copy(s.alpha0[m*n:(m+1)*n], am)
	um := s.u[m*n : (m+1)*n]
	for i := range um {
		um[i] = 1
	}
	s.S[m], s.S2[m] = 0, 0
	s.need[m] = false
}

// columnStepSlack is columnStep for a slack class.
func (s *solver) columnStepSlack(m int) bool {
	n := s.n
	a, um := s.sa[m*n:(m+1)*n], s.u[m*n:(m+1)*n]
	var T float64
	for i, x := range a {
		T += x * um[i]
	}
	ninv := s.ninv[m]
	var res float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cs := s.sb[q] * T
		if !(cs > 0) || math.IsInf(cs, 0) {
			return false
		}
		res += math.Abs(s.v[q]*cs - ninv)
		vq := ninv / cs
		if vq > expAbsorbHi || vq < expAbsorbLo {
			return false
		}
		s.v[q] = vq
		s.g[q] = s.g0[q] + s.eps*math.Log(vq)
	}
	s.resid += res
	s.S[m], s.S2[m] = 0, 0
	return true
}

// rowStepSlack is rowStep for a slack class.
func (s *solver) rowStepSlack(m int) {
	n := s.n
	var B float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		B += s.v[q] * s.sb[q]
	}
	a := s.sa[m*n : (m+1)*n]
	sm, um, pm := s.s[m*n:(m+1)*n], s.u[m*n:(m+1)*n], s.p[m*n:(m+1)*n]
	for i := range sm {
		sm[i] = a[i] * B
		pm[i] = um[i] * sm[i]
	}
}

// phiKernelSlack is phiKernel for a slack class: every row's maximum is
// max_q g_q/ε, so the kernel is the column factor alone.
func (s *solver) phiKernelSlack(m int) {
	n := s.n
	ie := 1 / s.eps
	gmax := math.Inf(-1)
	for q := s.off[m]; q < s.off[m+1]; q++ {
		gmax = max(gmax, s.g[q]*ie)
	}
	var B float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		s.sb[q] = math.Exp(s.g[q]*ie - gmax)
		B += s.sb[q]
		s.g0[q] = s.g[q]
		s.v[q] = 1
	}
	a := s.sa[m*n : (m+1)*n]
	rm, sm := s.alpha0[m*n:(m+1)*n], s.s[m*n:(m+1)*n]
	for i := range a {
		a[i] = 1
		rm[i] = gmax
		sm[i] = B
	}
	s.need[m] = false
}

// phiClassSlack is phiClass for a slack class.
func (s *solver) phiClassSlack(m int) {
	n := s.n
	for k := range s.alpha0[m*n : (m+1)*n] {
		s.alpha0[m*n+k] *= s.eps
	}
	a, um := s.sa[m*n:(m+1)*n], s.u[m*n:(m+1)*n]
	var T float64
	for i, x := range a {
		T += x * um[i]
	}
	ninv := s.ninv[m]
	var phi, mass, res float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cs := s.sb[q] * T
		s.colsum[q] = cs
		res += math.Abs(cs - ninv)
		phi += s.g[q] * ninv
		mass += cs
	}
	s.S[m], s.S2[m] = 0, 0
	s.part[3*m], s.part[3*m+1], s.part[3*m+2] = phi, mass, res
}

// upperRowsSlack adds the column-scaled rows of a slack class (factors f per
// position) to rm.
func (s *solver) upperRowsSlack(m int, rm []float64) {
	n := s.n
	var B float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		B += s.sb[q] * s.ninv[m] / s.colsum[q]
	}
	a, um := s.sa[m*n:(m+1)*n], s.u[m*n:(m+1)*n]
	for i := range rm {
		rm[i] += a[i] * um[i] * B
	}
}

// lowerSlack is the dual bound's part of a slack class: λ_m = 0, so every
// column's minimum is min_i α_m(i), and the class contributes it once.
func (s *solver) lowerSlack(m int) float64 {
	mn := math.Inf(1)
	for _, x := range s.alpha[m*s.n : (m+1)*s.n] {
		mn = min(mn, x)
	}
	return mn
}

// loadSlack fills the state's rank-one factors of a slack class: γ(i,q) =
// r1a[m·n+i]·r1b[q].
func (s *solver) loadSlack(m int, st *state) {
	n := s.n
	a, um := s.sa[m*n:(m+1)*n], s.u[m*n:(m+1)*n]
	ra := st.r1a[m*n : (m+1)*n]
	var A float64
	for i := range ra {
		ra[i] = a[i] * um[i]
		A += ra[i]
	}
	var B float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		st.r1b[q] = s.sb[q] * s.v[q]
		B += st.r1b[q]
		st.colsum[q] = st.r1b[q] * A
		st.qc[q] = 0
	}
	pm := st.p[m*n : (m+1)*n]
	for i := range pm {
		pm[i] = ra[i] * B
	}
	st.sc2[m], st.S[m] = 0, 0
}

package optlayer

// Newton's method on the semi-dual.
//
// Eliminating α by water filling leaves the concave semi-dual
// Φ(g, λ) = max_{α ∈ Δ} D(g, α, λ). It is C¹ and piecewise C²; by Danskin
// its gradient is ∂Φ/∂g(j) = 1/n_m − Σ_i γ(i,j), ∂Φ/∂λ_m = Σ γ c − ϑ_m at
// α = α*(g, λ), and on a fixed active set its Hessian is −H/ε where H is the
// reduced KKT operator of the backward pass (state.apply): the Γ-weighted
// normal-equation matrix with the row block eliminated. Block coordinate
// ascent (Sinkhorn-like sweeps) stalls on nearly flat directions of Φ at
// small ε; a few Newton steps Δ = ε H⁻¹ ∇Φ with an Armijo line search on Φ
// converge quadratically instead. λ is projected on λ ≥ 0.

import "math"

// evalPhi rebuilds every class kernel at the current (g, λ) with α = α*(g, λ)
// and returns Φ. It leaves a consistent stabilised state (v = 1, g₀ = g,
// α₀ = ε·row maxima) with S, S2 and the column residual filled in.
func (s *solver) evalPhi() float64 {
	s.rebuilds++
	n, M := s.n, s.M
	ie := 1 / s.eps
	for m := 0; m < M; m++ {
		rm := s.alpha0[m*n : (m+1)*n] // row maxima of the exponent (units of ε)
		for i := range rm {
			rm[i] = math.Inf(-1)
		}
		le := s.lam[m] * ie
		for q := s.off[m]; q < s.off[m+1]; q++ {
			kr := s.K[q*n : (q+1)*n]
			cr := s.ct[q*n : (q+1)*n]
			gq := s.g[q] * ie
			if s.zero[m] {
				for i, c := range cr {
					a := math.Inf(-1)
					if c == 0 {
						a = gq
					}
					kr[i] = a
					if a > rm[i] {
						rm[i] = a
					}
				}
			} else {
				for i, c := range cr {
					a := gq - le*c
					kr[i] = a
					if a > rm[i] {
						rm[i] = a
					}
				}
			}
		}
		sm := s.s[m*n : (m+1)*n]
		for i := range sm {
			sm[i] = 0
		}
		for q := s.off[m]; q < s.off[m+1]; q++ {
			kr := s.K[q*n : (q+1)*n]
			kr = kr[:len(rm)]
			for i, a := range kr {
				e := math.Exp(a - rm[i])
				kr[i] = e
				sm[i] += e
			}
		}
		for i, r := range rm {
			if math.IsInf(r, -1) {
				rm[i] = 0 // empty row of a ϑ = 0 class
			}
		}
		for q := s.off[m]; q < s.off[m+1]; q++ {
			s.g0[q] = s.g[q]
			s.v[q] = 1
		}
		s.need[m] = false
	}
	// water filling with a_m(i) = log s_m(i) + rowmax_m(i)
	a, al := s.wfA, s.wfT
	for i := 0; i < n; i++ {
		for m := 0; m < M; m++ {
			if sm := s.s[m*n+i]; sm > 0 {
				a[m] = math.Log(sm) + s.alpha0[m*n+i]
			} else {
				a[m] = math.Inf(-1)
			}
		}
		if !waterfill(a, s.eps, al, s.idx) {
			for m := 0; m < M; m++ {
				al[m] = s.alpha[m*n+i]
			}
		}
		for m := 0; m < M; m++ {
			k := m*n + i
			s.alpha[k] = al[m]
			s.u[k] = math.Exp(s.alpha0[k] - al[m]*ie)
			s.p[k] = s.u[k] * s.s[k]
		}
	}
	var phi, mass float64
	s.resid = 0
	for m := 0; m < M; m++ {
		for k := range s.alpha0[m*n : (m+1)*n] {
			s.alpha0[m*n+k] *= s.eps
		}
		um := s.u[m*n : (m+1)*n]
		ninv := s.ninv[m]
		var S, S2 float64
		for q := s.off[m]; q < s.off[m+1]; q++ {
			kr := s.K[q*n : (q+1)*n]
			cr := s.ct[q*n : (q+1)*n]
			kr = kr[:len(um)]
			cr = cr[:len(um)]
			var cs, c1, c2 float64
			for i, k := range kr {
				w := k * um[i]
				cs += w
				x := w * cr[i]
				c1 += x
				c2 += x * cr[i]
			}
			s.colsum[q] = cs
			s.resid += math.Abs(cs - ninv)
			S += c1
			S2 += c2
			phi += s.g[q] * ninv
			mass += cs
		}
		s.S[m], s.S2[m] = S, S2
		if !s.zero[m] {
			phi -= s.lam[m] * s.theta[m]
		}
	}
	return phi - s.eps*mass
}

// newton runs damped Newton steps on Φ at the current ε until the residual
// is ≤ tol or maxSteps steps were taken. It returns the number of steps and
// whether the line search failed. It leaves a column-exact state (the last
// operation is a column step).
func (s *solver) newton(cfg config, maxSteps int, tol float64) (steps int, failed bool) {
	n := s.n
	phi := s.evalPhi()
	var st *state
	var w *work
	gOld := make([]float64, n)
	lOld := make([]float64, s.M)
	for steps < maxSteps {
		r := s.residual()
		if cfg.trace != nil {
			cfg.trace(-steps, s, r)
		}
		if r <= tol {
			break
		}
		st = s.loadState(st, cfg.cgTol, r, true)
		if w == nil || len(w.t) != n+st.L {
			w = st.newWork()
		}
		dim := n + st.L
		rhs := make([]float64, dim)
		for m := 0; m < s.M; m++ {
			for q := s.off[m]; q < s.off[m+1]; q++ {
				rhs[q] = s.eps * (s.ninv[m] - st.colsum[q])
			}
			if b := st.bi[m]; b >= 0 {
				rhs[b] = s.eps * (st.S[m] - s.theta[m])
			}
		}
		d := make([]float64, dim)
		var err error
		if dim <= denseMax {
			err = st.solveDense(rhs, d, w)
		} else {
			st.cgTol = math.Max(1e-12, math.Min(1e-2, 0.1*r))
			err = st.solveCG(rhs, d, w)
		}
		if err != nil {
			failed = true
			break
		}
		slope := dot(rhs, d) / s.eps
		copy(gOld, s.g)
		copy(lOld, s.lam)
		t := 1.0
		ok := false
		for ls := 0; ls < 40; ls++ {
			for q := 0; q < n; q++ {
				s.g[q] = gOld[q] + t*d[q]
			}
			for m := 0; m < s.M; m++ {
				if b := st.bi[m]; b >= 0 {
					s.lam[m] = math.Max(0, lOld[m]+t*d[b])
				}
			}
			pn := s.evalPhi()
			if pn >= phi+1e-4*t*slope-1e-13*(1+math.Abs(phi)) {
				phi = pn
				ok = true
				break
			}
			t /= 2
		}
		steps++
		if !ok {
			copy(s.g, gOld)
			copy(s.lam, lOld)
			s.evalPhi()
			failed = true
			break
		}
	}
	s.gStep()
	return steps, failed
}

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

import (
	"math"

	"github.com/drknn/drknn/optlayer/internal/vexp"
)

// evalPhi rebuilds every class kernel at the current (g, λ) with α = α*(g, λ)
// and returns Φ. It leaves a consistent stabilised state (v = 1, g₀ = g,
// α₀ = ε·row maxima) with S, S2 and the column residual filled in.
func (s *solver) evalPhi() float64 {
	s.rebuilds++
	n, M := s.n, s.M
	ie := 1 / s.eps
	if s.par && M > 1 {
		s.tm.forClassesW(M, s.lpt, s.phiKernel)
	} else {
		for m := 0; m < M; m++ { // no closure: it would be allocated per call
			s.phiKernel(m, 0)
		}
	}
	// water filling with a_m(i) = log s_m(i) + rowmax_m(i)
	vec := s.vecExp
	// the levels, class by class: the vector logarithm (vexp.LogAdd) when
	// vec, else math.Log(s) + α₀ (−∞ where s ≤ 0) four at a time, the same
	// bits (vexp.LogAddGo)
	if len(s.la) != M*n {
		s.la = make([]float64, M*n)
	}
	for m := 0; m < M; m++ {
		la, sm, a0 := s.la[m*n:(m+1)*n], s.s[m*n:(m+1)*n], s.alpha0[m*n:(m+1)*n]
		if vec {
			vexp.LogAdd(la, sm, a0)
		} else {
			vexp.LogAddGo(la, sm, a0)
		}
	}
	// the rows' water filling: the rows below n/2 on the caller, the rest
	// on the team's helper (each row on its own: the same bits)
	if s.par {
		s.tm.forClassesW(2, nil, s.phiRowsHalf)
	} else {
		s.phiRows(0, n, s.wfA, s.wfT, s.idx)
	}
	for m := 0; m < M; m++ {
		if vec {
			s.rowWeights(m, ie)
			continue
		}
		// u = math.Exp of the exponents, four at a time, the same bits
		// (vexp.ExpGo); p = u·s
		u, p, sm := s.u[m*n:(m+1)*n], s.p[m*n:(m+1)*n], s.s[m*n:(m+1)*n]
		vexp.ExpGo(u)
		for i, x := range u {
			p[i] = x * sm[i]
		}
	}
	if s.par && M > 1 {
		s.tm.forClassesW(M, s.lpt, s.phiClass)
	} else {
		for m := 0; m < M; m++ {
			s.phiClass(m, 0)
		}
	}
	part := s.part
	var phi, mass float64
	s.resid = 0
	for m := 0; m < M; m++ { // fixed order: the sum does not depend on scheduling
		phi += part[3*m]
		mass += part[3*m+1]
		s.resid += part[3*m+2]
	}
	return phi - s.eps*mass
}

// phiRowsHalf is evalPhi's water filling over the rows below n/2 (h = 0)
// or the others (h = 1), with scratch of its own for each half.
func (s *solver) phiRowsHalf(h, _ int) {
	if h == 0 {
		s.phiRows(0, s.n/2, s.wfA, s.wfT, s.idx)
		return
	}
	if len(s.wf2) != 2*s.M {
		s.wf2 = make([]float64, 2*s.M)
		s.idx2 = make([]int, s.M)
	}
	s.phiRows(s.n/2, s.n, s.wf2[:s.M], s.wf2[s.M:2*s.M], s.idx2)
}

// phiRows is evalPhi's water filling for rows lo…hi−1 (a, al, idx:
// scratch of length M): α of each row from the levels s.la, and without
// s.vecExp the exponents of u.
func (s *solver) phiRows(lo, hi int, a, al []float64, idx []int) {
	n, M := s.n, s.M
	ie := 1 / s.eps
	vec := s.vecExp
	for i := lo; i < hi; i++ {
		for m := 0; m < M; m++ {
			a[m] = s.la[m*n+i]
		}
		if !waterfill(a, s.eps, al, idx) {
			for m := 0; m < M; m++ {
				al[m] = s.alpha[m*n+i]
			}
		}
		for m := 0; m < M; m++ {
			k := m*n + i
			s.alpha[k] = al[m]
			if !vec { // the exponent; its math.Exp below
				s.u[k] = s.alpha0[k] - al[m]*ie
			}
		}
	}
}

// rowWeights is the end of evalPhi's row pass for class m when the target ε
// is below smallEps (s.vecExp; its levels log s + α₀ are vexp.LogAdd's
// then): u = e^(α₀ − α/ε) by the vector exponential
// (vexp, about 2 ulp; e^x below e^−vexpCut is 0) instead of math.Exp row by
// row, and p = u·s. A class with an exponent above vexpCut (or NaN) takes
// math.Exp. (The rows' exponentials were 12% of a solve at n = 50.)
func (s *solver) rowWeights(m int, ie float64) {
	n := s.n
	a0, al := s.alpha0[m*n:(m+1)*n], s.alpha[m*n:(m+1)*n]
	u, p, sm := s.u[m*n:(m+1)*n], s.p[m*n:(m+1)*n], s.s[m*n:(m+1)*n]
	u, p, sm = u[:len(a0)], p[:len(a0)], sm[:len(a0)]
	inDomain := true
	for i, x := range a0 {
		x -= al[i] * ie
		u[i] = x
		if !(x <= vexpCut) {
			inDomain = false
		}
	}
	if inDomain {
		vexp.ExpShiftSum(u, 0, vexpCut)
	} else {
		for i, x := range u {
			u[i] = math.Exp(x)
		}
	}
	for i, x := range u {
		p[i] = x * sm[i]
	}
}

// vexpCut bounds the exponents rowWeights gives the vector exponential.
const vexpCut = 700

// phiKernel is evalPhi's kernel pass for class m: log-domain exponents,
// row maxima in s.alpha0, then the kernel and its row sums s.s.
func (s *solver) phiKernel(m, w int) {
	if s.slack[m] {
		s.phiKernelSlack(m)
		return
	}
	n := s.n
	ie := 1 / s.eps
	rm := s.alpha0[m*n : (m+1)*n] // row maxima of the exponent (units of ε)
	for i := range rm {
		rm[i] = math.Inf(-1)
	}
	le := s.lam[m] * ie
	b0, b1 := s.gbuf[w][0], s.gbuf[w][1]
	for q := s.off[m]; q < s.off[m+1]; q++ {
		kr, cr := s.colKern(q), s.colCost(q)
		gq := s.g[q] * ie
		// kr = gq − le·c, rm = max(rm, kr) (ϑ = 0 classes: every candidate
		// has c = 0 and λ = 0)
		rows := s.colRows(q)
		if rows == nil {
			vexp.AffineMax(kr, cr, rm, gq, -le)
			continue
		}
		t := gather(rm, rows, b0)
		vexp.AffineMax(kr, cr, t, gq, -le)
		for k, i := range rows {
			rm[i] = t[k]
		}
	}
	sm := s.s[m*n : (m+1)*n]
	for i := range sm {
		sm[i] = 0
	}
	for q := s.off[m]; q < s.off[m+1]; q++ {
		// kr = e^(kr − rm) (0 below the cut), sm += kr
		kr, rows := s.colKern(q), s.colRows(q)
		if rows == nil {
			vexp.ExpSubAcc(kr, rm, sm, rowCut)
			continue
		}
		t, z := gather(rm, rows, b0), b1[:len(rows)]
		for k := range z {
			z[k] = 0
		}
		vexp.ExpSubAcc(kr, t, z, rowCut)
		for k, i := range rows {
			sm[i] += z[k]
		}
	}
	for i, r := range rm {
		if math.IsInf(r, -1) {
			rm[i] = 0 // a row without candidates (or of a ϑ = 0 class)
		}
	}
	for q := s.off[m]; q < s.off[m+1]; q++ {
		s.g0[q] = s.g[q]
		s.v[q] = 1
	}
	s.need[m] = false
}

// phiClass is evalPhi's column pass for class m: S, S2, column sums and the
// class's parts of Φ, mass and residual (in s.part).
func (s *solver) phiClass(m, w int) {
	if s.slack[m] {
		s.phiClassSlack(m)
		return
	}
	n := s.n
	part := s.part // per class: Φ part, mass, residual

	for k := range s.alpha0[m*n : (m+1)*n] {
		s.alpha0[m*n+k] *= s.eps
	}
	um := s.u[m*n : (m+1)*n]
	ninv := s.ninv[m]
	var S, S2, phi, mass, res float64
	buf := s.gbuf[w][0]
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cs, c1, c2 := vexp.WeightedMoments(s.colKern(q), gather(um, s.colRows(q), buf), s.colCost(q))
		s.colsum[q] = cs
		res += math.Abs(cs - ninv)
		S += c1
		S2 += c2
		phi += s.g[q] * ninv
		mass += cs
	}
	s.S[m], s.S2[m] = S, S2
	if !s.zero[m] {
		phi -= s.lam[m] * s.theta[m]
	}
	part[3*m], part[3*m+1], part[3*m+2] = phi, mass, res
}

// newton runs damped Newton steps on Φ at the current ε until the residual
// is ≤ tol or maxSteps steps were taken. It returns the number of steps and
// whether the line search failed. It leaves a column-exact state (the last
// operation is a column step).
//
// If stop is not nil it is called after every accepted step (on the state
// evalPhi leaves) and ends the iteration when it returns true.
func (s *solver) newton(cfg config, maxSteps int, tol float64, stop func() bool) (steps int, failed bool) {
	n := s.n
	for m := 0; m < s.M; m++ {
		if s.restoreBudget(m) {
			// the budget root, and the columns renormalised for it (a
			// block ascent step in λ_m and the class's g at fixed α)
			s.restore(m)
		}
	}
	phi := s.evalPhi()
	st, w := s.nst, s.nw // reused across calls (never the snapshot)
	if len(s.nbuf) != 2*n+2*s.M {
		s.nbuf = make([]float64, 2*n+2*s.M)
	}
	gOld, lOld := s.nbuf[:n], s.nbuf[n:n+s.M]
	lmMul := 1.0 // s.adaptLM's factor on the LM term, for this run only
	for steps < maxSteps {
		s.stop.step()
		if steps > 0 {
			// A Newton step can leave a budget far off (S_m is
			// exponential in λ_m, its quadratic model poor): restore it
			// by the exact 1-D root find (a block ascent step in
			// (λ_m, g of class m) at fixed α).
			again := false
			for m := 0; m < s.M; m++ {
				if s.restoreBudget(m) {
					s.restore(m)
					again = true
				}
			}
			if again {
				phi = s.evalPhi()
			}
		}
		r := s.residual()
		if cfg.trace != nil {
			cfg.trace(-steps, s, r)
		}
		if r <= tol {
			break
		}
		st = s.loadState(st, cfg.cgTol, r, true, false)
		s.nst = st
		// the Levenberg–Marquardt term; with s.adaptLM and a residual
		// below lmAdaptResid, lmMul times heavier (lmAdapt's comment)
		reg := s.lmReg * r
		if s.adaptLM && r < lmAdaptResid {
			reg *= lmMul
		}
		st.reg = reg
		// target ε below smallEps, at the target: exact steps by the
		// sparse direct solve (densekkt.go) with a lighter LM term
		direct := cfg.eps < smallEps && s.eps <= cfg.eps && n+st.L <= kktMax && st.r1a == nil && !s.kktOff
		if direct {
			st.reg = lmRegDirect * r
		}
		if w == nil || len(w.t) != n+st.L {
			w = st.newWork()
			s.nw = w
		}
		dim := n + st.L
		rhs := s.nbuf[n+s.M : n+s.M+dim]
		for m := 0; m < s.M; m++ {
			for q := s.off[m]; q < s.off[m+1]; q++ {
				rhs[q] = s.eps * (s.ninv[m] - st.colsum[q])
			}
			if b := st.bi[m]; b >= 0 {
				rhs[b] = s.eps * (st.S[m] - s.theta[m])
			}
		}
		d := w.t // solveCG does not use w.t
		var err error
		if direct && !st.kktFactor(&s.kkt) {
			// not sparse enough: CG as for every other stage, for the
			// rest of the solve
			direct = false
			s.kktOff = true
			st.reg = reg
		}
		if direct {
			s.kkt.solve(rhs, d)
			s.kktSolves++
		} else {
			// CG on the sparse γ (target ε ≥ smallEps, or a stage
			// before the target): a fixed forcing term: the steps are
			// damped and the model breaks at the water-filling kinks,
			// so solving the Newton system more exactly than this only
			// costs CG iterations (measured: a tolerance of 0.1·r took
			// twice as many)
			st.cgTol = newtonCGTol
			st.coarse = s.coarse
			err = st.solveCG(rhs, d, w)
			st.coarse = false
			s.cgIters += st.cgIters
			st.cgIters = 0
		}
		if err != nil {
			if debugNewton {
				println("solve err", err.Error())
			}
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
		if s.adaptLM && r < lmAdaptResid {
			if t < lmAdaptShort {
				lmMul = math.Min(lmMul*lmAdapt, lmAdaptMax)
			} else if t == 1 {
				lmMul = math.Max(1, lmMul/lmAdapt)
			}
		}
		if cfg.traceLS != nil {
			cfg.traceLS(t, ok, s.cgIters)
		}
		if ok && stop != nil && stop() {
			break
		}
		if !ok && debugNewton {
			println("LS fail: phi", phi, "slope", slope, "dim", dim, "r", r, "cg", st.cgIters)
		}
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

// restoreBudget reports whether Newton restores class m's budget by the
// exact 1-D root find before a step: when it is more than 50% off, unless
// λ_m > 0 already, ε ≤ holdEps (LPOnly above lpLargeMin: solveInstance's
// lpLarge) and the plan costs at most holdOver·ϑ_m: then Newton keeps the
// λ_m an earlier stage found.
func (s *solver) restoreBudget(m int) bool {
	if s.zero[m] || s.budgetResidClass(m) <= 0.5 {
		return false
	}
	return !(s.lam[m] > 0 && s.eps <= s.holdEps && s.S[m] <= holdOver*s.theta[m])
}

// holdOver: a plan more than 100× over its budget has its λ restored even
// at ε ≤ holdEps. Newton's quadratic model of the cost, exponential in λ,
// does not cross that in a few steps (overlap n = 1100, ϑ = 0.56 × median:
// 10⁴× over at ε = 1e-3, 950 steps without the restore; the threshold
// instances are at most ≈ 20× over; 10 instead of 100 cost 40% more
// iterations at n = 2000).
const holdOver = 100.0

// budgetAt returns the cost and its λ-derivative of class m's plan with every
// column renormalised (g eliminated) at multiplier lam and the current α:
// S(λ) = Σ_j (1/n_m) E_{w_j}[c], w_j(i) ∝ exp(−(α_m(i) + λ c(i,j))/ε).
func (s *solver) budgetAt(m int, lam float64) (S, dS float64) {
	s.budgetEvals++
	n := s.n
	ie := 1 / s.eps
	am := s.alpha[m*n : (m+1)*n]
	buf := s.amScratch
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cr := s.colCost(q)
		b := buf[:len(cr)]
		mx := math.Inf(-1)
		// α read through the candidate rows (no gathered copy)
		if rows := s.colRows(q); rows != nil {
			rows = rows[:len(cr)]
			for k, c := range cr {
				a := -(am[rows[k]] + lam*c) * ie
				b[k] = a
				if a > mx {
					mx = a
				}
			}
		} else {
			am := am[:len(cr)]
			for k, c := range cr {
				a := -(am[k] + lam*c) * ie
				b[k] = a
				if a > mx {
					mx = a
				}
			}
		}
		z, e1, e2 := vexp.ExpMoments(buf[:len(cr)], cr, mx, expCut)
		if s.lpRestore {
			s.bz[q] = mx + math.Log(z)
		}
		mean := e1 / z
		S += mean
		dS -= (e2/z - mean*mean) * ie
	}
	if s.lpRestore {
		s.bzLam[m] = lam
	}
	return S * s.ninv[m], dS * s.ninv[m]
}

// restore restores class m's budget (lambdaSolve) and renormalises its
// columns for the new λ_m: by rebuild, or, in the LP-only stages
// (lpRestore), by setting g from the column sums of lambdaSolve's last
// budget evaluation, which was at that λ_m (the kernel is then rebuilt by
// the evalPhi that follows every restore in newton).
func (s *solver) restore(m int) {
	s.lambdaSolve(m)
	if !s.lpRestore || s.bzLam[m] != s.lam[m] {
		s.rebuild(m)
		return
	}
	lninv := math.Log(s.ninv[m])
	for q := s.off[m]; q < s.off[m+1]; q++ {
		s.g[q] = s.eps * (lninv - s.bz[q])
	}
	s.need[m] = true
}

// lambdaSolve finds λ_m ≥ 0 with S(λ) = ϑ_m (budgetAt) by a safeguarded
// Newton iteration on a bracket; it is used when the Newton step on λ is
// useless (plans collapsed onto zero cost or far over budget).
func (s *solver) lambdaSolve(m int) {
	th := s.theta[m]
	lo, hi := 0.0, math.Inf(1)
	lam := s.lam[m]
	var S, dS float64
	have := false // S, dS hold the value at lam
	if lam > 0 {
		// S is decreasing in λ: S(λ) > ϑ already rules out λ = 0, which
		// saves the probe at 0 (the usual case after an ε stage)
		S, dS = s.budgetAt(m, lam)
		have = true
	}
	// S(0) ≤ ϑ makes λ = 0 the answer. With lateProbe (the LP-only
	// stages) S(0) is evaluated only when the iteration heads for λ ≤ 0,
	// and from λ = 0 not at all while the last column-exact plan costs
	// more than ϑ: where S(0) > ϑ the iterates are the same, one budget
	// evaluation fewer (callgrind, LP-only solves at n = 200, M = 10:
	// 25% fewer evaluations, −2.3% instructions, the same answers).
	probed := false // S(0) > ϑ is known
	switch {
	case s.lateProbe && have && S <= th:
	case s.lateProbe && !have && s.S[m] > th:
		lam = s.eps / th
	case !have || S <= th:
		if S0, _ := s.budgetAt(m, 0); S0 <= th {
			s.lam[m] = 0
			s.need[m] = true
			return
		}
		probed = true
		if !have {
			lam = s.eps / th
		}
	}
	for k := 0; k < 200; k++ {
		if !have {
			S, dS = s.budgetAt(m, lam)
		}
		have = false
		if math.Abs(S/th-1) <= 0.05 { // Newton polishes the rest
			break
		}
		if S > th {
			lo = lam
		} else {
			hi = lam
		}
		// Newton on log S(λ) − log ϑ: S is close to exponential in λ
		// when the budget is far off, where Newton on S itself crawls;
		// the bracket catches a step past the root.
		next := math.NaN()
		if dS < 0 && S > 0 {
			next = lam - math.Log(S/th)*S/dS
		}
		if !(next > lo && next < hi) && lo == 0 && !probed {
			// lateProbe: heading for λ ≤ 0
			probed = true
			if S0, _ := s.budgetAt(m, 0); S0 <= th {
				s.lam[m] = 0
				s.need[m] = true
				return
			}
		}
		if !(next > lo && next < hi) {
			if math.IsInf(hi, 1) {
				if lam > 1e300 {
					break // no root: the budget cannot be met (not with these candidates)
				}
				next = 2*lam + s.eps/th
			} else {
				next = 0.5 * (lo + hi)
			}
		}
		if !math.IsInf(hi, 1) && hi-lo <= 1e-14*hi {
			break
		}
		lam = next
	}
	s.lam[m] = lam
	s.need[m] = true
}

const debugNewton = false

// newtonCGTol is the relative residual of the Newton systems' CG solves.
const newtonCGTol = 0.1

// The adaptive Levenberg–Marquardt term of lpLarge's Newton runs
// (s.adaptLM). Once the residual is below lmAdaptResid, a step whose line
// search ended below lmAdaptShort makes the next steps' LM term lmAdapt
// times heavier (at most lmAdaptMax times the plain lmReg·r), and a full
// step makes it lmAdapt times lighter again (never below the plain term);
// every Newton run starts from the plain term. On rounded features (ties
// in the cost) the plain term, 0.1·r, is nearly nothing at residuals of
// 1e-3–1e-4, and CG, asked for a relative residual of 0.1 on a nearly
// singular system, returned long steps the line search cut to t = 2⁻²…2⁻¹²
// after 60–290 CG iterations each, for 80 steps in a row
// (TestRandomSweep seed 25's trial 24: n = 3000, M = 5, d = 16, rounded,
// per-class radii; 80 such steps at ε = 1e-3 took 14 of its 23 s). Above
// lmAdaptResid, short steps are the damped phase's own, and a heavier term
// only slowed it (seed 10's trial 0: 17.9 → 24.6 s when every residual
// counted). Measured: docs/PERFORMANCE.md, session of 2026-11-29, 03:46–
// UTC. TestLPOnlyLargeAdaptLM.
const (
	lmAdaptResid = 1e-2
	lmAdaptShort = 0.0625
	lmAdapt      = 4.0
	lmAdaptMax   = 1e6
)

// The regime of small target ε. Below smallEps the final ε stage is where
// the solve spends its time (at ε = 1e-3: 69% of the CG iterations), and
// its plan is very sparse, so at the target ε the Newton systems are solved
// exactly by the sparse direct solve of densekkt.go instead of by CG with
// forcing term 0.1, and the Levenberg–Marquardt term is lmRegDirect·r
// instead of lmReg·r (exact steps with the lighter term take ≈ 30% fewer
// steps; with the heavier one they gain nothing). Solves with a target
// ε ≥ smallEps (every solve of training, evaluation and Table 1: ε = 0.01)
// never take this path.
const (
	smallEps    = 0.01
	lmRegDirect = 0.01
	kktMax      = 600 // the largest reduced system (n + active budgets) solved directly
)

// forClasses runs f for every class, on the solve's team (team.go) when the
// problem is large enough to pay for two goroutines (s.par): the even
// classes on the caller, the odd on the helper (the selection passes of
// kernel.go keep state in the scratch s.sel[m&1] from one selection to the
// next). Each f(m) touches only class m's data, so the result does not
// depend on the scheduling. Passes with plain scratch use the team's
// forClassesW, which balances the load.
func (s *solver) forClasses(f func(m int)) {
	s.tm.forClasses(s.M, f) // s.tm is nil without s.par: every class on the caller
}

// forClasses runs f(m) for every m < M, with par the odd ones on a
// goroutine started for the call: for work long enough that waiting for
// an idle processor to wake costs nothing (pooled.go's transports, tens of
// milliseconds each), where a team's helper would only spin.
func forClasses(M int, par bool, f func(m int)) {
	if !par || M < 2 {
		for m := 0; m < M; m++ {
			f(m)
		}
		return
	}
	done := make(chan struct{})
	go func() {
		for m := 1; m < M; m += 2 {
			f(m)
		}
		close(done)
	}()
	for m := 0; m < M; m += 2 {
		f(m)
	}
	<-done
}

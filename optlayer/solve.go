package optlayer

// The forward pass.
//
// Reduced LP (Theorem 1). Column j belongs to exactly one class y_j, so only
// γ_m(i,j) with y_j = m can be non-zero: n² variables γ(i,j), where the class
// of an entry is the class of its column.
//
//	v = min Σ_i max_m p_m(i),  p_m(i) = Σ_{j: y_j=m} γ(i,j)
//	    s.t. γ ≥ 0,  Σ_i γ(i,j) = 1/n_{y_j},  Σ_{i, j: y_j=m} γ(i,j) c(i,j) ≤ ϑ_m.
//
// LP dual. Write max_m p_m(i) = max_{α_i ∈ Δ_M} Σ_m α_m(i) p_m(i) (Δ_M the
// simplex), and attach g(j) to the columns and λ_m ≥ 0 to the budgets. The
// Lagrangian is linear in γ ≥ 0 with coefficient α_m(i) − g(j) + λ_m c(i,j),
// which must be ≥ 0; hence for any α_i ∈ Δ_M and λ ≥ 0
//
//	LB(α, λ) = Σ_j g(j)/n_{y_j} − Σ_m λ_m ϑ_m,  g(j) = min_i (α_m(i) + λ_m c(i,j))
//
// is a lower bound on v (weak duality). This is the certificate's lower bound.
// For ϑ_m = 0 the budget forces γ(i,j) = 0 wherever c(i,j) > 0 (λ_m = ∞): the
// minimum runs over the zero-cost entries only and the λϑ term is 0.
//
// Entropic regularisation. Add ε Σ γ(log γ − 1). Minimising the Lagrangian
// over γ gives γ(i,j) = exp((g(j) − α_m(i) − λ_m c(i,j))/ε) and the smooth
// concave dual
//
//	D(g, α, λ) = Σ_j g(j)/n_{y_j} − Σ_m λ_m ϑ_m − ε Σ_ij γ(i,j),
//
// maximised over α_i ∈ Δ_M, λ ≥ 0, g free. Its partial gradients are the
// primal residuals: ∂D/∂g(j) = 1/n_{y_j} − Σ_i γ(i,j), ∂D/∂λ_m = Σ γ c − ϑ_m,
// ∂D/∂α_m(i) = p_m(i). Exact block maximisation:
//
//   - g: g(j) ← g(j) + ε log((1/n_{y_j}) / Σ_i γ(i,j))  (Sinkhorn column scaling);
//   - α_i ∈ Δ_M: with A_m(i) = Σ_j exp((g(j) − λ_m c(i,j))/ε) the row mass at
//     α = 0, the block problem is max −ε Σ_m A_m e^{−α_m/ε} over the simplex;
//     KKT gives p_m = min(A_m, μ_i), α_m = ε max(0, log A_m − log μ_i) with
//     Σ_m α_m = 1: water filling, solved exactly by sorting log A_m;
//   - λ_m: the 1-D concave problem has derivative S_m(λ) − ϑ_m with S_m the
//     plan's cost; log S_m is convex decreasing in λ, so a Newton step on
//     log S_m − log ϑ_m (Δλ = ε log(S/ϑ) · S / Σγc²) approaches the root
//     monotonically from the left; λ_m = 0 when the budget is slack.
//
// Numerics. Everything is kept in a stabilised kernel form (Schmitzer 2019):
// K(i,j) = exp((g₀(j) − α₀(i) − λ₀ c(i,j))/ε) with reference potentials, and
// scalings u(i) = exp((α₀(i) − α(i))/ε), v(j) = exp((g(j) − g₀(j))/ε), so
// γ = u K v and a sweep costs two matrix–vector products and no exp. The
// kernel of a class is rebuilt in the log domain (one exp per entry, columns
// normalised on the fly) when ε or λ_m changes or a scaling leaves
// [e^{−absorb}, e^{absorb}]. ε is decreased geometrically from a large value
// to the target (ε-scaling) unless a warm start is given.
//
// Upper bound. After a column step γ meets the column constraints exactly.
// If its cost S_m exceeds ϑ_m, mix it with the zero-cost plan γ⁰(j,j) = 1/n_m:
// t γ + (1 − t) γ⁰ with t = ϑ_m/S_m is exactly feasible, and its rows give a
// feasible P whose objective Σ_i max_m P_m(i) is an upper bound on v.

import (
	"math"
	"sort"

	"github.com/drknn/drknn/optlayer/internal/vexp"
)

const (
	absorbBound   = 200.0 // |log u|, |log v| beyond which the kernel is rebuilt
	epsStart      = 0.2   // first ε of a cold start (dual variables are O(1))
	epsFactor     = 0.2   // ε-scaling factor
	stageTol      = 0.1   // residual at which an intermediate ε stage ends
	stageTolLarge = 0.01  // the same for large problems (isLarge)
	// expCut: kernel entries below e^{−expCut} times the largest entry of
	// their row (or column) are set to exactly 0 without calling exp. They
	// are below 4·10⁻¹⁸ in absolute terms, while every column carries
	// mass ≥ 1/n², so nothing measurable is lost and γ becomes sparse.
	expCut = 40.0
	// rowCut is evalPhi's cut relative to the row maximum. It is not
	// expCut: away from the optimum (after a change of ε, λ or of the
	// candidates) the potentials of one row's columns can differ by far more
	// than 40ε, and a cut that close would zero whole columns; 600 e-folds
	// only spares underflow. Negligible entries are dropped by loadState.
	rowCut = 600.0
)

// expAbsorbHi and expAbsorbLo are math.Exp(±absorbBound), the bounds of a
// column scaling, evaluated once (the same bits; columnStep called math.Exp
// twice per column).
var (
	expAbsorbHi = math.Exp(absorbBound)
	expAbsorbLo = math.Exp(-absorbBound)
)

type solver struct {
	in    *instance
	n, M  int
	eps   float64
	order []int     // position q → original column index j, grouped by class
	off   []int     // class m holds positions off[m] … off[m+1]−1
	ninv  []float64 // 1/n_m
	theta []float64
	zero  []bool    // ϑ_m = 0: γ restricted to zero-cost entries
	slack []bool    // the budget cannot bind: λ_m = 0, rank-one kernel (slack.go)
	sa    []float64 // slack classes: row factors (M×n)
	sb    []float64 // slack classes: column factors (per position)

	// candidate kernel (kernel.go): column q owns entries kp[q] … kp[q+1]−1
	// with rows kr, costs kc and stabilised kernel values kk; kfull[q]: the
	// column holds every row in order (kr is then not read)
	kp     []int
	kr     []int32
	kc, kk []float64
	kfull  []bool
	// each column's candidate rows (nil when full), costs and kernel
	// values: slices of kr, kc (or the cost matrix), kk (selectCands)
	crow         [][]int32
	ccost, ckern [][]float64
	// what the lower bound knows of the rows left out (selectCands): their
	// key α_m(i) + λ_m c(i,j) was ≥ thr[q] at the selection's selAlpha,
	// selLam; cmax[q] is the column's largest cost
	thr, cmax  []float64
	cmaxSet    bool // cmax is set (markSlack)
	selAlpha   []float64
	selLam     []float64
	selCnt     []int
	sel        [2]*selWork // selection scratch, one per goroutine of forClasses
	selections int
	gbuf       [2][3][]float64 // gather scratch, one set per goroutine of forClassesW

	g, g0, v            []float64 // per position
	alpha, alpha0, u    []float64 // M×n
	lam                 []float64 // current λ
	need                []bool    // class kernel must be rebuilt
	s, p                []float64 // M×n: Σ_j K v per row; column-exact row masses u·s
	S, S2               []float64 // per class Σγc, Σγc² of the column-exact plan
	colsum              []float64 // per position (evalPhi)
	resid               float64   // Σ_j |column sum − 1/n_m| seen by the last column step
	rebuilds, cgIters   int
	kktSolves           int       // Newton systems solved by the sparse direct solve
	kkt                 kktDense  // its scratch
	kktOff              bool      // a factorisation had too much fill: CG for the rest of the solve
	vecExp              bool      // target ε < smallEps: evalPhi's row logarithms and exponentials in vector (rowWeights)
	la                  []float64 // M×n: evalPhi's and alphaStep's water-filling levels (vexp.LogAdd when vecExp, else vexp.LogAddGo)
	ax                  []float64 // M×n: alphaStep's α₀/ε, then its exponents
	rowOK               []bool    // per row: alphaStep's water filling succeeded
	budgetEvals         int       // budgetAt calls (one class each)
	sweepLambda         bool
	lateProbe           bool      // lambdaSolve probes S(0) only when needed (lpStages)
	lpRestore           bool      // newton's budget restore sets g from budgetAt's column sums (lpStages)
	bz                  []float64 // per position: log Σ_i e^{−(α+λc)/ε} of budgetAt's last evaluation (lpRestore)
	bzLam               []float64 // per class: the λ of it
	holdEps             float64   // at ε ≤ holdEps Newton keeps a warm λ_m > 0 (no budget restore; LPOnly above lpLargeMin)
	coarse              bool      // Newton's CG adds the class coarse space to its preconditioner (coarse.go; LPOnly above lpLargeMin)
	noFullOp            bool      // tests only: Newton's operator stores full columns as entries (loadState)
	noShortRows         bool      // tests only: Newton's operator keeps 32-bit rows (loadState)
	noCostCut           bool      // tests only: selectCheapest chooses among all rows
	rowBlock            int       // tests only: the blocked operator's block size, every state with enough rows blocked (0: rowBlock; loadBlocks)
	adaptLM             bool      // Newton adapts its Levenberg–Marquardt term at small residuals (newton.go, lmAdapt; LPOnly above lpLargeMin)
	lmReg               float64
	cover               bool      // selections keep every row's coverK least reduced costs per class (kernel.go; lpLarge)
	coverRows           [][]int32 // per position: the rows the coverage keeps
	narrowCnt           []int     // per class: narrowCount's counts
	cbar                float64   // mean cost
	par                 bool      // split class work over two goroutines
	tm                  *team     // with par: the helper goroutine of the class passes (team.go)
	stop                *stopper  // polls the solve's context before each sweep and Newton step (cancel.go)
	lpt, work           []int     // the classes by decreasing candidates (loadState), and their counts
	certPart            []float64 // per class: lower's and lowerDense's sums (2M)
	certOK              []bool    // per class: upperPhi's columns all carry mass; lower's bound exact
	part                []float64
	idx                 []int
	amScratch, wfA, wfT []float64
	wf2                 []float64 // evalPhi's second half of the rows: its wfA, wfT
	idx2                []int     // … and idx
	rows                []float64 // M×n scratch of upperPhi
	nst                 *state    // Newton's KKT state, reused across calls
	nw                  *work     // Newton's scratch
	nbuf                []float64 // Newton's g, λ backups and right-hand side
}

func newSolver(in *instance) *solver {
	n, M := in.n, in.m
	s := &solver{in: in, n: n, M: M, theta: in.theta, lmReg: 0.1}
	s.off = make([]int, M+1)
	cnt := make([]int, M)
	for _, y := range in.labels {
		cnt[y]++
	}
	for m := 0; m < M; m++ {
		s.off[m+1] = s.off[m] + cnt[m]
	}
	s.order = make([]int, n)
	fill := append([]int(nil), s.off[:M]...)
	for j, y := range in.labels {
		s.order[fill[y]] = j
		fill[y]++
	}
	s.ninv = make([]float64, M)
	s.zero = make([]bool, M)
	s.slack = make([]bool, M)
	for m := range s.ninv {
		s.ninv[m] = 1 / float64(cnt[m])
		s.zero[m] = in.theta[m] == 0
	}
	for _, c := range in.cost {
		s.cbar += c
	}
	s.cbar /= float64(n * n)
	s.kfull = make([]bool, n)
	s.kp = make([]int, n+1)
	s.crow, s.ccost, s.ckern = make([][]int32, n), make([][]float64, n), make([][]float64, n)
	s.thr = make([]float64, n)
	s.cmax = make([]float64, n)
	s.selAlpha = make([]float64, M*n)
	s.selLam = make([]float64, M)
	s.selCnt = make([]int, n)
	for w := range s.gbuf {
		for b := range s.gbuf[w] {
			s.gbuf[w][b] = make([]float64, n)
		}
	}
	s.g = make([]float64, n)
	s.g0 = make([]float64, n)
	s.v = make([]float64, n)
	s.alpha = make([]float64, M*n)
	s.alpha0 = make([]float64, M*n)
	s.u = make([]float64, M*n)
	s.lam = make([]float64, M)
	s.need = make([]bool, M)
	s.s = make([]float64, M*n)
	s.p = make([]float64, M*n)
	s.S = make([]float64, M)
	s.S2 = make([]float64, M)
	s.colsum = make([]float64, n)
	s.idx = make([]int, M)
	s.wfA = make([]float64, M)
	s.wfT = make([]float64, M)
	s.amScratch = make([]float64, n)
	s.part = make([]float64, 3*M)
	return s
}

func (s *solver) classOf(q int) int {
	return s.in.labels[s.order[q]]
}

// rebuild recomputes the kernel of class m in the log domain from the current
// g, α, λ and ε, and performs an exact column step at the same time.
func (s *solver) rebuild(m int) {
	if s.slack[m] {
		s.rebuildSlack(m)
		return
	}
	s.rebuilds++
	n := s.n
	ie := 1 / s.eps
	am := s.amScratch
	for i := 0; i < n; i++ {
		am[i] = s.alpha[m*n+i] * ie
	}
	le := s.lam[m] * ie
	ninv := s.ninv[m]
	lninv := math.Log(ninv)
	var S, S2 float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		kr, cr := s.colKern(q), s.colCost(q)
		kr = kr[:len(cr)]
		gq := s.g[q] * ie
		mx := math.Inf(-1)
		// ϑ = 0 classes: every candidate has c = 0, λ = 0; α/ε read
		// through the candidate rows (no gathered copy)
		if rows := s.colRows(q); rows != nil {
			rows = rows[:len(cr)]
			for k, c := range cr {
				a := gq - am[rows[k]] - le*c
				kr[k] = a
				if a > mx {
					mx = a
				}
			}
		} else {
			am := am[:len(cr)]
			for k, c := range cr {
				a := gq - am[k] - le*c
				kr[k] = a
				if a > mx {
					mx = a
				}
			}
		}
		sum := vexp.ExpShiftSum(kr, mx, expCut) // kr = e^(kr − mx), 0 below the cut
		// Column sum before the step is e^{mx}·sum; the target is ninv.
		lcs := mx + math.Log(sum)
		d := lcs - lninv
		if d > 700 {
			d = 700
		}
		s.resid += ninv * math.Abs(math.Expm1(d))
		scale := ninv / sum
		var csc, csc2 float64
		for k, c := range cr {
			w := kr[k] * scale
			kr[k] = w
			wc := w * c
			csc += wc
			csc2 += wc * c
		}
		S += csc
		S2 += csc2
		s.g[q] += s.eps * (lninv - lcs)
		s.g0[q] = s.g[q]
		s.v[q] = 1
	}
	copy(s.alpha0[m*n:(m+1)*n], s.alpha[m*n:(m+1)*n])
	um := s.u[m*n : (m+1)*n]
	for i := range um {
		um[i] = 1
	}
	s.S[m], s.S2[m] = S, S2
	s.need[m] = false
}

// columnStep is the cheap Sinkhorn column scaling of class m. It reports
// false when the kernel must be rebuilt instead.
func (s *solver) columnStep(m int) bool {
	if s.slack[m] {
		return s.columnStepSlack(m)
	}
	n := s.n
	um := s.u[m*n : (m+1)*n]
	ninv := s.ninv[m]
	var S, S2, res float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		var cs, c, d float64
		if rows := s.colRows(q); rows != nil {
			cs, c, d = colMomentsRows(s.colKern(q), s.colCost(q), um, rows)
		} else {
			cs, c, d = colMoments(s.colKern(q), s.colCost(q), um)
		}
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
		S += vq * c
		S2 += vq * d
	}
	s.resid += res
	s.S[m], s.S2[m] = S, S2
	return true
}

// colMoments returns columnStep's Σ_k w_k, Σ_k w_k c_k and Σ_k w_k c_k² with
// w_k = kr_k·u_k of a full column, each as two interleaved partial sums
// (even and odd k) added at the end.
func colMoments(kr, cr, ug []float64) (cs, c, d float64) {
	ug = ug[:len(kr)]
	cr = cr[:len(kr)]
	var cs0, cs1, c0, c1, d0, d1 float64
	i := 0
	for ; i+1 < len(kr); i += 2 {
		w0 := kr[i] * ug[i]
		w1 := kr[i+1] * ug[i+1]
		cs0 += w0
		cs1 += w1
		x0 := w0 * cr[i]
		x1 := w1 * cr[i+1]
		c0 += x0
		c1 += x1
		d0 += x0 * cr[i]
		d1 += x1 * cr[i+1]
	}
	for ; i < len(kr); i++ {
		w0 := kr[i] * ug[i]
		cs0 += w0
		x0 := w0 * cr[i]
		c0 += x0
		d0 += x0 * cr[i]
	}
	return cs0 + cs1, c0 + c1, d0 + d1
}

// colMomentsRows is colMoments with u_k = um[rows[k]] (the candidate rows
// of a column), read in place instead of gathered.
func colMomentsRows(kr, cr, um []float64, rows []int32) (cs, c, d float64) {
	rows = rows[:len(kr)]
	cr = cr[:len(kr)]
	var cs0, cs1, c0, c1, d0, d1 float64
	i := 0
	for ; i+1 < len(kr); i += 2 {
		w0 := kr[i] * um[rows[i]]
		w1 := kr[i+1] * um[rows[i+1]]
		cs0 += w0
		cs1 += w1
		x0 := w0 * cr[i]
		x1 := w1 * cr[i+1]
		c0 += x0
		c1 += x1
		d0 += x0 * cr[i]
		d1 += x1 * cr[i+1]
	}
	for ; i < len(kr); i++ {
		w0 := kr[i] * um[rows[i]]
		cs0 += w0
		x0 := w0 * cr[i]
		c0 += x0
		d0 += x0 * cr[i]
	}
	return cs0 + cs1, c0 + c1, d0 + d1
}

// rowStep accumulates s_m(i) = Σ_j K(i,j) v(j) and the column-exact row
// masses p_m(i) = u_m(i) s_m(i).
func (s *solver) rowStep(m int) {
	if s.slack[m] {
		s.rowStepSlack(m)
		return
	}
	n := s.n
	sm := s.s[m*n : (m+1)*n]
	for i := range sm {
		sm[i] = 0
	}
	for q := s.off[m]; q < s.off[m+1]; q++ {
		vq := s.v[q]
		kr := s.colKern(q)
		if rows := s.colRows(q); rows != nil {
			for k, i := range rows {
				sm[i] += vq * kr[k]
			}
			continue
		}
		kr = kr[:len(sm)]
		for i, k := range kr {
			sm[i] += vq * k
		}
	}
	um := s.u[m*n : (m+1)*n]
	pm := s.p[m*n : (m+1)*n]
	for i := range pm {
		pm[i] = um[i] * sm[i]
	}
}

// gStep performs the column block (and recomputes the row sums).
func (s *solver) gStep() {
	s.resid = 0
	for m := 0; m < s.M; m++ {
		if s.need[m] || !s.columnStep(m) {
			s.rebuild(m)
		}
		s.rowStep(m)
	}
}

// budgetResid is the relative budget violation of the column-exact plan.
func (s *solver) budgetResid() float64 {
	var r float64
	for m := 0; m < s.M; m++ {
		r = math.Max(r, s.budgetResidClass(m))
	}
	return r
}

func (s *solver) budgetResidClass(m int) float64 {
	if s.fixedLam(m) {
		return 0
	}
	x := s.S[m]/s.theta[m] - 1
	if s.lam[m] == 0 && x < 0 {
		return 0
	}
	return math.Abs(x)
}

// residual combines the relative marginal and budget residuals.
func (s *solver) residual() float64 {
	return math.Max(s.resid/float64(s.M), s.budgetResid())
}

// alphaStep is the water-filling row block. The levels log s_m(i) +
// α₀_m(i)/ε (−∞ where s ≤ 0) are math.Log's bits four at a time
// (vexp.LogAddGo), the weights u = math.Exp of the clamped exponents
// likewise (vexp.ExpGo), class by class.
func (s *solver) alphaStep() {
	n, M := s.n, s.M
	ie := 1 / s.eps
	a := s.wfA
	al := s.wfT
	if len(s.la) != M*n {
		s.la = make([]float64, M*n)
	}
	if len(s.ax) != M*n {
		s.ax = make([]float64, M*n)
		s.rowOK = make([]bool, n)
	}
	for m := 0; m < M; m++ {
		a0, ax := s.alpha0[m*n:(m+1)*n], s.ax[m*n:(m+1)*n]
		ax = ax[:len(a0)]
		for i, x := range a0 {
			ax[i] = x * ie
		}
		vexp.LogAddGo(s.la[m*n:(m+1)*n], s.s[m*n:(m+1)*n], ax)
	}
	ok := s.rowOK[:n]
	for i := 0; i < n; i++ {
		for m := 0; m < M; m++ {
			a[m] = s.la[m*n+i]
		}
		ok[i] = waterfill(a, s.eps, al, s.idx)
		if !ok[i] {
			continue
		}
		for m := 0; m < M; m++ {
			k := m*n + i
			s.alpha[k] = al[m]
			x := (s.alpha0[k] - al[m]) * ie
			if x > absorbBound || x < -absorbBound {
				s.need[m] = true
				x = math.Max(-absorbBound, math.Min(absorbBound, x))
			}
			s.ax[k] = x // the exponent of u
		}
	}
	for m := 0; m < M; m++ {
		ax, um := s.ax[m*n:(m+1)*n], s.u[m*n:(m+1)*n]
		vexp.ExpGo(ax)
		um = um[:len(ax)]
		for i, x := range ax {
			if ok[i] {
				um[i] = x
			}
		}
	}
}

// waterfill solves Σ_m max(0, ε(a_m − t)) = 1 for t and writes
// α_m = max(0, ε(a_m − t)). Entries a_m = −∞ get α_m = 0. It reports false
// when every a_m is −∞ (α is then left unchanged).
//
// Only the levels above amax − 1/ε can be filled (the level t starts at
// amax − 1/ε with the largest alone and only rises as levels join), so the
// others are left out of the sort, with a margin far above rounding: the
// same bits, and at small ε one or two levels to sort instead of M
// (callgrind, LP-only solves at n = 200, M = 10: waterfill 79.9 → 58.0 M
// instructions, −1.5% of the solve). NaN levels disable the cut.
func waterfill(a []float64, eps float64, alpha []float64, idx []int) bool {
	M := len(a)
	ie := 1 / eps
	amax, sum := math.Inf(-1), 0.0
	for _, x := range a {
		if x > amax {
			amax = x
		}
		sum += x // NaN if some level is NaN (or levels of both infinities)
	}
	lo := math.Inf(-1)
	if sum == sum && !math.IsInf(amax, 0) {
		lo = amax - ie - 1e-9*(math.Abs(amax)+ie)
	}
	k := 0
	for m := 0; m < M; m++ {
		if !math.IsInf(a[m], -1) && !(a[m] <= lo) {
			idx[k] = m
			k++
		}
	}
	if k == 0 {
		return false
	}
	ids := idx[:k]
	// insertion sort, descending (M is small)
	for x := 1; x < k; x++ {
		y := ids[x]
		z := x - 1
		for z >= 0 && a[ids[z]] < a[y] {
			ids[z+1] = ids[z]
			z--
		}
		ids[z+1] = y
	}
	var t float64
	sum = 0
	for r := 0; r < k; r++ {
		sum += a[ids[r]]
		t = (sum - ie) / float64(r+1)
		if r+1 == k || a[ids[r+1]] <= t {
			break
		}
	}
	clear(alpha[:M])
	var tot float64
	for _, m := range ids {
		if d := a[m] - t; d > 0 {
			alpha[m] = eps * d
			tot += alpha[m]
		}
	}
	// Remove the rounding error so that Σ_m α_m = 1 to machine precision.
	if tot > 0 {
		for _, m := range ids {
			alpha[m] /= tot
		}
	}
	return true
}

// lambdaStep takes a Newton step on log S_m(λ) − log ϑ_m for every class
// whose budget residual exceeds thr. It returns whether any λ changed.
func (s *solver) lambdaStep(thr float64) {
	for m := 0; m < s.M; m++ {
		if s.fixedLam(m) || s.budgetResidClass(m) <= thr {
			continue
		}
		S, S2 := s.S[m], s.S2[m]
		if !(S > 0) || !(S2 > 0) || S < 1e-3*s.theta[m] {
			s.lambdaSolve(m)
			continue
		}
		d := s.eps * math.Log(S/s.theta[m]) * S / S2
		nl := s.lam[m] + d
		if nl < 0 {
			nl = 0
		}
		if nl != s.lam[m] {
			s.lam[m] = nl
			s.need[m] = true
		}
	}
}

// upper rounds the column-exact plan to a feasible one and returns its
// objective; if P is non-nil the feasible rows are written there.
func (s *solver) upper(P []float64) float64 {
	t := s.wfT
	for m := 0; m < s.M; m++ {
		t[m] = s.shrink(m)
	}
	return s.upperRows(s.p, t, P)
}

// upperPhi is upper for the state evalPhi leaves (v = 1, column sums
// s.colsum not yet exact) without changing it: every column is scaled to its
// exact mass 1/n_m, exactly as the column step would, and the result is
// mixed with the zero-cost plan as in upper. It returns +Inf when a column
// carries no mass (no bound then).
func (s *solver) upperPhi(P []float64) float64 {
	n, M := s.n, s.M
	if s.rows == nil {
		s.rows = make([]float64, M*n)
	}
	s.certPass(passUpper)
	for _, ok := range s.certOK[:M] {
		if !ok {
			return math.Inf(1)
		}
	}
	return s.upperRows(s.rows, s.wfT, P)
}

// upperPhiClass is upperPhi's pass over class m: its column-exact row masses
// in s.rows, its mixing weight in s.wfT[m], and in s.certOK[m] whether every
// column carries mass.
func (s *solver) upperPhiClass(m int) {
	n := s.n
	um := s.u[m*n : (m+1)*n]
	rm := s.rows[m*n : (m+1)*n]
	clear(rm)
	t := s.wfT
	s.certOK[m] = true
	if s.slack[m] {
		s.upperRowsSlack(m, rm)
		t[m] = 1
		return
	}
	var S float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cs := s.colsum[q]
		if !(cs > 0) || math.IsInf(cs, 0) {
			s.certOK[m] = false
			return
		}
		f := s.ninv[m] / cs
		kr, cr, rows := s.colKern(q), s.colCost(q), s.colRows(q)
		for k, x := range kr {
			if x == 0 {
				continue
			}
			i := k
			if rows != nil {
				i = int(rows[k])
			}
			w := x * um[i] * f
			rm[i] += w
			S += w * cr[k]
		}
	}
	t[m] = 1
	if !s.zero[m] && S > s.theta[m]*(1-1e-12) {
		t[m] = s.theta[m] * (1 - 1e-12) / S
	}
}

// upperRows mixes the column-exact row masses rows (M×n) of every class m
// with weight t[m] with the zero-cost plan and returns Σ_i max_m P_m(i); if
// P is non-nil the feasible rows are written there.
func (s *solver) upperRows(rows, t, P []float64) float64 {
	n, M := s.n, s.M
	var ub float64
	for i := 0; i < n; i++ {
		y := s.in.labels[i]
		mx := 0.0
		for m := 0; m < M; m++ {
			x := t[m] * rows[m*n+i]
			if m == y {
				x += (1 - t[m]) * s.ninv[m]
			}
			if P != nil {
				P[m*n+i] = x
			}
			if x > mx {
				mx = x
			}
		}
		ub += mx
	}
	return ub
}

// shrink is the mixing weight t of the column-exact plan of class m with the
// zero-cost plan that makes the budget hold.
func (s *solver) shrink(m int) float64 {
	if s.zero[m] || s.S[m] <= s.theta[m]*(1-1e-12) {
		return 1
	}
	return s.theta[m] * (1 - 1e-12) / s.S[m]
}

// lower evaluates the LP dual bound at the current (α, λ). The minimum of
// column j over the rows left out of its candidates is bounded below from
// the selection (their key was ≥ thr[q] at selAlpha, selLam, and a key moves
// by at most |Δα_m(i)| + |Δλ_m|·c(i,j)), so no pass over the full cost
// matrix is needed; exact reports whether that bound was never the minimum
// (lb is then the exact dual value at (α, λ)). lbCand is the value with the
// minima over the candidates alone: not a bound, but no bound at (α, λ)
// exceeds it.
func (s *solver) lower() (lb, lbCand float64, exact bool) {
	M := s.M
	s.certPass(passLower)
	// the classes' terms added in class order, as one loop would
	exact = true
	for m := 0; m < M; m++ {
		sum, sumCand := s.certPart[2*m], s.certPart[2*m+1]
		if s.slack[m] {
			lb += sum
			lbCand += sum
			continue
		}
		exact = exact && s.certOK[m]
		lb += sum * s.ninv[m]
		lbCand += sumCand * s.ninv[m]
		if !s.zero[m] {
			lb -= s.lam[m] * s.theta[m]
			lbCand -= s.lam[m] * s.theta[m]
		}
	}
	return lb, lbCand, exact
}

// The certificate's per-class passes (certPass).
const (
	passUpper      = iota // upperPhiClass
	passLower             // lowerClass
	passLowerDense        // lowerDenseClass
)

// certPass runs one of the certificate's per-class passes for every class:
// split over the classes like the solver's other passes (s.par), else in
// order on the caller (no closure: it would be allocated per call). Each
// pass writes only its class's parts of certPart, certOK, rows and wfT;
// the callers combine them in class order, so the result does not depend
// on the split.
func (s *solver) certPass(pass int) {
	if s.certPart == nil {
		s.certPart = make([]float64, 2*s.M)
		s.certOK = make([]bool, s.M)
	}
	if s.par {
		s.tm.forClassesW(s.M, s.lpt, func(m, w int) { s.certClass(pass, m, w) })
		return
	}
	for m := 0; m < s.M; m++ {
		s.certClass(pass, m, 0)
	}
}

func (s *solver) certClass(pass, m, w int) {
	switch pass {
	case passUpper:
		s.upperPhiClass(m)
	case passLower:
		s.lowerClass(m)
	default:
		s.lowerDenseClass(m, w)
	}
}

// lowerClass is lower's pass over class m: the sums of its columns' minima
// (with the bound on the rows left out, and over the candidates alone) in
// s.certPart[2m], [2m+1] (a ϑ-slack class: its whole term), and in
// s.certOK[m] whether that bound was never the minimum.
func (s *solver) lowerClass(m int) {
	n := s.n
	s.certOK[m] = true
	if s.slack[m] {
		s.certPart[2*m] = s.lowerSlack(m)
		return
	}
	am := s.alpha[m*n : (m+1)*n]
	lam := s.lam[m]
	var da float64 // max_i |α_m(i) − selAlpha_m(i)|
	for i, a := range s.selAlpha[m*n : (m+1)*n] {
		da = max(da, math.Abs(am[i]-a))
	}
	dl := math.Abs(lam - s.selLam[m])
	var sum, sumCand float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cr := s.colCost(q)
		mn := math.Inf(1)
		// ϑ = 0 classes: the zero-cost rows, all candidates; α read
		// through the candidate rows (no gathered copy)
		if rows := s.colRows(q); rows != nil {
			rows = rows[:len(cr)]
			for k, c := range cr {
				if x := am[rows[k]] + lam*c; x < mn {
					mn = x
				}
			}
		} else {
			am := am[:len(cr)]
			for k, c := range cr {
				if x := am[k] + lam*c; x < mn {
					mn = x
				}
			}
		}
		sumCand += mn
		if t := s.thr[q]; !s.zero[m] && !math.IsInf(t, 1) {
			if b := t - da - dl*s.cmax[q]; b < mn {
				mn = b
				s.certOK[m] = false
			}
		}
		sum += mn
	}
	s.certPart[2*m], s.certPart[2*m+1] = sum, sumCand
}

// lowerDense is lower's exact value: the minimum runs over every row.
func (s *solver) lowerDense() float64 {
	M := s.M
	s.certPass(passLowerDense)
	var lb float64
	for m := 0; m < M; m++ { // in class order, as one loop would
		if s.slack[m] {
			lb += s.certPart[2*m]
			continue
		}
		lb += s.certPart[2*m] * s.ninv[m]
		if !s.zero[m] {
			lb -= s.lam[m] * s.theta[m]
		}
	}
	return lb
}

// lowerDenseClass is lowerDense's pass over class m: the sum of its
// columns' minima over every row in s.certPart[2m] (a ϑ-slack class: its
// whole term).
func (s *solver) lowerDenseClass(m, w int) {
	n := s.n
	if s.slack[m] {
		s.certPart[2*m] = s.lowerSlack(m)
		return
	}
	buf := s.gbuf[w][0] // one per goroutine of forClassesW
	am := s.alpha[m*n : (m+1)*n]
	lam := s.lam[m]
	var sum float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		cr := s.fullCol(q, buf)
		if !s.zero[m] {
			sum += minKey(am, cr, lam)
			continue
		}
		mn := math.Inf(1)
		for i, c := range cr {
			if c != 0 {
				continue
			}
			if x := am[i] + lam*c; x < mn {
				mn = x
			}
		}
		sum += mn
	}
	s.certPart[2*m] = sum
}

// minKey returns the least am[i] + lam·c[i] (+Inf for none) with four
// running minima combined at the end — the least of the same values, so the
// same bits as one running minimum (keys are finite), without one compare
// waiting for the last: the dense lower bound, which the certificate takes
// after every Newton step near the end of a solve whose candidates leave
// rows out, was 20% of an LP-only solve at n = 10,000 (dup kind).
func minKey(am, c []float64, lam float64) float64 {
	am = am[:len(c)]
	m0, m1, m2, m3 := math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)
	i := 0
	for ; i+4 <= len(c); i += 4 {
		x0 := am[i] + lam*c[i]
		x1 := am[i+1] + lam*c[i+1]
		x2 := am[i+2] + lam*c[i+2]
		x3 := am[i+3] + lam*c[i+3]
		if x0 < m0 {
			m0 = x0
		}
		if x1 < m1 {
			m1 = x1
		}
		if x2 < m2 {
			m2 = x2
		}
		if x3 < m3 {
			m3 = x3
		}
	}
	for ; i < len(c); i++ {
		if x := am[i] + lam*c[i]; x < m0 {
			m0 = x
		}
	}
	return min(min(m0, m1), min(m2, m3))
}

// bestLower is the lower bound the certificate uses: lower, or the dense
// pass when the cheap bound was loose and a tighter one could decide.
func (s *solver) bestLower(ub, tol float64) float64 {
	lb, lbCand, exact := s.lower()
	if exact || ub-lb <= tol*lb || ub-lbCand > tol*lbCand {
		return lb // exact, enough, or the dense pass cannot be enough
	}
	return math.Max(lb, s.lowerDense())
}

// init sets the starting dual: a warm start or α = 1/M, λ = 0, g = 0.
func (s *solver) init(w *Dual) {
	n, M := s.n, s.M
	if w != nil {
		for q, j := range s.order {
			s.g[q] = w.G[j]
		}
		copy(s.lam, w.Lambda)
		a := s.wfA
		for i := 0; i < n; i++ {
			// project the given α_i onto the simplex
			for m := 0; m < M; m++ {
				a[m] = w.Alpha[m*n+i]
			}
			projectSimplex(a, s.wfT, s.idx)
			for m := 0; m < M; m++ {
				s.alpha[m*n+i] = s.wfT[m]
			}
		}
	} else {
		for k := range s.alpha {
			s.alpha[k] = 1 / float64(M)
		}
	}
	for m := 0; m < M; m++ {
		if s.zero[m] {
			s.lam[m] = 0
		}
		s.need[m] = true
	}
}

// projectSimplex writes the Euclidean projection of a onto the simplex.
func projectSimplex(a, out []float64, idx []int) {
	M := len(a)
	for m := range idx[:M] {
		idx[m] = m
	}
	ids := idx[:M]
	sort.Slice(ids, func(x, y int) bool { return a[ids[x]] > a[ids[y]] })
	var sum, t float64
	for r := 0; r < M; r++ {
		sum += a[ids[r]]
		t = (sum - 1) / float64(r+1)
		if r+1 == M || a[ids[r+1]] <= t {
			break
		}
	}
	for m := 0; m < M; m++ {
		out[m] = math.Max(0, a[m]-t)
	}
}

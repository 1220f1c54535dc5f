package optlayer

// Exact LP answers for problems with few distinct points.
//
// Copies (points that cost nothing to each other and have equal rows and
// columns of the costs: locations, pooledloc.go) are interchangeable in the
// LP: averaging any plan over the permutations of each location's copies
// keeps it feasible, keeps its costs and does not raise Σ_i max_m P_m(i) (a
// maximum of averages is at most the average of the maxima), so the LP has
// an optimum that spreads every class's mass at a location evenly over its
// copies. The LP over locations — class m sends the mass a_m(q) =
// n_m(q)/n_m of its points at location q to locations ℓ, and the objective
// is Σ_ℓ max_m P_m(ℓ) — therefore has the same value, and its answer spread
// over the copies (P_m(i) = P_m(ℓ)/count(ℓ)) is an answer of the original.
// With few locations (features rounded to a few values in a low dimension:
// `ties` drawn in two dimensions has nine at any n, and 90 (class,
// location) sources with M = 10) that LP is small, where the entropic solve
// of the original carries a dense plan (every key ties across a location's
// copies) and took up to 34 s at n = 3000.
//
// The reduced LP is solved by a primal–dual interior-point method
// (Mehrotra's predictor–corrector with Gondzio's centrality correctors, on
// the normal equations with the sources' rows eliminated and the rest by
// dense Cholesky: at most distinctMaxRows constraints). Its answer is certified as every
// other: the primal's plan is made exactly feasible (each source's column
// rescaled to its mass, the plan shrunk towards the zero-cost plan until
// the budget holds) and the lower bound is the certificate's formula at the
// dual's α (clipped to ≥ 0, each location's sum at most 1) and λ (≥ 0),
// which bounds the LP value whatever the iterations' rounding. When the two
// are not within Tol the solve goes on as if this had not been tried.

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

const (
	distinctMaxL    = 64  // the most locations looked for
	distinctMaxRows = 600 // the most constraints of the reduced LP
	ipmMaxIter      = 80
	ipmTol          = 1e-11
	ipmCorrectors   = 3 // Gondzio's centrality correctors per iteration at most
)

// reducedLP is the LP over locations in standard form (minimise cᵀx, Ax =
// b, x ≥ 0): variables γ_m(ℓ, q) for each class m, source location q of m
// and location ℓ (at gOff[m] + k·L + ℓ for q = src[m][k]); t_ℓ; the caps'
// slacks u_m(ℓ); the budgets' slacks w_m. Rows: each source's mass, each
// cap Σ_q γ_m(ℓ, q) + u_m(ℓ) − t_ℓ = 0, each budget Σ γ c + w_m = ϑ_m.
type reducedLP struct {
	L, M  int
	cl    []float64   // L×L: cl[ℓ·L+q] the cost from location q to ℓ
	a     [][]float64 // M × L source masses
	src   [][]int     // per class: its source locations
	theta []float64
	gOff  []int // per class: its first γ variable
	nG    int   // γ variables
	nSrc  int   // sources (rows of the masses)
}

// newReducedLP is the LP over the locations of ls with the classes' radii
// theta: a source for each (class, location) with mass there.
func newReducedLP(ls *locSet, theta []float64) *reducedLP {
	M, L := len(ls.mass), len(ls.reps)
	r := &reducedLP{L: L, M: M, cl: ls.cl, a: ls.mass, src: make([][]int, M), gOff: make([]int, M+1), theta: theta}
	for m := 0; m < M; m++ {
		for q, x := range r.a[m] {
			if x > 0 {
				r.src[m] = append(r.src[m], q)
			}
		}
		r.gOff[m+1] = r.gOff[m] + len(r.src[m])*L
		r.nSrc += len(r.src[m])
	}
	r.nG = r.gOff[M]
	return r
}

// solveDistinct returns the certified LP answer of in from the LP over its
// locations, or nil when in has no copies, too many locations, or the
// answer does not certify.
func solveDistinct(in *instance, cfg config) *Result {
	ls := in.locationSet(distinctMaxL)
	if ls == nil {
		return nil
	}
	loc, count := ls.loc, ls.count
	n, M, L := in.n, in.m, len(ls.reps)
	r := newReducedLP(ls, in.theta)
	if r.nSrc+M*L+M > distinctMaxRows {
		return nil
	}
	x, y, ok := r.solve()
	if !ok {
		return nil
	}
	alpha := make([]float64, M*L)
	lam := make([]float64, M)
	for m := 0; m < M; m++ {
		for l := 0; l < L; l++ {
			alpha[m*L+l] = -y[r.nSrc+m*L+l]
		}
		lam[m] = -y[r.nSrc+M*L+m]
	}
	PL := r.round(x[:r.nG])
	res := &Result{M: M, N: n, P: make([]float64, M*n), Status: Optimal, Epsilon: cfg.eps}
	for m := 0; m < M; m++ {
		for i, l := range loc {
			res.P[m*n+i] = PL[m*L+l] / float64(count[l])
		}
	}
	for i := 0; i < n; i++ {
		mx := 0.0
		for m := 0; m < M; m++ {
			mx = max(mx, res.P[m*n+i])
		}
		res.Objective += mx
	}
	res.LowerBound = min(res.Objective, max(1, r.bound(alpha, lam)))
	res.Gap = res.Objective - res.LowerBound
	res.RelGap = res.Gap / res.LowerBound
	if !(res.RelGap <= cfg.tol) {
		return nil
	}
	res.PReg = append([]float64(nil), res.P...)
	// no regularised solution: VJP and ObjectiveGrad refuse as for every
	// LPOnly answer (ErrNotConverged), FeatureGrad works as always
	res.st = &state{n: n, M: M, eps: cfg.eps, resid: math.Inf(1), unconverged: true, feat: in.feat, dim: in.dim, metric: in.metric, labels: in.labels}
	res.Residual = math.Inf(1)
	res.Dual = Dual{G: make([]float64, n), Lambda: lam, Alpha: make([]float64, M*n)}
	for i, l := range loc {
		for m := 0; m < M; m++ {
			res.Dual.Alpha[m*n+i] = alpha[m*L+l]
		}
		m := in.labels[i]
		g := math.Inf(1)
		for k := 0; k < L; k++ {
			g = min(g, alpha[m*L+k]+lam[m]*r.cl[k*L+l])
		}
		res.Dual.G[i] = g
	}
	return res
}

// sparse column entries of A
type spEnt struct {
	row int
	v   float64
}

// system builds the standard form: c, the columns of A (sparse) and b.
func (r *reducedLP) system() (c []float64, cols [][]spEnt, b []float64) {
	L, M := r.L, r.M
	nT, nU := L, M*L
	nv := r.nG + nT + nU + M
	rows := r.nSrc + M*L + M
	c = make([]float64, nv)
	cols = make([][]spEnt, nv)
	b = make([]float64, rows)
	row := 0
	for m := 0; m < M; m++ {
		for k, q := range r.src[m] {
			for l := 0; l < L; l++ {
				v := r.gOff[m] + k*L + l
				e := []spEnt{{row, 1}, {r.nSrc + m*L + l, 1}}
				if cq := r.cl[l*L+q]; cq != 0 {
					e = append(e, spEnt{r.nSrc + M*L + m, cq})
				}
				cols[v] = e
			}
			b[row] = r.a[m][q]
			row++
		}
	}
	for l := 0; l < L; l++ {
		c[r.nG+l] = 1
		e := make([]spEnt, M)
		for m := 0; m < M; m++ {
			e[m] = spEnt{r.nSrc + m*L + l, -1}
		}
		cols[r.nG+l] = e
	}
	for m := 0; m < M; m++ {
		for l := 0; l < L; l++ {
			cols[r.nG+nT+m*L+l] = []spEnt{{r.nSrc + m*L + l, 1}}
		}
		cols[r.nG+nT+nU+m] = []spEnt{{r.nSrc + M*L + m, 1}}
		b[r.nSrc+M*L+m] = r.theta[m]
	}
	return c, cols, b
}

// normalEq is the interior point's normal equations A D Aᵀ dy = r with the
// sources' rows eliminated first. Two sources share no column (γ_m(ℓ, q)
// meets only the row of its source q), so their block is diagonal, d_S(i) =
// Σ_ℓ D γ(ℓ, q) > 0 (a source sends its mass somewhere), and each source
// row meets only its class's L caps and budget (w_i below). The rest —
// caps and budgets, M·L + M rows — is the Schur complement C − Σ_i w_i
// w_iᵀ / d_S(i), factorised by dense Cholesky: the same elimination as a
// Cholesky of the whole matrix with the sources ordered first (stable for
// any symmetric order), at ((ML + M) / (nSrc + ML + M))³ of its cost.
type normalEq struct {
	nS, nC int
	dS     []float64   // nS: the sources' diagonal
	w      [][]float64 // nS × (L+1): each source's row over its class's caps and budget
	cls    []int       // nS: each source's class
	slot   []int       // nC: each cap's location ℓ, each budget L
	S      *mat.SymDense
	chol   mat.Cholesky
	tC     []float64 // nC scratch
}

// newNormalEq allocates the normal equations of the LP's nr rows.
func (r *reducedLP) newNormalEq(nr int) *normalEq {
	nC := nr - r.nSrc
	ne := &normalEq{nS: r.nSrc, nC: nC, dS: make([]float64, r.nSrc), w: make([][]float64, r.nSrc), cls: make([]int, r.nSrc), slot: make([]int, nC), S: mat.NewSymDense(nC, nil), tC: make([]float64, nC)}
	for m, i := 0, 0; m < r.M; m++ {
		for range r.src[m] {
			ne.w[i], ne.cls[i] = make([]float64, r.L+1), m
			i++
		}
		for k := 0; k <= r.L; k++ {
			ne.slot[r.classRow(m, k)] = k
		}
	}
	return ne
}

// classRow is the index among the caps and budgets (the Schur complement's
// rows) of class m's k-th row: caps k < L, the budget k = L.
func (r *reducedLP) classRow(m, k int) int {
	if k < r.L {
		return m*r.L + k
	}
	return r.M*r.L + m
}

// factor builds and factorises the normal equations at the scaling d.
func (r *reducedLP) factor(ne *normalEq, cols [][]spEnt, d []float64) bool {
	L := r.L
	nS := r.nSrc
	clear(ne.dS)
	raw := ne.S.RawSymmetric()
	clear(raw.Data)
	// the sources' diagonal and rows: a column meeting a source's row
	// meets only its class's caps and budget (slot: the row's place there)
	for i := range ne.w {
		clear(ne.w[i])
	}
	for k, col := range cols {
		if len(col) == 0 || col[0].row >= nS {
			continue
		}
		i, v := col[0].row, col[0].v
		ne.dS[i] += d[k] * v * v
		for _, f := range col[1:] {
			ne.w[i][ne.slot[f.row-nS]] += d[k] * v * f.v
		}
	}
	// C: every column's entries outside the sources' rows
	for k, col := range cols {
		for _, e := range col {
			if e.row < nS {
				continue
			}
			for _, f := range col {
				if f.row >= e.row {
					raw.Data[(e.row-nS)*raw.Stride+f.row-nS] += d[k] * e.v * f.v
				}
			}
		}
	}
	var tr float64 // of the whole matrix, for its regularisation
	for i := 0; i < ne.nC; i++ {
		tr += raw.Data[i*raw.Stride+i]
	}
	tr += floats.Sum(ne.dS)
	// minus the sources' outer products
	for i, wi := range ne.w {
		m, inv := ne.cls[i], 1/ne.dS[i]
		for a := 0; a <= L; a++ {
			ra := r.classRow(m, a)
			fa := wi[a] * inv
			for b := 0; b <= L; b++ {
				if rb := r.classRow(m, b); rb >= ra {
					raw.Data[ra*raw.Stride+rb] -= fa * wi[b]
				}
			}
		}
	}
	for i := 0; i < ne.nC; i++ {
		raw.Data[i*raw.Stride+i] += 1e-14 * tr / float64(ne.nC+nS)
	}
	return ne.chol.Factorize(ne.S)
}

// solveTo solves the factorised normal equations for rhs into dy.
func (r *reducedLP) solveTo(ne *normalEq, dy, rhs []float64) bool {
	L, nS := r.L, ne.nS
	// right-hand side of the Schur complement: r_C − Σ_i w_i r_S(i)/d_S(i)
	copy(ne.tC, rhs[nS:])
	for i, wi := range ne.w {
		f := rhs[i] / ne.dS[i]
		for a := 0; a <= L; a++ {
			ne.tC[r.classRow(ne.cls[i], a)] -= wi[a] * f
		}
	}
	dC := mat.NewVecDense(ne.nC, dy[nS:])
	if err := ne.chol.SolveVecTo(dC, mat.NewVecDense(ne.nC, ne.tC)); err != nil {
		return false
	}
	for i, wi := range ne.w {
		v := rhs[i]
		for a := 0; a <= L; a++ {
			v -= wi[a] * dy[nS+r.classRow(ne.cls[i], a)]
		}
		dy[i] = v / ne.dS[i]
	}
	return true
}

// solve runs the interior-point iterations and returns the primal x and
// the dual y (Aᵀy + s = c), and whether they converged.
func (r *reducedLP) solve() (x, y []float64, ok bool) {
	c, cols, b := r.system()
	nv, nr := len(c), len(b)
	x, y = make([]float64, nv), make([]float64, nr)
	s := make([]float64, nv)
	rb, rc := make([]float64, nr), make([]float64, nv)
	d := make([]float64, nv)
	dx, ds, dy := make([]float64, nv), make([]float64, nv), make([]float64, nr)
	dxa, dsa, dyc := make([]float64, nv), make([]float64, nv), make([]float64, nr)
	rxs, tmp := make([]float64, nv), make([]float64, nv)
	rhs := make([]float64, nr)
	ne := r.newNormalEq(nr)
	bn, cn := 1+floats.Norm(b, 2), 1+floats.Norm(c, 2)
	Ax := func(v, out []float64) {
		clear(out)
		for k, col := range cols {
			for _, e := range col {
				out[e.row] += e.v * v[k]
			}
		}
	}
	ATy := func(v, out []float64) {
		for k, col := range cols {
			var t float64
			for _, e := range col {
				t += e.v * v[e.row]
			}
			out[k] = t
		}
	}
	// solveDir: the direction for the complementarity target rxs
	// (homog: for the residuals zero, a centrality correction)
	solveDir := func(homog bool) bool {
		w := 1.0
		if homog {
			w = 0
		}
		// rhs = −rb − A(S⁻¹ rxs + D rc)
		for k := range tmp {
			tmp[k] = rxs[k]/s[k] + w*d[k]*rc[k]
		}
		Ax(tmp, rhs)
		for i := range rhs {
			rhs[i] = -w*rb[i] - rhs[i]
		}
		if !r.solveTo(ne, dy, rhs) {
			return false
		}
		ATy(dy, ds)
		for k := range ds {
			ds[k] = -w*rc[k] - ds[k]
			dx[k] = (rxs[k] - x[k]*ds[k]) / s[k]
		}
		return true
	}
	step := func(v, dv []float64) float64 {
		a := 1.0
		for k, t := range dv {
			if t < 0 {
				a = min(a, -v[k]/t)
			}
		}
		return a
	}
	for k := range x {
		x[k], s[k] = 1, 1
	}
	for it := 0; it < ipmMaxIter; it++ {
		Ax(x, rb)
		for i := range rb {
			rb[i] -= b[i]
		}
		ATy(y, rc)
		var mu float64
		for k := range rc {
			rc[k] += s[k] - c[k]
			mu += x[k] * s[k]
		}
		mu /= float64(nv)
		if floats.Norm(rb, 2)/bn < ipmTol && floats.Norm(rc, 2)/cn < ipmTol && mu < ipmTol {
			return x, y, true
		}
		// normal equations A D Aᵀ, D = X S⁻¹
		for k := range d {
			d[k] = x[k] / s[k]
		}
		if !r.factor(ne, cols, d) {
			return nil, nil, false
		}
		// predictor
		for k := range rxs {
			rxs[k] = -x[k] * s[k]
		}
		if !solveDir(false) {
			return nil, nil, false
		}
		ap, ad := step(x, dx), step(s, ds)
		var muA float64
		for k := range x {
			muA += (x[k] + ap*dx[k]) * (s[k] + ad*ds[k])
		}
		muA /= float64(nv)
		sigma := math.Pow(muA/mu, 3)
		copy(dxa, dx)
		copy(dsa, ds)
		// corrector
		for k := range rxs {
			rxs[k] = -x[k]*s[k] - dxa[k]*dsa[k] + sigma*mu
		}
		if !solveDir(false) {
			return nil, nil, false
		}
		ap, ad = step(x, dx), step(s, ds)
		// Gondzio's centrality correctors: aim at a longer step and pull
		// the products x_k s_k there back into [βmin, βmax]·σμ
		for kc := 0; kc < ipmCorrectors && min(ap, ad) < 1; kc++ {
			apT, adT := min(1, 1.5*ap+0.1), min(1, 1.5*ad+0.1)
			tgt := sigma * mu
			for k := range rxs {
				v := (x[k] + apT*dx[k]) * (s[k] + adT*ds[k])
				switch {
				case v < 0.1*tgt:
					rxs[k] = 0.1*tgt - v
				case v > 10*tgt:
					rxs[k] = max(10*tgt-v, -10*tgt)
				default:
					rxs[k] = 0
				}
			}
			copy(dxa, dx)
			copy(dsa, ds)
			copy(dyc, dy)
			if !solveDir(true) {
				return nil, nil, false
			}
			for k := range dx {
				dx[k] += dxa[k]
				ds[k] += dsa[k]
			}
			for i := range dy {
				dy[i] += dyc[i]
			}
			ap2, ad2 := step(x, dx), step(s, ds)
			if ap2+ad2 < 1.02*(ap+ad) {
				copy(dx, dxa)
				copy(ds, dsa)
				copy(dy, dyc)
				break
			}
			ap, ad = ap2, ad2
		}
		ap, ad = min(1, 0.995*ap), min(1, 0.995*ad)
		for k := range x {
			x[k] += ap * dx[k]
			s[k] += ad * ds[k]
		}
		for i := range y {
			y[i] += ad * dy[i]
		}
	}
	return nil, nil, false
}

// round makes the plan γ (the reduced LP's γ variables) exactly feasible —
// each source's column clipped at 0 and rescaled to its mass a_m(q), then
// the class's plan shrunk towards the zero-cost plan (each source's mass
// kept at its own location) until its cost is within ϑ_m — and returns the
// location masses P_m(ℓ) (M×L).
func (r *reducedLP) round(x []float64) []float64 {
	L, M := r.L, r.M
	P := make([]float64, M*L)
	for m := 0; m < M; m++ {
		g := make([]float64, len(r.src[m])*L)
		var cost float64
		for k, q := range r.src[m] {
			gc := g[k*L : (k+1)*L]
			var s float64
			for l := range gc {
				gc[l] = max(0, x[r.gOff[m]+k*L+l])
				s += gc[l]
			}
			if !(s > 0) {
				clear(gc)
				gc[q] = 1
				s = 1
			}
			f := r.a[m][q] / s
			for l := range gc {
				gc[l] *= f
				cost += gc[l] * r.cl[l*L+q]
			}
		}
		th := 1.0
		if cost > r.theta[m] {
			th = r.theta[m] / cost * (1 - 1e-12)
		}
		for k, q := range r.src[m] {
			for l := 0; l < L; l++ {
				v := th * g[k*L+l]
				if l == q {
					v += (1 - th) * r.a[m][q]
				}
				P[m*L+l] += v
			}
		}
	}
	return P
}

// bound is the certificate's lower bound on the LP value at α (M×L) and λ,
// made dual-feasible first (α ≥ 0 with each location's sum at most 1, λ ≥
// 0): Σ_m (Σ_q a_m(q) min_ℓ (α_m(ℓ) + λ_m c(ℓ, q)) − λ_m ϑ_m).
func (r *reducedLP) bound(alpha, lam []float64) float64 {
	L, M := r.L, r.M
	for k := range alpha {
		alpha[k] = max(0, alpha[k])
	}
	for l := 0; l < L; l++ {
		var s float64
		for m := 0; m < M; m++ {
			s += alpha[m*L+l]
		}
		if s > 1 {
			for m := 0; m < M; m++ {
				alpha[m*L+l] /= s
			}
		}
	}
	var lb float64
	for m := 0; m < M; m++ {
		lam[m] = max(0, lam[m])
		for _, q := range r.src[m] {
			g := math.Inf(1)
			for l := 0; l < L; l++ {
				g = min(g, alpha[m*L+l]+lam[m]*r.cl[l*L+q])
			}
			lb += r.a[m][q] * g
		}
		lb -= lam[m] * r.theta[m]
	}
	return lb
}

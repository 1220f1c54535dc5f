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
// the normal equations with the sources' rows eliminated; the caps and
// budgets left by dense Cholesky when the LP has at most distinctMaxRows
// constraints, else by the Woodbury identity over the classes' blocks:
// normalEq). Its answer is certified as every other: the primal's plan is
// made exactly feasible (each source's column rescaled to its mass, the
// plan shrunk towards the zero-cost plan until the budget holds) and the
// lower bound is the certificate's formula at the dual's α (clipped to ≥ 0,
// each location's sum at most 1) and λ (≥ 0), which bounds the LP value
// whatever the iterations' rounding. The iterations stop when they converge
// (ipmTol) or, from ipmCertFrom on (on the Woodbury path from the first),
// as soon as that certificate holds within Tol: with 64–96 locations the
// iterations' steps stay short (the ties make the optimal face large) and
// convergence to ipmTol takes more than ipmMaxIter iterations, while the
// certificate holds after 40–70 (docs/PERFORMANCE.md, session of
// 2026-11-27, 19:17– UTC). When it does not hold the solve goes on as if
// this had not been tried.

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

const (
	distinctMaxL    = 96  // the most locations looked for
	distinctMaxRows = 600 // the most constraints of the reduced LP for the dense path
	// distinctMaxWork: the most M·(L+1)³ (the blocks' Cholesky) for the
	// Woodbury path: L = 92 at M = 10. At L = 125 / 128 (M = 10) the
	// iterations took 3.7–4.7 s where the entropic solve takes 1.4–2.0 s
	distinctMaxWork = 8e6
	// ipmCertFrom: the dense path's first iteration that looks at the
	// certificate; before it the iterations converge to ipmTol on the
	// instances with few locations (10–24 iterations in two and three
	// dimensions) and give the LP's own answer
	ipmCertFrom   = 30
	ipmMaxIter    = 80
	ipmTol        = 1e-11
	ipmCorrectors = 3 // Gondzio's centrality correctors per iteration at most
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
	gOff  []int    // per class: its first γ variable
	nG    int      // γ variables
	nSrc  int      // sources (rows of the masses)
	stop  *stopper // polled before each iteration (cancel.go)
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
	r.stop = cfg.stop
	rows := r.nSrc + M*L + M
	dense := rows <= distinctMaxRows
	if !dense && (rows > n || float64(M)*math.Pow(float64(L+1), 3) > distinctMaxWork) {
		// the Woodbury path only for an LP with fewer constraints than
		// the problem has points: below that the entropic path's n²
		// entries are few and it was the faster (`ties` in four
		// dimensions and on a 9×9 grid, M = 5 and 10, n = 300 / 600:
		// 0.02–0.26 s against 0.06–0.47 s; docs/PERFORMANCE.md)
		return nil
	}
	alpha := make([]float64, M*L)
	lam := make([]float64, M)
	duals := func(y []float64) {
		for m := 0; m < M; m++ {
			for l := 0; l < L; l++ {
				alpha[m*L+l] = -y[r.nSrc+m*L+l]
			}
			lam[m] = -y[r.nSrc+M*L+m]
		}
	}
	// certified: the iterate's rounded plan and clipped dual are within
	// the solve's tolerance (at the locations; the answer's own check
	// below has the same sums, so the margin is only for their rounding)
	certified := func(x, y []float64) bool {
		duals(y)
		PL := r.round(x[:r.nG])
		var obj float64
		for l := 0; l < L; l++ {
			var mx float64
			for m := 0; m < M; m++ {
				mx = max(mx, PL[m*L+l])
			}
			obj += mx
		}
		lb := max(1, r.bound(alpha, lam))
		return obj-lb <= 0.9*cfg.tol*lb
	}
	x, y, ok := r.solve(dense, certified)
	if !ok {
		return nil
	}
	duals(y)
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
// w_iᵀ / d_S(i): the same elimination as a Cholesky of the whole matrix
// with the sources ordered first (stable for any symmetric order).
//
// That complement is block diagonal over the classes but for the columns
// t_ℓ, which meet the cap (m, ℓ) of every class: it is B + E D_t Eᵀ with
// B = diag(B_m), one dense (L+1)×(L+1) block per class (its caps and
// budget), and E the M·L + M by L matrix with a 1 at each cap (m, ℓ) in
// column ℓ. It is solved by the Woodbury identity: z = K⁻¹ Eᵀ B⁻¹ r with the
// capacitance K = D_t⁻¹ + Σ_m (B_m⁻¹)_caps (L×L), then x = B⁻¹ (r − E z) —
// M Cholesky factorisations of L+1 rows and one of L instead of one of
// M·L + M rows (at M = 10, L = 81: ≈ 14 times fewer operations).
type normalEq struct {
	nS, nC int
	dS     []float64   // nS: the sources' diagonal
	w      [][]float64 // nS × (L+1): each source's row over its class's caps and budget
	cls    []int       // nS: each source's class
	slot   []int       // nC: each cap's location ℓ, each budget L
	// the dense path (S not nil): the complement whole
	S    *mat.SymDense
	chol mat.Cholesky
	// the Woodbury path
	B      []*mat.SymDense
	cholB  []mat.Cholesky
	Y      []*mat.Dense // per class: the first L columns of B_m⁻¹ ((L+1)×L)
	e      *mat.Dense   // [I_L; 0]
	dT     []float64    // L: the t columns' scaling
	K      *mat.SymDense
	cholK  mat.Cholesky
	tC     []float64     // nC scratch
	u, v   []float64     // scratch: L+1, L
	uv, vv *mat.VecDense // u and v as vectors
}

// newNormalEq allocates the normal equations of the LP's nr rows, solved
// by dense Cholesky of the caps and budgets (dense) or by Woodbury.
func (r *reducedLP) newNormalEq(nr int, dense bool) *normalEq {
	nC := nr - r.nSrc
	L, M := r.L, r.M
	ne := &normalEq{nS: r.nSrc, nC: nC, dS: make([]float64, r.nSrc), w: make([][]float64, r.nSrc), cls: make([]int, r.nSrc), slot: make([]int, nC), tC: make([]float64, nC)}
	if dense {
		ne.S = mat.NewSymDense(nC, nil)
	} else {
		ne.B, ne.cholB, ne.Y = make([]*mat.SymDense, M), make([]mat.Cholesky, M), make([]*mat.Dense, M)
		ne.dT, ne.K = make([]float64, L), mat.NewSymDense(L, nil)
		ne.u, ne.v = make([]float64, L+1), make([]float64, L)
		ne.uv, ne.vv = mat.NewVecDense(L+1, ne.u), mat.NewVecDense(L, ne.v)
		ne.e = mat.NewDense(L+1, L, nil)
		for l := 0; l < L; l++ {
			ne.e.Set(l, l, 1)
		}
	}
	for m, i := 0, 0; m < M; m++ {
		for range r.src[m] {
			ne.w[i], ne.cls[i] = make([]float64, L+1), m
			i++
		}
		for k := 0; k <= L; k++ {
			ne.slot[r.classRow(m, k)] = k
		}
		if !dense {
			ne.B[m] = mat.NewSymDense(L+1, nil)
			ne.Y[m] = mat.NewDense(L+1, L, nil)
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

// rowClass is the class of the Schur complement's row j and its place k
// there (classRow's inverse).
func (r *reducedLP) rowClass(j int) (m, k int) {
	if j < r.M*r.L {
		return j / r.L, j % r.L
	}
	return j - r.M*r.L, r.L
}

// factor builds and factorises the normal equations at the scaling d.
func (r *reducedLP) factor(ne *normalEq, cols [][]spEnt, d []float64) bool {
	L := r.L
	nS := r.nSrc
	clear(ne.dS)
	for i := range ne.w {
		clear(ne.w[i])
	}
	// the sources' diagonal and rows: a column meeting a source's row
	// meets only its class's caps and budget (slot: the row's place there)
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
	if ne.S != nil {
		return r.factorDense(ne, cols, d)
	}
	// B: every column's entries outside the sources' rows, but the t
	// columns' (their entries lie in different classes: D_t)
	for _, b := range ne.B {
		clear(b.RawSymmetric().Data)
	}
	var tr float64 // of the whole matrix, for its regularisation
	for k, col := range cols {
		if k >= r.nG && k < r.nG+L {
			ne.dT[k-r.nG] = d[k]
			for _, e := range col {
				tr += d[k] * e.v * e.v
			}
			continue
		}
		for _, e := range col {
			if e.row < nS {
				continue
			}
			m, a := r.rowClass(e.row - nS)
			raw := ne.B[m].RawSymmetric()
			for _, f := range col {
				if f.row < nS {
					continue
				}
				if _, b := r.rowClass(f.row - nS); b >= a {
					raw.Data[a*raw.Stride+b] += d[k] * e.v * f.v
				}
			}
		}
	}
	for _, b := range ne.B {
		raw := b.RawSymmetric()
		for a := 0; a <= L; a++ {
			tr += raw.Data[a*raw.Stride+a]
		}
	}
	tr += floats.Sum(ne.dS)
	// minus the sources' outer products
	for i, wi := range ne.w {
		raw := ne.B[ne.cls[i]].RawSymmetric()
		inv := 1 / ne.dS[i]
		for a := 0; a <= L; a++ {
			fa := wi[a] * inv
			row := raw.Data[a*raw.Stride:]
			for b := a; b <= L; b++ {
				row[b] -= fa * wi[b]
			}
		}
	}
	reg := 1e-14 * tr / float64(ne.nC+nS)
	for m, b := range ne.B {
		raw := b.RawSymmetric()
		for a := 0; a <= L; a++ {
			raw.Data[a*raw.Stride+a] += reg
		}
		if !ne.cholB[m].Factorize(b) {
			return false
		}
	}
	// K = D_t⁻¹ + Σ_m (B_m⁻¹)_caps, from Y_m = B_m⁻¹ [I_L; 0]
	rawK := ne.K.RawSymmetric()
	clear(rawK.Data)
	for l, dt := range ne.dT {
		rawK.Data[l*rawK.Stride+l] = 1 / (dt + reg)
	}
	for m := range ne.B {
		if err := ne.cholB[m].SolveTo(ne.Y[m], ne.e); err != nil {
			return false
		}
		y := ne.Y[m].RawMatrix()
		for a := 0; a < L; a++ {
			for b := a; b < L; b++ {
				rawK.Data[a*rawK.Stride+b] += y.Data[a*y.Stride+b]
			}
		}
	}
	return ne.cholK.Factorize(ne.K)
}

// factorDense factorises the Schur complement over the caps and budgets
// whole, by dense Cholesky (ne.S), once the sources' rows are in ne.dS and
// ne.w.
func (r *reducedLP) factorDense(ne *normalEq, cols [][]spEnt, d []float64) bool {
	L, nS := r.L, r.nSrc
	raw := ne.S.RawSymmetric()
	clear(raw.Data)
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
	dC := dy[nS:]
	if ne.S != nil {
		if err := ne.chol.SolveVecTo(mat.NewVecDense(ne.nC, dC), mat.NewVecDense(ne.nC, ne.tC)); err != nil {
			return false
		}
	} else if !r.woodbury(ne, dC, ne.tC) {
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

// woodbury solves the Schur complement (B + E D_t Eᵀ) x = b into x:
// u_m = B_m⁻¹ b_m, z = K⁻¹ Σ_m (u_m)_caps, x_m = u_m − Y_m z.
func (r *reducedLP) woodbury(ne *normalEq, x, b []float64) bool {
	L, M := r.L, r.M
	clear(ne.v)
	for m := 0; m < M; m++ {
		for k := 0; k <= L; k++ {
			ne.u[k] = b[r.classRow(m, k)]
		}
		if err := ne.cholB[m].SolveVecTo(ne.uv, ne.uv); err != nil {
			return false
		}
		for k := 0; k <= L; k++ {
			x[r.classRow(m, k)] = ne.u[k]
		}
		floats.Add(ne.v, ne.u[:L])
	}
	if err := ne.cholK.SolveVecTo(ne.vv, ne.vv); err != nil {
		return false
	}
	for m := 0; m < M; m++ {
		y := ne.Y[m].RawMatrix()
		for k := 0; k <= L; k++ {
			x[r.classRow(m, k)] -= floats.Dot(y.Data[k*y.Stride:k*y.Stride+L], ne.v)
		}
	}
	return true
}

// solve runs the interior-point iterations (on the normal equations of
// the dense path if dense, else Woodbury's) and returns the primal x and
// the dual y (Aᵀy + s = c), and whether they converged to ipmTol or done
// accepted them (done, if not nil, is asked every iteration from the
// first, or from ipmCertFrom on the dense path).
func (r *reducedLP) solve(dense bool, done func(x, y []float64) bool) (x, y []float64, ok bool) {
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
	ne := r.newNormalEq(nr, dense)
	certFrom := 1
	if dense {
		certFrom = ipmCertFrom
	}
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
		r.stop.step()
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
		if done != nil && it >= certFrom && done(x, y) {
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

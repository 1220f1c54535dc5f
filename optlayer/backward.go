package optlayer

// The backward pass.
//
// At the regularised optimum γ(i,j) = exp(e(i,j)/ε) with the exponent
// e(i,j) = g(j) − α_m(i) − λ_m c(i,j) (m = y_j), and the stationarity
// conditions of the dual D on the active face are
//
//	Σ_i γ(i,j) = 1/n_m                        (every column j)
//	Σ γ c = ϑ_m                               (classes with λ_m > 0)
//	p_m(i) = μ_i,  Σ_{m ∈ A_i} α_m(i) = 1      (A_i = {m : α_m(i) > 0})
//
// with α_m(i) = 0 fixed off the active set. Differentiating them with respect
// to c and to the dual z = (g, α on A, λ on active budgets) gives, for any
// upstream ḡ = ∂L/∂p, the vector–Jacobian product
//
//	∂L/∂c(i,j) = γ(i,j) [ W_λm − (λ_m/ε) r(i,j) ],
//	r(i,j)     = ḡ_m(i) − (W_g(j) − W_αm(i) − W_λm c(i,j)),
//
// where W is the solution of the weighted least-squares problem
//
//	min_W Σ_ij γ(i,j) r(i,j)²  subject to  Σ_{m ∈ A_i} W_αm(i) = 0,
//	                                       W_αm(i) = 0 for m ∉ A_i.
//
// (The ε of the Hessian (1/ε) Jᵀ diag γ J and of ∂p/∂z cancel, which turns
// the adjoint system into these normal equations.) W_α is eliminated row by
// row in closed form — for fixed (W_g, W_λ) and s_m(i) = Σ_j γ(i,j) y(i,j),
// the optimal correction is W_αm(i) = (τ_i − s_m(i))/p_m(i) with τ_i =
// Σ_{A_i} (s_m/p_m) / Σ_{A_i} (1/p_m) — leaving a symmetric positive
// semi-definite system in (W_g, W_λ) of size n + #active budgets. Its
// null space (present only when every class is active in every row) does not
// change γ, so the answer does not depend on which solution is found. Small
// systems are solved densely (Cholesky), large ones by preconditioned
// conjugate gradients with matrix-free products (two passes over γ each).
//
// The envelope theorem gives the derivative of the regularised optimal value
// V(c) = min Σ_i max_m p_m(i) + ε Σ γ(log γ − 1) without any solve:
// ∂V/∂c(i,j) = λ_m γ(i,j).

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ErrNoState is returned by the backward methods of a Result that was not
// produced by Solve.
var ErrNoState = errors.New("optlayer: result carries no solver state (not produced by Solve)")

// ErrNotConverged is wrapped when the iterative backward solve misses its
// tolerance by a wide margin.
var ErrNotConverged = errors.New("optlayer: backward solve did not converge")

// denseMax is the largest reduced system solved by dense Cholesky.
const denseMax = 128

type state struct {
	n, M    int
	eps     float64
	labels  []int
	order   []int
	off     []int
	ninv    []float64
	cp      []int       // sparse γ by column position: entries cp[q] … cp[q+1]−1
	ri      []int32     // row index i of each entry
	gv      []float64   // γ(i, j) of each entry (exact zeros are not stored)
	cv      []float64   // c(i, j) of each entry
	colRi   [][]int32   // per position: its entries' ri …
	colGv   [][]float64 // … and gv (the operator takes them column by column)
	lam     []float64
	alpha   []float64 // M×n
	g       []float64 // by position
	p       []float64 // M×n row sums of γ
	active  []bool    // M×n: α_m(i) > 0 and p_m(i) > 0
	act     []int32   // the active k = m·n + i, increasing
	actOff  []int     // class m's are act[actOff[m]] … act[actOff[m+1]−1]
	actGen  int       // bumped whenever the active set is recomputed (loadState)
	pinv    []float64 // M×n: 1/p_m(i) on the active set, 0 elsewhere
	dinv    []float64 // per row: 1/Σ_m pinv_m(i), 0 for a row without active class
	bi      []int     // class → index of its λ in the reduced system, or −1
	L       int       // number of active budgets
	pc      []float64 // M×n: Σ_j γ c per row
	qc      []float64 // per position: Σ_i γ c per column
	colsum  []float64 // per position
	sc2     []float64 // per class Σ γ c²
	S       []float64 // per class Σ γ c
	dg      []float64 // per position: dgq, the diagonal of the preconditioner and of the LM term
	cgTol   float64
	resid   float64
	cgIters int
	hbuf    []float64
	sym     *mat.SymDense
	chol    mat.Cholesky
	theta   []float64
	cbar    float64 // mean cost (scale of the λ preconditioner)
	forceCG bool
	noKKT   bool    // the solve found the plan too dense for the direct solve (densekkt.go)
	par     bool    // class-parallel operator products
	tm      *team   // with par: their helper goroutine (the solver's; VJP's own)
	reg     float64 // Levenberg–Marquardt term reg·diag(H₀) (Newton only)
	feat    []float64
	dim     int
	metric  Metric
	slack   []bool // per class: rank-one γ = r1a·r1b, no entries (slack.go)
	// unconverged: an LPOnly snapshot before the regularised solve
	// converged; the backward would differentiate the wrong point
	unconverged bool
	r1a         []float64 // M×n row factors of the slack classes
	r1b         []float64 // per position: their column factors
	base, cnt   []int     // loadState's scratch: each class's first entry and count
	actMid      []int     // per class: the index in act of its first active row ≥ n/2
	lpt         []int     // the classes by decreasing entries: the operator's passes' order
	// coarse: solveCG adds the class coarse space to the preconditioner
	// (coarse.go), with its factor and scratch
	coarse bool
	cs     coarseSpace
	// colFull: per position, the column's entries are all n rows in order
	// (colRi[q] is nil and colGv[q] holds n values, zeros included:
	// loadState's comment); only in Newton's states of solves above kktMax
	colFull []bool
	fullOK  bool // loadState may store full columns so
	// short: the entries' rows are 16-bit (ri16, colRi16; ri and colRi
	// unused): Newton's states of solves above kktMax with n ≤ 65,536,
	// whose operator products stream 10 bytes an entry instead of 12
	short   bool
	ri16    []uint16
	colRi16 [][]uint16
	// blocked: with short and n > blockMinBlocks·rowBlock, rowProducts
	// reads the sparse entries from a second copy in row-block order
	// (blockClass): nb blocks of bs rows; class m's segment of column
	// position q in block b is bRi[t:u], bGv[t:u] with t, u =
	// bSeg[bOff[m]+b·nc+j], bSeg[…+1] (j = q − off[m], nc its class's
	// columns)
	blocked bool
	nb, bs  int
	bRi     []uint16
	bGv     []float64
	bSeg    []int
	bOff    []int
	bBase   []int // per class: its first entry in bRi, bGv
}

// rowBlock is the most rows of a block of Newton's blocked operator
// (state.blocked): a block's 16 KB of row sums stay in the first-level
// cache while the class's columns add to them. Measured (8.8 M entries,
// 880 to a column, n = 10,000): the scatter 1.03 → 0.42 ns an entry in
// blocks of 2048 rows (0.45 in 1024, 0.76 in 4096). The operator is blocked
// above blockMinBlocks blocks' rows: below, the n row sums (8n bytes) fit
// the 48 KB cache nearly as they are, and the copy and the segments cost
// more than they save (`separated`, seed 4, blocks of 2048 at every n:
// n = 5000 19.1 → 20.9 s, n = 7000 36.4 → 37.5 s, n = 10,000 75.1 → 70.7
// s).
//
// It is also blocked only when a column's segment holds blockMinSeg
// entries on average (the sparse entries at least blockMinSeg·nb per sparse
// column): with fewer, the segments' overhead and the copy outweigh the
// gain, and short columns touch few cache lines anyway. Measured
// (drknn-lfd, n = 10,000, blocks at any length): all MNIST test images at
// 0.5 / 0.75 × median 12.5 / 38.6 → 13.1 / 40.4 s with 150–250 entries a
// column in most states; `separated` seeds 4 / 11 / 12 78.7 / 64.6 / 43.3 →
// 71.0 / 59.8 / 43.1 s, whose late states hold 400–900 / 500–700 / ≤ 400.
// With the threshold: MNIST 12.6 / 37.5 s, `separated` 67.2 / 59.8 / 41.9 s.
const (
	rowBlock       = 2048
	blockMinBlocks = 4
	blockMinSeg    = 80
)

func (s *solver) snapshot(cfg config, resid float64) *state {
	// The snapshot takes over Newton's state buffers (a later Newton step,
	// in Phase C, allocates new ones): on a dense plan they are the
	// largest allocation of the solve, and two copies doubled the peak.
	st := s.nst
	s.nst, s.nw = nil, nil
	if st != nil {
		st.reg, st.cgIters = 0, 0
	}
	unconverged := cfg.lpOnly && !(resid <= cfg.regTol && s.eps == cfg.eps)
	// an unconverged snapshot is never differentiated (VJP returns
	// errUnconverged first): it needs no per-entry costs
	st = s.loadState(st, cfg.cgTol, resid, false, !unconverged)
	st.forceCG = cfg.forceCG
	st.noKKT = s.kktOff
	st.unconverged = unconverged
	return st
}

// expCutLog is math.Exp(−cutLog), evaluated once (loadState's cut).
var expCutLog = math.Exp(-cutLog)

// loadState materialises γ = u K v of the current solver state and the
// quantities of the reduced KKT operator into dst (allocated when nil). With
// newton set, a class whose budget is violated at λ = 0 also gets a λ
// variable.
//
// With costs the state also holds each entry's cost (cv), which only VJP
// reads: Newton's states and an unconverged snapshot go without (at
// n = 10,000 in the band below the pooled radius, 29 M entries: 232 MB).
//
// Newton's states of a solve above kktMax store a full candidate column
// (every row, kernel.go's kfull) as n values in row order, zeros where γ is
// negligible, with no row indices (colFull): the operator's products read
// them as dense vectors, with the same sums in the same order as over the
// entries. With n ≤ 65,536 such a state stores its other entries' rows as
// 16-bit values (short, ri16): the products stream 10 bytes an entry, not
// 12, and sum the same. (The direct solve, the dense assembly and VJP, which
// read the entries one by one, never see such a state: they need n ≤
// kktMax, or a snapshot, which is loaded without newton.)
func (s *solver) loadState(dst *state, cgTol, resid float64, newton, costs bool) *state {
	n, M := s.n, s.M
	st := dst
	if st == nil {
		st = &state{n: n, M: M, labels: s.in.labels, order: s.order, off: s.off, ninv: s.ninv, theta: s.theta, cbar: s.cbar,
			feat: s.in.feat, dim: s.in.dim, metric: s.in.metric}
		st.cp = make([]int, n+1)
		st.p = make([]float64, M*n)
		st.pc = make([]float64, M*n)
		st.qc = make([]float64, n)
		st.colsum = make([]float64, n)
		st.sc2 = make([]float64, M)
		st.S = make([]float64, M)
		st.bi = make([]int, M)
		st.active = make([]bool, M*n)
		st.slack = s.slack
		if s.sa != nil {
			st.r1a = make([]float64, M*n)
			st.r1b = make([]float64, n)
		}
	}
	st.eps, st.cgTol, st.resid = s.eps, cgTol, resid
	st.fullOK = newton && n > kktMax && !s.noFullOp
	st.short = st.fullOK && n <= math.MaxUint16+1 && !s.noShortRows
	if len(st.colFull) != n {
		st.colFull = make([]bool, n)
	}
	clear(st.colFull)
	st.par, st.tm = s.par, s.tm
	st.lam = append(st.lam[:0], s.lam...)
	st.alpha = append(st.alpha[:0], s.alpha...)
	st.g = append(st.g[:0], s.g...)
	st.L = 0
	// Each class's entries are written from base[m] (its candidates: at most
	// one entry each), the classes split over the team like the solver's
	// other passes, then moved together in class order. Every sum runs in
	// the same order as one loop over the classes would take it.
	if len(st.base) != M+1 {
		st.base = make([]int, M+1)
	}
	base := st.base
	for m := 0; m < M; m++ {
		c := 0
		if !s.slack[m] {
			for q := s.off[m]; q < s.off[m+1]; q++ {
				c += len(s.colKern(q))
			}
		}
		base[m+1] = base[m] + c
	}
	// the solver's passes hand out the classes largest first by
	// candidates (slack classes: none), the operator's by entries
	if len(s.lpt) != M {
		s.lpt, s.work = make([]int, M), make([]int, M)
	}
	for m := range s.work {
		s.work[m] = base[m+1] - base[m]
	}
	lptOrder(s.lpt, s.work)
	if c := base[M]; min(st.rowCap(), cap(st.gv)) < c {
		// the old arrays go first, with the columns' slices into them
		st.ri, st.ri16, st.gv, st.cv = nil, nil, nil, nil
		clear(st.colRi)
		clear(st.colRi16)
		clear(st.colGv)
		if st.short {
			st.ri16 = make([]uint16, c)
		} else {
			st.ri = make([]int32, c)
		}
		st.gv = make([]float64, c)
	}
	c0 := min(st.rowCap(), cap(st.gv))
	if !costs {
		st.cv = nil
	} else if cap(st.cv) < c0 {
		st.cv = make([]float64, c0)
	}
	var ri []int32
	var ri16 []uint16
	if st.short {
		ri16 = st.ri16[:c0]
	} else {
		ri = st.ri[:c0]
	}
	gv, cv := st.gv[:c0], st.cv[:cap(st.cv)]
	if len(st.cnt) != M {
		st.cnt = make([]int, M)
	}
	st.cp[0] = 0
	if s.par {
		s.tm.forClassesW(M, s.lpt, func(m, _ int) { s.loadClass(m, st, ri, ri16, gv, cv, costs) })
	} else {
		for m := 0; m < M; m++ {
			s.loadClass(m, st, ri, ri16, gv, cv, costs)
		}
	}
	nz := 0
	for m := 0; m < M; m++ {
		if b, c := base[m], st.cnt[m]; b != nz {
			if st.short {
				copy(ri16[nz:nz+c], ri16[b:b+c])
			} else {
				copy(ri[nz:nz+c], ri[b:b+c])
			}
			copy(gv[nz:nz+c], gv[b:b+c])
			if costs {
				copy(cv[nz:nz+c], cv[b:b+c])
			}
			for q := s.off[m]; q < s.off[m+1]; q++ {
				st.cp[q+1] -= b - nz
			}
		}
		nz += st.cnt[m]
		st.bi[m] = -1
		if !s.slack[m] && !s.fixedLam(m) && (s.lam[m] > 0 || (newton && st.S[m] > s.theta[m])) {
			st.bi[m] = n + st.L
			st.L++
		}
	}
	if st.short {
		st.ri16 = ri16[:nz]
	} else {
		st.ri = ri[:nz]
	}
	st.gv = gv[:nz]
	if costs {
		st.cv = cv[:nz]
	}
	if len(st.lpt) != M {
		st.lpt = make([]int, M)
	}
	lptOrder(st.lpt, st.cnt)
	if len(st.colGv) != n {
		st.colGv = make([][]float64, n)
	}
	if st.short && len(st.colRi16) != n {
		st.colRi16 = make([][]uint16, n)
	}
	if !st.short && len(st.colRi) != n {
		st.colRi = make([][]int32, n)
	}
	for q := range st.colGv {
		a, b := st.cp[q], st.cp[q+1]
		st.colGv[q] = st.gv[a:b:b]
		switch {
		case st.colFull[q] && st.short:
			st.colRi16[q] = nil
		case st.colFull[q]:
			st.colRi[q] = nil
		case st.short:
			st.colRi16[q] = st.ri16[a:b:b]
		default:
			st.colRi[q] = st.ri[a:b:b]
		}
	}
	st.loadBlocks(s)
	if len(st.dg) != n {
		st.dg = make([]float64, n)
	}
	for q := range st.dg {
		st.dg[q] = st.dgq(q)
	}
	if len(st.pinv) != M*n {
		st.pinv = make([]float64, M*n)
		st.dinv = make([]float64, n)
	}
	if len(st.actOff) != M+1 {
		st.actOff = make([]int, M+1)
	}
	act := st.act[:0]
	den := st.dinv[:n]
	clear(den)
	if len(st.actMid) != M {
		st.actMid = make([]int, M)
	}
	half := n / 2
	for m := 0; m < M; m++ {
		o := m * n
		al, p := st.alpha[o:o+n], st.p[o:o+n]
		ac, pinv := st.active[o:o+n], st.pinv[o:o+n]
		for i, a := range al {
			if i == half {
				st.actMid[m] = len(act)
			}
			// a row mass below 1e-200 is no mass (its inverse would overflow)
			ok := a > 0 && p[i] > 1e-200
			ac[i] = ok
			pinv[i] = 0
			if ok {
				pinv[i] = 1 / p[i]
				act = append(act, int32(o+i))
				den[i] += pinv[i] // Σ_m pinv_m(i) in class order
			}
		}
		st.actOff[m+1] = len(act)
	}
	st.act = act
	st.actGen++
	for i, d := range den {
		if d > 0 {
			den[i] = 1 / d
		}
	}
	return st
}

// loadClass is loadState's pass over class m: its entries written from
// st.base[m] into ri (ri16 when st.short), gv (and cv with costs), their
// count in st.cnt[m], its columns' ends (from st.base[m]: loadState moves
// them), column sums, row sums and budget moments.
func (s *solver) loadClass(m int, st *state, ri []int32, ri16 []uint16, gv, cv []float64, costs bool) {
	n := s.n
	pm := st.p[m*n : (m+1)*n]
	pcm := st.pc[m*n : (m+1)*n]
	clear(pm)
	clear(pcm)
	nz := st.base[m]
	if s.slack[m] {
		s.loadSlack(m, st)
		for q := s.off[m]; q < s.off[m+1]; q++ {
			st.cp[q+1] = nz // no entries: rank-one factors
		}
		st.cnt[m] = 0
		return
	}
	// entries below e^{−(cutLog + log n)} of the column's mass are
	// dropped: they total less than e^{−40} of it
	tiny := expCutLog / float64(n) * s.ninv[m]
	um := s.u[m*n : (m+1)*n]
	var S, S2 float64
	for q := s.off[m]; q < s.off[m+1]; q++ {
		kr, cr, rows := s.colKern(q), s.colCost(q), s.colRows(q)
		cr = cr[:len(kr)]
		vq := s.v[q]
		var cs, qc float64
		if rows != nil {
			rows = rows[:len(kr)]
		}
		full := st.fullOK && rows == nil && len(kr) == n
		st.colFull[q] = full
		var g []float64
		if full {
			// the column as n values in row order (loadState's comment)
			g = gv[nz : nz+n]
			clear(g)
		}
		for k, kv := range kr {
			if kv == 0 {
				continue
			}
			i := int32(k) // a full column: row i = k
			if rows != nil {
				i = rows[k]
			}
			x := kv * um[i] * vq
			if x < tiny {
				continue
			}
			c := cr[k]
			if full {
				g[k] = x
			} else {
				if ri16 != nil {
					ri16[nz] = uint16(i)
				} else {
					ri[nz] = i
				}
				gv[nz] = x
				if costs {
					cv[nz] = c
				}
				nz++
			}
			cs += x
			xc := x * c
			qc += xc
			S2 += xc * c
			pm[i] += x
			pcm[i] += xc
		}
		if full {
			nz += n
		}
		st.cp[q+1] = nz
		st.colsum[q] = cs
		st.qc[q] = qc
		S += qc
	}
	st.sc2[m], st.S[m] = S2, S
	st.cnt[m] = nz - st.base[m]
}

// fill copies the regularised solution into res.
func (st *state) fill(res *Result) {
	n, M := st.n, st.M
	res.PReg = append([]float64(nil), st.p...)
	res.Dual.G = make([]float64, n)
	for q, j := range st.order {
		res.Dual.G[j] = st.g[q]
	}
	res.Dual.Lambda = append([]float64(nil), st.lam...)
	res.Dual.Alpha = append([]float64(nil), st.alpha...)
	res.Epsilon = st.eps
	res.Residual = st.resid
	// RegValue = Σ_i max_m p + ε Σ γ(log γ − 1), with ε log γ = g − α − λc.
	var v float64
	for i := 0; i < n; i++ {
		mx := 0.0
		for m := 0; m < M; m++ {
			mx = math.Max(mx, st.p[m*n+i])
		}
		v += mx
	}
	for q := range st.order {
		v += st.g[q] * st.colsum[q]
	}
	var tot float64
	for k, a := range st.alpha {
		v -= a * st.p[k]
		tot += st.p[k]
	}
	for m := 0; m < M; m++ {
		v -= st.lam[m] * st.S[m]
	}
	res.RegValue = v - st.eps*tot
	res.st = st
}

// ObjectiveGrad returns ∂V/∂c (n×n row-major) of the regularised optimal
// value V = Σ_i max_m p_m(i) + ε Σ γ(log γ − 1) by the envelope theorem:
// ∂V/∂c(i,j) = λ_m γ(i,j) with m the class of j. It needs no linear solve.
func (r *Result) ObjectiveGrad() ([]float64, error) {
	st := r.st
	if st == nil {
		return nil, ErrNoState
	}
	if st.unconverged {
		return nil, errUnconverged(st)
	}
	n := st.n
	out := make([]float64, n*n)
	for m := 0; m < st.M; m++ {
		l := st.lam[m]
		if st.bi[m] < 0 {
			continue
		}
		for q := st.off[m]; q < st.off[m+1]; q++ {
			j := st.order[q]
			for k := st.cp[q]; k < st.cp[q+1]; k++ {
				out[int(st.ri[k])*n+j] = l * st.gv[k]
			}
		}
	}
	return out, nil
}

// VJP returns ∂L/∂c (n×n row-major) for the upstream gradient gradP =
// ∂L/∂PReg (M×n row-major), by implicit differentiation of the KKT
// conditions of the regularised problem. It is safe for concurrent use.
func (r *Result) VJP(gradP []float64) ([]float64, error) {
	if r.st == nil {
		return nil, ErrNoState
	}
	if r.st.unconverged {
		return nil, errUnconverged(r.st)
	}
	// private scratch: concurrent VJPs on one Result must not share buffers
	st := &state{}
	*st = *r.st
	st.hbuf, st.sym, st.chol = nil, nil, mat.Cholesky{}
	n, M := st.n, st.M
	if len(gradP) != M*n {
		return nil, invalidf("len(gradP) = %d, want M×N = %d", len(gradP), M*n)
	}
	for k, x := range gradP {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, invalidf("gradP[%d] = %v is not finite", k, x)
		}
	}
	if st.par {
		// the solve's team has ended with the solve: one for this call
		st.tm = newTeam()
		defer st.tm.close()
	}
	dim := n + st.L
	w := st.newWork()
	// Right-hand side: b̃ = (I − Π) ḡ broadcast along the rows.
	sv := w.s
	for k := range sv {
		sv[k] = gradP[k] * st.p[k]
	}
	st.project(sv, w)
	bt := w.b
	for k := range bt {
		bt[k] = gradP[k] + w.a[k]
	}
	rhs := make([]float64, dim)
	for m := 0; m < M; m++ {
		btm := bt[m*n : (m+1)*n]
		st.colDots(m, btm, rhs)
		if b := st.bi[m]; b >= 0 {
			rhs[b] = -dot(st.pc[m*n:(m+1)*n], btm)
		}
	}
	x := make([]float64, dim)
	var err error
	var kkt kktDense
	switch {
	case st.eps < smallEps && dim <= kktMax && !st.forceCG && st.r1a == nil && !st.noKKT && st.kktFactor(&kkt):
		// small ε: the sparse direct solve of densekkt.go (a singular
		// system, with every class active in every row, fails the
		// factorisation and takes the paths below)
		kkt.solve(rhs, x)
	case dim <= denseMax && !st.forceCG && st.r1a == nil: // assemble knows no rank-one classes
		err = st.solveDense(rhs, x, w)
	default:
		err = st.solveCG(rhs, x, w)
	}
	if err != nil {
		return nil, err
	}
	// W_α from the row elimination with y = ḡ − (W_g − W_λ c).
	st.rowProducts(x, w.rg)
	for m := 0; m < M; m++ {
		wl := 0.0
		if b := st.bi[m]; b >= 0 {
			wl = x[b]
		}
		for i := 0; i < n; i++ {
			k := m*n + i
			sv[k] = gradP[k]*st.p[k] - w.rg[k] + wl*st.pc[k]
		}
	}
	st.project(sv, w)
	out := make([]float64, n*n)
	for m := 0; m < M; m++ {
		b := st.bi[m]
		if b < 0 {
			continue
		}
		wl := x[b]
		le := st.lam[m] / st.eps
		gm := gradP[m*n : (m+1)*n]
		am := w.a[m*n : (m+1)*n]
		for q := st.off[m]; q < st.off[m+1]; q++ {
			j := st.order[q]
			wg := x[q]
			for k := st.cp[q]; k < st.cp[q+1]; k++ {
				i := int(st.ri[k])
				res := gm[i] - wg + wl*st.cv[k] + am[i]
				out[i*n+j] = st.gv[k] * (wl - le*res)
			}
		}
	}
	return out, nil
}

func errUnconverged(st *state) error {
	return fmt.Errorf("%w: the regularised solution stopped at residual %.3g, ε = %g (Settings.LPOnly); solve without LPOnly to differentiate",
		ErrNotConverged, st.resid, st.eps)
}

type work struct {
	s, a, b, rg []float64 // M×n
	aGen        int       // a is 0 off the active set of this generation (project)
	t           []float64 // dim
	tau         []float64 // n: project's row values
	cg          []float64 // 5×dim scratch of solveCG (allocated on first use)
}

func (st *state) newWork() *work {
	k := st.M * st.n
	return &work{s: make([]float64, k), a: make([]float64, k), b: make([]float64, k), rg: make([]float64, k),
		t: make([]float64, st.n+st.L), tau: make([]float64, st.n)}
}

// rowProducts sets rg_m(i) = Σ_{j in class m} γ(i,j) x_g(j).
func (st *state) rowProducts(x, rg []float64) {
	if st.par && st.M > 1 {
		st.tm.forClassesW(st.M, st.lpt, func(m, _ int) { st.rowProductsClass(m, x, rg) })
		return
	}
	for m := 0; m < st.M; m++ { // no closure: it would be allocated per call
		st.rowProductsClass(m, x, rg)
	}
}

func (st *state) rowProductsClass(m int, x, rg []float64) {
	n := st.n
	rm := rg[m*n : (m+1)*n]
	if st.slack[m] {
		var B float64
		for q := st.off[m]; q < st.off[m+1]; q++ {
			B += st.r1b[q] * x[q]
		}
		for i, a := range st.r1a[m*n : (m+1)*n] {
			rm[i] = a * B
		}
		return
	}
	for i := range rm {
		rm[i] = 0
	}
	if st.blocked {
		st.rowProductsBlocks(m, x, rm)
		return
	}
	full := st.colFull
	for q, end := st.off[m], st.off[m+1]; q < end; q++ {
		if q+4 <= end && full[q] && full[q+1] && full[q+2] && full[q+3] {
			// four full columns in one pass over rm, each row's sum
			// still taken column after column
			axpy4Seq(rm, st.colGv[q:q+4], x[q:q+4])
			q += 3
			continue
		}
		xq := x[q]
		if xq == 0 {
			continue
		}
		gv := st.colGv[q]
		switch {
		case full[q]:
			gv = gv[:len(rm)]
			for i, v := range gv {
				rm[i] += v * xq
			}
		case st.short:
			scatterAdd(rm, st.colRi16[q], gv, xq)
		default:
			scatterAdd(rm, st.colRi[q], gv, xq)
		}
	}
}

// rowProductsBlocks is rowProductsClass over the blocked layout (class m
// not slack, rm cleared): block after block, the class's columns in order,
// so each row's sum is taken column after column as in rowProductsClass.
func (st *state) rowProductsBlocks(m int, x, rm []float64) {
	q0, end := st.off[m], st.off[m+1]
	nc := end - q0
	seg := st.bSeg[st.bOff[m]:st.bOff[m+1]]
	full := st.colFull
	var four [4][]float64
	for b := 0; b < st.nb; b++ {
		lo, hi := b*st.bs, min(st.n, (b+1)*st.bs)
		rb := rm[lo:hi]
		sb := seg[b*nc : (b+1)*nc+1]
		for q := q0; q < end; q++ {
			if q+4 <= end && full[q] && full[q+1] && full[q+2] && full[q+3] {
				for c := range four {
					four[c] = st.colGv[q+c][lo:hi]
				}
				axpy4Seq(rb, four[:], x[q:q+4])
				q += 3
				continue
			}
			xq := x[q]
			if xq == 0 {
				continue
			}
			if full[q] {
				gv := st.colGv[q][lo:hi]
				for i, v := range gv {
					rb[i] += v * xq
				}
				continue
			}
			t, u := sb[q-q0], sb[q-q0+1]
			scatterAdd(rm, st.bRi[t:u], st.bGv[t:u], xq)
		}
	}
}

// scatterAdd adds gv[k]·xq to rm[ri[k]] for each entry k, in order.
func scatterAdd[I int32 | uint16](rm []float64, ri []I, gv []float64, xq float64) {
	gv = gv[:len(ri)]
	for k, i := range ri {
		rm[i] += gv[k] * xq
	}
}

// rowCap is the capacity of the entries' row array in use (ri16 when
// st.short, else ri).
func (st *state) rowCap() int {
	if st.short {
		return cap(st.ri16)
	}
	return cap(st.ri)
}

// loadBlocks sets st.blocked and, when set, copies the sparse entries of
// every class into row-block order (blockClass), the classes on the team.
func (st *state) loadBlocks(s *solver) {
	n, M := st.n, st.M
	rb, minSeg := rowBlock, blockMinSeg
	if s.rowBlock > 0 {
		rb, minSeg = s.rowBlock, 0 // tests: every state with enough rows
	}
	nb := (n + rb - 1) / rb
	// the sparse entries (all but the full columns' n values) and their
	// columns
	c, cols := len(st.gv), n
	for _, f := range st.colFull {
		if f {
			c -= n
			cols--
		}
	}
	st.blocked = st.short && n > blockMinBlocks*rb && cols > 0 && c >= minSeg*nb*cols
	if !st.blocked {
		st.bRi, st.bGv = nil, nil
		return
	}
	st.nb = nb
	st.bs = (n + nb - 1) / nb
	if len(st.bOff) != M+1 {
		st.bOff = make([]int, M+1)
	}
	for m := 0; m < M; m++ {
		st.bOff[m+1] = st.bOff[m] + st.nb*(st.off[m+1]-st.off[m]) + 1
	}
	if len(st.bSeg) != st.bOff[M] {
		st.bSeg = make([]int, st.bOff[M])
	}
	if min(cap(st.bRi), cap(st.bGv)) < c {
		st.bRi, st.bGv = nil, nil // the old arrays go first
		st.bRi, st.bGv = make([]uint16, c), make([]float64, c)
	}
	st.bRi, st.bGv = st.bRi[:c], st.bGv[:c]
	// class m's entries start where the classes before it end
	if len(st.bBase) != M+1 {
		st.bBase = make([]int, M+1)
	}
	for m := 0; m < M; m++ {
		e := st.cnt[m]
		for q := st.off[m]; q < st.off[m+1]; q++ {
			if st.colFull[q] {
				e -= n
			}
		}
		st.bBase[m+1] = st.bBase[m] + e
	}
	if st.par {
		st.tm.forClassesW(M, st.lpt, func(m, _ int) { st.blockClass(m) })
	} else {
		for m := 0; m < M; m++ {
			st.blockClass(m)
		}
	}
}

// blockClass copies class m's sparse entries from column order into
// row-block order: block after block, in each block the columns in order,
// each column's entries of that block in row order (loadBlocks' layout).
func (st *state) blockClass(m int) {
	nb, bs := st.nb, st.bs
	q0, q1 := st.off[m], st.off[m+1]
	nc := q1 - q0
	seg := st.bSeg[st.bOff[m]:st.bOff[m+1]]
	if st.slack[m] {
		clear(seg)
		return
	}
	// each column's count in each block
	for j := 0; j < nc; j++ {
		ri := st.colRi16[q0+j] // nil for a full column: no entries here
		k := 0
		for b := 0; b < nb; b++ {
			lim := (b + 1) * bs
			k0 := k
			for k < len(ri) && int(ri[k]) < lim {
				k++
			}
			seg[b*nc+j] = k - k0
		}
	}
	pos := st.bBase[m]
	for t := 0; t < nb*nc; t++ {
		c := seg[t]
		seg[t] = pos
		pos += c
	}
	seg[nb*nc] = pos
	for j := 0; j < nc; j++ {
		ri, gv := st.colRi16[q0+j], st.colGv[q0+j]
		if ri == nil {
			continue
		}
		k := 0
		for b := 0; b < nb; b++ {
			t, u := seg[b*nc+j], seg[b*nc+j+1]
			k += copy(st.bRi[t:u], ri[k:])
			copy(st.bGv[t:u], gv[k-(u-t):])
		}
	}
}

// colDot returns Σ_i γ(i, j_q) a(i) for column position q (a of length n).
func (st *state) colDot(q int, a []float64) float64 {
	switch {
	case st.colFull[q]:
		return dotSeq(st.colGv[q], a)
	case st.short:
		return dotSparse(st.colRi16[q], st.colGv[q], a)
	}
	return dotSparse(st.colRi[q], st.colGv[q], a)
}

// dotSparse returns Σ_k gv[k] a(ri[k]) summed in entry order.
func dotSparse[I int32 | uint16](ri []I, gv, a []float64) float64 {
	gv = gv[:len(ri)]
	var s float64
	for k, i := range ri {
		s += gv[k] * a[i]
	}
	return s
}

// dotSeq returns Σ_i x(i) y(i) summed in index order (a full column's
// colDot: the same order as over its entries).
func dotSeq(x, y []float64) float64 {
	y = y[:len(x)]
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// dot4Seq sets out[c] = Σ_i x[c](i) y(i) for c < 4, each sum in index order
// (dotSeq's), the four interleaved: one sum's additions wait for each other,
// four do not.
func dot4Seq(out []float64, x [][]float64, y []float64) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x0, x1, x2, x3 = x0[:len(y)], x1[:len(y)], x2[:len(y)], x3[:len(y)]
	var s0, s1, s2, s3 float64
	for i, v := range y {
		s0 += x0[i] * v
		s1 += x1[i] * v
		s2 += x2[i] * v
		s3 += x3[i] * v
	}
	out[0], out[1], out[2], out[3] = s0, s1, s2, s3
}

// dot4Sparse sets out[c] = Σ_k gv[c][k] a(ri[c][k]) for c < 4, each sum in
// its entries' order (colDot's), the four interleaved over their common
// length.
func dot4Sparse[I int32 | uint16](out []float64, ri [][]I, gv [][]float64, a []float64) {
	r0, r1, r2, r3 := ri[0], ri[1], ri[2], ri[3]
	g0, g1, g2, g3 := gv[0][:len(r0)], gv[1][:len(r1)], gv[2][:len(r2)], gv[3][:len(r3)]
	k := min(len(r0), len(r1), len(r2), len(r3))
	var s0, s1, s2, s3 float64
	for j := 0; j < k; j++ {
		s0 += g0[j] * a[r0[j]]
		s1 += g1[j] * a[r1[j]]
		s2 += g2[j] * a[r2[j]]
		s3 += g3[j] * a[r3[j]]
	}
	for j := k; j < len(r0); j++ {
		s0 += g0[j] * a[r0[j]]
	}
	for j := k; j < len(r1); j++ {
		s1 += g1[j] * a[r1[j]]
	}
	for j := k; j < len(r2); j++ {
		s2 += g2[j] * a[r2[j]]
	}
	for j := k; j < len(r3); j++ {
		s3 += g3[j] * a[r3[j]]
	}
	out[0], out[1], out[2], out[3] = s0, s1, s2, s3
}

// axpy4Seq adds x[c]·a[c] to y for c = 0, 1, 2, 3 in that order, element
// by element: the same sums as four passes over y, in one. (A zero a[c]
// adds zeros, which leave every sum as it was.)
func axpy4Seq(y []float64, x [][]float64, a []float64) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x0, x1, x2, x3 = x0[:len(y)], x1[:len(y)], x2[:len(y)], x3[:len(y)]
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	for i, v := range y {
		y[i] = v + x0[i]*a0 + x1[i]*a1 + x2[i]*a2 + x3[i]*a3
	}
}

// colDots sets out[q] = Σ_i γ(i, j_q) a(i) for the column positions q of
// class m (a of length n).
func (st *state) colDots(m int, a, out []float64) {
	if st.slack[m] {
		A := dot(st.r1a[m*st.n:(m+1)*st.n], a)
		for q := st.off[m]; q < st.off[m+1]; q++ {
			out[q] = st.r1b[q] * A
		}
		return
	}
	full := st.colFull
	for q, end := st.off[m], st.off[m+1]; q < end; q++ {
		if q+4 <= end && full[q] && full[q+1] && full[q+2] && full[q+3] {
			// four full columns in one pass over a: four independent
			// sums, each in row order
			dot4Seq(out[q:q+4], st.colGv[q:q+4], a)
			q += 3
			continue
		}
		if q+4 <= end && !full[q] && !full[q+1] && !full[q+2] && !full[q+3] {
			if st.short {
				dot4Sparse(out[q:q+4], st.colRi16[q:q+4], st.colGv[q:q+4], a)
			} else {
				dot4Sparse(out[q:q+4], st.colRi[q:q+4], st.colGv[q:q+4], a)
			}
			q += 3
			continue
		}
		out[q] = st.colDot(q, a)
	}
}

// project writes the row-elimination correction w.a for row sums s (both
// M×n): a_m(i) = (τ_i − s_m(i))/p_m(i) on the active set, 0 elsewhere, with
// τ_i = Σ_m s_m(i)/p_m(i) / Σ_m 1/p_m(i) (w.tau: scratch of length n). Only
// the active entries are visited (the list st.act, class by class: τ's sum
// is still taken in class order); a is cleared once per active set. Off the
// active set s is not read. (The M×n passes over every entry were 7% of an
// LP-only solve at n = 200, M = 10, where ≈ 12% of the entries are active.)
func (st *state) project(s []float64, w *work) {
	if w.aGen != st.actGen {
		clear(w.a)
		w.aGen = st.actGen
	}
	if !st.par {
		st.projectRows(s, w, -1)
		return
	}
	// the rows below n/2 on the caller, the rest on the team's helper
	st.tm.forClassesW(2, nil, func(h, _ int) { st.projectRows(s, w, h) })
}

// projectRows is project over the rows below n/2 (h = 0), the others (h =
// 1) or all (h = −1): each row's τ summed over the classes in class order.
func (st *state) projectRows(s []float64, w *work, h int) {
	n := st.n
	lo, hi := 0, n
	switch h {
	case 0:
		hi = n / 2
	case 1:
		lo = n / 2
	}
	a, tau := w.a, w.tau[lo:hi]
	clear(tau)
	tau = w.tau[:hi] // indexed by row
	pinv := st.pinv
	for m := 0; m < st.M; m++ {
		o := int32(m * n)
		for _, k := range st.actRange(m, h) {
			tau[k-o] += s[k] * pinv[k]
		}
	}
	dinv := st.dinv[:hi]
	for i := lo; i < hi; i++ {
		tau[i] *= dinv[i]
	}
	for m := 0; m < st.M; m++ {
		o := int32(m * n)
		for _, k := range st.actRange(m, h) {
			a[k] = (tau[k-o] - s[k]) * pinv[k]
		}
	}
}

// actRange is class m's active entries k = m·n + i (increasing) with row i
// below n/2 (h = 0), from n/2 on (h = 1) or all (h = −1).
func (st *state) actRange(m, h int) []int32 {
	a, b := st.actOff[m], st.actOff[m+1]
	switch h {
	case 0:
		b = st.actMid[m]
	case 1:
		a = st.actMid[m]
	}
	return st.act[a:b]
}

// apply computes out = H x for the reduced system.
func (st *state) apply(x, out []float64, w *work) {
	n, M := st.n, st.M
	// the row sums s = rg − Δλ·pc, in place in rg (classes without an
	// active budget: s = rg as it is)
	st.rowProducts(x, w.rg)
	for m := 0; m < M; m++ {
		b := st.bi[m]
		if b < 0 {
			continue
		}
		dl := x[b]
		for _, k := range st.act[st.actOff[m]:st.actOff[m+1]] {
			w.rg[k] -= dl * st.pc[k] // project reads the active entries only
		}
	}
	st.project(w.rg, w)
	if st.par && M > 1 {
		st.tm.forClassesW(M, st.lpt, func(m, _ int) { st.applyClass(m, x, out, w) })
	} else {
		for m := 0; m < M; m++ { // no closure: it would be allocated per call
			st.applyClass(m, x, out, w)
		}
	}
	if st.reg > 0 {
		dg := st.dg[:n]
		for q := range dg {
			out[q] += st.reg * dg[q] * x[q]
		}
		for m := 0; m < M; m++ {
			if b := st.bi[m]; b >= 0 {
				out[b] += st.reg * st.dlm(m) * x[b]
			}
		}
	}
}

// applyClass is the column part of apply for class m.
func (st *state) applyClass(m int, x, out []float64, w *work) {
	n := st.n
	dl := 0.0
	b := st.bi[m]
	if b >= 0 {
		dl = x[b]
	}
	am := w.a[m*n : (m+1)*n]
	a0, a1 := st.off[m], st.off[m+1]
	st.colDots(m, am, out)
	var lsum float64
	for q := a0; q < a1; q++ {
		out[q] += x[q]*st.colsum[q] - dl*st.qc[q]
		lsum += x[q] * st.qc[q]
	}
	if b >= 0 {
		out[b] = -(lsum - dl*st.sc2[m] + dot(am, st.pc[m*n:(m+1)*n]))
	}
}

// assemble forms the reduced operator H explicitly:
//
//	H = H₀ − Σ_i Σ_{m∈A_i} u_m(i) u_m(i)ᵀ/p_m(i) + Σ_i w_i w_iᵀ/D_i,
//
// with H₀ = AᵀΓA (diagonal colsum, −qc couplings, Σγc²), u_m(i) the row-i
// gradient of s_m(i) (γ(i,·) on class m, −pc_m(i) on λ_m), w_i = Σ u_m/p_m
// and D_i = Σ 1/p_m over the active classes of row i.
func (st *state) assemble() (*mat.SymDense, float64) {
	n, M := st.n, st.M
	dim := n + st.L
	if cap(st.hbuf) < dim*dim {
		st.hbuf = make([]float64, dim*dim)
	}
	H := st.hbuf[:dim*dim]
	for k := range H {
		H[k] = 0
	}
	for m := 0; m < M; m++ {
		b := st.bi[m]
		for q := st.off[m]; q < st.off[m+1]; q++ {
			H[q*dim+q] += st.colsum[q] + st.reg*st.dgq(q)
			if b >= 0 {
				H[q*dim+b] -= st.qc[q]
				H[b*dim+q] -= st.qc[q]
			}
		}
		if b >= 0 {
			H[b*dim+b] += st.sc2[m] + st.reg*st.dlm(m)
		}
	}
	dinv := make([]float64, n) // 1/sqrt(D_i), D_i = Σ_{A_i} 1/p_m(i)
	for i := 0; i < n; i++ {
		var D float64
		for m := 0; m < M; m++ {
			if k := m*n + i; st.active[k] {
				D += 1 / st.p[k]
			}
		}
		if D > 0 {
			dinv[i] = 1 / math.Sqrt(D)
		}
	}
	// Row lists: for each row i the entries (position, γ) of every class.
	cnt := make([]int, n+1)
	for _, i := range st.ri {
		cnt[i+1]++
	}
	for i := 0; i < n; i++ {
		cnt[i+1] += cnt[i]
	}
	rq := make([]int, len(st.ri))
	rv := make([]float64, len(st.ri))
	fill := append([]int(nil), cnt[:n]...)
	for q := 0; q < n; q++ {
		for k := st.cp[q]; k < st.cp[q+1]; k++ {
			i := st.ri[k]
			rq[fill[i]] = q
			rv[fill[i]] = st.gv[k]
			fill[i]++
		}
	}
	cls := func(q int) int { return st.labels[st.order[q]] }
	// For row i: u_m(i) has γ(i, q) on the positions of class m and −pc_m(i)
	// on λ_m. Subtract Σ_m u u ᵀ/p_m and add w wᵀ/D with w = Σ_m u_m/p_m.
	type ent struct {
		idx int
		v   float64
	}
	var w []ent
	for i := 0; i < n; i++ {
		w = w[:0]
		for k := cnt[i]; k < cnt[i+1]; k++ {
			q := rq[k]
			mk := cls(q)*n + i
			if !st.active[mk] {
				continue
			}
			w = append(w, ent{q, rv[k] / st.p[mk]})
		}
		for m := 0; m < M; m++ {
			if b := st.bi[m]; b >= 0 && st.active[m*n+i] {
				w = append(w, ent{b, -st.pc[m*n+i] / st.p[m*n+i]})
			}
		}
		// −Σ_m u_m u_mᵀ/p_m: pairs within the same class (u = w·p)
		for x := range w {
			mx := st.classOfIdx(w[x].idx)
			px := st.p[mx*n+i]
			for y := range w {
				if st.classOfIdx(w[y].idx) == mx {
					H[w[x].idx*dim+w[y].idx] -= w[x].v * w[y].v * px
				}
			}
		}
		if D := dinv[i]; D > 0 {
			d2 := D * D
			for x := range w {
				for y := range w {
					H[w[x].idx*dim+w[y].idx] += w[x].v * w[y].v * d2
				}
			}
		}
	}
	S := st.sym
	if S == nil || S.SymmetricDim() != dim {
		S = mat.NewSymDense(dim, nil)
		st.sym = S
	}
	maxd := 0.0
	for r := 0; r < dim; r++ {
		for c := r; c < dim; c++ {
			v := 0.5 * (H[r*dim+c] + H[c*dim+r])
			S.SetSym(r, c, v)
		}
		maxd = math.Max(maxd, S.At(r, r))
	}
	return S, maxd
}

// classOfIdx is the class of a reduced-system index (position or λ).
func (st *state) dgq(q int) float64 {
	return math.Max(st.colsum[q], st.ninv[st.labels[st.order[q]]])
}

func (st *state) dlm(m int) float64 {
	return math.Max(st.sc2[m], st.theta[m]*st.cbar)
}

func (st *state) classOfIdx(k int) int {
	if k < st.n {
		return st.labels[st.order[k]]
	}
	for m, b := range st.bi {
		if b == k {
			return m
		}
	}
	return -1
}

func (st *state) solveDense(rhs, x []float64, w *work) error {
	dim := len(rhs)
	H, maxd := st.assemble()
	chol := &st.chol
	ridge := 0.0
	for try := 0; try < 8; try++ {
		A := H
		if ridge > 0 {
			A = mat.NewSymDense(dim, nil)
			A.CopySym(H)
			for k := 0; k < dim; k++ {
				A.SetSym(k, k, A.At(k, k)+ridge)
			}
		}
		if chol.Factorize(A) {
			xv := mat.NewVecDense(dim, x)
			if err := chol.SolveVecTo(xv, mat.NewVecDense(dim, rhs)); err == nil || ridge > 0 {
				return nil
			}
		}
		if ridge == 0 {
			ridge = 1e-14 * math.Max(maxd, 1e-300)
		} else {
			ridge *= 100
		}
	}
	return fmt.Errorf("%w: dense KKT system (size %d) is not positive definite", ErrNotConverged, dim)
}

func (st *state) solveCG(rhs, x []float64, w *work) error {
	dim := len(rhs)
	if len(w.cg) != 5*dim {
		w.cg = make([]float64, 5*dim)
	}
	pre, r, z, p, Ap := w.cg[:dim], w.cg[dim:2*dim], w.cg[2*dim:3*dim], w.cg[3*dim:4*dim], w.cg[4*dim:]
	for q := 0; q < st.n; q++ {
		pre[q] = 1 / st.dg[q]
	}
	for m := 0; m < st.M; m++ {
		if b := st.bi[m]; b >= 0 {
			pre[b] = 1 / st.dlm(m)
		}
	}
	copy(r, rhs)
	for k := range x {
		x[k] = 0
	}
	bn := math.Sqrt(dot(rhs, rhs))
	if bn == 0 {
		return nil
	}
	useC := st.coarse && st.cs.factor(st)
	for k := range z {
		z[k] = pre[k] * r[k]
	}
	if useC {
		st.cs.add(st, r, z)
	}
	copy(p, z)
	rz := dot(r, z)
	maxIt := 20 * dim
	if maxIt < 1000 {
		maxIt = 1000
	}
	rn := bn
	for it := 0; it < maxIt; it++ {
		st.cgIters++
		st.apply(p, Ap, w)
		pAp := dot(p, Ap)
		if !(pAp > 0) {
			break
		}
		a := rz / pAp
		axpy(a, p, x)
		axpy(-a, Ap, r)
		rn = math.Sqrt(dot(r, r))
		if rn <= st.cgTol*bn {
			return nil
		}
		for k := range z {
			z[k] = pre[k] * r[k]
		}
		if useC {
			st.cs.add(st, r, z)
		}
		rzn := dot(r, z)
		beta := rzn / rz
		rz = rzn
		for k := range p {
			p[k] = z[k] + beta*p[k]
		}
	}
	if rn > 1e-6*bn {
		return fmt.Errorf("%w: conjugate gradients stopped at relative residual %.3g (n = %d)", ErrNotConverged, rn/bn, st.n)
	}
	return nil
}

func dot(a, b []float64) float64 {
	return floats.Dot(a, b[:len(a)])
}

func axpy(alpha float64, x, y []float64) {
	floats.AddScaled(y[:len(x)], alpha, x)
}

package optlayer

// The candidate kernel.
//
// At the target ε the plan is very sparse: a column's mass sits on a few
// rows (typically 2–25 of n), and every other entry is below e^{−40} of the
// column's largest. The solver therefore keeps the kernel only on candidate
// entries, stored by column position (CSC): column q owns entries kp[q] …
// kp[q+1]−1 with rows kr (sorted), costs kc and kernel values kk. A full
// column (every row a candidate, rows 0…n−1 in order) is flagged and needs no
// row gather. Entries outside the candidates are exactly zero in every pass,
// so the solver solves the LP restricted to the candidates. The answer is
// the full problem's because
//
//   - γ(i,j) = e^{(g_j − key(i))/ε} with key(i) = α_m(i) + λ_m c(i,j), so an
//     entry whose key exceeds the column's least by ε·L is below e^{−L} of
//     the column's largest entry; before each ε stage the candidates are
//     re-selected from the current duals as the rows within
//     ε·(L + candMargin) + candDelta of the least key (the margins absorb the
//     duals' moves during the stage);
//   - after the regularised solve at the target ε every entry is checked
//     (validateCands, L = 40 + log n: the entries left out then total less
//     than e^{−40} of each column's mass, far below RegTol); any that fails
//     is added and the solve goes on;
//   - the certificate never relies on it: the lower bound's minimum over the
//     rows left out is bounded from the selection (a key moves by at most
//     |Δα| + |Δλ|·c), or computed over every row when that bound is loose
//     (lowerDense), and the upper bound comes from a plan that is feasible
//     for the full LP.
//
// Problems with n ≤ candFull start with every entry a candidate (the early,
// large-ε stages are dense anyway); larger ones start with each column's
// candK cheapest rows and keep at most candK per column until the target ε,
// so that no stage holds n² kernel entries: those early stages solve a
// restricted problem, which is only a homotopy towards the target ε (with
// LPOnly from a cold start the cap holds at the target ε as well:
// solveInstance's lpLarge). Classes
// with ϑ_m = 0 keep exactly their zero-cost rows (γ is restricted to them).

import (
	"math"
	"slices"
)

const (
	candFull   = 1000 // problems up to this n start dense
	candK      = 256  // candidates per column of larger problems before the target ε
	candMargin = 10.0 // extra e-folds kept when selecting for the next stage
	candDelta  = 0.1  // and margin for the duals' moves (objective units: α ∈ [0, 1])
	cutLog     = 40.0 // entries below e^{−cutLog} of their column's largest (÷ n) are negligible
)

// colRows returns the candidate rows of column position q (sorted), or nil
// when the column is full.
func (s *solver) colRows(q int) []int32 { return s.crow[q] }

// colCost returns the candidate costs of column position q: for a full
// column of symmetric costs the column's row of the cost matrix itself.
func (s *solver) colCost(q int) []float64 { return s.ccost[q] }

// colKern returns the kernel values of column position q's candidates.
func (s *solver) colKern(q int) []float64 { return s.ckern[q] }

// gather returns x restricted to rows (into buf), or x itself when rows is
// nil (a full column).
func gather(x []float64, rows []int32, buf []float64) []float64 {
	if rows == nil {
		return x
	}
	buf = buf[:len(rows)]
	for k, i := range rows {
		buf[k] = x[i]
	}
	return buf
}

// fullCol returns c(i, order[q]) for every row i: a row of a symmetric cost
// matrix, or the column copied into buf.
func (s *solver) fullCol(q int, buf []float64) []float64 {
	n, j := s.n, s.order[q]
	if s.in.sym {
		return s.in.cost[j*n : (j+1)*n]
	}
	buf = buf[:n]
	for i := range buf {
		buf[i] = s.in.cost[i*n+j]
	}
	return buf
}

// selWork is one goroutine's scratch for selectCands.
type selWork struct {
	cbuf, key []float64
	idx       []int32
	stamp     []int32 // stamp[i] == q+1: row i is a current candidate of column q
	rows      []int32 // selected rows of this worker's classes, column after column
	added     int
}

// selection modes of selectCands
const (
	selKeys  = iota // rows whose key α_m(i) + λ_m c(i,j) is within ε·L + δ of the column's least
	selCost         // the kmax cheapest rows (the first selection of a large problem)
	selAll          // every row
	selUnion        // selKeys, keeping the current candidates as well (validation)
)

// selectCands re-selects the candidates (see the file comment) and returns
// the number of selected entries that were not candidates before. In mode
// selKeys row i is kept in column j (class m) when
//
//	key(i) = α_m(i) + λ_m c(i,j) < min_i key(i) + ε·L + δ,
//
// at most kmax rows (those with the least keys; kmax ≤ 0: no cap). ϑ_m = 0
// classes keep exactly their zero-cost rows. It records for the lower bound
// the least key a row left out had (thr), the α and λ it was computed from
// and each column's largest cost, and marks every class kernel for a rebuild.
func (s *solver) selectCands(mode int, eps, L, delta float64, kmax int) int {
	n, M := s.n, s.M
	if s.sel[0] == nil {
		for w := range s.sel {
			s.sel[w] = &selWork{cbuf: make([]float64, n), key: make([]float64, n), idx: make([]int32, n),
				stamp: make([]int32, n)}
		}
	}
	for _, w := range s.sel {
		w.rows = w.rows[:0]
		w.added = 0
	}
	cnt := s.selCnt
	s.forClasses(func(m int) {
		w := s.sel[m&1]
		for q := s.off[m]; q < s.off[m+1]; q++ {
			cnt[q] = s.selectCol(q, m, mode, eps*L+delta, kmax, w)
		}
	})
	// assemble the new CSC arrays (each worker wrote its classes in order)
	// (the old arrays are no longer read: reuse them)
	nnz := 0
	for _, c := range cnt {
		nnz += c
	}
	if cap(s.kk) < nnz {
		s.kr, s.kc, s.kk = nil, nil, nil // let the old ones go first
		s.kr, s.kc, s.kk = make([]int32, nnz), make([]float64, nnz), make([]float64, nnz)
	}
	kr, kc := s.kr[:nnz], s.kc[:nnz]
	s.kk = s.kk[:nnz]
	read := [2]int{}
	e := 0
	for m := 0; m < M; m++ {
		w := s.sel[m&1]
		for q := s.off[m]; q < s.off[m+1]; q++ {
			c := cnt[q]
			full := c == n && !s.zero[m]
			s.kfull[q] = full
			switch {
			case full && s.in.sym:
				// neither rows nor costs: colCost reads the cost
				// matrix (kr and kc stay untouched here; in a fresh
				// process their pages are then never faulted in)
			case full:
				copy(kc[e:e+c], s.fullCol(q, s.sel[0].cbuf))
			default:
				rows := w.rows[read[m&1] : read[m&1]+c]
				read[m&1] += c
				copy(kr[e:e+c], rows)
				col := s.fullCol(q, s.sel[0].cbuf)
				for k, i := range rows {
					kc[e+k] = col[i]
				}
			}
			e += c
			s.kp[q+1] = e
		}
	}
	s.kr, s.kc = kr, kc
	// each column's slices, once (every pass over the candidates takes
	// them column by column: at n = 50 the slicing was ≈ 2% of a solve)
	for q := 0; q < n; q++ {
		a, b := s.kp[q], s.kp[q+1]
		s.ckern[q] = s.kk[a:b:b]
		switch {
		case s.kfull[q] && s.in.sym:
			j := s.order[q]
			s.crow[q], s.ccost[q] = nil, s.in.cost[j*n:(j+1)*n:(j+1)*n]
		case s.kfull[q]:
			s.crow[q], s.ccost[q] = nil, s.kc[a:b:b]
		default:
			s.crow[q], s.ccost[q] = s.kr[a:b:b], s.kc[a:b:b]
		}
	}
	copy(s.selAlpha, s.alpha)
	copy(s.selLam, s.lam)
	for m := range s.need {
		s.need[m] = true
	}
	s.selections++
	return s.sel[0].added + s.sel[1].added
}

// selectCol appends the candidate rows of column position q (class m) to
// w.rows, sorted, sets thr[q] and cmax[q] and returns their number. A column
// whose candidates are every row (outside ϑ = 0 classes) appends nothing:
// it is a full column (selectCands).
func (s *solver) selectCol(q, m, mode int, width float64, kmax int, w *selWork) int {
	n := s.n
	col := s.fullCol(q, w.cbuf)
	if s.selections == 0 { // the costs do not change: once per solve
		cmax := 0.0
		for _, c := range col {
			if c > cmax { // costs are finite and ≥ 0 (validated)
				cmax = c
			}
		}
		s.cmax[q] = cmax
	}
	idx := w.idx[:0]
	thr := math.Inf(1) // least key of a row left out
	if s.slack[m] {
		s.thr[q] = thr // rank-one kernel, no candidates (slack.go)
		return 0
	}
	if s.zero[m] {
		// γ lives on the zero-cost entries only, all of them
		for i, c := range col {
			if c == 0 {
				idx = append(idx, int32(i))
			}
		}
		w.rows = append(w.rows, idx...)
		s.thr[q] = thr
		w.idx = idx[:0]
		return len(idx)
	}
	if mode == selAll || mode == selUnion && s.kfull[q] {
		// every row, in order (no keys: nothing is left out; a full
		// column stays full); full columns append no rows
		s.thr[q] = thr
		return n
	}
	key := w.key[:n]
	am := s.alpha[m*n : (m+1)*n]
	lam := s.lam[m]
	cut := math.Inf(1)
	if mode == selCost {
		copy(key, col)
	} else {
		mn := math.Inf(1)
		am, key := am[:len(col)], key[:len(col)]
		for i, c := range col {
			k := am[i] + lam*c
			key[i] = k
			if k < mn { // keys are finite
				mn = k
			}
		}
		cut = mn + width
	}
	if mode == selUnion {
		for _, i := range s.kr[s.kp[q]:s.kp[q+1]] {
			w.stamp[i] = int32(q + 1)
		}
	}
	switch mode {
	case selKeys: // the common case, without the union's bookkeeping
		col := col[:len(key)]
		for i, k := range key {
			// zero-cost rows always: the diagonal keeps the restricted
			// problem's budget feasible (λ → ∞ moves every column there)
			if k < cut || col[i] == 0 {
				idx = append(idx, int32(i))
			} else if k < thr { // keys are finite and ≥ 0
				thr = k
			}
		}
	default:
		for i, k := range key {
			switch {
			case k < cut || col[i] == 0:
				if mode == selUnion && w.stamp[i] != int32(q+1) {
					w.added++
				}
				idx = append(idx, int32(i))
			case mode == selUnion && w.stamp[i] == int32(q+1):
				idx = append(idx, int32(i)) // a current candidate stays
			default:
				if k < thr {
					thr = k
				}
			}
		}
	}
	sorted := true // idx holds the rows in increasing order
	if kmax > 0 && len(idx) > kmax {
		// the kmax least keys (all zero-cost rows if there are more)
		for i := range key {
			key[i] = -key[i] // topK keeps the largest
			if col[i] == 0 {
				key[i] = math.Inf(1)
			}
		}
		nz := 0
		for _, i := range idx {
			if col[i] == 0 {
				nz++
			}
		}
		k := max(kmax, nz)
		if k < len(idx) {
			topK(idx, key, k)
			for _, i := range idx[k:] {
				thr = min(thr, am[i]+lam*col[i])
			}
			idx = idx[:k]
			sorted = false
		}
	}
	if mode == selCost {
		// the bound needs keys, not costs
		thr = math.Inf(1)
		in := w.stamp
		for _, i := range idx {
			in[i] = -int32(q + 1)
		}
		for i, c := range col {
			if in[i] != -int32(q+1) {
				thr = min(thr, am[i]+lam*c)
			}
		}
	}
	if len(idx) == n {
		// every row: a full column (no rows appended)
		s.thr[q] = thr
		w.idx = idx[:0]
		return n
	}
	if !sorted {
		slices.Sort(idx)
	}
	w.rows = append(w.rows, idx...)
	s.thr[q] = thr
	w.idx = idx[:0]
	return len(idx)
}

// validateCands checks, at the current duals and ε, that every entry left
// out of the candidates is below e^{−(cutLog + log n)} of its column's
// largest (then they total less than e^{−40} of each column's mass); the
// entries that are not are added. It reports whether the candidates were
// already complete.
func (s *solver) validateCands() bool {
	return s.selectCands(selUnion, s.eps, cutLog+math.Log(float64(s.n)), 0, 0) == 0
}

// topK reorders idx so that its first k entries are those with the k largest
// keys (ties: the smaller row first), in no particular order (quickselect).
func topK(idx []int32, key []float64, k int) {
	before := func(a, b int32) bool {
		ka, kb := key[a], key[b]
		return ka > kb || (ka == kb && a < b)
	}
	lo, hi := 0, len(idx)-1
	for lo < hi {
		a, b, c := idx[lo], idx[lo+(hi-lo)/2], idx[hi]
		p := b // median of three
		if before(a, b) != before(a, c) {
			p = a
		} else if before(c, a) != before(c, b) {
			p = c
		}
		i, j := lo, hi
		for i <= j {
			for before(idx[i], p) {
				i++
			}
			for before(p, idx[j]) {
				j--
			}
			if i <= j {
				idx[i], idx[j] = idx[j], idx[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

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
// large-ε stages are dense anyway), except a cold LPOnly solve above
// lpLargeMin (isLarge); larger ones start with each column's
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

// candLastDiv: lpLarge's last stage above the target ε keeps n/candLastDiv
// candidates a column, not candK, where that is at least 2·candK (from
// 5120 points on). There candK is under 5% of the rows, and the restricted
// problem's dual drifts (driftStop) far from the full one's: at n = 10,000
// (2.6%) `separated` left that stage with the dual's bound at 0.02 for an
// LP value of 1.26, and Phase B took 36 s, half the solve, to come back;
// with a tenth of the rows the bound leaves it at 0.39 and Phase B takes
// 16 s (the test process, seed 4). Measured (docs/PERFORMANCE.md, session of 2026-11-29,
// 17:15– UTC), `drknn-lfd`, `separated` at n = 10,000, seeds 4 / 5 / 6 / 7
// / 11 / 12: 66.7 / 59.6 / 47.4 / 49.4 / 57.3 / 39.7 → 52.2 / 57.2 / 21.1 /
// 41.8 / 44.9 / 32.7 s, the other kinds the same; all 10,000 MNIST images
// at ϑ = 0.5 / 0.6 / 0.7 × median 10.7 / 12.8 / 18.5 → 13.2 / 18.4 / 23.5 s
// (the stage holds 10 M entries for 2.6 M). The path downstream moves
// with the cap: on seeds 4 / 5 / 7, 500 a column gave 90.7 / 55.5 / 57.2 s,
// 800 64.0 / 54.2 / 41.6 s and 1500 58.5 / 52.7 / 46.4 s. Not lower: at n
// = 3000 a tenth (300 for 256) moved single instances either way
// (TestRandomSweep seed 25's trial 12 355 → 480 iterations, 23 → 49 s);
// at n = 6000 (600) `separated` seeds 4 / 5 30.8 / 19.8 → 31.4 / 17.5 s.
// Not on every stage above the target: a cap of 1000 on all of them cost
// seeds 5 and 7 30 s each (Phase C's path).
const candLastDiv = 10

// lpLargeMin: a cold LPOnly solve (no warm start, no Plans) of more than
// lpLargeMin points takes the large path — capped candidates and
// solveInstance's lpLarge phases — instead of the dense LP stages
// (lpstages.go), which stay for n ≤ lpLargeMin, where they were tuned (n =
// 50–200). Between lpLargeMin and candFull the dense stages lost most on
// the hard instances: past lpStagesMaxIter they start again, cold, on the
// dense phases (measured, BenchmarkHard seed 4, LP answer, dense stages →
// large path: `separated` n = 300 / 500 / 1000 1.04 / 1.83 / 6.34 →
// 0.18 / 0.30 / 0.81 s, `farclass` 0.64 / 0.09 / 3.84 → 0.21 / 0.33 / 0.53
// s, `threshold` 0.36 / 0.68 / 1.76 → 0.13 / 0.22 / 0.52 s, `dup` at n =
// 1000 1.53 → 0.31 s; random sweeps of seeds 9–12 at n = 201–400 6.3 / 7.2
// / 4.3 / 6.9 → 2.1 / 2.2 / 1.5 / 2.1 s and of seeds 9–11 at n =
// 300–1000 41.0 / 54.7 / 19.1 → 10.6 / 20.4 / 8.6 s, all certified). The
// large path costs more per iteration, so easy instances that the dense
// stages certify in a few dozen iterations take 2–4× longer (Gaussian
// classes at ϑ = 0.1 × median, n = 300 / 1000: 11 / 85 → 46 / 229 ms; the
// sweeps' largest loss +1.0 s, d = 2 at n = 1000), in exchange for seconds
// on the hard ones. At n = 200 the dense stages stay: the large path took
// the benchmark family's LP answer (issue 15 item 2) from ≈ 5 to 21 ms.
const lpLargeMin = 200

// isLarge reports whether a solve of n points under cfg takes the large
// path: candidates capped at candK per column before the target ε, classes
// with slack budgets kept rank-one (slack.go) and, for a cold LPOnly solve,
// solveInstance's lpLarge phases. Every solve above candFull does; a cold
// LPOnly solve (no warm start, no Plans) above lpLargeMin too.
func isLarge(n int, cfg config) bool {
	if cfg.denseStart {
		return false
	}
	return n > candFull || cfg.lpOnly && cfg.warm == nil && !cfg.plans && n > lpLargeMin
}

// Row coverage and narrow selections (LPOnly from a cold start above
// lpLargeMin: solveInstance's lpLarge).
//
// A column's selection keeps the rows whose key is near the column's least;
// a row none of whose class-m entries is kept loses its class-m mass, its
// α_m(i) falls to 0, and every entry of that row then has a key far below
// the ones kept: the restricted problem's dual is no longer near the full
// problem's, and its lower bound collapses (measured: −4 instead of 1.16 on
// the separated kind when Phase C's selections dropped the union). So with
// s.cover every selection also keeps, for every row i and class m, the
// coverK columns of class m with the least reduced cost
// α_m(i) + λ_m c(i,j) − g(j) — the entries through which the row's class-m
// mass would return. With it the selections at and below the target ε can be
// narrow (narrowL e-folds, no candDelta, no cap), and the candidates no
// longer grow to the entropic plan's support, which in the band below the
// pooled radius is half of n² at ε = 1e-3 while the LP's plan has 1–3
// entries per column. Where the narrow selection would still hold more than
// narrowMax·n² entries (λ near 0: the keys hardly depend on the cost) the
// solve takes the union selections instead.
const (
	coverK    = 4    // columns kept per row and class (2: 15.2 s, 8: 9.4 s, 16: 10.3 s on separated n = 2000 before the narrow Phase B)
	narrowL   = 20.0 // e-folds of the narrow selections (30: 5.5 s, 57.6: 8.0 s)
	narrowMax = 0.25 // fraction of n² above which a narrow selection is not used
)

// validateMax bounds lpLarge's validations above 2896 points: each adds at
// most validateMax/n rows to a column (those with the least keys; the
// current candidates all stay, so the candidates only grow and the
// validations still end), instead of every row within narrowL e-folds. On
// the exact `separated` at n = 10,000 a validation at ε = 1e-3 took the
// candidates from 4.8 M to 21.3 M (1 GB of the 2.2 GB peak) for bounds
// still 16% apart. Measured (docs/PERFORMANCE.md, session of 2026-11-29,
// 05:47– UTC), seeds 4 / 11 / 12: 98.0 / 98.8 / 53.7 s → 91.0 / 75.3 /
// 43.7 s and 2.22 / 1.97 / 1.57 → 1.61 / 1.55 / 1.41 GB peak. 2²² was a
// little faster there (78.9 / 66.6 s) but reaches down to n = 2049, where
// the dense plans near the pooled radius hold 1700 rows a column; caps that
// may drop current candidates let a validation cycle at n = 3000.
const validateMax = 1 << 23

// coverEnt is a candidate for a row's coverage: its reduced cost and column.
type coverEnt struct {
	r float64
	q int32
}

// coverage records in coverRows[q] (rows ascending) every row i that has
// column q among the coverK columns of q's class with the least reduced cost
// α_m(i) + λ_m c(i,j) − g(j). Classes go to forClasses' goroutines; each
// writes only its own columns.
func (s *solver) coverage() {
	n := s.n
	if s.coverRows == nil {
		s.coverRows = make([][]int32, n)
	}
	s.forClasses(func(m int) {
		w := s.sel[m&1]
		for q := s.off[m]; q < s.off[m+1]; q++ {
			s.coverRows[q] = s.coverRows[q][:0]
		}
		if s.slack[m] || s.zero[m] {
			return
		}
		if len(w.top) < n*coverK {
			w.top = make([]coverEnt, n*coverK)
		}
		top := w.top[:n*coverK]
		for k := range top {
			top[k] = coverEnt{math.Inf(1), -1}
		}
		am := s.alpha[m*n : (m+1)*n]
		lam := s.lam[m]
		for q := s.off[m]; q < s.off[m+1]; q++ {
			col := s.fullCol(q, w.cbuf)
			am := am[:len(col)]
			gq := s.g[q]
			for i, c := range col {
				r := am[i] + lam*c - gq
				t := top[i*coverK : (i+1)*coverK]
				if !(r < t[coverK-1].r) { // ties: the earlier column
					continue
				}
				k := coverK - 1
				for k > 0 && t[k-1].r > r {
					t[k] = t[k-1]
					k--
				}
				t[k] = coverEnt{r, int32(q)}
			}
		}
		for i := 0; i < n; i++ {
			for _, e := range top[i*coverK : (i+1)*coverK] {
				if e.q >= 0 {
					s.coverRows[e.q] = append(s.coverRows[e.q], int32(i))
				}
			}
		}
	})
}

// narrowCount returns the number of entries a narrow selection at eps would
// keep before the coverage: the rows whose key is within eps·narrowL of
// their column's least.
func (s *solver) narrowCount(eps float64) int {
	n := s.n
	if len(s.narrowCnt) != s.M {
		s.narrowCnt = make([]int, s.M)
	}
	s.forClasses(func(m int) {
		w := s.sel[m&1]
		cnt := 0
		am := s.alpha[m*n : (m+1)*n]
		lam := s.lam[m]
		for q := s.off[m]; q < s.off[m+1]; q++ {
			if s.slack[m] {
				break
			}
			col := s.fullCol(q, w.cbuf)
			am := am[:len(col)]
			cut := minKey(am, col, lam) + eps*narrowL
			for i, c := range col {
				if am[i]+lam*c < cut {
					cnt++
				}
			}
		}
		s.narrowCnt[m] = cnt
	})
	tot := 0
	for _, c := range s.narrowCnt {
		tot += c
	}
	return tot
}

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
	mark      []int32 // mark[i] == q+1: row i is or was in coverRows[q] (never cleared: see selectCol)
	top       []coverEnt
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
// at most kmax rows (those with the least keys; kmax ≤ 0: no cap; selUnion
// keeps every current candidate and adds at most kmax rows). ϑ_m = 0
// classes keep exactly their zero-cost rows. It records for the lower bound
// the least key a row left out had (thr), the α and λ it was computed from
// and each column's largest cost, and marks every class kernel for a rebuild.
func (s *solver) selectCands(mode int, eps, L, delta float64, kmax int) int {
	n, M := s.n, s.M
	if s.sel[0] == nil {
		for w := range s.sel {
			s.sel[w] = &selWork{cbuf: make([]float64, n), key: make([]float64, n), idx: make([]int32, n),
				stamp: make([]int32, n), mark: make([]int32, n)}
		}
	}
	if s.cover && (mode == selKeys || mode == selUnion) {
		s.coverage()
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
		// let the old ones go first: the columns' slices into them too,
		// or they stay reachable while the new ones are allocated (all
		// 10,000 points of `separated` at ϑ = 0.7 × median: a peak heap
		// of 2.45 GB with them, measured in docs/PERFORMANCE.md)
		s.kr, s.kc, s.kk = nil, nil, nil
		clear(s.crow)
		clear(s.ccost)
		clear(s.ckern)
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
	if s.selections == 0 && !s.cmaxSet { // the costs do not change: once per solve (markSlack's pass, if it ran)
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
	if mode == selCost {
		return s.selectCheapest(q, m, col, kmax, w)
	}
	key := w.key[:n]
	am := s.alpha[m*n : (m+1)*n]
	lam := s.lam[m]
	mn := math.Inf(1)
	{
		am, key := am[:len(col)], key[:len(col)]
		for i, c := range col {
			k := am[i] + lam*c
			key[i] = k
			if k < mn { // keys are finite
				mn = k
			}
		}
	}
	cut := mn + width
	if mode == selUnion {
		for _, i := range s.kr[s.kp[q]:s.kp[q+1]] {
			w.stamp[i] = int32(q + 1)
		}
	}
	// covered: the rows of coverRows[q] are kept as well (and not capped).
	// The marks are never cleared and column q always goes to the same
	// worker, so a row the coverage chose for q at any earlier selection of
	// this solve is kept too: the coverage is sticky. Every figure of the
	// change was measured so (the stamps of selUnion behave alike); a
	// coverage of the current duals only is untried.
	covered := s.cover && (mode == selKeys || mode == selUnion)
	q1 := int32(q + 1)
	if covered {
		for _, i := range s.coverRows[q] {
			w.mark[i] = q1
		}
	}
	switch {
	case mode == selKeys && covered:
		col := col[:len(key)]
		mark := w.mark[:len(key)]
		for i, k := range key {
			if k < cut || col[i] == 0 || mark[i] == q1 {
				idx = append(idx, int32(i))
			} else if k < thr {
				thr = k
			}
		}
	case mode == selKeys: // the common case, without the union's bookkeeping
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
			case k < cut || col[i] == 0 || covered && w.mark[i] == q1:
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
	union := mode == selUnion
	if kmax > 0 && len(idx) > kmax {
		// the kmax least keys (all zero-cost rows if there are more)
		// zero-cost and covered rows always; selUnion: every current
		// candidate as well, and at most kmax rows besides
		keep := func(i int) bool {
			return col[i] == 0 || covered && w.mark[i] == q1 || union && w.stamp[i] == q1
		}
		for i := range key {
			key[i] = -key[i] // topK keeps the largest
			if keep(i) {
				key[i] = math.Inf(1)
			}
		}
		nz := 0
		for _, i := range idx {
			if keep(int(i)) {
				nz++
			}
		}
		k := max(kmax, nz)
		if union {
			k = nz + kmax
		}
		if k < len(idx) {
			topK(idx, key, k)
			for _, i := range idx[k:] {
				thr = min(thr, am[i]+lam*col[i])
			}
			idx = idx[:k]
			sorted = false
		}
	}
	if union {
		for _, i := range idx {
			if w.stamp[i] != q1 {
				w.added++
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

// selectCheapest is selectCol's selCost mode: the kmax cheapest rows of
// column position q (class m, costs col), every zero-cost row when there
// are more, ties to the smaller row; a column of kmax or more rows (kmax ≤
// 0: no cap) is full. thr[q] is the least key of a row left out.
//
// The rows are chosen among those whose cost is at most a cut taken from a
// sample of the column (costCut): when at least as many rows pass it as are
// to be kept, every row that passes comes before every row that does not,
// so topK among them picks the same rows as among all n; otherwise (rare)
// among all n. At n = 10,000 with kmax = candK this took the first
// selection from 2.3 to ≈ 0.5 CPU-s (docs/PERFORMANCE.md, session of
// 2026-11-29, 17:15– UTC); TestSelectCheapest checks the rows against the
// selection among all rows.
func (s *solver) selectCheapest(q, m int, col []float64, kmax int, w *selWork) int {
	n := s.n
	am := s.alpha[m*n : (m+1)*n][:len(col)]
	lam := s.lam[m]
	thr := math.Inf(1) // least key of a row left out
	idx, key := w.idx[:0], w.key[:n]
	t := math.Inf(1)
	if kmax > 0 && 4*kmax <= n && !s.noCostCut {
		t = costCut(col, kmax, key)
	}
	nz := 0
	for i, c := range col {
		switch {
		case c <= t:
			idx = append(idx, int32(i))
			if c == 0 {
				nz++
			}
		case am[i]+lam*c < thr:
			thr = am[i] + lam*c
		}
	}
	k := max(kmax, nz)
	if len(idx) < k && len(idx) < n { // the cut kept too few: every row
		idx, nz, thr = idx[:0], 0, math.Inf(1)
		for i, c := range col {
			idx = append(idx, int32(i))
			if c == 0 {
				nz++
			}
		}
		k = max(kmax, nz)
	}
	if kmax <= 0 || k >= n {
		// every row: a full column (no rows appended)
		s.thr[q] = math.Inf(1)
		w.idx = idx[:0]
		return n
	}
	if k < len(idx) {
		for _, i := range idx {
			key[i] = -col[i] // topK keeps the largest
			if col[i] == 0 {
				key[i] = math.Inf(1)
			}
		}
		topK(idx, key, k)
		for _, i := range idx[k:] {
			thr = min(thr, am[i]+lam*col[i])
		}
		idx = idx[:k]
	}
	slices.Sort(idx)
	w.rows = append(w.rows, idx...)
	s.thr[q] = thr
	w.idx = idx[:0]
	return len(idx)
}

// costCut returns a cost t such that, most likely, between kmax and a few
// times kmax of col's n ≥ 4·kmax entries are ≤ t: the j-th least of a
// sample of about 2·kmax entries (every n/(2·kmax)-th; buf holds the j least
// so far), j twice the sample's expected share of the kmax least.
func costCut(col []float64, kmax int, buf []float64) float64 {
	n := len(col)
	stride := max(1, n/(2*kmax))
	ns := (n + stride - 1) / stride
	j := min(ns, (2*kmax*ns+n-1)/n)
	top := buf[:0] // the j least sampled costs, increasing
	for i := 0; i < n; i += stride {
		c := col[i]
		if len(top) == j {
			if c >= top[j-1] {
				continue
			}
			top = top[:j-1]
		}
		p := len(top)
		top = append(top, c)
		for p > 0 && top[p-1] > c {
			top[p] = top[p-1]
			p--
		}
		top[p] = c
	}
	return top[len(top)-1]
}

// validationCap is the kmax of lpLarge's validations: budget/n rows a
// column (budget: cfg.valBudget, 0 for validateMax), or 0 (no cap) when
// that is n or more or the budget is negative.
func (s *solver) validationCap(budget int) int {
	switch {
	case budget < 0:
		return 0
	case budget == 0:
		budget = validateMax
	}
	if k := budget / s.n; k < s.n {
		return max(k, 1)
	}
	return 0
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

package optlayer

import (
	"math"
	"slices"
)

// The reduced KKT system solved directly, exploiting the sparsity of γ.
//
// At small ε the plan is very sparse (at the optimum of the benchmark family
// n = 50, M = 5, ε = 1e-3: ≈ 100 entries above e^{−40} of their column's
// mass, of 2,500), so the reduced operator H (state.assemble) is sparse too:
// its g block couples two columns only through a row where both carry mass
// in active classes, and the λ rows are an arrowhead border. kktDense forms
// H row by row of γ in a dim×dim array, keeping for every column the rows of
// its structural non-zeros below the diagonal (entries outside that pattern
// are never read, so the array is never cleared), and factorises it by a
// right-looking Cholesky over the pattern; with the λ indices last the
// fill-in stays within the connected components of the g block. The work is
// a few thousand multiply-adds and O(dim + nnz) bookkeeping, where one
// conjugate-gradient iteration costs two passes over γ and the M×n row
// arrays.

// kktNnz is the largest number of entries of γ per column for which the
// direct solve is tried (the benchmark family at ε = 1e-3: 2–4).
const kktNnz = 16

// kktDense is the scratch of kktFactor (kept with the Newton state).
type kktDense struct {
	a           []float64 // dim×dim, row-major; its lower triangle holds L after factor (on the pattern)
	dim         int
	stamp       []int32 // stamp[i·dim+j] == gen: (i, j) is in the pattern
	gen         int32
	pat         [][]int32 // pat[j]: the rows i > j of column j's pattern
	rp          []int     // row i of γ: entries rp[i] … rp[i+1]−1 of rq, rv
	rq          []int32   // their column positions
	rv          []float64 // their γ
	cls         []int     // class of each column position
	d0          []float64 // the diagonal before factor
	ops, maxOps int       // multiply-adds of the factorisation so far, and the cap
	fill        []int     // counting sort scratch
	lc          []float64 // factor's column scratch
	wi          []int     // assemble's per-row index list
	wv          []float64 // and values
	wc          []int     // and classes
}

// kktFactor assembles H + reg·diag(H₀) of st into k and factorises it. It
// reports false when the plan is not sparse (more than kktNnz entries per
// column, or a factorisation with more fill than a few CG iterations' work)
// or the matrix is not numerically positive definite.
func (st *state) kktFactor(k *kktDense) bool {
	n, M := st.n, st.M
	dim := n + st.L
	nnz := len(st.ri)
	if nnz > kktNnz*n {
		return false // not a sparse plan: CG
	}
	k.dim = dim
	if cap(k.a) < dim*dim {
		k.a = make([]float64, dim*dim)
		k.stamp = make([]int32, dim*dim)
		k.gen = 0
	}
	k.a, k.stamp = k.a[:dim*dim], k.stamp[:dim*dim]
	A := k.a
	k.gen++
	if len(k.pat) < dim {
		k.pat = append(k.pat, make([][]int32, dim-len(k.pat))...)
	}
	for j := range k.pat[:dim] {
		k.pat[j] = k.pat[j][:0]
	}
	if len(k.cls) != n {
		k.cls = make([]int, n)
		for m := 0; m < M; m++ {
			for q := st.off[m]; q < st.off[m+1]; q++ {
				k.cls[q] = m
			}
		}
	}
	// H₀: column sums, −qc couplings to λ, Σγc² (the diagonal is always
	// in the pattern and written first)
	for m := 0; m < M; m++ {
		b := st.bi[m]
		for q := st.off[m]; q < st.off[m+1]; q++ {
			A[q*dim+q] = st.colsum[q] + st.reg*st.dg[q]
			if b >= 0 {
				k.add(b, q, -st.qc[q])
			}
		}
		if b >= 0 {
			A[b*dim+b] = st.sc2[m] + st.reg*st.dlm(m)
		}
	}
	// rows of γ (counting sort of the column-major entries)
	if len(k.rp) != n+1 {
		k.rp = make([]int, n+1)
	}
	rp := k.rp
	for i := range rp {
		rp[i] = 0
	}
	for _, i := range st.ri {
		rp[i+1]++
	}
	for i := 0; i < n; i++ {
		rp[i+1] += rp[i]
	}
	if cap(k.rq) < nnz {
		k.rq, k.rv = make([]int32, nnz), make([]float64, nnz)
	}
	rq, rv := k.rq[:nnz], k.rv[:nnz]
	fill := append(k.fill[:0], rp[:n]...)
	for q := 0; q < n; q++ {
		for e := st.cp[q]; e < st.cp[q+1]; e++ {
			i := st.ri[e]
			rq[fill[i]] = int32(q)
			rv[fill[i]] = st.gv[e]
			fill[i]++
		}
	}
	k.fill = fill
	// For row i with active classes A_i: w = γ(i, q)/p_m(i) on the columns
	// q of class m ∈ A_i and −pc_m(i)/p_m(i) on λ_m; H gets
	// w_x w_y (1/D_i − [same class] p_m(i)) for every pair (D_i = Σ 1/p_m).
	for i := 0; i < n; i++ {
		di := st.dinv[i]
		if di == 0 {
			continue
		}
		wi, wv, wc := k.wi[:0], k.wv[:0], k.wc[:0]
		for e := rp[i]; e < rp[i+1]; e++ {
			q := int(rq[e])
			m := k.cls[q]
			pi := st.pinv[m*n+i]
			if pi == 0 {
				continue
			}
			wi = append(wi, q)
			wv = append(wv, rv[e]*pi)
			wc = append(wc, m)
		}
		for m := 0; m < M; m++ {
			if b := st.bi[m]; b >= 0 {
				if pi := st.pinv[m*n+i]; pi != 0 {
					wi = append(wi, b)
					wv = append(wv, -st.pc[m*n+i]*pi)
					wc = append(wc, m)
				}
			}
		}
		// wi is increasing (rows of γ by column position, then λ indices)
		for x := range wi {
			vx, mx, ix := wv[x], wc[x], wi[x]
			px := st.p[mx*n+i]
			for y := 0; y < x; y++ {
				c := di
				if wc[y] == mx {
					c -= px
				}
				k.add(ix, wi[y], vx*wv[y]*c)
			}
			A[ix*dim+ix] += vx * vx * (di - px)
		}
		k.wi, k.wv, k.wc = wi, wv, wc
	}
	// a factorisation with more fill than a CG solve of the system would
	// cost (≈ 20 iterations of two passes over γ and the M×n row arrays)
	// is abandoned (CG then)
	k.maxOps = 40 * (nnz + 5*M*n)
	return k.factor()
}

// add adds v to the entry (i, j), i > j, of the lower triangle, entering it
// in the pattern first.
func (k *kktDense) add(i, j int, v float64) {
	x := i*k.dim + j
	if k.stamp[x] != k.gen {
		k.stamp[x] = k.gen
		k.a[x] = v
		k.pat[j] = append(k.pat[j], int32(i))
		return
	}
	k.a[x] += v
}

// factor overwrites the lower triangle of k.a with its Cholesky factor L
// (right-looking, over the pattern, which takes the fill-in).
func (k *kktDense) factor() bool {
	dim := k.dim
	A := k.a
	if len(k.d0) < dim {
		k.d0 = make([]float64, dim)
	}
	for c := 0; c < dim; c++ {
		k.d0[c] = A[c*dim+c]
	}
	k.ops = 0
	for c := 0; c < dim; c++ {
		d := A[c*dim+c]
		// a pivot that lost all but 1e-13 of its diagonal: numerically
		// singular (the system is then left to conjugate gradients)
		if !(d > 1e-13*k.d0[c]) || math.IsInf(d, 1) {
			return false
		}
		l := math.Sqrt(d)
		A[c*dim+c] = l
		il := 1 / l
		pc := k.pat[c]
		if k.ops += len(pc) * (len(pc) + 1) / 2; k.ops > k.maxOps {
			return false // too much fill: not the sparse plan this is for
		}
		slices.Sort(pc)
		lc := k.lc[:0] // column c of L on its pattern, contiguous
		for _, i := range pc {
			x := A[int(i)*dim+c] * il
			A[int(i)*dim+c] = x
			lc = append(lc, x)
		}
		k.lc = lc
		gen := k.gen
		for a, i := range pc {
			li := lc[a]
			if li == 0 {
				continue
			}
			ri := A[int(i)*dim : int(i+1)*dim]
			si := k.stamp[int(i)*dim : int(i+1)*dim]
			ri[i] -= li * li
			for b, j := range pc[:a] { // j < i: the entry (i, j)
				v := li * lc[b]
				if si[j] != gen {
					si[j] = gen
					ri[j] = -v
					k.pat[j] = append(k.pat[j], i)
					continue
				}
				ri[j] -= v
			}
		}
	}
	return true
}

// solve writes x = (L Lᵀ)⁻¹ b.
func (k *kktDense) solve(b, x []float64) {
	dim := k.dim
	A := k.a
	copy(x[:dim], b[:dim])
	for c := 0; c < dim; c++ {
		v := x[c] / A[c*dim+c]
		x[c] = v
		if v == 0 {
			continue
		}
		for _, i := range k.pat[c] {
			x[i] -= A[int(i)*dim+c] * v
		}
	}
	for c := dim - 1; c >= 0; c-- {
		v := x[c]
		for _, i := range k.pat[c] {
			v -= A[int(i)*dim+c] * x[i]
		}
		x[c] = v / A[c*dim+c]
	}
}

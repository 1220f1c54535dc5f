package optlayer

import "math"

// The reduced KKT system solved directly, exploiting the sparsity of γ.
//
// At small ε the plan is very sparse (at the optimum of the benchmark family
// n = 50, M = 5, ε = 1e-3: ≈ 100 entries above e^{−40} of their column's
// mass, of 2,500), so the reduced operator H (state.assemble) is sparse too:
// its g block couples two columns only through a row where both carry mass
// in active classes, and the λ rows are an arrowhead border. kktDense forms
// H row by row of γ into a dense dim×dim array and factorises it by a
// right-looking Cholesky that skips zero multipliers; with the λ indices last
// the fill-in stays within the connected components of the g block. The work
// is then O(dim²) for the dense array plus a few thousand multiply-adds,
// where one conjugate-gradient iteration costs two passes over γ and the
// M×n row arrays.

// kktNnz is the largest number of entries of γ per column for which the
// direct solve is tried (the benchmark family at ε = 1e-3: 2–4).
const kktNnz = 16

// kktDense is the scratch of kktFactor (kept with the Newton state).
type kktDense struct {
	a           []float64 // dim×dim, row-major; its lower triangle holds L after factor
	dim         int
	rp          []int     // row i of γ: entries rp[i] … rp[i+1]−1 of rq, rv
	rq          []int32   // their column positions
	rv          []float64 // their γ
	cls         []int     // class of each column position
	nz          []int     // factor's multiplier rows
	d0          []float64 // the diagonal before factor
	ops, maxOps int       // multiply-adds of the factorisation so far, and the cap
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
	}
	A := k.a[:dim*dim]
	for i := range A {
		A[i] = 0
	}
	if len(k.cls) != n {
		k.cls = make([]int, n)
		for m := 0; m < M; m++ {
			for q := st.off[m]; q < st.off[m+1]; q++ {
				k.cls[q] = m
			}
		}
	}
	// H₀ (lower triangle): column sums, −qc couplings to λ, Σγc²
	for m := 0; m < M; m++ {
		b := st.bi[m]
		for q := st.off[m]; q < st.off[m+1]; q++ {
			A[q*dim+q] = st.colsum[q] + st.reg*st.dg[q]
			if b >= 0 {
				A[b*dim+q] = -st.qc[q]
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
	fill := k.nz[:0]
	fill = append(fill, rp[:n]...)
	for q := 0; q < n; q++ {
		for e := st.cp[q]; e < st.cp[q+1]; e++ {
			i := st.ri[e]
			rq[fill[i]] = int32(q)
			rv[fill[i]] = st.gv[e]
			fill[i]++
		}
	}
	k.nz = fill[:0]
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
			rx := A[wi[x]*dim:]
			vx, mx := wv[x], wc[x]
			px := st.p[mx*n+i]
			for y := 0; y <= x; y++ {
				c := di
				if wc[y] == mx {
					c -= px
				}
				rx[wi[y]] += vx * wv[y] * c
			}
		}
		k.wi, k.wv, k.wc = wi, wv, wc
	}
	// a factorisation with more fill than a CG solve of the system would
	// cost (≈ 20 iterations of two passes over γ and the M×n row arrays)
	// is abandoned (CG then)
	k.maxOps = 40 * (nnz + 5*M*n)
	return k.factor()
}

// factor overwrites the lower triangle of k.a with its Cholesky factor L
// (right-looking, skipping zero multipliers).
func (k *kktDense) factor() bool {
	dim := k.dim
	A := k.a[:dim*dim]
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
		nz := k.nz[:0]
		for i := c + 1; i < dim; i++ {
			if v := A[i*dim+c]; v != 0 {
				A[i*dim+c] = v * il
				nz = append(nz, i)
			}
		}
		if k.ops += len(nz) * (len(nz) + 1) / 2; k.ops > k.maxOps {
			return false // too much fill: not the sparse plan this is for
		}
		for a, i := range nz {
			ri := A[i*dim:]
			f := ri[c]
			for _, j := range nz[:a+1] {
				ri[j] -= f * A[j*dim+c]
			}
		}
		k.nz = nz
	}
	return true
}

// solve writes x = (L Lᵀ)⁻¹ b.
func (k *kktDense) solve(b, x []float64) {
	dim := k.dim
	A := k.a[:dim*dim]
	for i := 0; i < dim; i++ {
		ri := A[i*dim : i*dim+i+1]
		v := b[i]
		for j, l := range ri[:i] {
			if l != 0 {
				v -= l * x[j]
			}
		}
		x[i] = v / ri[i]
	}
	for i := dim - 1; i >= 0; i-- {
		v := x[i] / A[i*dim+i]
		x[i] = v
		if v == 0 {
			continue
		}
		ri := A[i*dim : i*dim+i]
		for j, l := range ri {
			if l != 0 {
				x[j] -= l * v
			}
		}
	}
}

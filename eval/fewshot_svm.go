package eval

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// svmHead is MetaOptNet's SVM base learner (Lee et al. 2019,
// MetaOptNet-SVM): the Crammer–Singer multi-class SVM fitted on the
// supports by solving its dual QP, logits e^ρ·qW with W = Sᵀα and a
// learnable log-scale ρ. The dual, over α ∈ R^{ns×m}, is
//
//	maximise  −½ Σ_c α_cᵀ (SSᵀ + εI) α_c + Σ_i α_i[y_i]
//	s.t.      Σ_c α_i[c] = 0,  α_i[c] ≤ C·[c = y_i]   (each support i)
//
// The εI term (ε = 1 in MetaOptNet's code) makes the QP strongly concave,
// so α is unique and differentiable almost everywhere. The solver runs
// exact block-coordinate ascent (each support's block is a projection
// onto a scaled simplex) and then polishes: on the active set it has
// identified it solves the KKT equations exactly and accepts the result
// when it is primal and dual feasible. The backward pass differentiates
// those KKT equations implicitly (one symmetric solve), never through the
// iterations.
type svmHead struct {
	c   float64 // C > 0
	eps float64 // ε > 0
	rho float64 // log of the logit scale
}

// svmSolution is the dual optimum and its active set.
type svmSolution struct {
	alpha  []float64 // ns×m
	free   []bool    // ns×m: α_i[c] strictly below its bound
	kt     []float64 // ns×ns: SSᵀ + εI
	ns, m  int
	sweeps int // block-ascent sweeps taken
	// approximate: the sweep budget ran out before the KKT polish
	// certified the optimum; alpha is the (feasible) block-ascent iterate.
	approximate bool
}

const (
	svmMaxSweeps   = 20000
	svmPolishEvery = 20
	svmFeasTol     = 1e-10
)

// solveSVM solves the Crammer–Singer dual for the Gram matrix kt (with εI
// added) and labels ys.
func solveSVM(kt []float64, ys []int, m int, C float64) (*svmSolution, error) {
	return solveSVMSweeps(kt, ys, m, C, svmMaxSweeps)
}

// sweepRow sets h = Σ_{j≠i, k_j≠0} k_j α_j (k the row i of K̃, α n×m), each
// h[c] summed over j in order. The 2- and 5-class forms keep h in
// registers; they evaluate the same expression h[c] += k_j·α_j(c) in the
// same order as the general loop, so the bits are the same
// (TestSweepRowSameBits).
func sweepRow(h, k, alpha []float64, i, m int) {
	switch m {
	case 2:
		var h0, h1 float64
		for j, kj := range k {
			if j == i || kj == 0 {
				continue
			}
			a := alpha[j*2 : j*2+2 : j*2+2]
			h0 += kj * a[0]
			h1 += kj * a[1]
		}
		h[0], h[1] = h0, h1
	case 5:
		var h0, h1, h2, h3, h4 float64
		for j, kj := range k {
			if j == i || kj == 0 {
				continue
			}
			a := alpha[j*5 : j*5+5 : j*5+5]
			h0 += kj * a[0]
			h1 += kj * a[1]
			h2 += kj * a[2]
			h3 += kj * a[3]
			h4 += kj * a[4]
		}
		h[0], h[1], h[2], h[3], h[4] = h0, h1, h2, h3, h4
	default:
		sweepRowGeneral(h, k, alpha, i, m)
	}
}

// sweepRowGeneral is sweepRow for any m (the loop it was before).
func sweepRowGeneral(h, k, alpha []float64, i, m int) {
	for c := range h {
		h[c] = 0
	}
	for j, kj := range k {
		if j == i || kj == 0 {
			continue
		}
		for c, a := range alpha[j*m : (j+1)*m] {
			h[c] += kj * a
		}
	}
}

// solveSVMSweeps is solveSVM with a sweep budget.
func solveSVMSweeps(kt []float64, ys []int, m int, C float64, maxSweeps int) (*svmSolution, error) {
	ns := len(ys)
	alpha := make([]float64, ns*m) // α = 0 is feasible
	h := make([]float64, m)
	v := make([]float64, m)
	free := make([]bool, ns*m)
	for sweep := 1; sweep <= maxSweeps; sweep++ {
		var change float64
		for i := 0; i < ns; i++ {
			// h = Σ_{j≠i} K̃_ij α_j.
			sweepRow(h, kt[i*ns:(i+1)*ns], alpha, i, m)
			// Block optimum: α_i = C·e_y − β, β = C-simplex projection of
			// C·e_y − a with a = (e_y − h)/K̃_ii.
			kii := kt[i*ns+i]
			for c := range v {
				a := -h[c] / kii
				if c == ys[i] {
					a += 1 / kii
				}
				v[c] = -a
				if c == ys[i] {
					v[c] += C
				}
			}
			projectSimplex(v, C)
			ai := alpha[i*m : (i+1)*m]
			for c := range ai {
				na := -v[c]
				if c == ys[i] {
					na += C
				}
				change = math.Max(change, math.Abs(na-ai[c]))
				ai[c] = na
			}
		}
		if sweep%svmPolishEvery == 0 || change == 0 {
			for k := range free {
				bound := 0.0
				if k%m == ys[k/m] {
					bound = C
				}
				free[k] = alpha[k] < bound-1e-9*math.Max(1, C)
			}
			if sol, ok := polishSVM(kt, ys, m, C, alpha, free); ok {
				sol.sweeps = sweep
				return sol, nil
			}
		}
	}
	// Not certified within the budget (ill-conditioned Gram matrices of an
	// overfitted body): the block-ascent iterate is feasible and close to
	// optimal, so use it with its current active set rather than failing
	// the fit; the gradient is then the implicit one of that active set.
	if !finiteAll(alpha) {
		return nil, notFinite("the SVM dual diverged", "eval: metaoptnet: SVM dual diverged")
	}
	for k := range free {
		bound := 0.0
		if k%m == ys[k/m] {
			bound = C
		}
		free[k] = alpha[k] < bound-1e-9*math.Max(1, C)
	}
	return &svmSolution{alpha: alpha, free: free, kt: kt, ns: ns, m: m, sweeps: maxSweeps, approximate: true}, nil
}

func finiteAll(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// polishSVM solves the KKT equations of the dual on the active set free
// (the other components at their bounds) and returns the solution when it
// satisfies every KKT condition.
func polishSVM(kt []float64, ys []int, m int, C float64, alpha []float64, free []bool) (*svmSolution, bool) {
	ns := len(ys)
	idx := make([]int, 0, ns*m) // free components, in order
	pos := make([]int, ns*m)
	for k, f := range free {
		pos[k] = -1
		if f {
			pos[k] = len(idx)
			idx = append(idx, k)
		}
	}
	bound := func(k int) float64 {
		if k%m == ys[k/m] {
			return C
		}
		return 0
	}
	nf := len(idx)
	H, rhs := svmKKT(kt, ys, m, idx)
	// Right-hand side: δ(c = y_i) − Σ over bound components of K̃_ij α_j[c];
	// the constraint rows: −Σ of the bound components of row i.
	for r, k := range idx {
		i, c := k/m, k%m
		var s float64
		for j := 0; j < ns; j++ {
			kj := j*m + c
			if !free[kj] {
				s += kt[i*ns+j] * bound(kj)
			}
		}
		if c == ys[i] {
			rhs[r] = 1 - s
		} else {
			rhs[r] = -s
		}
	}
	for i := 0; i < ns; i++ {
		var s float64
		for c := 0; c < m; c++ {
			if !free[i*m+c] {
				s += bound(i*m + c)
			}
		}
		rhs[nf+i] = -s
	}
	var sol mat.VecDense
	if err := sol.SolveVec(H, mat.NewVecDense(len(rhs), rhs)); err != nil {
		return nil, false
	}
	a := make([]float64, ns*m)
	for k := range a {
		if free[k] {
			a[k] = sol.AtVec(pos[k])
			if a[k] > bound(k)+svmFeasTol*math.Max(1, C) {
				return nil, false // primal infeasible
			}
		} else {
			a[k] = bound(k)
		}
	}
	// Dual feasibility: at a bound component the gradient of the
	// objective minus ν_i must be ≥ 0 (it pushes against the bound).
	for k, f := range free {
		if f {
			continue
		}
		i, c := k/m, k%m
		g := -sol.AtVec(nf + i)
		if c == ys[i] {
			g++
		}
		for j := 0; j < ns; j++ {
			g -= kt[i*ns+j] * a[j*m+c]
		}
		if g < -svmFeasTol*math.Max(1, math.Abs(g)) {
			return nil, false
		}
	}
	copy(alpha, a)
	return &svmSolution{alpha: a, free: append([]bool(nil), free...), kt: kt, ns: ns, m: m}, true
}

// svmKKT returns the symmetric KKT matrix of the dual restricted to the
// free components idx: [[K̃⊗I on idx, B], [Bᵀ, 0]] with B the indicator of
// each component's support, and a zero right-hand side of matching size.
func svmKKT(kt []float64, ys []int, m int, idx []int) (*mat.Dense, []float64) {
	ns, nf := len(ys), len(idx)
	H := mat.NewDense(nf+ns, nf+ns, nil)
	for r, k := range idx {
		i, c := k/m, k%m
		for s, l := range idx {
			if l%m == c {
				H.Set(r, s, kt[i*ns+l/m])
			}
		}
		H.Set(r, nf+i, 1)
		H.Set(nf+i, r, 1)
	}
	return H, make([]float64, nf+ns)
}

// projectSimplex replaces v by its Euclidean projection onto
// {β ≥ 0, Σβ = r}.
func projectSimplex(v []float64, r float64) {
	var buf [12]float64
	var u []float64
	if len(v) <= len(buf) {
		// sort.Sort(sort.Reverse(sort.Float64Slice(u))) sorts up to 12
		// elements by exactly this insertion sort (the same comparisons and
		// swaps, so the same order, ties included), here without the
		// interface calls and the allocation: the SVM head calls this for
		// every support sample of every sweep.
		u = buf[:len(v)]
		copy(u, v)
		for i := 1; i < len(u); i++ {
			for j := i; j > 0 && revFloatLess(u[j], u[j-1]); j-- {
				u[j], u[j-1] = u[j-1], u[j]
			}
		}
	} else {
		u = append([]float64(nil), v...)
		sort.Sort(sort.Reverse(sort.Float64Slice(u)))
	}
	var cum, theta float64
	for k, x := range u {
		cum += x
		t := (cum - r) / float64(k+1)
		if x-t > 0 {
			theta = t
		}
	}
	for k, x := range v {
		v[k] = math.Max(x-theta, 0)
	}
}

// revFloatLess(x, y) is sort.Reverse(sort.Float64Slice).Less for the
// elements x (at j) and y (at j−1): Float64Slice.Less(j−1, j).
func revFloatLess(x, y float64) bool {
	return y < x || (math.IsNaN(y) && !math.IsNaN(x))
}

func (h svmHead) apply(s []float64, ys []int, q []float64, d, m int) ([]float64, headBackward, error) {
	ns, nq := len(ys), len(q)/d
	S := mat.NewDense(ns, d, s)
	Q := mat.NewDense(nq, d, q)
	// K̃ = SSᵀ + εI.
	K := mat.NewDense(ns, ns, nil)
	K.Mul(S, S.T())
	for i := 0; i < ns; i++ {
		K.Set(i, i, K.At(i, i)+h.eps)
	}
	kt := K.RawMatrix().Data
	for _, v := range kt {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, notFinite(fmt.Sprintf("the support Gram matrix of the SVM holds %v", v), "eval: metaoptnet: support Gram matrix holds %v", v)
		}
	}
	sol, err := solveSVM(kt, ys, m, h.c)
	if err != nil {
		return nil, nil, err
	}
	// W = Sᵀα (d×m), z = e^ρ·QW.
	A := mat.NewDense(ns, m, sol.alpha)
	var W mat.Dense
	W.Mul(S.T(), A)
	scale := math.Exp(h.rho)
	Z := mat.NewDense(nq, m, nil)
	Z.Mul(Q, &W)
	Z.Scale(scale, Z)
	z := Z.RawMatrix().Data
	back := func(dz []float64) ([]float64, []float64, float64, error) {
		var drho float64
		for i, g := range dz {
			drho += g * z[i]
		}
		// dW = e^ρ Qᵀdz (d×m); dQ = e^ρ dz Wᵀ.
		dZ := mat.NewDense(nq, m, nil)
		dZ.Scale(scale, mat.NewDense(nq, m, dz))
		var dW, dQ, dS, dA mat.Dense
		dW.Mul(Q.T(), dZ)
		dQ.Mul(dZ, W.T())
		// W = Sᵀα: dS = α dWᵀ, dα = S dW.
		dS.Mul(A, dW.T())
		dA.Mul(S, &dW)
		dalpha := dA.RawMatrix().Data
		// Implicit differentiation: solve H[u; v] = [dα_free; 0]; then
		// ∂L/∂K = −U αᵀ, and K = SSᵀ gives dS += (G + Gᵀ)S.
		var idx []int
		for k, f := range sol.free {
			if f {
				idx = append(idx, k)
			}
		}
		H, rhs := svmKKT(sol.kt, ys, m, idx)
		for r, k := range idx {
			rhs[r] = dalpha[k]
		}
		var uv mat.VecDense
		if err := uv.SolveVec(H, mat.NewVecDense(len(rhs), rhs)); err != nil {
			return nil, nil, 0, fmt.Errorf("eval: metaoptnet backward: %w", err)
		}
		U := mat.NewDense(ns, m, nil)
		for r, k := range idx {
			U.Set(k/m, k%m, uv.AtVec(r))
		}
		var UA, G, GS mat.Dense
		UA.Mul(U, A.T())
		G.Add(&UA, UA.T())
		GS.Mul(&G, S)
		dS.Sub(&dS, &GS)
		return dS.RawMatrix().Data, dQ.RawMatrix().Data, drho, nil
	}
	return z, back, nil
}

package eval

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// A fewShotHead maps support embeddings s (ns×d, labels ys in [0, m)) and
// query embeddings q (nq×d) to class logits z (nq×m, row-major). The
// returned backward function maps ∂L/∂z to ∂L/∂s, ∂L/∂q and ∂L/∂ρ, the
// derivative with respect to the head's own scalar parameter (the ridge
// head's log-scale; 0 for the others). Inputs are trusted: callers
// validate them.
type fewShotHead interface {
	apply(s []float64, ys []int, q []float64, d, m int) (z []float64, back headBackward, err error)
}

type headBackward func(dz []float64) (ds, dq []float64, drho float64, err error)

// protoHead is the prototypical-network head (Snell et al. 2017): the
// prototype of class c is the mean support embedding of c and the logit of
// a query is −‖q − c‖².
type protoHead struct{}

func (protoHead) apply(s []float64, ys []int, q []float64, d, m int) ([]float64, headBackward, error) {
	ns, nq := len(ys), len(q)/d
	proto, count, empty := classMeans(s, ys, d, m)
	if empty >= 0 {
		return nil, nil, fmt.Errorf("eval: proto_net: class %d has no support sample", empty)
	}
	z := make([]float64, nq*m)
	for j := 0; j < nq; j++ {
		qj := q[j*d : (j+1)*d]
		for c := 0; c < m; c++ {
			pc := proto[c*d : (c+1)*d]
			var s2 float64
			for k, v := range qj {
				t := v - pc[k]
				s2 += t * t
			}
			z[j*m+c] = -s2
		}
	}
	back := func(dz []float64) ([]float64, []float64, float64, error) {
		dq := make([]float64, nq*d)
		dproto := make([]float64, m*d)
		for j := 0; j < nq; j++ {
			qj, dqj := q[j*d:(j+1)*d], dq[j*d:(j+1)*d]
			for c := 0; c < m; c++ {
				g := dz[j*m+c]
				if g == 0 {
					continue
				}
				pc, dpc := proto[c*d:(c+1)*d], dproto[c*d:(c+1)*d]
				for k, v := range qj {
					t := 2 * g * (v - pc[k])
					dqj[k] -= t
					dpc[k] += t
				}
			}
		}
		ds := make([]float64, ns*d)
		for i, c := range ys {
			dsi, dpc := ds[i*d:(i+1)*d], dproto[c*d:(c+1)*d]
			for k, v := range dpc {
				dsi[k] = v / float64(count[c])
			}
		}
		return ds, dq, 0, nil
	}
	return z, back, nil
}

// matchingHead is the matching-network head (Vinyals et al. 2016) without
// full-context embeddings: attention a(q, sᵢ) = softmax over i of
// τ·cos(q, sᵢ), and the class probability is the attention mass on the
// class's supports. Its logits are the log-probabilities
// z_c = log Σ_{i∈c} a(q, sᵢ), so the softmax of z is that probability.
type matchingHead struct {
	scale float64 // τ
}

// minNorm keeps cosine similarities finite for a zero embedding.
const minNorm = 1e-12

func (h matchingHead) apply(s []float64, ys []int, q []float64, d, m int) ([]float64, headBackward, error) {
	ns, nq := len(ys), len(q)/d
	count := make([]int, m)
	for _, c := range ys {
		count[c]++
	}
	for c, k := range count {
		if k == 0 {
			return nil, nil, fmt.Errorf("eval: matching_net: class %d has no support sample", c)
		}
	}
	norms := func(x []float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			var s2 float64
			for _, v := range x[i*d : (i+1)*d] {
				s2 += v * v
			}
			out[i] = math.Max(math.Sqrt(s2), minNorm)
		}
		return out
	}
	sn, qn := norms(s, ns), norms(q, nq)
	S, Q := mat.NewDense(ns, d, s), mat.NewDense(nq, d, q)
	// Cosine similarities: QSᵀ with rows and columns divided by the norms.
	C := mat.NewDense(nq, ns, nil)
	C.Mul(Q, S.T())
	cos := C.RawMatrix().Data
	r := make([]float64, nq*ns) // softmax of τ·cos within the support's class
	a := make([]float64, nq*ns) // softmax of τ·cos over all supports
	z := make([]float64, nq*m)
	lseC := make([]float64, m)
	for j := 0; j < nq; j++ {
		cj := cos[j*ns : (j+1)*ns]
		for i := range cj {
			cj[i] /= sn[i] * qn[j]
		}
		// Log-sum-exp of τ·cos per class and over all supports.
		for c := range lseC {
			lseC[c] = math.Inf(-1)
		}
		for i, c := range ys {
			lseC[c] = logAddExp(lseC[c], h.scale*cj[i])
		}
		all := math.Inf(-1)
		for _, v := range lseC {
			all = logAddExp(all, v)
		}
		for c := 0; c < m; c++ {
			z[j*m+c] = lseC[c] - all
		}
		for i, c := range ys {
			t := h.scale * cj[i]
			r[j*ns+i] = math.Exp(t - lseC[c])
			a[j*ns+i] = math.Exp(t - all)
		}
	}
	back := func(dz []float64) ([]float64, []float64, float64, error) {
		// With g_ji = ∂L/∂cos(q_j, s_i), ∂cos/∂q = (ŝ − cos·q̂)/‖q‖ and
		// ∂cos/∂s = (q̂ − cos·ŝ)/‖s‖ give
		//	dQ = G′S − diag(Σ_i g_ji cos_ji/‖q_j‖²)Q,
		//	dS = G′ᵀQ − diag(Σ_j g_ji cos_ji/‖s_i‖²)S,
		// with G′_ji = g_ji/(‖q_j‖‖s_i‖).
		Gp := mat.NewDense(nq, ns, nil)
		gp := Gp.RawMatrix().Data
		rq := make([]float64, nq)
		rs := make([]float64, ns)
		for j := 0; j < nq; j++ {
			var sum float64
			for _, g := range dz[j*m : (j+1)*m] {
				sum += g
			}
			for i, c := range ys {
				g := h.scale * (dz[j*m+c]*r[j*ns+i] - a[j*ns+i]*sum)
				gc := g * cos[j*ns+i]
				gp[j*ns+i] = g / (qn[j] * sn[i])
				rq[j] += gc
				rs[i] += gc
			}
		}
		var dQ, dS mat.Dense
		dQ.Mul(Gp, S)
		dS.Mul(Gp.T(), Q)
		for j := 0; j < nq; j++ {
			floats.AddScaled(dQ.RawRowView(j), -rq[j]/(qn[j]*qn[j]), Q.RawRowView(j))
		}
		for i := 0; i < ns; i++ {
			floats.AddScaled(dS.RawRowView(i), -rs[i]/(sn[i]*sn[i]), S.RawRowView(i))
		}
		return dS.RawMatrix().Data, dQ.RawMatrix().Data, 0, nil
	}
	return z, back, nil
}

func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// ridgeHead is MetaOptNet's ridge-regression base learner (Lee et al.
// 2019, MetaOptNet-RR, after Bertinetto et al. 2019): the closed-form
// ridge fit of one-hot targets Y on the supports,
// W = Sᵀ(SSᵀ + λI)⁻¹Y, and logits e^ρ·qW with a learnable log-scale ρ.
// It is differentiable in closed form.
type ridgeHead struct {
	lambda float64 // λ > 0
	rho    float64 // log of the logit scale
}

func (h ridgeHead) apply(s []float64, ys []int, q []float64, d, m int) ([]float64, headBackward, error) {
	ns, nq := len(ys), len(q)/d
	X := mat.NewDense(ns, d, append([]float64(nil), s...))
	Q := mat.NewDense(nq, d, append([]float64(nil), q...))
	Y := mat.NewDense(ns, m, nil)
	for i, c := range ys {
		Y.Set(i, c, 1)
	}
	var K mat.SymDense
	K.SymOuterK(1, X)
	for i := 0; i < ns; i++ {
		K.SetSym(i, i, K.At(i, i)+h.lambda)
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(&K); !ok {
		return nil, nil, fmt.Errorf("eval: metaoptnet_rr: SSᵀ + λI (λ = %g) is not positive definite", h.lambda)
	}
	var A, W, Z0 mat.Dense
	if err := ch.SolveTo(&A, Y); err != nil {
		return nil, nil, fmt.Errorf("eval: metaoptnet_rr: %w", err)
	}
	W.Mul(X.T(), &A) // d×m
	Z0.Mul(Q, &W)    // nq×m
	scale := math.Exp(h.rho)
	z := make([]float64, nq*m)
	for j := 0; j < nq; j++ {
		for c := 0; c < m; c++ {
			z[j*m+c] = scale * Z0.At(j, c)
		}
	}
	back := func(dz []float64) ([]float64, []float64, float64, error) {
		var drho float64
		for i, g := range dz {
			drho += g * z[i]
		}
		dZ0 := mat.NewDense(nq, m, nil)
		for j := 0; j < nq; j++ {
			for c := 0; c < m; c++ {
				dZ0.Set(j, c, scale*dz[j*m+c])
			}
		}
		var dQ, Gw, dX, dA, B, BAt, T mat.Dense
		dQ.Mul(dZ0, W.T()) // nq×d
		Gw.Mul(Q.T(), dZ0) // d×m
		dX.Mul(&A, Gw.T()) // ns×d
		dA.Mul(X, &Gw)     // ns×m
		if err := ch.SolveTo(&B, &dA); err != nil {
			return nil, nil, 0, fmt.Errorf("eval: metaoptnet_rr backward: %w", err)
		}
		// ∂L/∂K = −BAᵀ; K = SSᵀ + λI gives ∂L/∂S += −(BAᵀ + ABᵀ)S.
		BAt.Mul(&B, A.T())
		var sym mat.Dense
		sym.Add(&BAt, BAt.T())
		T.Mul(&sym, X)
		dX.Sub(&dX, &T)
		return append([]float64(nil), dX.RawMatrix().Data...), append([]float64(nil), dQ.RawMatrix().Data...), drho, nil
	}
	return z, back, nil
}

// episodeLoss is the mean cross-entropy of the logits the head gives the
// queries qry of one pseudo-episode whose supports are sup (indices into
// the n×d embedding e, labels y). It adds w·∂loss/∂e to grad (n×d) and
// returns the loss and w·∂loss/∂ρ.
func episodeLoss(h fewShotHead, e []float64, d, m int, y, sup, qry []int, grad []float64, w float64) (float64, float64, error) {
	gather := func(idx []int) []float64 {
		out := make([]float64, 0, len(idx)*d)
		for _, i := range idx {
			out = append(out, e[i*d:(i+1)*d]...)
		}
		return out
	}
	ys := make([]int, len(sup))
	for k, i := range sup {
		ys[k] = y[i]
	}
	z, back, err := h.apply(gather(sup), ys, gather(qry), d, m)
	if err != nil {
		return 0, 0, err
	}
	nq := len(qry)
	dz := make([]float64, nq*m)
	var loss float64
	for j, i := range qry {
		zj := z[j*m : (j+1)*m]
		lse := math.Inf(-1)
		for _, v := range zj {
			lse = logAddExp(lse, v)
		}
		loss += lse - zj[y[i]]
		for c, v := range zj {
			dz[j*m+c] = math.Exp(v-lse) * w / float64(nq)
		}
		dz[j*m+y[i]] -= w / float64(nq)
	}
	loss /= float64(nq)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, 0, notFinite(fmt.Sprintf("the few-shot episode loss is %v", loss), "eval: few-shot episode loss is %v", loss)
	}
	ds, dq, drho, err := back(dz)
	if err != nil {
		return 0, 0, err
	}
	for k, i := range sup {
		gi := grad[i*d : (i+1)*d]
		for t, v := range ds[k*d : (k+1)*d] {
			gi[t] += v
		}
	}
	for k, i := range qry {
		gi := grad[i*d : (i+1)*d]
		for t, v := range dq[k*d : (k+1)*d] {
			gi[t] += v
		}
	}
	return loss, drho, nil
}

// softmaxRows turns nq rows of m logits into probabilities in place.
func softmaxRows(z []float64, m int) {
	for j := 0; j+m <= len(z); j += m {
		row := z[j : j+m]
		lse := math.Inf(-1)
		for _, v := range row {
			lse = logAddExp(lse, v)
		}
		for c, v := range row {
			row[c] = math.Exp(v - lse)
		}
	}
}

// Package vexp holds the exponential kernels of the LFD solver's inner
// loops: a fast exp with a mask for arguments below a cut, fused with the
// sums the solver needs, vectorised with AVX2+FMA on amd64 — and the two
// kernels of the metric: SqDist16 (sixteen squared distances at once, for
// optlayer.Costs) and PairUpdate (the feature gradient's pair update).
//
// Every kernel has a portable twin in plain Go that performs the same
// floating-point operations in the same order (fused multiply–adds via
// math.FMA, the same four-lane partial sums), so the vector and the portable
// paths return bit-identical results: a solve does not depend on which path
// a machine takes or on the alignment of a row.
//
// ExpGo and LogAddGo are the exception: their twins are math.Exp and
// math.Log themselves, and their kernels reproduce amd64's assembly versions
// of those (archExp's FMA branch, archLog), so both paths give math's bits.
//
// DRKNN_PORTABLE=1 in the environment forces the portable path.
//
// Exp is accurate to about 2 ulp on the domain the solver uses, [−700, 0];
// it is not a general replacement for math.Exp (no special cases, no
// overflow handling).
package vexp

import "math"

// Exp returns e^x for x in [−700, 700] (see the package doc).
func Exp(x float64) float64 {
	t := math.FMA(x, log2e, magic)
	k := t - magic
	r := math.FMA(-k, ln2hi, x)
	r = math.FMA(-k, ln2lo, r)
	p := c13
	p = math.FMA(p, r, c12)
	p = math.FMA(p, r, c11)
	p = math.FMA(p, r, c10)
	p = math.FMA(p, r, c9)
	p = math.FMA(p, r, c8)
	p = math.FMA(p, r, c7)
	p = math.FMA(p, r, c6)
	p = math.FMA(p, r, c5)
	p = math.FMA(p, r, c4)
	p = math.FMA(p, r, c3)
	p = math.FMA(p, r, c2)
	p = math.FMA(p, r, 1)
	p = math.FMA(p, r, 1)
	return math.Float64frombits(math.Float64bits(p) + math.Float64bits(t)<<52)
}

const (
	log2e = 1.4426950408889634
	magic = 6755399441055744.0 // 1.5·2⁵²: adding it rounds to an integer
	ln2hi = 0.6931471805599453
	ln2lo = 2.3190468138462996e-17
	c2    = 1.0 / 2
	c3    = 1.0 / 6
	c4    = 1.0 / 24
	c5    = 1.0 / 120
	c6    = 1.0 / 720
	c7    = 1.0 / 5040
	c8    = 1.0 / 40320
	c9    = 1.0 / 362880
	c10   = 1.0 / 3628800
	c11   = 1.0 / 39916800
	c12   = 1.0 / 479001600
	c13   = 1.0 / 6227020800
)

// AffineMax sets dst[i] = a + b·c[i] (one fused multiply–add) and raises
// rm[i] to dst[i] where dst[i] > rm[i]. dst, c and rm have the same length.
func AffineMax(dst, c, rm []float64, a, b float64) {
	n := len(dst)
	c, rm = c[:n], rm[:n]
	n4 := 0
	if useAsm && n >= 4 {
		n4 = n &^ 3
		affineMaxAVX(&dst[0], &c[0], &rm[0], n4, a, b)
	}
	for i := n4; i < n; i++ {
		v := math.FMA(b, c[i], a)
		dst[i] = v
		if v > rm[i] {
			rm[i] = v
		}
	}
}

// ExpSubAcc sets k[i] = e^(k[i]−rm[i]) where k[i]−rm[i] ≥ −cut and 0
// elsewhere (also where the difference is NaN), and adds k[i] to sm[i].
// The differences must be ≤ 700.
func ExpSubAcc(k, rm, sm []float64, cut float64) {
	n := len(k)
	rm, sm = rm[:n], sm[:n]
	n4 := 0
	if useAsm && n >= 4 {
		n4 = n &^ 3
		expSubAccAVX(&k[0], &rm[0], &sm[0], n4, -cut)
	}
	for i := n4; i < n; i++ {
		d := k[i] - rm[i]
		e := 0.0
		if d >= -cut {
			e = Exp(d)
		}
		k[i] = e
		sm[i] += e
	}
}

// ExpMoments returns, with w_i = e^(x[i]−sh) where x[i]−sh ≥ −cut and 0
// elsewhere, z = Σ w_i, e1 = Σ w_i c_i and e2 = Σ w_i c_i². The sums run in
// four lanes (i mod 4) combined as (l0+l1)+(l2+l3). The differences must be
// ≤ 700.
func ExpMoments(x, c []float64, sh, cut float64) (z, e1, e2 float64) {
	n := len(x)
	c = c[:n]
	var acc [12]float64 // z, e1, e2 lanes
	n4 := 0
	if useAsm && n >= 4 {
		n4 = n &^ 3
		expMomentsAVX(&x[0], &c[0], n4, sh, -cut, &acc)
	}
	for i := n4; i < n; i++ {
		d := x[i] - sh
		w := 0.0
		if d >= -cut {
			w = Exp(d)
		}
		l := i & 3
		wc := w * c[i]
		acc[l] += w
		acc[4+l] += wc
		acc[8+l] = math.FMA(wc, c[i], acc[8+l])
	}
	return lanes(acc[0:4]), lanes(acc[4:8]), lanes(acc[8:12])
}

// ExpShiftSum sets x[i] = e^(x[i]−sh) where x[i]−sh ≥ −cut and 0 elsewhere
// and returns Σ x[i] (four lanes, as ExpMoments). The differences must be
// ≤ 700.
func ExpShiftSum(x []float64, sh, cut float64) float64 {
	n := len(x)
	var acc [4]float64
	n4 := 0
	if useAsm && n >= 4 {
		n4 = n &^ 3
		expShiftSumAVX(&x[0], n4, sh, -cut, &acc)
	}
	for i := n4; i < n; i++ {
		d := x[i] - sh
		e := 0.0
		if d >= -cut {
			e = Exp(d)
		}
		x[i] = e
		acc[i&3] += e
	}
	return lanes(acc[:])
}

// LogAdd sets dst[i] = log(x[i]) + add[i] where x[i] > 0 and −∞ where
// x[i] ≤ 0 or is NaN (the water-filling levels of the solver's rows).
// dst, x and add have the same length. On normal x the logarithm is
// logNormal's (within 1 ulp of math.Log), four at a time with AVX2+FMA; a
// call with any x[i] that is neither 0 nor normal and finite is computed
// entry by entry, math.Log for those entries.
func LogAdd(dst, x, add []float64) {
	n := len(dst)
	x, add = x[:n], add[:n]
	n4 := 0
	if useAsm && n >= 4 {
		n4 = n &^ 3
		if logAddAVX(&dst[0], &x[0], &add[0], n4) != 0 {
			n4 = 0 // an entry outside the kernel's domain
		}
	}
	for i := n4; i < n; i++ {
		dst[i] = logAdd1(x[i], add[i])
	}
}

func logAdd1(x, add float64) float64 {
	switch {
	case !(x > 0):
		return math.Inf(-1)
	case x < minNormal || x > math.MaxFloat64:
		return math.Log(x) + add
	}
	return logNormal(x) + add
}

// logNormal is math.Log's algorithm (FreeBSD's e_log.c: x = 2^k·(1+f),
// log(1+f) = f − s·(f − R) with s = f/(2+f) and a minimax R(s²)) for a
// normal finite x > 0, with the exponent and fraction taken from the bits
// and the two polynomials in fused multiply–adds; the conversions keep the
// compiler from fusing anything else, so the vector kernel (the same
// operations in the same order) gives the same bits.
func logNormal(x float64) float64 {
	b := math.Float64bits(x)
	k := math.Float64frombits(b>>52|twoP52Bits) - twoP52
	f1 := math.Float64frombits(b&fracMask | halfBits)
	k -= 1022
	if f1 < math.Sqrt2/2 {
		f1 += f1
		k -= 1
	}
	f := f1 - 1
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := s2 * math.FMA(s4, math.FMA(s4, math.FMA(s4, logL7, logL5), logL3), logL1)
	t2 := s4 * math.FMA(s4, math.FMA(s4, logL6, logL4), logL2)
	r := t1 + t2
	hfsq := float64(0.5*f) * f
	a := float64(s*(hfsq+r)) + float64(k*ln2LoLog)
	return float64(k*ln2HiLog) - ((hfsq - a) - f)
}

const (
	twoP52Bits = 0x4330000000000000
	twoP52     = 1 << 52
	fracMask   = 1<<52 - 1
	halfBits   = 0x3fe0000000000000
	minNormal  = 0x1p-1022
	logL1      = 6.666666666666735130e-01
	logL2      = 3.999999999940941908e-01
	logL3      = 2.857142874366239149e-01
	logL4      = 2.222219843214978396e-01
	logL5      = 1.818357216161805012e-01
	logL6      = 1.531383769920937332e-01
	logL7      = 1.479819860511658591e-01
	ln2HiLog   = 6.93147180369123816490e-01
	ln2LoLog   = 1.90821492927058770002e-10
)

// WeightedMoments returns, with w_i = k[i]·u[i], Σ w_i, Σ w_i c_i and
// Σ w_i c_i² (four lanes, as ExpMoments).
func WeightedMoments(k, u, c []float64) (s0, s1, s2 float64) {
	n := len(k)
	u, c = u[:n], c[:n]
	var acc [12]float64
	n4 := 0
	if useAsm && n >= 4 {
		n4 = n &^ 3
		weightedMomentsAVX(&k[0], &u[0], &c[0], n4, &acc)
	}
	for i := n4; i < n; i++ {
		l := i & 3
		w := k[i] * u[i]
		wc := w * c[i]
		acc[l] += w
		acc[4+l] += wc
		acc[8+l] = math.FMA(wc, c[i], acc[8+l])
	}
	return lanes(acc[0:4]), lanes(acc[4:8]), lanes(acc[8:12])
}

// lanes combines four lane sums in the vector kernels' order.
func lanes(a []float64) float64 { return (a[0] + a[1]) + (a[2] + a[3]) }

// PairUpdate adds d_k = f·(xi[k] − xj[k]) to oi[k] and subtracts it from
// oj[k] for every k < len(xi). Each entry is a difference, a product and a
// sum, never fused, so the AVX kernel and the portable loop agree bit for
// bit. oi and oj must not overlap.
func PairUpdate(f float64, xi, xj, oi, oj []float64) {
	m := len(xi)
	xj, oi, oj = xj[:m], oi[:m], oj[:m]
	k := 0
	if useAsm && m >= 4 {
		k = m &^ 3
		pairUpdateAVX(f, &xi[0], &xj[0], &oi[0], &oj[0], k)
	}
	for ; k < m; k++ {
		d := f * (xi[k] - xj[k])
		oi[k] += d
		oj[k] -= d
	}
}

// SqDist16 adds Σ_k (a[k] − b[16k+l])² to acc[l] for every lane l < 16,
// in order k = 0, 1, … < len(a): the squared distances from a to sixteen
// points whose features are interleaved (b[16k+l] is feature k of point l;
// len(b) ≥ 16·len(a)). Each entry is a difference, a product and a sum,
// never fused, so the AVX kernel and the portable loop agree bit for bit
// with the plain sum e = a[k] − b_l[k], s += e·e.
func SqDist16(a, b []float64, acc *[16]float64) {
	m := len(a)
	if m == 0 {
		return
	}
	b = b[:16*m]
	if useAsm {
		sqDist16AVX(&a[0], &b[0], m, acc)
		return
	}
	for q := 0; q < 16; q += 4 {
		s0, s1, s2, s3 := acc[q], acc[q+1], acc[q+2], acc[q+3]
		for k, v := range a {
			bk := b[16*k+q : 16*k+q+4]
			e0 := v - bk[0]
			e1 := v - bk[1]
			e2 := v - bk[2]
			e3 := v - bk[3]
			s0 += e0 * e0
			s1 += e1 * e1
			s2 += e2 * e2
			s3 += e3 * e3
		}
		acc[q], acc[q+1], acc[q+2], acc[q+3] = s0, s1, s2, s3
	}
}

// ExpGo sets x[i] = math.Exp(x[i]), bit for bit, four at a time with
// AVX2+FMA: the kernel is archExp's sequence on amd64 with FMA (the one
// math.Exp takes where the CPU has AVX and FMA, implied by the kernel's
// AVX2+FMA), its constants, operations and order in four lanes. A group of
// four with an entry that archExp takes off its plain path (NaN, +∞, above
// its overflow bound, or a result in the subnormal range or overflowing)
// is computed by math.Exp entry by entry; arguments whose result underflows
// to 0 (−∞ included) stay in the kernel. The portable twin is math.Exp.
func ExpGo(x []float64) {
	n, i := len(x), 0
	if useAsm {
		for n-i >= 4 {
			i += expGoAVX(&x[i], (n-i)&^3)
			if n-i < 4 {
				break
			}
			for j := i; j < i+4; j++ { // the group the kernel left
				x[j] = math.Exp(x[j])
			}
			i += 4
		}
	}
	for ; i < n; i++ {
		x[i] = math.Exp(x[i])
	}
}

// LogAddGo sets dst[i] = math.Log(x[i]) + add[i] where x[i] > 0 and −∞
// where x[i] ≤ 0 or is NaN, bit for bit, four at a time with AVX2: the
// kernel is archLog's sequence on amd64 (no fused operations), its
// constants, operations and order in four lanes. A group of four with a
// positive x[i] that is subnormal or +∞ is computed entry by entry.
// dst, x and add have the same length. (LogAdd is the solver's other
// logarithm: logNormal's fused polynomials, within 1 ulp of math.Log.)
func LogAddGo(dst, x, add []float64) {
	n, i := len(dst), 0
	x, add = x[:n], add[:n]
	if useAsm {
		for n-i >= 4 {
			i += logGoAVX(&dst[i], &x[i], &add[i], (n-i)&^3)
			if n-i < 4 {
				break
			}
			for j := i; j < i+4; j++ { // the group the kernel left
				dst[j] = logAddGo1(x[j], add[j])
			}
			i += 4
		}
	}
	for ; i < n; i++ {
		dst[i] = logAddGo1(x[i], add[i])
	}
}

func logAddGo1(x, add float64) float64 {
	if x > 0 {
		return math.Log(x) + add
	}
	return math.Inf(-1)
}

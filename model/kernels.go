package model

import (
	"math"
	"sync"
	"unsafe"

	"github.com/drknn/drknn/model/internal/kern"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Float is the set of element types the kernels support.
type Float interface{ ~float32 | ~float64 }

// gemm computes C = alpha·op(A)·op(B) + beta·C (row-major) with the BLAS
// currently installed in gonum's blas32/blas64 (pure Go, or OpenBLAS with
// the openblas build tag).
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if useFastGemm && alpha == 1 && (beta == 0 || beta == 1) && gemmFast(tA, tB, m, n, k, a, lda, b, ldb, beta == 1, c, ldc) {
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	switch a := any(a).(type) {
	case []float32:
		blas32.Implementation().Sgemm(ta, tb, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blas64.Implementation().Dgemm(ta, tb, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// gemmFast maps a BLAS-style call onto fastGemmWS with a pooled
// workspace. A transposed B is handled by computing Cᵀ = B·op(A)ᵀ with a
// transposed copy of op(A), which is only worthwhile when op(A) is small
// (m ≤ 64).
func gemmFast[T Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, acc bool, c []T, ldc int) bool {
	ws := getGemmWS[T]()
	defer putGemmWS(ws)
	return gemmFastWS(ws, tA, tB, m, n, k, a, lda, b, ldb, acc, c, ldc)
}

// gemmFastWS is gemmFast with its copies in ws, whatever ws holds.
func gemmFastWS[T Float](ws *gemmWS[T], tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, acc bool, c []T, ldc int) bool {
	rsA, csA := lda, 1
	if tA {
		rsA, csA = 1, lda
	}
	if !tB {
		return fastGemmWS(ws, false, m, n, k, a, rsA, csA, b, ldb, c, ldc, acc)
	}
	if m > 64 || len(a) <= (m-1)*rsA+(k-1)*csA || len(c) < (m-1)*ldc+n {
		return false
	}
	ws.at = grow(ws.at, k*m) // op(A)ᵀ, k×m, every entry written below
	at := ws.at
	for i := 0; i < m; i++ {
		for kk := 0; kk < k; kk++ {
			at[kk*m+i] = a[i*rsA+kk*csA]
		}
	}
	ws.ct = grow(ws.ct, n*m) // Cᵀ, written by the product (acc false)
	ct := ws.ct
	if !fastGemmWS(ws, false, n, m, k, b, ldb, 1, at, m, ct, m, false) {
		return false
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if acc {
			for j := range row {
				row[j] += ct[j*m+i]
			}
		} else {
			for j := range row {
				row[j] = ct[j*m+i]
			}
		}
	}
	return true
}

// reluSum is Σ d[o] over the o with a[o] ≥ 0, in order from +0 — the
// loop "if a[o] >= 0 { sum += d[o] }" without its branch, which the ReLU
// makes a coin flip: the other terms add +0 (the bits of d[o] masked off),
// and adding +0 changes no sum that starts at +0 (it is never −0), NaN
// and ±Inf included. a and d have the same length.
func reluSum[T Float](d []T, a []int32) T {
	switch dd := any(d).(type) {
	case []float64:
		var sum float64
		for o, ai := range a[:len(dd)] {
			keep := uint64(int64(^(ai >> 31))) // all ones where ai ≥ 0
			sum += math.Float64frombits(math.Float64bits(dd[o]) & keep)
		}
		return T(sum)
	case []float32:
		var sum float32
		for o, ai := range a[:len(dd)] {
			keep := uint32(^(ai >> 31))
			sum += math.Float32frombits(math.Float32bits(dd[o]) & keep)
		}
		return T(sum)
	}
	panic("unreachable")
}

// writtenZeros returns n zeros whose memory has been written, not only
// allocated, for buffers that are read before they are written (Adam's
// moments, accumulators). Go hands out fresh memory as untouched pages; a
// read maps such a page to the kernel's shared zero page and the following
// write copies it, and that copy flushes the TLBs of every CPU running the
// process — an inter-processor interrupt, which in a virtual machine traps
// to the hypervisor. Writing the zeros first maps each page once. Measured
// on the project's 2-core VM: drknn-table -only cifar10-2w10s, 4 repeats,
// 311,000 → 59,000 TLB flushes and 36.4 → 34.8 CPU-s (README, Speed).
func writtenZeros[T Float](n int) []T {
	s := make([]T, n)
	clear(s)
	return s
}

// blockSize is the number of samples per work unit. Partial sums are formed
// per block and reduced in block order, so results do not depend on the
// number of goroutines.
const blockSize = 8

// forBlocks runs fn(block, lo, hi) for the fixed blocks of [0, n) on up to
// GOMAXPROCS goroutines.
func forBlocks(n int, fn func(b, lo, hi int)) {
	forUnits((n+blockSize-1)/blockSize, func(b, _, _ int) {
		fn(b, b*blockSize, min((b+1)*blockSize, n))
	})
}

// forUnits runs fn(u, u, u+1) for u in [0, nb) on up to GOMAXPROCS
// goroutines (forWorkers: an errgroup of workers taking units in order).
func forUnits(nb int, fn func(u, lo, hi int)) {
	forWorkers(nb, func(_, u int) { fn(u, u, u+1) })
}

// im2col writes the 3×3 patches of one sample x (c×h×w) into cols
// ((c·9)×(ho·wo)), zero outside the padded border.
func im2col[T Float](g convGeom, x, cols []T) {
	hw := g.hw()
	for c := 0; c < g.c; c++ {
		xc := x[c*g.h*g.w : (c+1)*g.h*g.w]
		for kh := 0; kh < 3; kh++ {
			for kw := 0; kw < 3; kw++ {
				row := cols[((c*3+kh)*3+kw)*hw:][:hw]
				for oh := 0; oh < g.ho; oh++ {
					ih := oh + kh - g.pad
					dst := row[oh*g.wo : (oh+1)*g.wo]
					if ih < 0 || ih >= g.h {
						clear(dst)
						continue
					}
					// dst[ow] = src[ow+kw−pad] inside the image, 0 outside:
					// one copy between two zero borders
					src := xc[ih*g.w : (ih+1)*g.w]
					off := kw - g.pad
					lo, hi := max(0, -off), min(g.wo, g.w-off)
					if hi < lo {
						hi = lo
					}
					clear(dst[:lo])
					copy(dst[lo:hi], src[lo+off:hi+off])
					clear(dst[hi:])
				}
			}
		}
	}
}

// convScratch is per-goroutine working memory of the conv kernels.
type convScratch[T Float] struct {
	cols  []T // (c·9)×(ho·wo)
	convT []T // (ho·wo)×k: convolution output, pixel-major
	wT    []T // (c·9)×k: the weights transposed
}

func newConvScratch[T Float](g convGeom) *convScratch[T] {
	return &convScratch[T]{cols: make([]T, g.c9()*g.hw()), convT: make([]T, g.hw()*g.k), wT: make([]T, g.c9()*g.k)}
}

// convScratchPools keep conv scratch between calls ([0] float32, [1]
// float64): a CIFAR-sized block's scratch is 0.5 MB, taken once per block
// of every forward and backward pass.
var convScratchPools [2]sync.Pool

func convScratchPool[T Float]() *sync.Pool { return typedPool[T](&convScratchPools) }

// typedPool is pools[0] for float32 and pools[1] for float64.
func typedPool[T Float](pools *[2]sync.Pool) *sync.Pool {
	var z T
	if unsafe.Sizeof(z) == 8 {
		return &pools[1]
	}
	return &pools[0]
}

// getConvScratch returns scratch for g (contents undefined, as every user
// writes what it reads); putConvScratch hands it back.
func getConvScratch[T Float](g convGeom) *convScratch[T] {
	if s, ok := convScratchPool[T]().Get().(*convScratch[T]); ok {
		nc, nt, nw := g.c9()*g.hw(), g.hw()*g.k, g.c9()*g.k
		if cap(s.cols) >= nc && cap(s.convT) >= nt && cap(s.wT) >= nw {
			s.cols, s.convT, s.wT = s.cols[:nc], s.convT[:nt], s.wT[:nw]
			return s
		}
	}
	return newConvScratch[T](g)
}

func putConvScratch[T Float](s *convScratch[T]) { convScratchPool[T]().Put(s) }

func b2i(b bool) int32 {
	var i int32
	if b {
		i = 1
	}
	return i
}

// convReluPoolSample computes one sample: out (k×hp×wp) = maxpool(relu(w∗x + b)).
// arg[i] is the index in the pixel-major (ho·wo)×k convolution output that
// out[i] came from, or −1 when out[i] = 0 because the maximum was ≤ 0.
// Ties go to the first of the four pixels in row-major order. s.wT must
// hold w transposed.
func convReluPoolSample[T Float](g convGeom, x, bias, out []T, arg []int32, s *convScratch[T]) {
	hw, K := g.hw(), g.k
	im2col(g, x, s.cols)
	// convT (hw×K) = colsᵀ (hw×c9) · wT (c9×K)
	gemm(true, false, hw, K, g.c9(), 1, s.cols, hw, s.wT, K, 0, s.convT, K)
	per := g.hp * g.wp
	// float64 with AVX2: kern.PoolReluD, the loop below four channels at
	// a time with the same bits (Go's max as the compiler computes it);
	// the loop was 80% of the layer's forward time
	cd, _ := any(s.convT).([]float64)
	bd, _ := any(bias).([]float64)
	od, _ := any(out).([]float64)
	vec := usePoolAsm && cd != nil && K%4 == 0 && len(bd) >= K && len(od) >= K*per && len(arg) >= K*per
	for ph := 0; ph < g.hp; ph++ {
		for pw := 0; pw < g.wp; pw++ {
			p0 := (2*ph*g.wo + 2*pw) * K
			p2 := p0 + g.wo*K
			r0 := s.convT[p0 : p0+2*K]
			r2 := s.convT[p2 : p2+2*K]
			o := ph*g.wp + pw
			if vec {
				kern.PoolReluD(&cd[p0], &cd[p2], &bd[0], K, &od[o], &arg[o], per, p0, p2)
				continue
			}
			for k := 0; k < K; k++ {
				a, b, c, d := r0[k], r0[K+k], r2[k], r2[K+k]
				m01, m23 := max(a, b), max(c, d)
				i01 := int32(p0+k) + int32(K)*b2i(b > a)
				i23 := int32(p2+k) + int32(K)*b2i(d > c)
				idx := i01
				if m23 > m01 {
					idx = i23
				}
				v := max(m01, m23) + bias[k]
				if !(v > 0) {
					idx = -1
				}
				out[k*per+o] = max(v, 0)
				arg[k*per+o] = idx
			}
		}
	}
}

func transposeW[T Float](g convGeom, w, wT []T) {
	c9 := g.c9()
	for k := 0; k < g.k; k++ {
		for j := 0; j < c9; j++ {
			wT[j*g.k+k] = w[k*c9+j]
		}
	}
}

// convReluPoolForward runs the fused layer on n samples. x is n×(c·h·w),
// out n×flat, arg n×flat.
func convReluPoolForward[T Float](g convGeom, n int, x, w, bias, out []T, arg []int32) {
	in, fl := g.c*g.h*g.w, g.flat()
	forBlocks(n, func(_, lo, hi int) {
		s := getConvScratch[T](g)
		defer putConvScratch(s)
		transposeW(g, w, s.wT)
		for i := lo; i < hi; i++ {
			convReluPoolSample(g, x[i*in:(i+1)*in], bias, out[i*fl:(i+1)*fl], arg[i*fl:(i+1)*fl], s)
		}
	})
}

// convReluPoolGradW computes dw (k×c×3×3) and db (k) from the upstream
// gradient dout (n×flat), given the forward's arg. Either may be nil.
func convReluPoolGradW[T Float](g convGeom, n int, x, dout []T, arg []int32, dw, db []T) {
	in, fl, hw, c9, K := g.c*g.h*g.w, g.flat(), g.hw(), g.c9(), g.k
	nb := (n + blockSize - 1) / blockSize
	pw := make([][]T, nb) // per block: dwᵀ (c9×K)
	pb := make([][]T, nb)
	per := g.hp * g.wp
	forBlocks(n, func(b, lo, hi int) {
		var s *convScratch[T]
		if dw != nil {
			s = getConvScratch[T](g)
			defer putConvScratch(s)
			clear(s.convT)                  // kept zero between samples (below)
			pw[b] = writtenZeros[T](c9 * K) // the products add into it
		}
		pb[b] = make([]T, K)
		for i := lo; i < hi; i++ {
			d := dout[i*fl : (i+1)*fl]
			a := arg[i*fl : (i+1)*fl]
			for k := 0; db != nil && k < K; k++ { // the bias sums only when asked for
				pb[b][k] += reluSum(d[k*per:(k+1)*per], a[k*per:(k+1)*per])
			}
			if dw == nil {
				continue
			}
			for o, ai := range a {
				if ai >= 0 {
					s.convT[ai] = d[o]
				}
			}
			im2col(g, x[i*in:(i+1)*in], s.cols)
			// dwᵀ (c9×K) += cols (c9×hw) · dconvT (hw×K)
			gemm(false, false, c9, K, hw, 1, s.cols, hw, s.convT, K, 1, pw[b], K)
			// zero again only what was set (a quarter of convT with 2×2
			// pooling) instead of clearing it all for the next sample
			// (branch-free: an unset entry, ai < 0, zeroes entry 0, which
			// is zero after this loop in any case)
			for _, ai := range a {
				s.convT[max(ai, 0)] = 0
			}
		}
	})
	if dw != nil {
		clear(dw)
		for _, p := range pw {
			for j := 0; j < c9; j++ {
				for k := 0; k < K; k++ {
					dw[k*c9+j] += p[j*K+k]
				}
			}
		}
	}
	if db != nil {
		clear(db)
		for _, p := range pb {
			for j, v := range p {
				db[j] += v
			}
		}
	}
}

// linearForward computes y (n×d) = act(x (n×f) · w (f×d) + b).
func linearForward[T Float](n, f, d int, x, w, b, y []T, relu bool) {
	gemm(false, false, n, d, f, 1, x, f, w, d, 0, y, d)
	for i := 0; i < n; i++ {
		row := y[i*d : (i+1)*d]
		for j := range row {
			v := row[j] + b[j]
			if relu && v < 0 {
				v = 0
			}
			row[j] = v
		}
	}
}

// reluMask returns dy with entries zeroed where y ≤ 0 (the ReLU was off),
// in a new slice; or dy itself when relu is false.
func reluMask[T Float](y, dy []T, relu bool) []T {
	if !relu {
		return dy
	}
	dz := make([]T, len(dy))
	for i, v := range y {
		if v > 0 {
			dz[i] = dy[i]
		}
	}
	return dz
}

// linearGradX computes dx (n×f) = dz · wᵀ.
func linearGradX[T Float](n, f, d int, w, dz, dx []T) {
	gemm(false, true, n, f, d, 1, dz, d, w, d, 0, dx, f)
}

// linearGradW computes dw (f×d) = xᵀ · dz.
func linearGradW[T Float](n, f, d int, x, dz, dw []T) {
	gemm(true, false, f, d, n, 1, x, f, dz, d, 0, dw, d)
}

// linearGradB computes db (d) = column sums of dz.
func linearGradB[T Float](n, d int, dz, db []T) {
	clear(db)
	for i := 0; i < n; i++ {
		for j, v := range dz[i*d : (i+1)*d] {
			db[j] += v
		}
	}
}

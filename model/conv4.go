package model

import (
	"math"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Kernels of one Conv-4 block: 3×3 convolution (padding 1, no bias),
// batch normalisation, ReLU and 2×2 max-pool, forward and backward.
//
// Layout. Between blocks activations are channels-last (NHWC: sample,
// row, column, channel), so that a 3×3 patch of every channel is nine
// contiguous runs of C values and all three products of a block are
// plain row-major GEMMs on the package's kernels:
//
//	forward   Z (P×K)     = cols (P×9C) · Wmᵀ (9C×K)
//	dW        dWmᵀ (9C×K) = colsᵀ (9C×P) · dZ (P×K)
//	dX        dcols (P×9C) = dZ (P×K) · Wm (K×9C), scattered back (col2im)
//
// where P is a chunk of output pixels (rows of cols, at most chunkRows),
// Wm is the weight as K×9C with columns in (kh, kw, c) order, and the
// stored weight keeps PyTorch's K×C×3×3 layout. The first block reads
// its input in the caller's NCHW layout (copied to NHWC when C > 1); the
// last writes its output flattened in PyTorch's (c, h, w) order.
//
// Determinism. Work is split into units of consecutive samples whose
// number depends on the batch size only (unitsFor); every cross-sample
// sum (batch statistics, dγ, dβ, dW) is formed per unit and the units'
// partial sums are added in unit order. Results are therefore
// bit-identical whatever the number of goroutines.

// chunkRows is the number of output pixels whose patches are expanded at
// a time (a multiple of the register tile height fastMR).
const chunkRows = 240

// maxUnits bounds the number of work units of a block (and so the partial
// sums kept for the reductions).
const maxUnits = 32

// unitsFor returns the samples per unit and the number of units for a
// batch of n.
func unitsFor(n int) (per, units int) {
	per = (n + maxUnits - 1) / maxUnits
	if per < 1 {
		per = 1
	}
	return per, (n + per - 1) / per
}

// forWorkers runs fn(worker, unit) for every unit in [0, nu) on up to
// GOMAXPROCS goroutines (worker in [0, min(GOMAXPROCS, nu))), taking
// units in order, and returns when all are done.
func forWorkers(nu int, fn func(w, u int)) {
	workers := min(runtime.GOMAXPROCS(0), nu)
	if workers <= 1 {
		for u := 0; u < nu; u++ {
			fn(0, u)
		}
		return
	}
	var next atomic.Int64
	var g errgroup.Group
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			for {
				u := int(next.Add(1) - 1)
				if u >= nu {
					return nil
				}
				fn(w, u)
			}
		})
	}
	_ = g.Wait() // the workers return no errors
}

func roundUp(v, m int) int { return (v + m - 1) / m * m }

// blockScratch is one worker's working memory.
type blockScratch[T Float] struct {
	cols  []T // chunkRows × 9C
	zc    []T // chunkRows × K
	dcols []T // chunkRows × 9C
	ws    gemmWS[T]
}

// blockBuf is a block's state between its forward and backward passes and
// its reusable buffers.
type blockBuf[T Float] struct {
	n     int     // batch of the last forward
	train bool    // whether the last forward used batch statistics
	xin   []T     // NHWC copy of an NCHW input with C > 1 (first block)
	dxin  []T     // its gradient, NHWC
	z     []T     // n·H·W × K convolution output
	arg   []uint8 // n·Hp·Wp·K: which of the 4 pixels was the maximum; noArg if the ReLU was off
	out   []T
	mean  []float64 // K: the statistics used (batch or running)
	inv   []float64 // K: 1/√(var + eps)

	wm, wmT []T // K×9C and 9C×K

	s1, s2 [][]float64 // per unit partial sums (forward statistics)
	sdy    [][]float64 // per unit Σ dy (backward)
	sdyx   [][]float64 // per unit Σ dy·x̂
	dwT    [][]T       // per unit dWm (K×9C)

	dx, dw, dgamma, dbeta []T
	sa, sb, ca, cb, cc    []T       // per-channel coefficients
	vb                    []float64 // batch variance
	one                   []T       // the placeholder input gradient
	scratch               []*blockScratch[T]
}

const noArg = 255

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

func growRows[T any](b [][]T, units, n int) [][]T {
	if len(b) < units {
		b = append(b, make([][]T, units-len(b))...)
	}
	b = b[:units]
	for i := range b {
		b[i] = grow(b[i], n)
	}
	return b
}

func (b *blockBuf[T]) scratchFor(g convGeom, workers int) []*blockScratch[T] {
	for len(b.scratch) < workers {
		b.scratch = append(b.scratch, &blockScratch[T]{})
	}
	for _, s := range b.scratch[:workers] {
		s.cols = grow(s.cols, chunkRows*9*g.c)
		s.zc = grow(s.zc, chunkRows*g.k)
	}
	return b.scratch[:workers]
}

// weightsToWm fills wm (K×9C, columns (kh, kw, c)) and wmT (its
// transpose) from w (K×C×3×3).
func weightsToWm[T Float](g convGeom, w, wm, wmT []T) {
	C, K := g.c, g.k
	for k := 0; k < K; k++ {
		for c := 0; c < C; c++ {
			for t := 0; t < 9; t++ {
				v := w[(k*C+c)*9+t]
				j := t*C + c
				wm[k*9*C+j] = v
				wmT[j*K+k] = v
			}
		}
	}
}

// nchwToNHWC copies n samples from NCHW to NHWC.
func nchwToNHWC[T Float](n, C, H, W int, src, dst []T) {
	hw := H * W
	for s := 0; s < n; s++ {
		x, y := src[s*C*hw:(s+1)*C*hw], dst[s*C*hw:(s+1)*C*hw]
		for c := 0; c < C; c++ {
			for p, v := range x[c*hw : (c+1)*hw] {
				y[p*C+c] = v
			}
		}
	}
}

// nhwcToNCHW is the inverse of nchwToNHWC.
func nhwcToNCHW[T Float](n, C, H, W int, src, dst []T) {
	hw := H * W
	for s := 0; s < n; s++ {
		x, y := src[s*C*hw:(s+1)*C*hw], dst[s*C*hw:(s+1)*C*hw]
		for c := 0; c < C; c++ {
			d := y[c*hw : (c+1)*hw]
			for p := range d {
				d[p] = x[p*C+c]
			}
		}
	}
}

// im2colRows writes the patches of output pixels [r0, r1) (global index
// sample·H·W + row·W + column) of the NHWC input x into cols, one row of
// 9C values per pixel in (kh, kw, c) order, zero outside the image.
func im2colRows[T Float](g convGeom, x []T, r0, r1 int, cols []T) {
	C, H, W := g.c, g.h, g.w
	hw := H * W
	c9 := 9 * C
	for r := r0; r < r1; r++ {
		s, p := r/hw, r%hw
		oh, ow := p/W, p%W
		row := cols[(r-r0)*c9 : (r-r0+1)*c9]
		xs := x[s*hw*C : (s+1)*hw*C]
		if C == 1 && oh > 0 && oh < H-1 && ow > 0 && ow < W-1 {
			i := (oh-1)*W + ow - 1
			row = row[:9]
			row[0], row[1], row[2] = xs[i], xs[i+1], xs[i+2]
			i += W
			row[3], row[4], row[5] = xs[i], xs[i+1], xs[i+2]
			i += W
			row[6], row[7], row[8] = xs[i], xs[i+1], xs[i+2]
			continue
		}
		for kh := 0; kh < 3; kh++ {
			ih := oh + kh - 1
			dst := row[kh*3*C : (kh+1)*3*C]
			if ih < 0 || ih >= H {
				clear(dst)
				continue
			}
			iw0 := ow - 1
			if iw0 >= 0 && iw0+3 <= W {
				copy(dst, xs[(ih*W+iw0)*C:(ih*W+iw0+3)*C])
				continue
			}
			for kw := 0; kw < 3; kw++ {
				iw := iw0 + kw
				d := dst[kw*C : (kw+1)*C]
				if iw < 0 || iw >= W {
					clear(d)
				} else {
					copy(d, xs[(ih*W+iw)*C:(ih*W+iw+1)*C])
				}
			}
		}
	}
}

// col2imRows adds the patch gradients dcols of output pixels [r0, r1)
// into the NHWC input gradient dx.
func col2imRows[T Float](g convGeom, dcols []T, r0, r1 int, dx []T) {
	C, H, W := g.c, g.h, g.w
	hw := H * W
	c9 := 9 * C
	for r := r0; r < r1; r++ {
		s, p := r/hw, r%hw
		oh, ow := p/W, p%W
		row := dcols[(r-r0)*c9 : (r-r0+1)*c9]
		xs := dx[s*hw*C : (s+1)*hw*C]
		for kh := 0; kh < 3; kh++ {
			ih := oh + kh - 1
			if ih < 0 || ih >= H {
				continue
			}
			for kw := 0; kw < 3; kw++ {
				iw := ow + kw - 1
				if iw < 0 || iw >= W {
					continue
				}
				d := xs[(ih*W+iw)*C : (ih*W+iw+1)*C]
				src := row[(kh*3+kw)*C : (kh*3+kw+1)*C]
				for c, v := range src {
					d[c] += v
				}
			}
		}
	}
}

// blockGemm computes C (m×n) = A·B or C += A·B for A(i,k) = a[i*rsA +
// k*csA], B row-major, on the calling goroutine.
func blockGemm[T Float](ws *gemmWS[T], m, n, k int, a []T, rsA, csA int, b []T, ldb int, c []T, ldc int, acc bool) {
	if useFastGemm && fastGemmWS(ws, true, m, n, k, a, rsA, csA, b, ldb, c, ldc, acc) {
		return
	}
	var beta T
	if acc {
		beta = 1
	}
	if csA == 1 {
		gemm(false, false, m, n, k, 1, a, rsA, b, ldb, beta, c, ldc)
	} else {
		gemm(true, false, m, n, k, 1, a, csA, b, ldb, beta, c, ldc)
	}
}

// blockForward runs one block on n samples. x is the block input (NHWC,
// or NCHW when nchw), w the K×C×3×3 weight, gamma and beta the BN affine
// parameters. When train is true the batch statistics are used (and
// returned in b.mean and b.inv, with the biased batch variance in varOut
// when it is not nil); otherwise mean and variance are the given running
// statistics. Output: NHWC pooled, or (c, h, w)-flattened when flatOut.
func blockForward[T Float](g convGeom, n int, x, w, gamma, beta []T, nchw, flatOut, train bool, runMean, runVar []T, varOut []float64, b *blockBuf[T]) {
	C, K, hw := g.c, g.k, g.h*g.w
	c9 := 9 * C
	b.n, b.train = n, train
	if nchw && C > 1 {
		b.xin = grow(b.xin, n*C*hw)
		nchwToNHWC(n, C, g.h, g.w, x, b.xin)
		x = b.xin
	}
	b.wm, b.wmT = grow(b.wm, K*c9), grow(b.wmT, K*c9)
	weightsToWm(g, w, b.wm, b.wmT)
	b.z = grow(b.z, n*hw*K)
	b.mean, b.inv = grow(b.mean, K), grow(b.inv, K)
	per, units := unitsFor(n)
	if train {
		b.s1, b.s2 = growRows(b.s1, units, K), growRows(b.s2, units, K)
	}
	sc := b.scratchFor(g, min(runtime.GOMAXPROCS(0), units))
	forWorkers(units, func(wk, u int) {
		s := sc[wk]
		r0, r1 := u*per*hw, min((u+1)*per, n)*hw
		var s1, s2 []float64
		if train {
			s1, s2 = b.s1[u], b.s2[u]
			clear(s1)
			clear(s2)
		}
		for c0 := r0; c0 < r1; c0 += chunkRows {
			c1 := min(c0+chunkRows, r1)
			rows := roundUp(c1-c0, fastMR)
			im2colRows(g, x, c0, c1, s.cols)
			clear(s.cols[(c1-c0)*c9 : rows*c9])
			z := b.z[c0*K : c1*K]
			if rows == c1-c0 {
				blockGemm(&s.ws, rows, K, c9, s.cols, c9, 1, b.wmT, K, z, K, false)
			} else { // the padding rows go to scratch
				blockGemm(&s.ws, rows, K, c9, s.cols, c9, 1, b.wmT, K, s.zc, K, false)
				copy(z, s.zc[:len(z)])
			}
			if train {
				colSums(z, K, s1, s2)
			}
		}
	})
	if train {
		m := float64(n * hw)
		for k := 0; k < K; k++ {
			var a1, a2 float64
			for u := 0; u < units; u++ {
				a1 += b.s1[u][k]
				a2 += b.s2[u][k]
			}
			mu := a1 / m
			v := max(a2/m-mu*mu, 0)
			b.mean[k], b.inv[k] = mu, 1/math.Sqrt(v+BNEps)
			if varOut != nil {
				varOut[k] = v
			}
		}
	} else {
		for k := 0; k < K; k++ {
			b.mean[k], b.inv[k] = float64(runMean[k]), 1/math.Sqrt(float64(runVar[k])+BNEps)
		}
	}
	// Normalise, ReLU, pool.
	b.sa, b.sb = grow(b.sa, K), grow(b.sb, K)
	sa, sb := b.sa, b.sb
	for k := 0; k < K; k++ {
		a := float64(gamma[k]) * b.inv[k]
		sa[k], sb[k] = T(a), T(float64(beta[k])-a*b.mean[k])
	}
	pl := g.hp * g.wp
	b.out = grow(b.out, n*pl*K)
	b.arg = grow(b.arg, n*pl*K)
	forWorkers(units, func(_, u int) {
		for s := u * per; s < min((u+1)*per, n); s++ {
			for ph := 0; ph < g.hp; ph++ {
				for pw := 0; pw < g.wp; pw++ {
					r := s*hw + 2*ph*g.w + 2*pw
					q := (s*pl + ph*g.wp + pw) * K
					z0, z1 := b.z[r*K:(r+1)*K], b.z[(r+1)*K:(r+2)*K]
					z2, z3 := b.z[(r+g.w)*K:(r+g.w+1)*K], b.z[(r+g.w+1)*K:(r+g.w+2)*K]
					o, ar := b.out[q:q+K], b.arg[q:q+K]
					if flatOut {
						poolRow(sa, sb, z0, z1, z2, z3, b.out[s*pl*K+ph*g.wp+pw:], pl, ar)
					} else {
						poolRow(sa, sb, z0, z1, z2, z3, o, 1, ar)
					}
				}
			}
		}
	})
}

// colSums adds the column sums and sums of squares of z (rows × K) to s1
// and s2.
func colSums[T Float](z []T, K int, s1, s2 []float64) {
	for i := 0; i < len(z); i += K {
		row := z[i : i+K]
		for k, v := range row {
			f := float64(v)
			s1[k] += f
			s2[k] += f * f
		}
	}
}

// poolRow computes out[k·stride] = max(0, max_i(a_k·z_i[k] + b_k)) over the
// 2×2 window z0 z1 / z2 z3 and the arg-max (first in row-major order), or
// noArg when the ReLU is off.
func poolRow[T Float](a, bb, z0, z1, z2, z3, out []T, stride int, arg []uint8) {
	K := len(a)
	bb, z0, z1, z2, z3, arg = bb[:K], z0[:K], z1[:K], z2[:K], z3[:K], arg[:K]
	// Branch-free: the comparisons are data-dependent coin flips.
	for k := range a {
		ak, bk := a[k], bb[k]
		v0, v1, v2, v3 := ak*z0[k]+bk, ak*z1[k]+bk, ak*z2[k]+bk, ak*z3[k]+bk
		m01, m23 := max(v0, v1), max(v2, v3)
		i01 := b2u(v1 > v0)
		i23 := 2 + b2u(v3 > v2)
		up := b2u(m23 > m01)
		i := i01 + up*(i23-i01)
		m := max(m01, m23)
		off := b2u(!(m > 0))
		out[k*stride] = max(m, 0)
		arg[k] = i | off*noArg
	}
}

func b2u(b bool) uint8 {
	var i uint8
	if b {
		i = 1
	}
	return i
}

// blockBackward computes the gradients of one block from the output
// gradient dout (same layout as the forward output) after blockForward
// ran on the same input: b.dw (K×C×3×3), b.dgamma, b.dbeta, and b.dx
// (in the input's layout) when needDX.
func blockBackward[T Float](g convGeom, x, gamma, dout []T, nchw, flatOut, needDX bool, b *blockBuf[T]) {
	n, C, K, hw := b.n, g.c, g.k, g.h*g.w
	c9 := 9 * C
	if nchw && C > 1 {
		x = b.xin
	}
	pl := g.hp * g.wp
	per, units := unitsFor(n)
	b.sdy, b.sdyx = growRows(b.sdy, units, K), growRows(b.sdyx, units, K)
	// dout of pooled output (s, p), channel k, is dout[base(s, p) + k·dst].
	dst := 1
	if flatOut {
		dst = pl
	}
	base := func(s, p int) int {
		if flatOut {
			return s*pl*K + p
		}
		return (s*pl + p) * K
	}
	// Phase A: Σ dy and Σ dy·x̂ per channel (dy is non-zero only at the
	// pooling arg-max of an active ReLU).
	forWorkers(units, func(_, u int) {
		sdy, sdyx := b.sdy[u], b.sdyx[u]
		clear(sdy)
		clear(sdyx)
		for s := u * per; s < min((u+1)*per, n); s++ {
			for p := 0; p < pl; p++ {
				ph, pw := p/g.wp, p%g.wp
				q := (s*pl + p) * K
				ar := b.arg[q : q+K]
				do := dout[base(s, p):]
				r0 := s*hw + 2*ph*g.w + 2*pw
				for k, a := range ar {
					// Branch-free: inactive outputs (noArg) add 0.
					r := r0 + int(a>>1&1)*g.w + int(a&1)
					d := float64(do[k*dst]) * float64(b2u(a != noArg))
					sdy[k] += d
					sdyx[k] += d * (float64(b.z[r*K+k]) - b.mean[k]) * b.inv[k]
				}
			}
		}
	})
	b.dgamma, b.dbeta = grow(b.dgamma, K), grow(b.dbeta, K)
	b.ca, b.cb, b.cc = grow(b.ca, K), grow(b.cb, K), grow(b.cc, K)
	ca, cb, cc := b.ca, b.cb, b.cc
	clear(cb)
	clear(cc)
	m := float64(n * hw)
	for k := 0; k < K; k++ {
		var sdy, sdyx float64
		for u := 0; u < units; u++ {
			sdy += b.sdy[u][k]
			sdyx += b.sdyx[u][k]
		}
		b.dbeta[k], b.dgamma[k] = T(sdy), T(sdyx)
		// dz = A·dy + B + C·z; B = C = 0 with fixed (running) statistics.
		a := float64(gamma[k]) * b.inv[k]
		ca[k] = T(a)
		if b.train {
			c := -a * b.inv[k] * sdyx / m
			cc[k] = T(c)
			cb[k] = T(-a*sdy/m - c*b.mean[k])
		}
	}
	// Phase B: dz per chunk, dW partials, dX.
	b.dwT = growRows(b.dwT, units, c9*K)
	if needDX {
		b.dx = grow(b.dx, n*hw*C)
	}
	sc := b.scratchFor(g, min(runtime.GOMAXPROCS(0), units))
	if needDX {
		for _, s := range sc {
			s.dcols = grow(s.dcols, chunkRows*c9)
		}
	}
	dx := b.dx
	if needDX && nchw && C > 1 {
		b.dxin = grow(b.dxin, n*hw*C) // the NHWC gradient until converted
		dx = b.dxin
	}
	forWorkers(units, func(wk, u int) {
		s := sc[wk]
		r0, r1 := u*per*hw, min((u+1)*per, n)*hw
		dwT := b.dwT[u]
		clear(dwT)
		if needDX {
			clear(dx[r0*C : r1*C])
		}
		for c0 := r0; c0 < r1; c0 += chunkRows {
			c1 := min(c0+chunkRows, r1)
			rows := roundUp(c1-c0, fastMR)
			dz := s.zc[:rows*K]
			for r := c0; r < c1; r++ {
				zr := b.z[r*K : (r+1)*K]
				dr := dz[(r-c0)*K : (r-c0+1)*K]
				for k := range dr {
					dr[k] = cc[k]*zr[k] + cb[k]
				}
				sm, p := r/hw, r%hw
				oh, ow := p/g.w, p%g.w
				if oh >= 2*g.hp || ow >= 2*g.wp {
					continue
				}
				pp := (oh/2)*g.wp + ow/2
				pos := uint8((oh&1)*2 + ow&1)
				ar := b.arg[(sm*pl+pp)*K : (sm*pl+pp+1)*K]
				if dst == 1 {
					addArg(dr, ca, dout[base(sm, pp):base(sm, pp)+K], ar, pos)
				} else {
					do := dout[base(sm, pp):]
					for k, a := range ar {
						if a == pos {
							dr[k] += ca[k] * do[k*dst]
						}
					}
				}
			}
			clear(dz[(c1-c0)*K:])
			im2colRows(g, x, c0, c1, s.cols)
			// dWm (K×9C) += dzᵀ · cols
			blockGemm(&s.ws, K, c9, c1-c0, dz, 1, K, s.cols, c9, dwT, c9, true)
			if needDX {
				// dcols = dz · Wm
				blockGemm(&s.ws, rows, c9, K, dz, K, 1, b.wm, c9, s.dcols, c9, false)
				col2imRows(g, s.dcols, c0, c1, dx)
			}
		}
	})
	b.dw = grow(b.dw, K*c9)
	clear(b.dw)
	for u := 0; u < units; u++ {
		p := b.dwT[u]
		for k := 0; k < K; k++ {
			row := p[k*c9 : (k+1)*c9]
			dk := b.dw[k*c9 : (k+1)*c9]
			for t := 0; t < 9; t++ {
				for c, v := range row[t*C : (t+1)*C] {
					dk[c*9+t] += v
				}
			}
		}
	}
	if needDX && nchw && C > 1 {
		nhwcToNCHW(n, C, g.h, g.w, dx, b.dx)
	}
}

// addArg adds a[k]·d[k] to dz[k] for the channels whose pooling arg-max is
// pos.
func addArg[T Float](dz, a, d []T, arg []uint8, pos uint8) {
	K := len(dz)
	a, d, arg = a[:K], d[:K], arg[:K]
	for k := range dz {
		dz[k] += a[k] * d[k] * T(b2u(arg[k] == pos))
	}
}

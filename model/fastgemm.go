package model

import (
	"sync"
	"unsafe"

	"github.com/drknn/drknn/model/internal/kern"
)

// A small GotoBLAS-style matrix product for the pure-Go build: 6×16
// (float32) or 6×8 (float64) register tiles computed by AVX2+FMA
// assembly kernels over K blocks, with zero-padded copies only at the
// edges. Every element of C is computed by one fixed sequence of
// operations, so results do not depend on the number of goroutines.

const (
	fastMR = 6   // rows per register tile
	fastKC = 384 // K block
)

// fastNR is the register tile width: 16 float32 or 8 float64 (AVX2), twice
// that with AVX-512.
func fastNR[T Float]() int {
	var z T
	nr := 8
	if unsafe.Sizeof(z) == 4 {
		nr = 16
	}
	if useAVX512 {
		nr *= 2
	}
	return nr
}

func kernel[T Float](kc int, a *T, rsA, csA int, b *T, ldb int, c *T, ldc int, acc bool) {
	ac := 0
	if acc {
		ac = 1
	}
	var z T
	sz := int(unsafe.Sizeof(z))
	switch {
	case sz == 4 && useAVX512:
		kern.S6x32(kc, (*float32)(unsafe.Pointer(a)), rsA*sz, csA*sz, (*float32)(unsafe.Pointer(b)), ldb*sz, (*float32)(unsafe.Pointer(c)), ldc*sz, ac)
	case sz == 8 && useAVX512:
		kern.D6x16(kc, (*float64)(unsafe.Pointer(a)), rsA*sz, csA*sz, (*float64)(unsafe.Pointer(b)), ldb*sz, (*float64)(unsafe.Pointer(c)), ldc*sz, ac)
	case sz == 4:
		kern.S6x16(kc, (*float32)(unsafe.Pointer(a)), rsA*sz, csA*sz, (*float32)(unsafe.Pointer(b)), ldb*sz, (*float32)(unsafe.Pointer(c)), ldc*sz, ac)
	default:
		kern.D6x8(kc, (*float64)(unsafe.Pointer(a)), rsA*sz, csA*sz, (*float64)(unsafe.Pointer(b)), ldb*sz, (*float64)(unsafe.Pointer(c)), ldc*sz, ac)
	}
}

// gemmWS is reusable working memory of fastGemmWS (the zero-padded edge
// copies) and gemmFast (the transposed copies), so that repeated products
// allocate nothing.
type gemmWS[T Float] struct {
	edgeA, edgeB []T
	at, ct       []T // gemmFast's op(A)ᵀ and Cᵀ, contents undefined
}

// gemmWSPools keep gemmWS between the calls that bring none ([0] float32,
// [1] float64): the linear layer's products allocated 0.4–3.3 MB of copies
// per call, 1.75 GB in two CIFAR-10 repeats, and fresh memory costs page
// faults (README, Speed).
var gemmWSPools [2]sync.Pool

func gemmWSPool[T Float]() *sync.Pool { return typedPool[T](&gemmWSPools) }

func getGemmWS[T Float]() *gemmWS[T] {
	if ws, ok := gemmWSPool[T]().Get().(*gemmWS[T]); ok {
		return ws
	}
	return new(gemmWS[T])
}

func putGemmWS[T Float](ws *gemmWS[T]) { gemmWSPool[T]().Put(ws) }

// buf returns *p resized to n zeros (a zero-padded edge copy).
func (ws *gemmWS[T]) buf(p *[]T, n int) []T {
	*p = grow(*p, n)
	clear(*p)
	return *p
}

// fastGemmWS computes C = A·B (acc false) or C += A·B (acc true) for C m×n
// (row stride ldc), A(i,k) = a[i*rsA + k*csA], B(k,j) = b[k*ldb + j], with
// its edge copies in ws, on the calling goroutine only when serial is
// true. It reports false, doing nothing, if the slices are too short for
// the sizes (callers then use BLAS).
func fastGemmWS[T Float](ws *gemmWS[T], serial bool, m, n, k int, a []T, rsA, csA int, b []T, ldb int, c []T, ldc int, acc bool) bool {
	if m <= 0 || n <= 0 {
		return true
	}
	if k <= 0 {
		if !acc {
			for i := 0; i < m; i++ {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return true
	}
	if len(a) <= (m-1)*rsA+(k-1)*csA || len(b) < (k-1)*ldb+n || len(c) < (m-1)*ldc+n || rsA < 0 || csA < 0 || ldb < n || ldc < n {
		return false
	}
	nr := fastNR[T]()
	mt := (m + fastMR - 1) / fastMR
	nt := (n + nr - 1) / nr
	// Zero-padded copies of the partial last row tile of A (fastMR×k) and
	// column tile of B (k×nr), made once.
	var edgeA, edgeB []T
	if mv := m % fastMR; mv != 0 {
		edgeA = ws.buf(&ws.edgeA, fastMR*k)
		i0 := m - mv
		for r := 0; r < mv; r++ {
			for kk := 0; kk < k; kk++ {
				edgeA[r*k+kk] = a[(i0+r)*rsA+kk*csA]
			}
		}
	}
	if nv := n % nr; nv != 0 {
		edgeB = ws.buf(&ws.edgeB, k*nr)
		j0 := n - nv
		for kk := 0; kk < k; kk++ {
			copy(edgeB[kk*nr:kk*nr+nv], b[kk*ldb+j0:kk*ldb+j0+nv])
		}
	}
	byRows, units, perCol := gemmUnits[T](mt, nt)
	job := gemmJob[T]{m: m, n: n, k: k, a: a, rsA: rsA, csA: csA, b: b, ldb: ldb, c: c, ldc: ldc, acc: acc,
		edgeA: edgeA, edgeB: edgeB, mt: mt, nt: nt, nr: nr, byRows: byRows, perCol: perCol}
	if serial || units == 1 || int64(m)*int64(n)*int64(k) < 1<<20 {
		for u := 0; u < units; u++ {
			job.unit(u)
		}
	} else {
		shared := job // only this copy escapes to the workers
		forUnits(units, func(u, _, _ int) { shared.unit(u) })
	}
	return true
}

// gemmJob is one fastGemmWS call's operands and tiling; unit computes one
// work unit (a group of row tiles, or a group of column tiles).
type gemmJob[T Float] struct {
	m, n, k, rsA, csA, ldb, ldc int
	a, b, c, edgeA, edgeB       []T
	acc, byRows                 bool
	mt, nt, nr, perCol          int
}

const (
	gemmGroup    = 8         // row tiles per work unit, by rows
	gemmColUnits = 4         // work units, by columns
	gemmColPanel = 512 << 10 // bytes of A's K block of every row tile, at most, to split by columns
)

// gemmUnits splits a product of mt row tiles and nt column tiles into work
// units: with few row tiles (A's K block of all of them, mt·fastMR×fastKC,
// stays in the core's L2 cache) into gemmColUnits groups of column tiles,
// each unit reading only its columns of B, so that B is read once; else
// into groups of gemmGroup row tiles, each unit reading all of B. A
// product of a batch of 50 rows with the 8192×400 weights of the CIFAR-10
// network's linear layer read its 26 MB of weights twice, once for 48 rows
// and once for the last 2 (BenchmarkGemmUnits). Every tile of C takes the
// same kernel calls in the same order either way: the split changes no bit
// of C.
func gemmUnits[T Float](mt, nt int) (byRows bool, units, perCol int) {
	var z T
	if mt*fastMR*fastKC*int(unsafe.Sizeof(z)) > gemmColPanel {
		return true, (mt + gemmGroup - 1) / gemmGroup, 0
	}
	units = min(nt, gemmColUnits)
	perCol = (nt + units - 1) / units
	return false, (nt + perCol - 1) / perCol, perCol
}

func (j *gemmJob[T]) unit(u int) {
	m, n, k, a, rsA, csA, b, ldb, c, ldc, acc := j.m, j.n, j.k, j.a, j.rsA, j.csA, j.b, j.ldb, j.c, j.ldc, j.acc
	edgeA, edgeB, mt, nt, nr := j.edgeA, j.edgeB, j.mt, j.nt, j.nr
	var sc [fastMR * 32]T
	it0, it1, jt0, jt1 := 0, mt, u*j.perCol, min((u+1)*j.perCol, nt)
	if j.byRows {
		it0, it1, jt0, jt1 = u*gemmGroup, min((u+1)*gemmGroup, mt), 0, nt
	}
	for p0 := 0; p0 < k; p0 += fastKC {
		kc := min(fastKC, k-p0)
		accBlock := acc || p0 > 0
		for jt := jt0; jt < jt1; jt++ {
			j0 := jt * nr
			nv := min(nr, n-j0)
			bp, ldbp := &b[p0*ldb+j0], ldb
			if nv < nr {
				bp, ldbp = &edgeB[p0*nr], nr
			}
			for it := it0; it < it1; it++ {
				i0 := it * fastMR
				mv := min(fastMR, m-i0)
				ap, rs, cs := &a[i0*rsA+p0*csA], rsA, csA
				if mv < fastMR {
					ap, rs, cs = &edgeA[p0], k, 1
				}
				if mv == fastMR && nv == nr {
					kernel(kc, ap, rs, cs, bp, ldbp, &c[i0*ldc+j0], ldc, accBlock)
					continue
				}
				if accBlock {
					for r := 0; r < mv; r++ {
						copy(sc[r*nr:r*nr+nv], c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+nv])
					}
				}
				kernel(kc, ap, rs, cs, bp, ldbp, &sc[0], nr, accBlock)
				for r := 0; r < mv; r++ {
					copy(c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+nv], sc[r*nr:r*nr+nv])
				}
			}
		}
	}
}

// transpose writes the r×c matrix src (row stride lds) transposed into
// dst (c×r, row stride ldd).
func transpose[T Float](r, c int, src []T, lds int, dst []T, ldd int) {
	const bs = 32
	for i0 := 0; i0 < r; i0 += bs {
		for j0 := 0; j0 < c; j0 += bs {
			for i := i0; i < min(i0+bs, r); i++ {
				for j := j0; j < min(j0+bs, c); j++ {
					dst[j*ldd+i] = src[i*lds+j]
				}
			}
		}
	}
}

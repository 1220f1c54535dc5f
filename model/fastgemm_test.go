package model

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestGemm checks gemm (fast kernels where available, BLAS otherwise)
// against a naive triple loop for all transpositions, beta ∈ {0, 1}, edge
// sizes around the register tiles and K blocks, and padded strides.
func TestGemm(t *testing.T) {
	testGemm[float32](t, 1e-5)
	testGemm[float64](t, 1e-12)
}

func testGemm[T Float](t *testing.T, tol float64) {
	rng := rand.New(rand.NewSource(1))
	sizes := []int{1, 5, 6, 7, 13, 16, 17, 33}
	ks := []int{1, 7, fastKC, fastKC + 5, 2*fastKC + 1}
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range ks {
				for _, tA := range []bool{false, true} {
					for _, tB := range []bool{false, true} {
						for _, beta := range []T{0, 1} {
							name := fmt.Sprintf("%T m%d n%d k%d tA%v tB%v beta%v", T(0), m, n, k, tA, tB, beta)
							pad := rng.Intn(3)
							lda := k + pad
							ar := m
							if tA {
								lda, ar = m+pad, k
							}
							ldb := n + pad
							br := k
							if tB {
								ldb, br = k+pad, n
							}
							ldc := n + pad
							a := randT[T](rng, ar*lda)
							b := randT[T](rng, br*ldb)
							c := randT[T](rng, m*ldc)
							want := append([]T(nil), c...)
							for i := 0; i < m; i++ {
								for j := 0; j < n; j++ {
									s := 0.0
									for l := 0; l < k; l++ {
										var av, bv T
										if tA {
											av = a[l*lda+i]
										} else {
											av = a[i*lda+l]
										}
										if tB {
											bv = b[j*ldb+l]
										} else {
											bv = b[l*ldb+j]
										}
										s += float64(av) * float64(bv)
									}
									want[i*ldc+j] = T(s + float64(beta)*float64(want[i*ldc+j]))
								}
							}
							gemm(tA, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
							for i := range c {
								if math.Abs(float64(c[i]-want[i])) > tol*math.Max(1, math.Abs(float64(want[i])))*float64(k) {
									t.Fatalf("%s: c[%d] = %v, want %v", name, i, c[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

func randT[T Float](rng *rand.Rand, n int) []T {
	x := make([]T, n)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	return x
}

// TestGemmWorkspaceReuse: the pooled workspace (gemmWS) holds the last
// call's copies; a product made with one full of NaN must equal, bit for
// bit, the product made with a fresh one, for every transposition and
// edge shape (the copies are fully written or cleared before use).
func TestGemmWorkspaceReuse(t *testing.T) {
	testGemmWorkspaceReuse[float32](t)
	testGemmWorkspaceReuse[float64](t)
}

func testGemmWorkspaceReuse[T Float](t *testing.T) {
	if !useFastGemm {
		t.Skip("no fast kernels on this CPU: gemm uses BLAS, without a workspace")
	}
	rng := rand.New(rand.NewSource(2))
	nan := T(math.NaN())
	dirty := func() *gemmWS[T] {
		ws := new(gemmWS[T])
		for _, p := range []*[]T{&ws.edgeA, &ws.edgeB, &ws.at, &ws.ct} {
			*p = make([]T, 1<<16)
			for i := range *p {
				(*p)[i] = nan
			}
		}
		return ws
	}
	for _, m := range []int{1, 7, 50} {
		for _, n := range []int{5, 17, 400} {
			for _, k := range []int{3, 50, fastKC + 1} {
				for _, tA := range []bool{false, true} {
					for _, tB := range []bool{false, true} {
						lda, ldb := k, n
						if tA {
							lda = m
						}
						if tB {
							ldb = k
						}
						a, b := randT[T](rng, m*k), randT[T](rng, k*n)
						c0 := randT[T](rng, m*n)
						for _, acc := range []bool{false, true} {
							fresh, reused := append([]T(nil), c0...), append([]T(nil), c0...)
							ok1 := gemmFastWS(new(gemmWS[T]), tA, tB, m, n, k, a, lda, b, ldb, acc, fresh, n)
							ok2 := gemmFastWS(dirty(), tA, tB, m, n, k, a, lda, b, ldb, acc, reused, n)
							if ok1 != ok2 {
								t.Fatalf("%T m%d n%d k%d tA%v tB%v acc%v: ok %v with a fresh workspace, %v with a used one", T(0), m, n, k, tA, tB, acc, ok1, ok2)
							}
							for i := range fresh {
								if math.Float64bits(float64(fresh[i])) != math.Float64bits(float64(reused[i])) {
									t.Fatalf("%T m%d n%d k%d tA%v tB%v acc%v: c[%d] = %v with a used workspace, %v with a fresh one", T(0), m, n, k, tA, tB, acc, i, reused[i], fresh[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

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

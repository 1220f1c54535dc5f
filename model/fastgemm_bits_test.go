package model

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// fmaChain is C(i,j) of the fast kernels, element by element: for each K
// block of fastKC in order, one chain of fused multiply-adds over its k
// from 0, added to C(i,j) (acc, or a block after the first) or stored.
func fmaChain(m, n, k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, acc bool) []float64 {
	out := append([]float64(nil), c...)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := c[i*ldc+j]
			for p0 := 0; p0 < k; p0 += fastKC {
				blk := 0.0
				for l := p0; l < min(p0+fastKC, k); l++ {
					blk = math.FMA(a[i*rsA+l*csA], b[l*ldb+j], blk)
				}
				if acc || p0 > 0 {
					s += blk
				} else {
					s = blk
				}
			}
			out[i*ldc+j] = s
		}
	}
	return out
}

// TestFastGemmBits pins the float64 fast product to the bit: every element
// of C is fmaChain's sums, whatever the
// split into work units (by rows or by columns, gemmUnits), the edges, the
// K blocks and the goroutines — so that a change of the split or of the
// traversal cannot change a trained network.
func TestFastGemmBits(t *testing.T) {
	if !useFastGemm || !useAVX512 {
		t.Skip("no AVX-512 kernels on this machine")
	}
	rng := rand.New(rand.NewSource(3))
	for _, m := range []int{1, 5, 6, 13, 24, 50, 64, 100, 170} {
		for _, n := range []int{7, 16, 50, 400} {
			for _, k := range []int{1, 9, fastKC, fastKC + 16, 2*fastKC + 3} {
				for _, acc := range []bool{false, true} {
					for _, serial := range []bool{false, true} {
						name := fmt.Sprintf("m%d n%d k%d acc%v serial%v", m, n, k, acc, serial)
						tA := rng.Intn(2) == 1
						rsA, csA := k, 1
						if tA {
							rsA, csA = 1, m
						}
						a := randT[float64](rng, m*k)
						b := randT[float64](rng, k*n)
						c := randT[float64](rng, m*n)
						want := fmaChain(m, n, k, a, rsA, csA, b, n, c, n, acc)
						if !fastGemmWS(new(gemmWS[float64]), serial, m, n, k, a, rsA, csA, b, n, c, n, acc) {
							t.Fatalf("%s: not taken", name)
						}
						for i := range c {
							if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s: c[%d] = %v, the chain gives %v", name, i, c[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

//go:build amd64

package vexp

import (
	"os"

	"golang.org/x/sys/cpu"
)

// useAsm selects the AVX2+FMA kernels; DRKNN_PORTABLE=1 in the environment
// forces the portable twins (for tests and for comparing machines).
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("DRKNN_PORTABLE") != "1"

//go:noescape
func affineMaxAVX(dst, c, rm *float64, n int, a, b float64)

//go:noescape
func expSubAccAVX(k, rm, sm *float64, n int, negCut float64)

//go:noescape
func expMomentsAVX(x, c *float64, n int, sh, negCut float64, acc *[12]float64)

//go:noescape
func expShiftSumAVX(x *float64, n int, sh, negCut float64, acc *[4]float64)

//go:noescape
func weightedMomentsAVX(k, u, c *float64, n int, acc *[12]float64)

//go:noescape
func sqDist16AVX(a, b *float64, n int, acc *[16]float64)

//go:noescape
func pairUpdateAVX(f float64, xi, xj, oi, oj *float64, n int)

//go:noescape
func logAddAVX(dst, x, add *float64, n int) (bad int)

//go:noescape
func expGoAVX(x *float64, n int) (done int)

//go:noescape
func logGoAVX(dst, x, add *float64, n int) (done int)

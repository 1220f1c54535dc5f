//go:build !amd64

package vexp

var useAsm = false

func affineMaxAVX(dst, c, rm *float64, n int, a, b float64)                    { panic("unreachable") }
func expSubAccAVX(k, rm, sm *float64, n int, negCut float64)                   { panic("unreachable") }
func expMomentsAVX(x, c *float64, n int, sh, negCut float64, acc *[12]float64) { panic("unreachable") }

func expShiftSumAVX(x *float64, n int, sh, negCut float64, acc *[4]float64) { panic("unreachable") }
func weightedMomentsAVX(k, u, c *float64, n int, acc *[12]float64)          { panic("unreachable") }

func sqDist16AVX(a, b *float64, n int, acc *[16]float64)      { panic("unreachable") }
func pairUpdateAVX(f float64, xi, xj, oi, oj *float64, n int) { panic("unreachable") }

func logAddAVX(dst, x, add *float64, n int) (bad int) { panic("unreachable") }

func expGoAVX(x *float64, n int) (done int)           { panic("unreachable") }
func logGoAVX(dst, x, add *float64, n int) (done int) { panic("unreachable") }

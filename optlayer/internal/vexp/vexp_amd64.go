//go:build amd64

package vexp

import "golang.org/x/sys/cpu"

var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

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

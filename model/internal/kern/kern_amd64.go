//go:build amd64

package kern

import "golang.org/x/sys/cpu"

// Available reports whether the AVX2+FMA micro-kernels can run.
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func S6x16(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func D6x8(kc int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, acc int)

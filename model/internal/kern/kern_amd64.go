//go:build amd64

package kern

import "golang.org/x/sys/cpu"

// Available reports whether the AVX2+FMA micro-kernels can run.
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func S6x16(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func D6x8(kc int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, acc int)

// NonFiniteD reports whether x[0:n] holds a NaN or ±Inf (n a multiple of
// 16); AdamAvailable tells whether it can run.
//
//go:noescape
func NonFiniteD(x *float64, n int) bool

// NonFiniteS is NonFiniteD for float32 (n a multiple of 32).
//
//go:noescape
func NonFiniteS(x *float32, n int) bool

// PoolReluD is one pooled position of the conv–ReLU–max-pool layer in
// float64, four channels at a time (k a multiple of 4; see the assembly):
// out[j*stride] and arg[j*stride] for j < k, from the 2×2 window rows r0
// and r2 (2k values each) and bias, with the winner's index counted from
// p0 or p2. Available tells whether it can run.
//
//go:noescape
func PoolReluD(r0, r2, bias *float64, k int, out *float64, arg *int32, stride, p0, p2 int)

// AdamAvailable reports whether AdamS and AdamD can run.
var AdamAvailable = cpu.X86.HasAVX

// AdamS does one Adam step on n float32 elements (n a multiple of 8); see
// the assembly for the exact operation order.
//
//go:noescape
func AdamS(w, gr, m, v *float32, n int, p *[8]float32)

// AdamD is AdamS for float64 (n a multiple of 4).
//
//go:noescape
func AdamD(w, gr, m, v *float64, n int, p *[8]float64)

// AdamGS is AdamS on g + 0, leaving g unchanged (a gradient read from
// its node rather than accumulated in a dual value).
//
//go:noescape
func AdamGS(w, gr, m, v *float32, n int, p *[8]float32)

// AdamGD is AdamGS for float64 (n a multiple of 4).
//
//go:noescape
func AdamGD(w, gr, m, v *float64, n int, p *[8]float64)

// Available512 reports whether the AVX-512 kernels S6x32 and D6x16 can
// run.
var Available512 = cpu.X86.HasAVX512F

// S6x32 is S6x16 with 512-bit vectors: C[0:6, 0:32] (+)= A·B, float32.
//
//go:noescape
func S6x32(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, acc int)

// D6x16 is D6x8 with 512-bit vectors: C[0:6, 0:16] (+)= A·B, float64.
//
//go:noescape
func D6x16(kc int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, acc int)

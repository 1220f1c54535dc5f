//go:build !openblas

package model

import "github.com/drknn/drknn/model/internal/kern"

// BLAS names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (build with -tags openblas; needs libopenblas-dev).
const BLAS = "gonum"

// useFastGemm routes the kernels' matrix products to the package's own
// AVX2+FMA kernels when the CPU has them (pure-Go build only).
var useFastGemm = kern.Available

// useAVX512 selects the 512-bit kernels (twice as wide) when the CPU has
// AVX-512F.
var useAVX512 = kern.Available && kern.Available512

// useAdamAsm routes Adam's update to the AVX loop when the CPU has AVX.
var useAdamAsm = kern.AdamAvailable

// usePoolAsm routes the float64 conv layer's pooling to kern.PoolReluD
// when the CPU has AVX2.
var usePoolAsm = kern.Available

// Kernels names the code doing the network's matrix products: "avx512" or
// "avx2" (this package's assembly kernels), "gonum" (pure Go, CPUs without
// AVX2/FMA) or "openblas" (the openblas build).
func Kernels() string {
	switch {
	case useFastGemm && useAVX512:
		return "avx512"
	case useFastGemm:
		return "avx2"
	}
	return "gonum"
}

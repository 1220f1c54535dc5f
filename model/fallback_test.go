//go:build !openblas

package model

import (
	"testing"

	"github.com/drknn/drknn/model/internal/kern"
)

// TestFallbackPaths reruns the product, shape and gradient checks with the
// assembly kernels switched off (the code path of CPUs without AVX2/FMA).
func TestFallbackPaths(t *testing.T) {
	oldG, oldA, old5 := useFastGemm, useAdamAsm, useAVX512
	defer func() { useFastGemm, useAdamAsm, useAVX512 = oldG, oldA, old5 }()
	if kern.Available && kern.Available512 {
		// The AVX2 kernels on a CPU that also has AVX-512.
		useAVX512 = false
		t.Run("avx2/gemm", TestGemm)
		t.Run("avx2/gradients", TestGradientFD)
	}
	useFastGemm, useAdamAsm, useAVX512 = false, false, false
	t.Run("gemm", TestGemm)
	t.Run("shapes", TestShapes)
	t.Run("gradients", TestGradientFD)
	t.Run("adam", TestAdamReference)
	t.Run("conv4", TestConv4Forward)
	t.Run("f32-gradients", TestGradientF32)
}

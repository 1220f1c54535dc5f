//go:build !openblas

package model

import "testing"

// TestFallbackPaths reruns the product, shape and gradient checks with the
// assembly kernels switched off (the code path of CPUs without AVX2/FMA).
func TestFallbackPaths(t *testing.T) {
	oldG, oldA := useFastGemm, useAdamAsm
	useFastGemm, useAdamAsm = false, false
	defer func() { useFastGemm, useAdamAsm = oldG, oldA }()
	t.Run("gemm", TestGemm)
	t.Run("shapes", TestShapes)
	t.Run("gradients", TestGradientFD)
	t.Run("adam", TestAdamReference)
}

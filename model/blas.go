//go:build !openblas

package model

// BLAS names the BLAS implementation in use: "gonum" (pure Go, the
// default) or "openblas" (build with -tags openblas; needs libopenblas-dev).
const BLAS = "gonum"

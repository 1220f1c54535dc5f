//go:build openblas

package model

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model/internal/kern"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// With the openblas build tag, every BLAS call — this package's kernels
// (through gonum's blas32/blas64) and Gorgonia's and tensor's own matrix
// products (G.Use also sets tensor's BLAS) — goes to OpenBLAS via cgo.
// OpenBLAS's thread count follows OPENBLAS_NUM_THREADS.
func init() {
	impl := netlib.Implementation{}
	blas32.Use(impl)
	blas64.Use(impl)
	G.Use(impl)
}

// BLAS names the BLAS implementation in use.
const BLAS = "openblas"

// useFastGemm is off: OpenBLAS does every product.
const useFastGemm = false

const useAVX512 = false

// useAdamAsm routes Adam's update to the AVX loop when the CPU has AVX.
var useAdamAsm = kern.AdamAvailable

// usePoolAsm routes the float64 conv layer's pooling to kern.PoolReluD
// when the CPU has AVX2.
var usePoolAsm = kern.Available

// Kernels names the code doing the network's matrix products: "openblas".
func Kernels() string { return "openblas" }

// Package kern holds the AVX2+FMA register-tile matrix-product kernels of
// package model (in a package of their own because a package that uses
// cgo, as model does with the openblas tag, cannot contain assembly).
//
// S6x16 computes C[0:6,0:16] (+)= A[0:6,0:kc]·B[0:kc,0:16] in float32 and
// D6x8 C[0:6,0:8] (+)= A[0:6,0:kc]·B[0:kc,0:8] in float64, where A element
// (r,k) is at a + r·rsA + k·csA, B row k at b + k·ldb and C row r at
// c + r·ldc, all strides in bytes; acc ≠ 0 adds to C instead of storing.
// The caller guarantees every address touched is inside its slices.
// Call them only when Available is true.
package kern

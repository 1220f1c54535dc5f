// Package optlayer solves the least-favourable-distribution (LFD) linear
// program of Dr.k-NN (Zhu et al., Theorem 1) and differentiates its solution.
//
// Given n points with labels 0…M−1, a cost matrix c (or features and a
// metric) and Wasserstein-1 radii ϑ_m, the LFD problem is
//
//	minimise   Σ_i max_m p_m(i)
//	subject to γ_m ≥ 0, Σ_ij γ_m(i,j) c(i,j) ≤ ϑ_m,
//	           Σ_i γ_m(i,j) = P̂_m(j),  Σ_j γ_m(i,j) = p_m(i),
//
// where P̂_m is uniform on the points of class m. Solve uses
// entropic-regularised dual ascent in the log domain and reports a
// certified lower bound and duality gap with every answer. Result.VJP
// returns ∂L/∂c for any upstream ∂L/∂P by implicit differentiation of the
// KKT conditions of the regularised problem.
//
// The package is plain Go on float64 slices and imports no network library;
// the Gorgonia op lives in the sub-package optlayer/gop.
package optlayer

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
// where P̂_m is uniform on the points of class m. Columns outside class m
// carry no mass, so the problem has n² transport variables.
//
// # Forward
//
// Solve adds ε Σ γ(log γ − 1) and maximises the smooth concave dual in the
// column potentials g, the budget multipliers λ ≥ 0 and the row multipliers
// α (one point of the simplex per row). The row block is solved exactly by
// water filling; the rest by ε-scaling (ε from 0.2 down to Settings.Epsilon
// by factors of 5), a few stabilised Sinkhorn sweeps per stage (2 below
// n = 400, where Newton finds its basin without more; 10 above) and damped
// Newton steps on the semi-dual Φ(g, λ) = max_α D, whose Hessian is the same
// reduced KKT operator the backward pass uses (solved by conjugate gradients
// on the sparse plan). Everything is done in the log domain or on a
// stabilised kernel, so costs of any scale work: scaling c and ϑ by s leaves
// P unchanged and divides λ by s.
//
// The kernel is kept only on candidate entries (kernel.go): at small ε a
// column's mass sits on a handful of rows, and the candidates are re-selected
// from the duals before each stage and checked against every entry at the
// end, so the answer is the full problem's while the passes cost O(entries
// kept), not O(n²). Problems above n = 1000 start from each column's 256
// cheapest rows, which keeps the memory of a solve far below n² kernel
// entries.
//
// Every Result carries a certificate for the LP itself (not the regularised
// problem): LowerBound from the LP dual at the final (α, λ), Objective from a
// feasible P obtained by rounding the regularised plan (exact column sums,
// then mixing with the zero-cost plan until the budget holds), or from the
// pooled LFD (every P_m uniform on all n points), tried before the first
// iteration: when some plan moves every class there within its budget, the
// LP value is 1 and that P is certified with gap 0 (pooled.go). Solve stops
// when (Objective − LowerBound)/LowerBound ≤ Settings.Tol and the
// regularised residual is ≤ Settings.RegTol. If the regularised optimum at
// ε is not within Tol of the LP value, ε is lowered further for the
// certificate only; PReg and Dual always refer to Settings.Epsilon. Those
// certificate-only stages check the certificate after every Newton step and
// stop as soon as it holds.
//
// # Backward
//
// Result.VJP returns ∂L/∂c for any upstream ∂L/∂PReg by implicit
// differentiation of the KKT conditions of the regularised problem; the
// adjoint system reduces to a Γ-weighted least-squares problem whose normal
// equations (size n + number of active budgets) are solved densely for small
// problems and by preconditioned conjugate gradients otherwise. It never
// unrolls iterations. Result.ObjectiveGrad is the envelope-theorem fast path
// for the regularised optimal value, ∂V/∂c(i,j) = λ_m γ_m(i,j).
// Result.FeatureGrad and CostGrad chain ∂L/∂c through the metric
// (Euclidean with subgradient 0 at zero distance, or squared Euclidean).
//
// # Batches
//
// SolveBatch solves independent problems on several goroutines; answers do
// not depend on the number of workers.
//
// The package is plain Go on float64 slices and imports no network library;
// the Gorgonia op lives in the sub-package optlayer/gop.
package optlayer

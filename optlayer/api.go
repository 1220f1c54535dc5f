package optlayer

// Metric turns features into costs.
type Metric int

const (
	// Euclidean is c(x, y) = ‖x − y‖₂ (the paper's choice).
	Euclidean Metric = iota
	// SqEuclidean is c(x, y) = ‖x − y‖₂² (the authors' prototype).
	SqEuclidean
)

// Problem is one LFD instance. Give exactly one of Cost or Features.
type Problem struct {
	N        int       // number of points n
	Cost     []float64 // n×n row-major costs c(i,j) ≥ 0, or nil
	Features []float64 // n×Dim row-major features, or nil
	Dim      int       // feature dimension when Features is set
	Metric   Metric    // how Features become costs
	Labels   []int     // length n, values 0…M−1, every class present
	Theta    []float64 // radii in the cost's units: length 1 (all classes) or M; see below
	// A radius 0 < ϑ_m ≤ 2⁻⁵⁴·c_m/N, c_m the least positive cost of a move
	// out of class m, is solved as ϑ_m = 0 (P_m = P̂_m moved along
	// zero-cost moves only, Dual.Lambda[m] = 0): that is its LFD to float64
	// precision (the LP value moves by at most 2⁻⁵³ in all, the value being
	// ≥ 1), and solved as given such a radius overflowed the solver's
	// scaling by 1/ϑ_m (subnormal radii gave NaN). Theta itself is not
	// changed.
}

// Settings control the solver. The zero value gives the defaults.
type Settings struct {
	Epsilon float64 // entropic regularisation in objective units (default 1e-3; 1e-6 … 1e3)
	Tol     float64 // target certified relative gap of the LP answer (default 1e-3)
	MaxIter int     // cap on sweeps + Newton steps (default 20000)
	Plans   bool    // return the feasible transport plans behind P
	// LPOnly stops as soon as the LP answer is certified (P, Objective,
	// LowerBound, Gap as always) without solving the regularised problem
	// to RegTol: PReg and Dual are then only approximate (Result.Residual
	// says how far, Result.Epsilon at which ε; on problems with few
	// distinct points the answer comes from the LP over them, PReg is P,
	// Dual that LP's dual and Residual +Inf), and VJP and ObjectiveGrad
	// return ErrNotConverged. Ignored with Plans.
	LPOnly bool
	Warm   *Dual // optional warm start from an earlier Result.Dual
	// NoBlocksBound skips SolveBlocks' certificate of the whole problem
	// (O(n²) time: far beyond 10⁴ points it, not the blocks, dominates);
	// BlocksResult.LowerBound is then the trivial bound 1. Solve ignores it.
	NoBlocksBound bool

	// RegTol is the relative marginal residual (L1 column violation / M and
	// relative budget violation) the regularised solve must reach before PReg
	// and the backward pass are trusted (default min(1e-6, Tol·1e-3)).
	RegTol float64
	// CGTol is the relative residual of the iterative backward solve
	// (default 1e-10).
	CGTol float64
}

// Status says how a solve ended.
type Status int

const (
	Optimal        Status = iota // certified relative gap ≤ Tol
	IterationLimit               // MaxIter reached first; bounds and P are still valid, PReg may be inaccurate
)

// Dual holds the dual variables of the regularised problem.
type Dual struct {
	G      []float64 // length n: column potentials g(j) (class of j is Labels[j])
	Lambda []float64 // length M: budget multipliers λ_m ≥ 0 (0 for classes with ϑ_m = 0, whose plans are pinned to zero-cost moves)
	Alpha  []float64 // M×n row-major: row multipliers α_m(i)
}

// Result is the answer to one Problem.
type Result struct {
	M, N       int
	P          []float64   // M×n row-major; row m is P*_m on the n points (feasible)
	PReg       []float64   // M×n: the regularised solution, the map VJP differentiates
	Plans      [][]float64 // when Settings.Plans: Plans[m] is n×n row-major γ_m(i,j), the feasible plan whose row sums are P_m
	Objective  float64     // Σ_i max_m P_m(i) of the feasible P (an upper bound on v)
	LowerBound float64     // certified lower bound on the LP value v
	Gap        float64     // Objective − LowerBound ≥ 0
	RelGap     float64     // Gap / LowerBound
	Iterations int
	Status     Status
	Dual       Dual

	Epsilon  float64 // the ε of PReg and Dual
	RegValue float64 // regularised objective Σ_i max_m PReg_m(i) + ε Σ γ(log γ − 1)
	Residual float64 // final relative marginal/budget residual of the regularised solve

	st *state // what the backward pass needs
}

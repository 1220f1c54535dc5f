package optlayer

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// ErrInvalid is wrapped by every error that reports bad input.
var ErrInvalid = errors.New("optlayer: invalid input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// instance is a validated problem: costs materialised, classes indexed.
type instance struct {
	n, m   int
	cost   []float64 // n×n row-major c(i,j)
	sym    bool      // cost is symmetric: column j equals row j
	labels []int
	theta  []float64 // length M
	feat   []float64 // features when the problem gave them (for FeatureGrad)
	c32    []float32 // SolveBlocks' bound: the costs of feat rounded down, columns by class (c32pos), or nil
	c32pos []int     // column j of the costs is column c32pos[j] of c32
	dim    int
	metric Metric
}

// Validate checks a Problem without solving it. Solve calls it first.
func (p *Problem) Validate() error {
	_, err := p.instance()
	return err
}

func (p *Problem) instance() (*instance, error) {
	in, err := p.checked()
	if err != nil {
		return nil, err
	}
	if in.cost == nil {
		c, err := Costs(p.Features, in.n, p.Dim, p.Metric)
		if err != nil {
			return nil, err
		}
		in.cost = c
		in.sym = true
	}
	return in, nil
}

// checked validates p without materialising the costs of Features (the
// returned instance then has cost nil and feat set).
func (p *Problem) checked() (*instance, error) {
	if p == nil {
		return nil, invalidf("nil problem")
	}
	n := p.N
	if n < 1 {
		return nil, invalidf("N = %d, want ≥ 1", n)
	}
	if len(p.Labels) != n {
		return nil, invalidf("len(Labels) = %d, want N = %d", len(p.Labels), n)
	}
	m := 0
	for i, y := range p.Labels {
		if y < 0 {
			return nil, invalidf("Labels[%d] = %d is negative", i, y)
		}
		if y >= n {
			return nil, invalidf("Labels[%d] = %d ≥ N = %d: some class would be empty", i, y, n)
		}
		if y+1 > m {
			m = y + 1
		}
	}
	count := make([]int, m)
	for _, y := range p.Labels {
		count[y]++
	}
	for c, k := range count {
		if k == 0 {
			return nil, invalidf("class %d has no point (labels must be 0…M−1 with every class present, M = %d)", c, m)
		}
	}
	in := &instance{n: n, m: m, labels: p.Labels, metric: p.Metric}
	switch {
	case p.Cost != nil && p.Features != nil:
		return nil, invalidf("both Cost and Features are set; give exactly one")
	case p.Cost == nil && p.Features == nil:
		return nil, invalidf("neither Cost nor Features is set; give exactly one")
	case p.Cost != nil:
		if len(p.Cost) != n*n {
			return nil, invalidf("len(Cost) = %d, want N² = %d", len(p.Cost), n*n)
		}
		if k := badCost(p.Cost); k >= 0 {
			c := p.Cost[k]
			if math.IsNaN(c) || math.IsInf(c, 0) {
				return nil, invalidf("Cost[%d] (i=%d, j=%d) = %v is not finite", k, k/n, k%n, c)
			}
			return nil, invalidf("Cost[%d] (i=%d, j=%d) = %v is negative", k, k/n, k%n, c)
		}
		for i := 0; i < n; i++ {
			if c := p.Cost[i*n+i]; c != 0 {
				return nil, invalidf("Cost[%d,%d] = %v, want 0 on the diagonal (c(x,x) = 0)", i, i, c)
			}
		}
		in.cost = p.Cost
		in.sym = symmetric(p.Cost, n)
	default:
		if err := checkFeatures(p.Features, n, p.Dim, p.Metric); err != nil {
			return nil, err
		}
		in.feat = p.Features
		in.dim = p.Dim
	}
	switch len(p.Theta) {
	case 1:
		in.theta = make([]float64, m)
		for k := range in.theta {
			in.theta[k] = p.Theta[0]
		}
	case m:
		in.theta = append([]float64(nil), p.Theta...)
	default:
		return nil, invalidf("len(Theta) = %d, want 1 or M = %d", len(p.Theta), m)
	}
	for k, t := range in.theta {
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return nil, invalidf("Theta for class %d = %v, want finite and ≥ 0", k, t)
		}
	}
	in.dropNegligibleTheta()
	return in, nil
}

// thetaNegligible is the radius, relative to a class's least positive
// transport cost c_m and per point, at or below which the radius is taken as
// 0 (dropNegligibleTheta).
const thetaNegligible = 0x1p-54

// dropNegligibleTheta sets to 0 every radius 0 < ϑ_m ≤ 2⁻⁵⁴·c_m/n, where
// c_m is the least positive cost c(i, j) of a move out of class m (j of
// class m, i any point). Such a radius is 0 to float64 precision: a plan
// within it moves at most ϑ_m/c_m of mass at a positive cost, and putting
// that mass back changes P_m by at most 2ϑ_m/c_m in L1, so the LP value
// with the radius dropped exceeds the true one by at most 2·Σ_m ϑ_m/c_m ≤
// 2⁻⁵³·M/n ≤ 2⁻⁵³, within half an ulp of the value (≥ 1), and the zero
// radius's answer (P̂_m moved along zero-cost moves only) is feasible for
// ϑ_m. Solved as given, such a radius scales the solver's multipliers by
// ε/ϑ_m and S/ϑ_m: past the float64 range for a subnormal ϑ_m (λ_m = +Inf,
// NaN where it meets a zero cost) and, well before that, a slow and
// ill-conditioned regularised solve. A class whose moves all cost 0 keeps
// its radius (it cannot be spent). Costs of features are computed here as
// Costs computes them, column by column; a radius is checked against one
// positive cost of its class first (an upper bound on c_m), so a normal
// radius costs a few cost evaluations per class.
func (in *instance) dropNegligibleTheta() {
	n := in.n
	var first []int // a point of each class
	for m, t := range in.theta {
		if t == 0 {
			continue
		}
		if first == nil {
			first = make([]int, in.m)
			for i := n - 1; i >= 0; i-- {
				first[in.labels[i]] = i
			}
		}
		if u := in.colMinPositive(first[m], true); !(t <= thetaNegligible*u/float64(n)) {
			continue // c_m ≤ u: the radius counts
		}
		cm := math.Inf(1)
		for j := range n {
			if in.labels[j] == m {
				cm = min(cm, in.colMinPositive(j, false))
			}
		}
		if !math.IsInf(cm, 1) && t <= thetaNegligible*cm/float64(n) {
			in.theta[m] = 0
		}
	}
}

// colMinPositive returns the least positive cost c(i, j) over the points i
// (the moves of j's mass), or +Inf if every one is 0; with firstOnly, the
// first positive one found.
func (in *instance) colMinPositive(j int, firstOnly bool) float64 {
	n, d := in.n, in.dim
	lo := math.Inf(1)
	for i := range n {
		var x float64
		if in.cost != nil {
			x = in.cost[i*n+j]
		} else {
			x = sqDist(in.feat[i*d:(i+1)*d], in.feat[j*d:(j+1)*d])
			if in.metric == Euclidean {
				x = math.Sqrt(x)
			}
		}
		if x > 0 && x < lo {
			lo = x
			if firstOnly {
				break
			}
		}
	}
	return lo
}

// badCost returns the index of the first cost that is not finite and ≥ 0,
// or −1 (one comparison pair per entry: NaN fails both).
func badCost(c []float64) int {
	for k, x := range c {
		if !(x >= 0 && x <= math.MaxFloat64) {
			return k
		}
	}
	return -1
}

// symmetric reports whether the n×n matrix c equals its transpose (checked
// in tiles, so that the transposed reads stay in cache; from symParMin
// points the rows of tiles split over two goroutines, alternately).
func symmetric(c []float64, n int) bool {
	const b = 64
	var asym atomic.Bool
	check := func(t0, step int) {
		for i0 := t0 * b; i0 < n && !asym.Load(); i0 += step * b {
			for j0 := i0; j0 < n; j0 += b {
				for i := i0; i < min(i0+b, n); i++ {
					for j := max(j0, i+1); j < min(j0+b, n); j++ {
						if c[i*n+j] != c[j*n+i] {
							asym.Store(true)
							return
						}
					}
				}
			}
		}
	}
	if n < symParMin {
		check(0, 1)
		return !asym.Load()
	}
	var wg sync.WaitGroup
	wg.Go(func() { check(1, 2) })
	check(0, 2)
	wg.Wait()
	return !asym.Load()
}

// symParMin is the least n whose symmetry check takes two goroutines (at n
// = 10,000 it took 0.15 s on one).
const symParMin = 2048

// settings with defaults filled in.
type config struct {
	eps, tol, regTol, cgTol    float64
	maxIter                    int
	plans, lpOnly              bool
	warm                       *Dual
	trace                      func(it int, s *solver, r float64) // tests only
	traceLS                    func(t float64, ok bool, cg int)   // tests only: each Newton step's line search
	lmReg, epsFactor, epsStart float64                            // tests only
	stageTol                   float64                            // tests only
	sweeps                     int                                // tests only
	lpSweeps                   int                                // tests only: the sweeps opening lpLarge's Phase A stages (0: lpStageSweeps)
	noStall                    bool                               // tests only: no stallStop in lpLarge's Phase B
	lpResTol                   float64                            // tests only: the residual ending lpLarge's Phase B and C stages (0: lpResTol)
	noCSweep                   bool                               // tests only: lpLarge's Phase C stages open without their sweep
	serial                     bool                               // no goroutines inside one solve (SolveBatch with workers > 1)
	forceCG                    bool                               // tests only: iterative backward solve
	denseStart, noSlack        bool                               // tests only: every entry a candidate at the start; no rank-one slack classes
	noLPStages                 bool                               // LPOnly at n ≤ lpLargeMin: the phases of solveInstance, not lpStages (its fallback)
	noPooled, pooledTransport  bool                               // tests only: no pooled candidate (pooled.go); its transport blocks at any n
	noRegrow                   bool                               // tests only: a big fall in Phase C rolls back at once
	noRenarrow                 bool                               // tests only: Phase C's stages after a regrowth keep its candidates
	noBDrift                   bool                               // tests only: lpLarge's narrow Phase B run after the first look without driftStop
	noZeroDone                 bool                               // tests only: lpLarge's Phase B tightens Newton's tolerance tenfold after a run of no steps, as the other solves do, instead of ending the run
	noBSweep                   bool                               // tests only: no sweep after the validation that gives up Phase B's narrow candidates
	noWideDrift                bool                               // tests only: lpLarge's Phase B runs on wider candidates without driftStop
	handGap                    float64                            // tests only: narrowReady's relative gap (0: narrowGap)
	noBHand                    bool                               // tests only: lpLarge's Phase B validates until nothing is added before the narrow Phase C stages
	noFewHand                  bool                               // tests only: lpLarge's Phase B hands over to Phase C's union stages only after a validation that adds nothing (fewAdded)
	noCoarse                   bool                               // tests only: lpLarge's Newton systems take the Jacobi preconditioner alone, without the class coarse space (coarse.go)
	noAdaptLM                  bool                               // tests only: lpLarge's Newton runs keep the plain Levenberg–Marquardt term lmReg·r (newton.go, lmAdapt)
	noFullOp                   bool                               // tests only: Newton's operator stores full columns as entries (loadState)
	noShortRows                bool                               // tests only: Newton's operator keeps 32-bit rows (loadState)
	rowBlock                   int                                // tests only: the blocked operator's block size, every state with enough rows blocked (0: rowBlock; loadBlocks)
	noDistinct                 bool                               // tests only: no LP over the locations of copies (distinct.go)
	valBudget                  int                                // tests only: validateMax of lpLarge's validations (0: the constant; < 0: no cap)
	stop                       *stopper                           // the context's polls (cancel.go); nil: none
}

// Defaults used when a Settings field is zero.
const (
	DefaultEpsilon = 1e-3
	DefaultTol     = 1e-3
	DefaultMaxIter = 20000
	DefaultCGTol   = 1e-10
)

// Validate checks the settings alone: the ranges of Epsilon, Tol, RegTol,
// CGTol and MaxIter that Solve enforces (Warm, whose shape depends on the
// problem, is checked by Solve). Errors wrap ErrInvalid and name the
// field. A nil Settings (all defaults) is valid.
func (s *Settings) Validate() error {
	if s == nil {
		return nil
	}
	c := *s
	c.Warm = nil
	_, err := c.config(&instance{})
	return err
}

func (s *Settings) config(in *instance) (config, error) {
	c := config{eps: DefaultEpsilon, tol: DefaultTol, maxIter: DefaultMaxIter, cgTol: DefaultCGTol}
	if s == nil {
		c.regTol = defaultRegTol(c.tol)
		return c, nil
	}
	check := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return invalidf("Settings.%s = %v, want finite and ≥ 0 (0 = default)", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
		dst  *float64
	}{{"Epsilon", s.Epsilon, &c.eps}, {"Tol", s.Tol, &c.tol}, {"RegTol", s.RegTol, &c.regTol}, {"CGTol", s.CGTol, &c.cgTol}} {
		if err := check(f.name, f.v); err != nil {
			return c, err
		}
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	if c.eps < 1e-6 {
		return c, invalidf("Settings.Epsilon = %v is below the supported minimum 1e-6", c.eps)
	}
	if c.eps > 1e3 {
		return c, invalidf("Settings.Epsilon = %v is above the supported maximum 1e3", c.eps)
	}
	if c.tol < 1e-12 {
		return c, invalidf("Settings.Tol = %v is below the supported minimum 1e-12", c.tol)
	}
	if s.RegTol == 0 {
		c.regTol = defaultRegTol(c.tol)
	}
	if s.MaxIter < 0 {
		return c, invalidf("Settings.MaxIter = %d, want ≥ 0 (0 = default)", s.MaxIter)
	}
	if s.MaxIter > 0 {
		c.maxIter = s.MaxIter
	}
	c.plans = s.Plans
	c.lpOnly = s.LPOnly
	if w := s.Warm; w != nil {
		if len(w.G) != in.n || len(w.Lambda) != in.m || len(w.Alpha) != in.m*in.n {
			return c, invalidf("Settings.Warm has len(G)=%d, len(Lambda)=%d, len(Alpha)=%d; want %d, %d, %d",
				len(w.G), len(w.Lambda), len(w.Alpha), in.n, in.m, in.m*in.n)
		}
		for name, xs := range map[string][]float64{"G": w.G, "Lambda": w.Lambda, "Alpha": w.Alpha} {
			for k, x := range xs {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return c, invalidf("Settings.Warm.%s[%d] = %v is not finite", name, k, x)
				}
			}
		}
		for k, l := range w.Lambda {
			if l < 0 {
				return c, invalidf("Settings.Warm.Lambda[%d] = %v is negative", k, l)
			}
		}
		c.warm = w
	}
	return c, nil
}

// defaultRegTol is the relative marginal residual the regularised solve
// reaches before PReg and the backward pass are trusted.
func defaultRegTol(tol float64) float64 {
	return math.Min(1e-6, tol*1e-3)
}

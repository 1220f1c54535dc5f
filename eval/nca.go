package eval

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// NCAInit selects the starting point of NCA's optimisation.
type NCAInit int

const (
	// NCAInitPCA starts from the leading principal directions (the
	// default; deterministic, and what scikit-learn uses when the output
	// dimension is below d).
	NCAInitPCA NCAInit = iota
	// NCAInitRandom starts from a Gaussian matrix drawn from Seed.
	NCAInitRandom
)

// NCASettings configures neighbourhood component analysis.
type NCASettings struct {
	// OutDim is the output dimension p of A (p×d). 0 means
	// min(n−1, d, DefaultDim), at least 1; an explicit value may be up to d.
	OutDim  int
	MaxIter int     // L-BFGS major iterations; 0 means 100
	GradTol float64 // stop when ‖∇f‖∞ < GradTol; 0 means 1e-6
	Init    NCAInit
	Seed    int64 // seeds NCAInitRandom
}

// NCAResult is a fitted NCA map and how the optimisation went.
type NCAResult struct {
	A *mat.Dense // p×d: z = A x
	// Initial and Final are the NCA objective — the expected
	// leave-one-out accuracy (1/n) Σ_i Σ_{j: y_j = y_i} p_ij — at the
	// (scaled) starting point and at A.
	Initial, Final float64
	Iterations     int
	Evaluations    int
	Status         string // why the optimisation stopped
}

// FitNCA learns the linear map A of Goldberger et al. (2005), maximising
// the expected leave-one-out accuracy of the stochastic neighbour rule
//
//	p_ij = exp(−‖Ax_i − Ax_j‖²) / Σ_{k≠i} exp(−‖Ax_i − Ax_k‖²),  p_ii = 0,
//	f(A) = (1/n) Σ_i Σ_{j: y_j = y_i} p_ij,
//
// with gonum's L-BFGS (see maximiseNCA for the line search, step bound and
// restarts) on the analytic gradient
//
//	∇f = (2/n) Σ_ij W_ij (Ax_i − Ax_j)(x_i − x_j)ᵀ,  W_ij = p_i p_ij − 1{y_j = y_i} p_ij.
//
// The starting matrix is scaled so the median squared distance between
// projected training points is 1; without this, raw pixel distances make
// every softmax one-hot and the gradient vanish. Softmaxes use
// log-sum-exp. Same inputs and settings give the same A.
func FitNCA(x []float64, n, d int, y []int, m int, s NCASettings) (*NCAResult, error) {
	if err := checkTrain(x, n, d, y, m); err != nil {
		return nil, err
	}
	if n < 2 {
		return nil, fmt.Errorf("eval: NCA needs at least 2 training points, got %d", n)
	}
	p := s.OutDim
	if p == 0 {
		p = min(max(n-1, 1), d, DefaultDim)
	}
	if p < 0 || p > d {
		return nil, fmt.Errorf("eval: NCA output dimension %d, want 1…%d", p, d)
	}
	maxIter := s.MaxIter
	if maxIter == 0 {
		maxIter = 100
	}
	if maxIter < 0 {
		return nil, fmt.Errorf("eval: NCA MaxIter = %d, want ≥ 0", maxIter)
	}
	gradTol := s.GradTol
	if gradTol == 0 {
		gradTol = 1e-6
	}
	if !(gradTol > 0) {
		return nil, fmt.Errorf("eval: NCA GradTol = %v, want > 0", gradTol)
	}

	a0 := make([]float64, p*d)
	switch s.Init {
	case NCAInitPCA:
		pca := PCA{}
		// Directions beyond the rank of the centred data are arbitrary;
		// take what the data support and fill the rest randomly.
		r := min(p, max(min(n-1, d), 1))
		pca.OutDim = r
		if err := pca.FitProjection(x, n, d, y, m); err != nil {
			return nil, err
		}
		for i := 0; i < r; i++ {
			for j := 0; j < d; j++ {
				a0[i*d+j] = pca.w.At(j, i)
			}
		}
		rng := rand.New(rand.NewSource(s.Seed))
		for i := r * d; i < p*d; i++ {
			a0[i] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
	case NCAInitRandom:
		rng := rand.New(rand.NewSource(s.Seed))
		for i := range a0 {
			a0[i] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
	default:
		return nil, fmt.Errorf("eval: unknown NCA init %d", s.Init)
	}
	scaleInit(a0, p, x, n, d)

	obj := &ncaObjective{x: mat.NewDense(n, d, x), y: y, n: n, d: d, p: p}
	res := &NCAResult{Initial: obj.eval(a0, nil)}
	a, st := maximiseNCA(obj, a0, maxIter, gradTol)
	res.Iterations, res.Evaluations, res.Status = st.iterations, st.evaluations, st.status
	res.A = mat.NewDense(p, d, append([]float64(nil), a...))
	res.Final = obj.eval(a, nil)
	return res, nil
}

// ncaStats records how the optimisation stopped.
type ncaStats struct {
	iterations  int
	evaluations int
	status      string
}

// maximiseNCA maximises f from a0 with gonum's L-BFGS (optimize.LBFGS,
// memory 10) and an Armijo backtracking line search (optimize.Backtracking)
// on −f, restarted from the best point with an empty memory whenever a run
// stops on a line-search failure (for example a non-descent direction from
// a curvature pair with sᵀy ≤ 0, which L-BFGS without a Wolfe search can
// store) and has made progress. It stops after maxIter major iterations in
// all, when ‖∇f‖∞ < gradTol, when f changes by less than 1e-12 (relative)
// over an iteration, or when a run makes no progress; the result is the best
// point seen (never worse than a0).
//
// A trial point farther than ncaStepCap·max(1, ‖A‖) from the current
// iterate A is given −f = +∞, so the backtracking shortens the step: a
// long quasi-Newton step otherwise jumps where every softmax is saturated
// and the gradient vanishes, and stalls there. Wolfe line searches
// (gonum's MoreThuente, Bisection) walk into those regions by design: with
// them 18–22 of 60 synthetic problems of TestNCAFixesRawKNN's kind (seeds
// 1…60, PCA start) end in a saturated optimum whose 1-NN test accuracy is
// below 0.9, against 1 of 60 for this scheme (and 5 of 60 for the
// hand-written L-BFGS it replaced).
func maximiseNCA(obj *ncaObjective, a0 []float64, maxIter int, gradTol float64) ([]float64, ncaStats) {
	dim := len(a0)
	anchor := append([]float64(nil), a0...)
	g := make([]float64, dim)
	var lastA []float64
	eval := func(a []float64) float64 {
		if floats.Distance(a, anchor, 2) > ncaStepCap*math.Max(1, floats.Norm(anchor, 2)) {
			lastA = lastA[:0]
			return math.Inf(1)
		}
		f := obj.eval(a, g)
		lastA = append(lastA[:0], a...)
		return -f
	}
	prob := optimize.Problem{
		Func: eval,
		// gonum asks for f and ∇f at the same point in turn: the gradient
		// of the last evaluation is reused.
		Grad: func(grad, a []float64) {
			if len(lastA) == 0 || !floats.Equal(a, lastA) {
				eval(a)
			}
			for i, v := range g {
				grad[i] = -v
			}
		},
	}
	best := append([]float64(nil), a0...)
	bestF := obj.eval(a0, nil)
	st := ncaStats{}
	for st.iterations < maxIter {
		copy(anchor, best)
		settings := &optimize.Settings{
			GradientThreshold: gradTol,
			MajorIterations:   maxIter - st.iterations,
			Converger:         &optimize.FunctionConverge{Relative: 1e-12, Iterations: 1},
			Recorder:          anchorRecorder{anchor},
		}
		method := &optimize.LBFGS{Store: 10, Linesearcher: &optimize.Backtracking{}}
		r, err := optimize.Minimize(prob, best, settings, method)
		if r == nil {
			st.status = fmt.Sprintf("optimiser failed: %v", err)
			break
		}
		st.iterations += r.Stats.MajorIterations
		st.evaluations += r.Stats.FuncEvaluations
		st.status = r.Status.String()
		if err != nil {
			st.status += ": " + err.Error()
		}
		improved := -r.F > bestF
		if improved {
			bestF = -r.F
			copy(best, r.X)
		}
		if r.Status != optimize.Failure || !improved || r.Stats.MajorIterations == 0 {
			break
		}
	}
	return best, st
}

// ncaStepCap bounds an L-BFGS step relative to the current ‖A‖ (at least 1).
const ncaStepCap = 0.5

// anchorRecorder copies each accepted iterate into its slice, the centre of
// maximiseNCA's step bound.
type anchorRecorder struct{ x []float64 }

func (anchorRecorder) Init() error { return nil }

func (r anchorRecorder) Record(loc *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	if op == optimize.MajorIteration {
		copy(r.x, loc.X)
	}
	return nil
}

const ncaInitTarget = 1.0

// scaleInit rescales a (p×d) so the median squared pairwise distance of
// the projected training points is 1 (left alone if that median is 0).
func scaleInit(a []float64, p int, x []float64, n, d int) {
	var z mat.Dense
	z.Mul(mat.NewDense(n, d, x), mat.NewDense(p, d, a).T())
	sq := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			sq = append(sq, sqDist(z.RawRowView(i), z.RawRowView(j)))
		}
	}
	if len(sq) == 0 {
		return
	}
	sort.Float64s(sq)
	med := sq[len(sq)/2]
	if med > 0 && !math.IsInf(med, 0) {
		s := math.Sqrt(ncaInitTarget / med)
		for i := range a {
			a[i] *= s
		}
	}
}

// ncaObjective evaluates f(A) and its gradient.
type ncaObjective struct {
	x       *mat.Dense // n×d
	y       []int
	n, d, p int
}

// eval returns f(A) for A = a (p×d row-major) and, when grad is non-nil,
// writes ∇f into it.
func (o *ncaObjective) eval(a []float64, grad []float64) float64 {
	n, d, p := o.n, o.d, o.p
	A := mat.NewDense(p, d, a)
	var z mat.Dense
	z.Mul(o.x, A.T()) // n×p
	pij := make([]float64, n*n)
	pi := make([]float64, n)
	f := 0.0
	for i := 0; i < n; i++ {
		zi := z.RawRowView(i)
		row := pij[i*n : (i+1)*n]
		mx := math.Inf(-1)
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			row[j] = -sqDist(zi, z.RawRowView(j))
			mx = math.Max(mx, row[j])
		}
		sum := 0.0
		for j := 0; j < n; j++ {
			if j == i {
				row[j] = 0
				continue
			}
			row[j] = math.Exp(row[j] - mx)
			sum += row[j]
		}
		for j := 0; j < n; j++ {
			row[j] /= sum
			if j != i && o.y[j] == o.y[i] {
				pi[i] += row[j]
			}
		}
		f += pi[i]
	}
	f /= float64(n)
	if grad == nil {
		return f
	}
	// L = diag(rowsum(Ws)) − Ws with Ws = W + Wᵀ; ∇f = (2/n) Zᵀ L X.
	L := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			w := pi[i] * pij[i*n+j]
			if o.y[j] == o.y[i] {
				w -= pij[i*n+j]
			}
			L.Set(i, j, L.At(i, j)-w)
			L.Set(j, i, L.At(j, i)-w)
			L.Set(i, i, L.At(i, i)+w)
			L.Set(j, j, L.At(j, j)+w)
		}
	}
	var lx, g mat.Dense
	lx.Mul(L, o.x)    // n×d
	g.Mul(z.T(), &lx) // p×d
	s := 2 / float64(n)
	for i := 0; i < p; i++ {
		for j := 0; j < d; j++ {
			grad[i*d+j] = s * g.At(i, j)
		}
	}
	return f
}

// NCA is the Projector of neighbourhood component analysis; Result holds
// the last fit.
type NCA struct {
	Settings NCASettings
	Result   *NCAResult
	linearMap
}

// FitProjection runs FitNCA on the training set.
func (c *NCA) FitProjection(x []float64, n, d int, y []int, m int) error {
	c.linearMap, c.Result = linearMap{}, nil
	r, err := FitNCA(x, n, d, y, m, c.Settings)
	if err != nil {
		return err
	}
	c.Result = r
	p, _ := r.A.Dims()
	c.linearMap = linearMap{w: mat.DenseCopyOf(r.A.T()), d: d, p: p}
	return nil
}

// Transform maps rows of x (n×d) to n×p with A.
func (c *NCA) Transform(x []float64, n int) ([]float64, error) { return c.transform(x, n) }

// Dim is the output dimension after FitProjection.
func (c *NCA) Dim() int { return c.p }

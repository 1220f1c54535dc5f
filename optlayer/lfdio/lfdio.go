// Package lfdio solves one least-favourable-distribution problem from NumPy
// files: the work behind the drknn-lfd command, as a library call.
//
// Run reads the costs (or features and a metric), the labels and an optional
// upstream gradient, solves with optlayer.Solve (or in blocks with
// optlayer.SolveBlocks), checks the certificate, differentiates when asked
// and writes P* (and the gradient) atomically.
// Every error that comes from the request or its files wraps ErrInput; an
// answer whose relative gap misses the tolerance wraps ErrUncertified and
// writes nothing unless Request.AllowUncertified is set.
package lfdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/optlayer"
)

// ErrInput is wrapped by every error about the request or its input files
// (the command exits 2 on it).
var ErrInput = errors.New("invalid input")

// ErrUncertified is wrapped when the solve stopped before its certified
// relative gap reached the tolerance (the iteration cap was hit).
var ErrUncertified = errors.New("answer not certified")

// Request is one solve. Exactly one of CostPath and FeaturesPath is set.
type Request struct {
	CostPath     string    // n×n costs (.npy, float64 or float32), or ""
	FeaturesPath string    // n×d features (.npy); costs from Metric
	Metric       string    // "" or "euclidean" (default), "sqeuclidean"; only with FeaturesPath
	LabelsPath   string    // labels 0…M−1 (.npy, any integer dtype: int8 … int64, uint8 … uint64)
	Theta        []float64 // one radius, or one per class
	Epsilon      float64   // ε of the regularised map and of the gradient (> 0, e.g. optlayer.DefaultEpsilon)
	Tol          float64   // target certified relative gap (in (0, 1), as train.tol; e.g. optlayer.DefaultTol)
	MaxIter      int       // cap on sweeps + Newton steps (0: optlayer's default)
	OutPath      string    // where P* goes (.npy, float64 M×n)
	GradPPath    string    // upstream ∂L/∂P (.npy, float64 M×n), or ""
	GradOutPath  string    // where ∂L/∂C (n×n) or ∂L/∂X (n×d) goes; with GradPPath

	// Without GradPPath the solve stops at the LP certificate
	// (optlayer.Settings.LPOnly).
	//
	// AllowUncertified writes the outputs of a solve whose gap missed Tol
	// (P is still feasible and the bounds valid) instead of failing.
	AllowUncertified bool

	// Repeat > 1 solves (and differentiates) the same problem Repeat times
	// for timing: Summary.SecondsMin and SecondsMedian report the fastest
	// and the median solve; the answers are identical, the last is written.
	Repeat int
	// Block > 0 solves in class-stratified random blocks of at most Block
	// points (optlayer.Blocks with Seed, optlayer.SolveBlocks):
	// an approximation for large n, far lighter than the exact solve (the
	// blocks' work is linear in n, their certificate's quadratic in time);
	// Tol applies to each block, and the Summary's gap is the whole
	// problem's certified gap of the blocked answer. With GradPPath the
	// gradient is the blocked map's (optlayer.BlocksResult.VJP, FeatureVJP).
	Block int
	Seed  int64
	// NoBlockBound skips the whole problem's certificate of a blocked
	// answer (optlayer.Settings.NoBlocksBound): lower_bound is then 1.
	NoBlockBound bool

	// Report, if not nil, is called with the summary once every output is
	// complete under a temporary name and before any is renamed into place:
	// an error from it (the summary could not be printed) fails the run
	// with the outputs removed and the files under their names untouched.
	Report func(*Summary) error
	// Sized, if set, is called with n once the labels are read, before the
	// costs or features (the command sets its garbage-collector policy
	// there).
	Sized func(n int)
}

// Summary is what a run reports (the command prints it as JSON).
type Summary struct {
	Objective  float64 `json:"objective"`
	LowerBound float64 `json:"lower_bound"`
	Gap        float64 `json:"gap"`
	RelGap     float64 `json:"rel_gap"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	Status     string  `json:"status"`
	// with Request.Repeat > 1: the fastest and the median of the solves
	Repeats       int     `json:"repeats,omitempty"`
	SecondsMin    float64 `json:"seconds_min,omitempty"`
	SecondsMedian float64 `json:"seconds_median,omitempty"`
	// with Request.Block: the number of blocks and the largest block's
	// certified relative gap (the one Tol applies to)
	Blocks      int     `json:"blocks,omitempty"`
	BlockRelGap float64 `json:"block_rel_gap,omitempty"`
}

func inputf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
}

// ParseTheta parses "0.1" or "0.1,0.2,…" (finite, ≥ 0).
func ParseTheta(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, inputf("-theta is required (one radius, or one per class separated by commas)")
	}
	parts := strings.Split(s, ",")
	out := make([]float64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, inputf("-theta %q: value %d %q is not a number", s, i+1, p)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, inputf("-theta %q: value %d = %v, want finite and ≥ 0", s, i+1, v)
		}
		out[i] = v
	}
	return out, nil
}

// check validates the request itself; nothing is read before it passes.
func (r *Request) check() (optlayer.Metric, error) {
	switch {
	case r.CostPath != "" && r.FeaturesPath != "":
		return 0, inputf("give exactly one of -cost and -features, not both")
	case r.CostPath == "" && r.FeaturesPath == "":
		return 0, inputf("give exactly one of -cost and -features")
	case r.LabelsPath == "":
		return 0, inputf("-labels is required")
	case r.OutPath == "":
		return 0, inputf("-out is required")
	case r.GradOutPath != "" && r.GradPPath == "":
		return 0, inputf("-grad-out needs -grad-p (the upstream gradient ∂L/∂P)")
	case r.GradPPath != "" && r.GradOutPath == "":
		return 0, inputf("-grad-p needs -grad-out (where to write the gradient)")
	case r.Metric != "" && r.CostPath != "":
		return 0, inputf("-metric applies only with -features")
	case len(r.Theta) == 0:
		return 0, inputf("-theta is required (one radius, or one per class separated by commas)")
	case !(r.Epsilon > 0) || math.IsInf(r.Epsilon, 0):
		return 0, inputf("-eps %v: want a finite value > 0", r.Epsilon)
	case !(r.Tol > 0 && r.Tol < 1):
		return 0, inputf("-tol %v: want a value in (0, 1), as the config's train.tol", r.Tol)
	case r.MaxIter < 0:
		return 0, inputf("-max-iter %d: want ≥ 0", r.MaxIter)
	case r.Repeat < 0:
		return 0, inputf("-repeat %d: want ≥ 0", r.Repeat)
	case r.Block < 0 || r.Block == 1:
		// as the config's eval.lfd_block: blocks of one point transport
		// nothing, and their certificate is vacuous
		return 0, inputf("-block %d: want 0 (the whole problem) or ≥ 2 points per block, as the config's eval.lfd_block", r.Block)
	case r.NoBlockBound && r.Block == 0:
		return 0, inputf("-block-bound=false applies only with -block")
	}
	outs := []flagPath{{"-out", r.OutPath}, {"-grad-out", r.GradOutPath}}
	ins := []flagPath{{"-cost", r.CostPath}, {"-features", r.FeaturesPath}, {"-labels", r.LabelsPath}, {"-grad-p", r.GradPPath}}
	if err := checkOutputs(outs, ins); err != nil {
		return 0, err
	}
	switch strings.ToLower(r.Metric) {
	case "", "euclidean":
		return optlayer.Euclidean, nil
	case "sqeuclidean":
		return optlayer.SqEuclidean, nil
	}
	return 0, inputf("-metric %q: want euclidean or sqeuclidean", r.Metric)
}

// load reads every input file and checks their shapes and the labels; the
// values of a problem are checked once, by optlayer.Solve (its ErrInvalid
// becomes ErrInput).
func (r *Request) load(metric optlayer.Metric) (*optlayer.Problem, []float64, error) {
	raw, err := npy.ReadInt64(r.LabelsPath)
	if err != nil {
		return nil, nil, inputf("-labels: %w", err)
	}
	n := len(raw)
	if n == 0 {
		return nil, nil, inputf("-labels %s: no labels", r.LabelsPath)
	}
	if r.Sized != nil {
		r.Sized(n)
	}
	labels := make([]int, n)
	m := 0
	for i, v := range raw {
		if v < 0 || v >= int64(n) {
			return nil, nil, inputf("-labels %s: label[%d] = %d, want 0…M−1 with M ≤ n = %d", r.LabelsPath, i, v, n)
		}
		labels[i] = int(v)
		m = max(m, int(v)+1)
	}
	count := make([]int, m)
	for _, c := range labels {
		count[c]++
	}
	for c, k := range count {
		if k == 0 {
			return nil, nil, inputf("-labels %s: class %d has no point: labels must be 0…M−1 with every class present (M = %d, from the largest label %d)", r.LabelsPath, c, m, m-1)
		}
	}
	prob := &optlayer.Problem{N: n, Labels: labels, Theta: r.Theta, Metric: metric}
	if r.CostPath != "" {
		c, rows, cols, err := npy.ReadMatrix(r.CostPath, true)
		if err != nil {
			return nil, nil, inputf("-cost: %w", err)
		}
		if rows != n || cols != n {
			return nil, nil, inputf("-cost %s: shape %d×%d, want n×n = %d×%d (n from -labels)", r.CostPath, rows, cols, n, n)
		}
		prob.Cost = c
	} else {
		x, rows, cols, err := npy.ReadMatrix(r.FeaturesPath, true)
		if err != nil {
			return nil, nil, inputf("-features: %w", err)
		}
		if rows != n {
			return nil, nil, inputf("-features %s: %d rows, want n = %d (n from -labels)", r.FeaturesPath, rows, n)
		}
		if cols < 1 {
			return nil, nil, inputf("-features %s: %d columns, want ≥ 1", r.FeaturesPath, cols)
		}
		prob.Features, prob.Dim = x, cols
	}
	if len(r.Theta) != 1 && len(r.Theta) != m {
		return nil, nil, inputf("-theta: %d values, want 1 or M = %d (one per class; M from -labels %s)", len(r.Theta), m, r.LabelsPath)
	}
	if r.GradPPath == "" {
		return prob, nil, nil
	}
	g, rows, cols, err := npy.ReadMatrix(r.GradPPath, true)
	if err != nil {
		return nil, nil, inputf("-grad-p: %w", err)
	}
	if rows != m || cols != n {
		return nil, nil, inputf("-grad-p %s: shape %d×%d, want M×n = %d×%d", r.GradPPath, rows, cols, m, n)
	}
	return prob, g, nil
}

// Run performs the request: read, solve, certify, differentiate, write.
// Outputs are written only when everything succeeded (to a temporary name,
// then renamed). The context is checked between the phases and by the
// solve itself (between its iterations: optlayer.SolveContext); a run it
// stops writes nothing and returns an error wrapping ctx.Err().
func Run(ctx context.Context, r Request) (*Summary, error) {
	metric, err := r.check()
	if err != nil {
		return nil, err
	}
	prob, gradP, err := r.load(metric)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reps := max(1, r.Repeat)
	times := make([]float64, reps)
	var (
		res      *answer
		sum      *Summary
		grad     []float64
		gradCols int
	)
	for k := range times {
		start := time.Now()
		if res, sum, grad, gradCols, err = r.solve(ctx, prob, gradP); err != nil {
			return nil, err
		}
		times[k] = time.Since(start).Seconds()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sum.Seconds = times[0]
	if reps > 1 {
		sum.Repeats = reps
		sort.Float64s(times)
		sum.SecondsMin = times[0]
		sum.SecondsMedian = times[reps/2]
		if reps%2 == 0 {
			sum.SecondsMedian = (times[reps/2-1] + times[reps/2]) / 2
		}
	}
	if !finite(res.p) {
		return nil, errors.New("solve: the solution has a non-finite entry (no output written)")
	}
	if !finite(grad) {
		return nil, errors.New("gradient: non-finite entry (no output written)")
	}
	outs := []output{{"-out", r.OutPath, res.p, []int{res.m, prob.N}}}
	if grad != nil {
		outs = append(outs, output{"-grad-out", r.GradOutPath, grad, []int{prob.N, gradCols}})
	}
	report := func() error {
		if r.Report == nil {
			return nil
		}
		return r.Report(sum)
	}
	if err := writeOutputs(outs, report); err != nil {
		return nil, err
	}
	return sum, nil
}

// answer is what Run writes: P, M×n.
type answer struct {
	p []float64
	m int
}

// solve solves prob once and differentiates it when gradP is given; the
// solve stops when ctx is done (optlayer.SolveContext).
func (r *Request) solve(ctx context.Context, prob *optlayer.Problem, gradP []float64) (*answer, *Summary, []float64, int, error) {
	// without a gradient only the certified LP answer is needed
	set := &optlayer.Settings{Epsilon: r.Epsilon, Tol: r.Tol, MaxIter: r.MaxIter, LPOnly: gradP == nil}
	if r.Block > 0 {
		set.NoBlocksBound = r.NoBlockBound
		return r.solveBlocks(ctx, prob, gradP, set)
	}
	p := prob
	if gradP == nil && prob.Features != nil && r.Repeat <= 1 {
		// Without a gradient the solve needs the costs alone: computed
		// here (the same bits Solve would compute), the features — n×d,
		// often the larger array — are garbage for the rest of the run
		// (3000 CIFAR-10 test images as pixels: peak RSS 187 → 147 MB).
		c, err := optlayer.Costs(prob.Features, prob.N, prob.Dim, prob.Metric)
		if err != nil {
			return nil, nil, nil, 0, fmt.Errorf("%w: %w", ErrInput, err)
		}
		p = &optlayer.Problem{N: prob.N, Cost: c, Labels: prob.Labels, Theta: prob.Theta, Metric: prob.Metric}
		big := len(prob.Features) >= bigFeatures
		prob.Features = nil
		if big {
			// collect them now: the heap's goal was set with them live
			runtime.GC()
		}
	}
	res, err := optlayer.SolveContext(ctx, p, set)
	if err != nil {
		return nil, nil, nil, 0, solveError(err)
	}
	sum := &Summary{Objective: res.Objective, LowerBound: res.LowerBound, Gap: res.Gap, RelGap: res.RelGap,
		Iterations: res.Iterations, Status: "optimal"}
	if res.Status != optlayer.Optimal {
		sum.Status = "iteration_limit"
		if !r.AllowUncertified {
			return nil, nil, nil, 0, fmt.Errorf("%w: relative gap %.3g > tol %.3g after %d iterations (objective %.10g, lower bound %.10g); nothing written; raise -max-iter or pass -allow-uncertified",
				ErrUncertified, res.RelGap, r.Tol, res.Iterations, res.Objective, res.LowerBound)
		}
	}
	var grad []float64
	gradCols := prob.N
	if gradP != nil {
		vjp := func(g []float64) ([]float64, error) {
			gc, err := res.VJP(g)
			if err != nil {
				return nil, fmt.Errorf("gradient: %w", err)
			}
			if prob.Features == nil {
				return gc, nil
			}
			gx, err := res.FeatureGrad(gc)
			if err != nil {
				return nil, fmt.Errorf("feature gradient: %w", err)
			}
			return gx, nil
		}
		if grad, err = r.gradient(gradP, res.M, prob.Features != nil, vjp); err != nil {
			return nil, nil, nil, 0, err
		}
		if prob.Features != nil {
			gradCols = prob.Dim
		}
	}
	return &answer{p: res.P, m: res.M}, sum, grad, gradCols, nil
}

// solveBlocks solves prob in blocks (Request.Block), and differentiates
// the blocked map when gradP is given; the features, when given, stay: each
// block computes its own costs from them, and the whole problem's N×N
// costs are never formed.
func (r *Request) solveBlocks(ctx context.Context, prob *optlayer.Problem, gradP []float64, set *optlayer.Settings) (*answer, *Summary, []float64, int, error) {
	blocks, err := optlayer.Blocks(prob, r.Block, r.Seed)
	if err != nil {
		return nil, nil, nil, 0, solveError(err)
	}
	res, err := optlayer.SolveBlocksContext(ctx, prob, blocks, set)
	if err != nil {
		return nil, nil, nil, 0, solveError(err)
	}
	sum := &Summary{Objective: res.Objective, LowerBound: res.LowerBound, Gap: res.Gap, RelGap: res.RelGap,
		Iterations: res.Iterations, Status: "optimal", Blocks: len(blocks), BlockRelGap: res.BlockRelGap}
	if res.Status != optlayer.Optimal {
		sum.Status = "iteration_limit"
		if !r.AllowUncertified {
			return nil, nil, nil, 0, fmt.Errorf("%w: a block's relative gap %.3g > tol %.3g (%d blocks, %d iterations); nothing written; raise -max-iter or pass -allow-uncertified",
				ErrUncertified, res.BlockRelGap, r.Tol, len(blocks), res.Iterations)
		}
	}
	if gradP == nil {
		return &answer{p: res.P, m: res.M}, sum, nil, 0, nil
	}
	cols := prob.N
	vjp := func(g []float64) ([]float64, error) {
		var grad []float64
		var err error
		if prob.Features != nil {
			grad, err = res.FeatureVJP(g)
		} else {
			grad, err = res.VJP(g)
		}
		if err != nil {
			return nil, fmt.Errorf("gradient: %w", err)
		}
		return grad, nil
	}
	if prob.Features != nil {
		cols = prob.Dim
	}
	grad, err := r.gradient(gradP, res.M, prob.Features != nil, vjp)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	return &answer{p: res.P, m: res.M}, sum, grad, cols, nil
}

// gradient is vjp(gradP), the gradient (a linear map of gradP, M×n) that
// -grad-out gets. When it fails or is not finite and gradP holds values
// beyond ±1 — finite but huge ones, 1e308, overflow the map's intermediate
// sums — it is computed again for gradP scaled down by a power of two
// (exactly, the map being linear) and scaled back up: a gradient that is
// then finite is the answer; one that overflows float64 even so is bad
// input, naming the -grad-p file and its largest value. A failure that
// scaling does not explain is vjp's own error (or a non-finite gradient,
// which Run reports).
func (r *Request) gradient(gradP []float64, m int, features bool, vjp func([]float64) ([]float64, error)) ([]float64, error) {
	grad, err := vjp(gradP)
	if err == nil && finite(grad) {
		return grad, nil
	}
	big, at := 0.0, 0
	for k, v := range gradP {
		if a := math.Abs(v); a > big {
			big, at = a, k
		}
	}
	if !(big > 1) || math.IsInf(big, 0) {
		return grad, err
	}
	_, e := math.Frexp(big) // big = f·2^e, f in [0.5, 1): the scaled values are within ±1
	scaled := make([]float64, len(gradP))
	for k, v := range gradP {
		scaled[k] = math.Ldexp(v, -e)
	}
	g, serr := vjp(scaled)
	if serr != nil || !finite(g) {
		return grad, err // not the size of gradP
	}
	for k, v := range g {
		g[k] = math.Ldexp(v, e)
	}
	if finite(g) {
		return g, nil
	}
	what := "∂L/∂C"
	if features {
		what = "∂L/∂X"
	}
	n := len(gradP) / m
	return nil, inputf("-grad-p %s: element (%d, %d) = %g: the gradient %s of values this large overflows float64 (nothing written); scale ∂L/∂P down",
		r.GradPPath, at/n, at%n, gradP[at], what)
}

// solveError wraps an error of the solver: bad input (optlayer.ErrInvalid)
// as ErrInput, anything else as a failed solve.
func solveError(err error) error {
	if errors.Is(err, optlayer.ErrInvalid) {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	return fmt.Errorf("solve: %w", err)
}

// bigFeatures is the size (float64 values, 8 MB) from which solve collects
// the features it no longer needs at once rather than at the next cycle.
const bigFeatures = 1 << 20

func finite(xs []float64) bool {
	for _, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// flagPath is a file named by a flag.
type flagPath struct{ flag, path string }

// checkOutputs rejects, before anything is read, an output whose folder does
// not exist or is not a folder, an output that is an existing folder, and an
// output that is (through symbolic or hard links too) the other output or
// an input: writing it would destroy data the run reads or writes. Existing
// files are compared with os.SameFile; an output not yet there by its
// folder with symbolic links resolved (filepath.EvalSymlinks) and its name.
func checkOutputs(outs, ins []flagPath) error {
	type known struct {
		flagPath
		info os.FileInfo // nil: the file does not exist
		key  string      // folder with links resolved + name, when info is nil
	}
	var seen []known
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		dir := filepath.Dir(o.path)
		di, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return inputf("%s %s: folder %s does not exist", o.flag, o.path, dir)
		case err != nil:
			return inputf("%s %s: %w", o.flag, o.path, err)
		case !di.IsDir():
			return inputf("%s %s: %s is not a folder", o.flag, o.path, dir)
		}
		k := known{flagPath: o}
		fi, err := os.Stat(o.path)
		switch {
		case err == nil && fi.IsDir():
			return inputf("%s %s is a folder; want a file name", o.flag, o.path)
		case atomicfile.Check(o.path) != nil: // a device, named pipe, socket
			return inputf("%s %w", o.flag, atomicfile.Check(o.path))
		case err == nil:
			k.info = fi
		case errors.Is(err, fs.ErrNotExist):
			// a dangling symbolic link is replaced, not followed
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return inputf("%s %s: %w", o.flag, o.path, err)
			}
			k.key = filepath.Join(real, filepath.Base(o.path))
		default:
			return inputf("%s %s: %w", o.flag, o.path, err)
		}
		for _, s := range seen {
			if (k.info != nil && s.info != nil && os.SameFile(k.info, s.info)) ||
				(k.info == nil && s.info == nil && k.key == s.key) {
				return inputf("%s %s and %s %s are the same file; choose two names", s.flag, s.path, o.flag, o.path)
			}
		}
		seen = append(seen, k)
	}
	for _, in := range ins {
		if in.path == "" {
			continue
		}
		ii, err := os.Stat(in.path)
		if err != nil {
			continue // reported when it is read
		}
		for _, s := range seen {
			if s.info != nil && os.SameFile(s.info, ii) {
				return inputf("%s %s is also the input %s %s; choose another name", s.flag, s.path, in.flag, in.path)
			}
		}
	}
	return nil
}

// output is one array Run writes.
type output struct {
	flag, path string
	data       []float64
	shape      []int
}

// writeOutputs writes every output to a temporary file in its folder and,
// only when all are complete and synced and before() succeeded, renames
// them into place in order. On any failure before the renames (before's
// included) no temporary file is left and no output changed. If a later rename fails, the outputs already renamed are
// removed, so that no output of this run is left without its partner (an
// earlier file under such a name has then been replaced and is gone; the
// error says so).
func writeOutputs(outs []output, before func() error) (err error) {
	tmps := make([]string, 0, len(outs))
	defer func() {
		for _, t := range tmps {
			if t != "" {
				os.Remove(t)
			}
		}
	}()
	for _, o := range outs {
		t, err := atomicfile.WriteTemp(o.path, func(w io.Writer) error { return npy.EncodeFloat64(w, o.data, o.shape...) })
		if err != nil {
			return fmt.Errorf("%s %s: %w (nothing written)", o.flag, o.path, err)
		}
		tmps = append(tmps, t)
	}
	if err := before(); err != nil {
		return err
	}
	for k, o := range outs {
		if err := atomicfile.Rename(tmps[k], o.path); err != nil {
			msg := "nothing written"
			for _, done := range outs[:k] {
				os.Remove(done.path)
				msg = fmt.Sprintf("%s %s removed again", done.flag, done.path)
			}
			return fmt.Errorf("%s %s: %w (%s)", o.flag, o.path, err, msg)
		}
		tmps[k] = ""
	}
	return nil
}

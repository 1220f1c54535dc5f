// Command drknn-lfd solves one least-favourable-distribution (LFD) problem
// of Dr.k-NN from NumPy files and writes the certified feasible P* as a
// NumPy file, optionally with the gradient of a downstream loss.
//
//	drknn-lfd (-cost C.npy | -features X.npy [-metric euclidean|sqeuclidean])
//	          -labels y.npy -theta 0.1 | -theta 0.1,0.2,…
//	          [-eps E] [-tol T] [-max-iter N]
//	          -out P.npy [-grad-p G.npy -grad-out D.npy]
//
// Inputs are .npy files as numpy.save writes them: the cost matrix C is
// float64 (or float32) n×n with zeros on the diagonal; the features X are
// n×d and become costs c(i,j) = ‖xᵢ − xⱼ‖₂ (euclidean, the default) or its
// square; the labels y are int64 (or int32), values 0…M−1 with every class
// present. -theta gives one Wasserstein radius for all classes or one per
// class, in the cost's units.
//
// The output P.npy is float64 M×n: row m is P*_m on the n points, the
// certified feasible solution (Result.P of package optlayer), whose objective
// Σ_i max_m P_m(i) is printed with a certified lower bound on the LP value.
//
// With -grad-p G.npy (float64 M×n, an upstream gradient ∂L/∂P) the command
// writes -grad-out D.npy: ∂L/∂C (n×n) for -cost, or ∂L/∂X (n×d) for
// -features. The gradient is that of the entropic-regularised solution map
// P_ε(C) (Result.PReg at ε = -eps), computed by implicit differentiation of
// its KKT conditions: the LP solution itself is piecewise constant in C and
// has no useful gradient. P_ε differs from the printed P by O(ε).
//
// One JSON object goes to standard output: objective, lower_bound, gap,
// rel_gap, iterations, seconds, status ("optimal" or "iteration_limit").
// Bad input of any kind gives one line on standard error, exit status 2,
// and no output file; outputs are written to a temporary name and renamed.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/optlayer"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = "usage: drknn-lfd (-cost C.npy | -features X.npy [-metric euclidean|sqeuclidean]) -labels y.npy -theta T[,T…] [-eps E] [-tol T] -out P.npy [-grad-p G.npy -grad-out D.npy]"

// summary is the JSON object printed on success.
type summary struct {
	Objective  float64 `json:"objective"`
	LowerBound float64 `json:"lower_bound"`
	Gap        float64 `json:"gap"`
	RelGap     float64 `json:"rel_gap"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	Status     string  `json:"status"`
}

func run(args []string, stdout, stderr io.Writer) int {
	code, err := lfd(args, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "drknn-lfd: "+oneLine(err.Error()))
	}
	return code
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func parseTheta(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("-theta is required (one radius, or one per class separated by commas)")
	}
	parts := strings.Split(s, ",")
	out := make([]float64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("-theta %q: value %d %q is not a number", s, i+1, p)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("-theta %q: value %d = %v, want finite and ≥ 0", s, i+1, v)
		}
		out[i] = v
	}
	return out, nil
}

func lfd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("drknn-lfd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	costPath := fs.String("cost", "", "n×n cost matrix (.npy, float64 or float32)")
	featPath := fs.String("features", "", "n×d features (.npy); costs from -metric")
	metricName := fs.String("metric", "", "euclidean (default) or sqeuclidean, with -features")
	labelPath := fs.String("labels", "", "labels 0…M−1 (.npy, int64 or int32)")
	thetaStr := fs.String("theta", "", "Wasserstein radius: one value, or M comma-separated values")
	eps := fs.Float64("eps", optlayer.DefaultEpsilon, "entropic regularisation ε of the regularised map (and of -grad-out)")
	tol := fs.Float64("tol", optlayer.DefaultTol, "target certified relative duality gap")
	maxIter := fs.Int("max-iter", 0, "cap on dual sweeps (0: solver default)")
	outPath := fs.String("out", "", "output P* (.npy, float64 M×n)")
	gradPPath := fs.String("grad-p", "", "upstream gradient ∂L/∂P (.npy, float64 M×n)")
	gradOutPath := fs.String("grad-out", "", "output ∂L/∂C (n×n) or ∂L/∂X (n×d) (.npy)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, usage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return 0, nil
		}
		return 2, fmt.Errorf("%v; %s", err, usage)
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unexpected argument %q; %s", fs.Arg(0), usage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// Flag-level checks first: nothing is read before they pass.
	switch {
	case *costPath != "" && *featPath != "":
		return 2, errors.New("give exactly one of -cost and -features, not both")
	case *costPath == "" && *featPath == "":
		return 2, fmt.Errorf("give exactly one of -cost and -features; %s", usage)
	case *labelPath == "":
		return 2, errors.New("-labels is required")
	case *outPath == "":
		return 2, errors.New("-out is required")
	case *gradOutPath != "" && *gradPPath == "":
		return 2, errors.New("-grad-out needs -grad-p (the upstream gradient ∂L/∂P)")
	case *gradPPath != "" && *gradOutPath == "":
		return 2, errors.New("-grad-p needs -grad-out (where to write the gradient)")
	case set["metric"] && *costPath != "":
		return 2, errors.New("-metric applies only with -features")
	case !(*eps > 0) || math.IsInf(*eps, 0):
		return 2, fmt.Errorf("-eps %v: want a finite value > 0", *eps)
	case !(*tol > 0) || math.IsInf(*tol, 0):
		return 2, fmt.Errorf("-tol %v: want a finite value > 0", *tol)
	case *maxIter < 0:
		return 2, fmt.Errorf("-max-iter %d: want ≥ 0", *maxIter)
	}
	if err := distinctOutputs(*outPath, *gradOutPath, *costPath, *featPath, *labelPath, *gradPPath); err != nil {
		return 2, err
	}
	var metric optlayer.Metric
	switch strings.ToLower(*metricName) {
	case "", "euclidean":
		metric = optlayer.Euclidean
	case "sqeuclidean":
		metric = optlayer.SqEuclidean
	default:
		return 2, fmt.Errorf("-metric %q: want euclidean or sqeuclidean", *metricName)
	}
	theta, err := parseTheta(*thetaStr)
	if err != nil {
		return 2, err
	}

	// Read and check every input.
	raw, err := npy.ReadInt64(*labelPath)
	if err != nil {
		return 2, fmt.Errorf("-labels: %w", err)
	}
	n := len(raw)
	if n == 0 {
		return 2, fmt.Errorf("-labels %s: no labels", *labelPath)
	}
	labels := make([]int, n)
	m := 0
	for i, v := range raw {
		if v < 0 || v >= int64(n) {
			return 2, fmt.Errorf("-labels %s: label[%d] = %d, want 0…M−1 with M ≤ n = %d", *labelPath, i, v, n)
		}
		labels[i] = int(v)
		m = max(m, int(v)+1)
	}
	prob := &optlayer.Problem{N: n, Labels: labels, Theta: theta, Metric: metric}
	dim := 0
	if *costPath != "" {
		c, r, cols, err := npy.ReadMatrix(*costPath, true)
		if err != nil {
			return 2, fmt.Errorf("-cost: %w", err)
		}
		if r != n || cols != n {
			return 2, fmt.Errorf("-cost %s: shape %d×%d, want n×n = %d×%d (n from -labels)", *costPath, r, cols, n, n)
		}
		prob.Cost = c
	} else {
		x, r, cols, err := npy.ReadMatrix(*featPath, true)
		if err != nil {
			return 2, fmt.Errorf("-features: %w", err)
		}
		if r != n {
			return 2, fmt.Errorf("-features %s: %d rows, want n = %d (n from -labels)", *featPath, r, n)
		}
		if cols < 1 {
			return 2, fmt.Errorf("-features %s: %d columns, want ≥ 1", *featPath, cols)
		}
		prob.Features, prob.Dim, dim = x, cols, cols
	}
	if len(theta) != 1 && len(theta) != m {
		return 2, fmt.Errorf("-theta: %d values, want 1 or M = %d (one per class)", len(theta), m)
	}
	if err := prob.Validate(); err != nil {
		return 2, err
	}
	var gradP []float64
	if *gradPPath != "" {
		g, r, cols, err := npy.ReadMatrix(*gradPPath, true)
		if err != nil {
			return 2, fmt.Errorf("-grad-p: %w", err)
		}
		if r != m || cols != n {
			return 2, fmt.Errorf("-grad-p %s: shape %d×%d, want M×n = %d×%d", *gradPPath, r, cols, m, n)
		}
		gradP = g
	}

	// Solve and differentiate; write only when everything succeeded.
	start := time.Now()
	res, err := optlayer.Solve(prob, &optlayer.Settings{Epsilon: *eps, Tol: *tol, MaxIter: *maxIter})
	if err != nil {
		return 1, fmt.Errorf("solve: %w", err)
	}
	var grad []float64
	gradRows, gradCols := n, n
	if gradP != nil {
		gc, err := res.VJP(gradP)
		if err != nil {
			return 1, fmt.Errorf("gradient: %w", err)
		}
		grad = gc
		if prob.Features != nil {
			if grad, err = res.FeatureGrad(gc); err != nil {
				return 1, fmt.Errorf("feature gradient: %w", err)
			}
			gradCols = dim
		}
	}
	secs := time.Since(start).Seconds()
	for _, v := range res.P {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 1, errors.New("solve: the solution has a non-finite entry (no output written)")
		}
	}
	for _, v := range grad {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 1, errors.New("gradient: non-finite entry (no output written)")
		}
	}
	if err := npy.WriteFloat64(*outPath, res.P, res.M, res.N); err != nil {
		return 1, fmt.Errorf("-out: %w", err)
	}
	if grad != nil {
		if err := npy.WriteFloat64(*gradOutPath, grad, gradRows, gradCols); err != nil {
			return 1, fmt.Errorf("-grad-out: %w", err)
		}
	}
	status := "optimal"
	if res.Status != optlayer.Optimal {
		status = "iteration_limit"
	}
	out, err := json.Marshal(summary{Objective: res.Objective, LowerBound: res.LowerBound, Gap: res.Gap,
		RelGap: res.RelGap, Iterations: res.Iterations, Seconds: secs, Status: status})
	if err != nil {
		return 1, err
	}
	fmt.Fprintln(stdout, string(out))
	return 0, nil
}

// distinctOutputs rejects an output path that equals another output or an
// input: writing it would destroy data the command reads or writes.
func distinctOutputs(out, gradOut string, inputs ...string) error {
	clean := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return filepath.Clean(p)
	}
	if gradOut != "" && clean(out) == clean(gradOut) {
		return fmt.Errorf("-out and -grad-out are the same file %s", out)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		for _, o := range []string{out, gradOut} {
			if o != "" && clean(o) == clean(in) {
				return fmt.Errorf("output %s is also an input; choose another name", o)
			}
		}
	}
	return nil
}

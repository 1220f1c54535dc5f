// Command drknn-lfd solves one least-favourable-distribution (LFD) problem
// of Dr.k-NN from NumPy files and writes the certified feasible P* as a
// NumPy file, optionally with the gradient of a downstream loss.
//
//	drknn-lfd (-cost C.npy | -features X.npy [-metric euclidean|sqeuclidean])
//	          -labels y.npy -theta 0.1 | -theta 0.1,0.2,…
//	          [-eps E] [-tol T] [-max-iter N] [-allow-uncertified] [-repeat N]
//	          [-block B [-seed S] [-block-bound=false]] -out P.npy
//	          [-grad-p G.npy -grad-out D.npy]
//
// Inputs are .npy files as numpy.save writes them: costs C float64 (or
// float32) n×n with a zero diagonal, or features X n×d with costs
// ‖xᵢ − xⱼ‖₂ (euclidean, the default) or its square; labels 0…M−1 of any
// integer dtype (int8 … int64, uint8 … uint64), every class present. -theta is one Wasserstein radius or one
// per class, in the cost's units.
//
// P.npy is float64 M×n: row m is the certified feasible P*_m (Result.P of
// package optlayer). With -grad-p G.npy (float64 M×n, ∂L/∂P) it writes
// -grad-out D.npy: ∂L/∂C (n×n) for -cost, ∂L/∂X (n×d) for -features — the
// gradient of the entropic-regularised map P_ε(C) at ε = -eps (implicit
// differentiation of its KKT conditions; the LP solution itself is piecewise
// constant in C).
//
// One JSON object goes to standard output: objective, lower_bound, gap,
// rel_gap, iterations, seconds, status ("optimal" or "iteration_limit");
// with -repeat N (timing) the problem is solved N times in the process and
// repeats, seconds_min and seconds_median are added.
//
// -block B solves in class-stratified random blocks of at most B points
// (seeded by -seed), transport restricted to each block: an approximation
// whose time and memory grow linearly in n (from -features the n×n costs
// are never formed). P.npy is the blocks' answers mixed, feasible for the
// whole problem; -tol applies to each block; objective, lower_bound and
// rel_gap are the whole problem's certified bounds on it (what the blocks
// may cost), and blocks and block_rel_gap are added; -block-bound=false
// skips that certificate (O(n²) time; lower_bound is then 1). With -grad-p the
// gradient is the blocked map's: costs between blocks do not enter it.
// Bad input gives one line on standard error, exit status 2 and no output
// file — also a -grad-p of values so large that the gradient overflows
// float64 (huge values whose gradient fits are solved scaled down and
// scaled back); a solve stopped by -max-iter before its gap reaches -tol exits 3
// (gap on standard error, nothing written) unless -allow-uncertified.
// Outputs are written to temporary names and renamed only when all are complete
// and the JSON summary is on standard output (a failed write there leaves the
// files under the outputs' names as they were);
// an output that is an input (through links too), an output folder that does not
// exist or an output that is a folder is bad input, found before anything is read
// (package lfdio). A radius ϑ_m > 0 below 2⁻⁵⁴ of class m's least positive cost
// per point is solved as 0 (optlayer.Problem).
// Ctrl-C ends a problem of up to 1000 points at once; a larger one stops
// within the solver's current iteration (a fraction of a second at n =
// 10,000; with -grad-p, once the solve is done, when the gradient's pass
// returns), writing nothing (exit status 1, "solve stopped after N
// iterations: context canceled").
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/lfdio"
)

const usage = "usage: drknn-lfd (-cost C.npy | -features X.npy [-metric euclidean|sqeuclidean]) -labels y.npy -theta T[,T…] [-eps E] [-tol T] [-max-iter N] [-allow-uncertified] [-repeat N] [-block B [-seed S] [-block-bound=false]] -out P.npy [-grad-p G.npy -grad-out D.npy]"

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sized := func(n, repeat int) {
		setGC(n, repeat)
		catchInterrupt(n, cancel)
		if quietRuntime(n, repeat) {
			keepCore()
		}
	}
	code := report(run(ctx, os.Args[1:], os.Stdout, os.Stderr, sized), os.Stderr)
	cancel()
	os.Exit(code)
}

// catchInterrupt turns Ctrl-C into cancel for a problem of more than
// gcOffMaxN points (the run then stops at the solver's next iteration —
// optlayer.SolveContext polls the context before each — or when its
// current phase returns, and writes nothing) and reports whether it did.
// Smaller problems leave Ctrl-C to end the process at once: catching it
// starts the signal package's goroutine and locked thread, 0.3–0.6 ms of a
// 9 ms command at n = 200 (measured), for a run that takes milliseconds.
// Either way nothing incomplete is left under an output's name: outputs
// are renamed into place when complete.
func catchInterrupt(n int, cancel func()) bool {
	if n <= gcOffMaxN {
		return false
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	go func() {
		<-ch
		cancel()
	}()
	return true
}

// gcOffMaxN is the largest n (costs ≤ 8 MB) for which the collector is off.
const gcOffMaxN = 1000

// gcLargePercent is the collector's setting above gcOffMaxN points: the n×n
// costs and the candidates dominate the heap (0.8 GB of costs at n =
// 10,000) and hold no pointers, so a cycle costs little however often it
// runs. Measured at 5% against 25% (drknn-lfd, real pixels at n = 2000 /
// 3000, ϑ = 0.05–1 × median, 36 instances): peak RSS MNIST n = 3000 ≤ 139
// MB for ≤ 147, CIFAR-10 n = 3000 at 0.65 × median 144 MB for 151 (the
// features and costs together are 144 MB), the same iterations and wall
// time within noise; the collection cycles' CPU 3 → 11 ms there (10 → 34
// cycles); all 10,000 MNIST images at 0.7 × 1.20 → 1.09 GB, 0.9 → 4.6 ms
// of collection. (n = 2,000: 85 MB at 25%, 143 MB off.)
const gcLargePercent = 5

// gcOffLimit is the soft memory limit that still triggers a collection when
// the collector is off (many -repeat solves, a backward pass).
const gcOffLimit = 256 << 20

// gcPolicy is the garbage collector's setting for a problem of n points
// solved repeat times (-repeat; 0 or 1: once). Solved once with up to
// gcOffMaxN points it is off, with a soft memory limit as the net: a solve
// then allocates a few MB (peak RSS of a forward solve, measured: n = 200
// 7 MB, n = 500 26 MB off vs 19 MB at 25%), and the collection cycles cost
// 1–3 ms of a 10–20 ms command at n = 200. Solved repeatedly (timing), the
// runtime's default 100%: each solve's memory is garbage by the next, and
// collecting it lets the next reuse those pages instead of faulting in fresh
// ones (measured, forward + backward at n = 50, median of 400: 0.90 ms with
// the collector off, 0.78 ms at 100%). Above gcOffMaxN points, gcLargePercent.
// limit < 0 leaves the limit as it is.
func gcPolicy(n, repeat int) (percent int, limit int64) {
	switch {
	case n > gcOffMaxN:
		return gcLargePercent, -1
	case repeat > 1:
		return 100, -1
	}
	return -1, gcOffLimit
}

// quietRuntime reports whether a problem of n points solved repeat times
// (-repeat; 0 or 1: once) runs with the runtime's helper threads kept off its
// core (keepCore): a single solve that never waits for another goroutine
// (n ≤ optlayer.SerialMaxN) with the collector off (gcPolicy). Timing runs
// (-repeat > 1) collect garbage, whose workers must not be niced.
func quietRuntime(n, repeat int) bool {
	percent, _ := gcPolicy(n, repeat)
	return n <= optlayer.SerialMaxN && percent < 0
}

func setGC(n, repeat int) {
	percent, limit := gcPolicy(n, repeat)
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
}

// report prints err as one line and returns the exit status: 0 success,
// 2 bad input, 3 uncertified answer, 1 anything else.
func report(err error, stderr io.Writer) int {
	if err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		fmt.Fprintln(stderr, "drknn-lfd: "+msg)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, lfdio.ErrInput):
		return 2
	case errors.Is(err, lfdio.ErrUncertified):
		return 3
	}
	return 1
}

// run parses args, solves and prints the summary. onSize, if not nil, is
// called with n and -repeat once the labels are read, before the costs (main
// sets the garbage collector's policy there; tests pass nil and leave the
// process's policy alone).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, onSize func(n, repeat int)) error {
	fs := flag.NewFlagSet("drknn-lfd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var r lfdio.Request
	fs.StringVar(&r.CostPath, "cost", "", "n×n cost matrix (.npy, float64 or float32)")
	fs.StringVar(&r.FeaturesPath, "features", "", "n×d features (.npy); costs from -metric")
	fs.StringVar(&r.Metric, "metric", "", "euclidean (default) or sqeuclidean, with -features")
	fs.StringVar(&r.LabelsPath, "labels", "", "labels 0…M−1 (.npy, any integer dtype: int8 … int64, uint8 … uint64)")
	theta := fs.String("theta", "", "Wasserstein radius: one value, or M comma-separated values")
	fs.Float64Var(&r.Epsilon, "eps", optlayer.DefaultEpsilon, "entropic regularisation ε of the regularised map (and of -grad-out)")
	fs.Float64Var(&r.Tol, "tol", optlayer.DefaultTol, "target certified relative duality gap")
	fs.IntVar(&r.MaxIter, "max-iter", 0, "cap on dual sweeps and Newton steps (0: solver default)")
	fs.BoolVar(&r.AllowUncertified, "allow-uncertified", false, "write the answer even if the gap misses -tol")
	fs.IntVar(&r.Repeat, "repeat", 0, "timing: solve N times in this process and report seconds_min and seconds_median")
	fs.IntVar(&r.Block, "block", 0, "solve in class-stratified blocks of at most B points (an approximation; 0: the whole problem)")
	fs.Int64Var(&r.Seed, "seed", 0, "seed of -block's random blocks")
	blockBound := fs.Bool("block-bound", true, "with -block: certify the blocked answer on the whole problem (O(n²) time)")
	fs.StringVar(&r.OutPath, "out", "", "output P* (.npy, float64 M×n)")
	fs.StringVar(&r.GradPPath, "grad-p", "", "upstream gradient ∂L/∂P (.npy, float64 M×n)")
	fs.StringVar(&r.GradOutPath, "grad-out", "", "output ∂L/∂C (n×n) or ∂L/∂X (n×d) (.npy)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, usage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return nil
		}
		return fmt.Errorf("%w: %v; %s", lfdio.ErrInput, err, usage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q; %s", lfdio.ErrInput, fs.Arg(0), usage)
	}
	if len(args) == 0 {
		return fmt.Errorf("%w: no arguments; %s", lfdio.ErrInput, usage)
	}
	r.NoBlockBound = !*blockBound
	var err error
	if r.Theta, err = lfdio.ParseTheta(*theta); err != nil {
		return err
	}
	if onSize != nil {
		r.Sized = func(n int) { onSize(n, r.Repeat) }
	}
	// The summary goes out before the outputs are renamed into place: a
	// standard output that fails (> /dev/full) leaves the files under
	// their names as they were.
	r.Report = func(sum *lfdio.Summary) error {
		out, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		if _, err = fmt.Fprintln(stdout, string(out)); err != nil {
			return fmt.Errorf("writing the summary to standard output: %w (no output written)", err)
		}
		return nil
	}
	_, err = lfdio.Run(ctx, r)
	return err
}

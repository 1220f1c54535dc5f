package optlayer

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"testing"
	"time"
)

// The random sweep: the check a change to lpLarge's narrow / Phase C path
// needs before it lands (docs/PERFORMANCE.md: two such changes passed the
// named instances and left a random one uncertified). It skips unless
// -sweep-seed is given:
//
//	go test ./optlayer -run TestRandomSweep -timeout 60m -v -args -sweep-seed 9 [-sweep-n 30] [-sweep-sizes 1100,1500,2000,2500,3000] [-sweep-only K]
//
// Each trial draws n from -sweep-sizes, M in 2…10, d in {2, 16, 64}, one of
// four feature families (Gaussian, separated class means, features rounded
// to integers — ties in the cost —, heavy-tailed), ϑ = 0.02–2 × the median
// cost (log-uniform; in half the trials 0.3–0.9 ×, the band below the pooled
// radius where the solves are hard), per-class radii in one trial of three, and solves it
// as drknn-lfd does without -grad-p (LPOnly). It prints one line per trial
// and the totals, and fails if any trial ends uncertified.
// With -sweep-export DIR it solves nothing and writes each trial (with
// -sweep-only K, trial K) as DIR/sweep<seed>_<K>/X.npy, y.npy and theta.txt
// for drknn-lfd, like TestExportHard:
//
//	drknn-lfd -features X.npy -labels y.npy -theta $(cat theta.txt) -out P.npy
var (
	sweepSeed  = flag.Int64("sweep-seed", 0, "TestRandomSweep: the seed of the random instances (0: skip)")
	sweepN     = flag.Int("sweep-n", 30, "TestRandomSweep: number of instances")
	sweepSizes = flag.String("sweep-sizes", "1100,1500,2000,2500,3000", "TestRandomSweep: the sizes n drawn from")
	sweepOnly  = flag.Int("sweep-only", -1, "TestRandomSweep: solve only this trial (0-based)")
	sweepOut   = flag.String("sweep-export", "", "TestRandomSweep: write each trial as .npy to this directory for drknn-lfd instead of solving it")
)

// sweepProblem draws trial k's instance of a sweep and describes it.
func sweepProblem(rng *rand.Rand, sizes []int) (*Problem, string) {
	p, desc, _, _ := sweepInstance(rng, sizes)
	return p, desc
}

// sweepInstance is sweepProblem with the features its costs come from (n×d,
// Euclidean).
func sweepInstance(rng *rand.Rand, sizes []int) (p *Problem, desc string, x []float64, d int) {
	n := sizes[rng.Intn(len(sizes))]
	M := 2 + rng.Intn(9)
	d = []int{2, 16, 64}[rng.Intn(3)]
	family := []string{"gauss", "separated", "rounded", "heavy"}[rng.Intn(4)]
	labels := everyClassLabels(rng, n, M)
	x = normalPoints(rng, n, d)
	switch family {
	case "separated":
		shiftClassMeans(rng, x, labels, M, d)
	case "rounded":
		for k := range x {
			x[k] = math.Round(2 * x[k])
		}
	case "heavy":
		for k := range x {
			x[k] /= math.Max(0.05, math.Abs(rng.NormFloat64())) // Cauchy-like tails
		}
	}
	c, err := Costs(x, n, d, Euclidean)
	if err != nil {
		panic(err)
	}
	med := medianSample(c, n)
	rel := 0.02 * math.Pow(100, rng.Float64())
	if rng.Intn(2) == 0 {
		rel = 0.3 + 0.6*rng.Float64() // the band below the pooled radius, where the solves are hard
	}
	theta := []float64{rel * med}
	desc = fmt.Sprintf("n=%d M=%d d=%d %s rel=%.3g", n, M, d, family, rel)
	if rng.Intn(3) == 0 {
		theta = make([]float64, M)
		for m := range theta {
			theta[m] = rel * med * math.Pow(4, 2*rng.Float64()-1) // ×¼ … ×4
		}
		desc += " per-class"
	}
	return &Problem{N: n, Cost: c, Labels: labels, Theta: theta}, desc, x, d
}

func TestRandomSweep(t *testing.T) {
	if *sweepSeed == 0 {
		t.Skip("no -sweep-seed given")
	}
	sizes, err := sizeList("sweep-sizes", *sweepSizes)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(*sweepSeed))
	total, bad := 0, 0
	t0 := time.Now()
	for k := 0; k < *sweepN; k++ {
		p, desc, x, d := sweepInstance(rng, sizes) // every trial draws, so -sweep-only K is trial K of the sweep
		if *sweepOnly >= 0 && k != *sweepOnly {
			continue
		}
		if *sweepOut != "" {
			dir := filepath.Join(*sweepOut, fmt.Sprintf("sweep%d_%d", *sweepSeed, k))
			if err := exportInstance(dir, x, d, p.Labels, p.Theta); err != nil {
				t.Fatal(err)
			}
			t.Logf("trial %2d  %-40s  written to %s", k, desc, dir)
			continue
		}
		t1 := time.Now()
		r, err := Solve(p, &Settings{LPOnly: true})
		if err != nil {
			t.Errorf("trial %d (%s): %v", k, desc, err)
			continue
		}
		total += r.Iterations
		mark := ""
		if r.Status != Optimal {
			bad++
			mark = "  UNCERTIFIED"
		}
		t.Logf("trial %2d  %-40s  it %5d  rel gap %.2e  %.2f s%s", k, desc, r.Iterations, r.RelGap, time.Since(t1).Seconds(), mark)
	}
	t.Logf("seed %d: %d iterations in all, %.1f s, %d uncertified", *sweepSeed, total, time.Since(t0).Seconds(), bad)
	if bad > 0 {
		t.Errorf("%d trials ended uncertified", bad)
	}
}

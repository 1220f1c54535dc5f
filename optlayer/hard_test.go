package optlayer

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drknn/drknn/internal/npy"
)

// The hard benchmark set (issue 15): besides the separated Gaussian classes
// of benchProblem, problems where the LFD is hard to find.
//
//	overlap   features from one distribution (16-dim Gaussian), labels random, ϑ = 0.1 × median cost
//	ties      integer features in {0,1,2}¹⁶: the Euclidean costs take few values (ties everywhere), ϑ = 0.1 × median
//	dup       half the points are exact copies of the other half (random labels: free overlap), ϑ = 0.1 × median
//	theta0    overlap with ϑ = 1e-4 × median (P ≈ P̂)
//	wide      overlap with ϑ = the median cost: the LP's LFD is already uniform, the budgets still bind weakly
//	uniform   overlap with ϑ = 10 × median, above any plan's cost (redundant budgets, uniform LFD)
//	threshold overlap with ϑ = 0.52 × median, just below the radius at which the LP value reaches 1:
//	          no single distribution is within every budget, the LP is nearly degenerate (benchmark only)
//	separated classes with means N(0, 1.5²) per dimension (benchProblem's family), ϑ = 0.7 × median:
//	          the LP value ≈ 1.3, the slowest radius found for that family (benchmark only)
//	farclass  overlap with one class shifted by 0.5 in every dimension, ϑ = 0.6 × median: u misses
//	          that class's budget, the LP value is 1 (the pooled mixture, pooledmix.go; benchmark only)
var hardKinds = []string{"overlap", "ties", "dup", "theta0", "wide", "uniform"}

// hardBenchKinds are the kinds BenchmarkHard and TestExportHard run: the
// digested set (hardKinds, digest_test.go), threshold and separated, the
// known slow cases, and farclass.
var hardBenchKinds = append(hardKinds[:len(hardKinds):len(hardKinds)], "threshold", "separated", "farclass")

var (
	hardSizes  = flag.String("hard-sizes", "2000,3000", "sizes of BenchmarkHard (comma-separated; 10000 takes minutes)")
	hardLPOnly = flag.Bool("hard-lponly", false, "BenchmarkHard stops at the LP certificate (Settings.LPOnly, as drknn-lfd without -grad-p)")
	hardSeed   = flag.Int64("hard-seed", 4, "the seed of BenchmarkHard's and TestExportHard's instances")
)

// hardProblem builds one instance of the hard set with M classes.
func hardProblem(kind string, seed int64, n, M int) *Problem {
	rng := rand.New(rand.NewSource(seed))
	const dim = 16
	labels := everyClassLabels(rng, n, M)
	x := normalPoints(rng, n, dim)
	switch kind {
	case "ties":
		for k := range x {
			x[k] = float64(rng.Intn(3))
		}
	case "dup":
		h := n / 2
		copy(x[h*dim:], x[:(n-h)*dim])
	case "theta0", "wide", "uniform", "threshold": // overlap's features (hardRel: their radii)
	case "separated":
		shiftClassMeans(rng, x, labels, M, dim)
	case "farclass":
		// one class shifted by 0.5 in every dimension, far from the
		// others (as MNIST's zeros): at 0.6 × median u misses that class's
		// budget, a mixture of u and the classes fits (pooledmix.go;
		// seeds 4, 11, 12 at n = 2000 and 3000 — at 0.58 × it does not
		// fit at n = 2000, at 0.64 × u fits at n = 3000)
		for i, y := range labels {
			if y == 0 {
				for k := 0; k < dim; k++ {
					x[i*dim+k] += 0.5
				}
			}
		}
	case "overlap":
	default:
		panic("unknown kind " + kind)
	}
	// ϑ relative to the median distance of 200,000 random pairs
	v := make([]float64, 0, 200000)
	for len(v) < cap(v) {
		i, j := rng.Intn(n), rng.Intn(n)
		if i == j {
			continue
		}
		var d2 float64
		for k := 0; k < dim; k++ {
			d := x[i*dim+k] - x[j*dim+k]
			d2 += d * d
		}
		v = append(v, math.Sqrt(d2))
	}
	sort.Float64s(v)
	return &Problem{N: n, Features: x, Dim: dim, Labels: labels, Theta: []float64{hardRel(kind) * v[len(v)/2]}}
}

// hardRel is the radius ϑ of hardProblem's kind as a multiple of the median
// cost.
func hardRel(kind string) float64 {
	switch kind {
	case "theta0":
		return 1e-4
	case "wide":
		return 1
	case "uniform":
		return 10
	case "threshold":
		return 0.52
	case "separated":
		return 0.7
	case "farclass":
		return 0.6
	}
	return 0.1
}

// normalPoints draws n points of d standard normal features (n × d).
func normalPoints(rng *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	return x
}

// shiftClassMeans adds to each point (n × d in x) its class's mean, drawn
// from N(0, 1.5²) per dimension (as gaussProblem's): the separated family.
func shiftClassMeans(rng *rand.Rand, x []float64, labels []int, M, d int) {
	means := make([]float64, M*d)
	for k := range means {
		means[k] = 1.5 * rng.NormFloat64()
	}
	for i, y := range labels {
		for k := 0; k < d; k++ {
			x[i*d+k] += means[y*d+k]
		}
	}
}

// overlapProblem is the hard family: features from one distribution, random
// labels (every class present), Euclidean costs, ϑ = thetaRel × median cost.
func overlapProblem(seed int64, n, M, dim int, thetaRel float64) *Problem {
	rng := rand.New(rand.NewSource(seed))
	labels := everyClassLabels(rng, n, M)
	x := normalPoints(rng, n, dim)
	c, err := Costs(x, n, dim, Euclidean)
	if err != nil {
		panic(err)
	}
	return &Problem{N: n, Cost: c, Labels: labels, Theta: []float64{thetaRel * medianSample(c, n)}}
}

// medianSample is the median off-diagonal cost, from 200,000 random pairs
// when there are more.
func medianSample(c []float64, n int) float64 {
	if n*n <= 200000 {
		return medianOffDiag(c, n)
	}
	rng := rand.New(rand.NewSource(1))
	v := make([]float64, 0, 200000)
	for len(v) < 200000 {
		if i, j := rng.Intn(n), rng.Intn(n); i != j {
			v = append(v, c[i*n+j])
		}
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// BenchmarkHard solves the hard set (forward: Solve from features, which
// includes computing the n×n costs), n from -hard-sizes; with -hard-lponly
// only to the LP certificate (what drknn-lfd does without -grad-p).
//
//	go test ./optlayer -run '^$' -bench Hard -benchtime 1x -count 3 -timeout 60m [-args -hard-sizes 2000,3000,10000 -hard-lponly]
func BenchmarkHard(b *testing.B) {
	sizes, err := sizeList("hard-sizes", *hardSizes)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range sizes {
		for _, kind := range hardBenchKinds {
			b.Run(fmt.Sprintf("%s/n=%d", kind, n), func(b *testing.B) {
				p := hardProblem(kind, *hardSeed, n, 10)
				b.ResetTimer()
				var r *Result
				c0 := cpuTime()
				best := time.Duration(math.MaxInt64)
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					var err error
					if r, err = Solve(p, &Settings{LPOnly: *hardLPOnly}); err != nil {
						b.Fatal(err)
					}
					best = min(best, time.Since(t0))
				}
				if r.Status != Optimal {
					b.Fatalf("status %d, rel gap %g", r.Status, r.RelGap)
				}
				b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(best)/1e6, "min-ms")
				b.ReportMetric(r.RelGap, "relgap")
				b.ReportMetric(float64(r.Iterations), "iters")
				b.ReportMetric(float64(len(r.st.gv)), "plan-nnz")
			})
		}
	}
}

var hardExport = flag.String("export-hard", "", "write the hard set at -hard-sizes as .npy to this directory (for drknn-lfd)")

// TestExportHard writes each hard instance at -hard-sizes as
// DIR/<kind>_<n>/X.npy (features), y.npy (labels) and theta.txt, so that
// drknn-lfd can be timed on them as a whole process (its peak memory is the
// command's own, with its garbage-collection setting):
//
//	go test ./optlayer -run TestExportHard -args -export-hard DIR -hard-sizes 2000,3000
//	drknn-lfd -features DIR/overlap_2000/X.npy -labels DIR/overlap_2000/y.npy -theta $(cat DIR/overlap_2000/theta.txt) -out P.npy
func TestExportHard(t *testing.T) {
	if *hardExport == "" {
		t.Skip("no -export-hard directory given")
	}
	sizes, err := sizeList("hard-sizes", *hardSizes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sizes {
		for _, kind := range hardBenchKinds {
			p := hardProblem(kind, *hardSeed, n, 10)
			d := filepath.Join(*hardExport, fmt.Sprintf("%s_%d", kind, n))
			if err := exportInstance(d, p.Features, p.Dim, p.Labels, p.Theta); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// exportInstance writes an instance for drknn-lfd: dir/X.npy (the n×d
// features), dir/y.npy (the labels) and dir/theta.txt (the radii, comma
// separated: -theta $(cat dir/theta.txt)).
func exportInstance(dir string, x []float64, d int, labels []int, theta []float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := len(labels)
	y := make([]int64, n)
	for i, l := range labels {
		y[i] = int64(l)
	}
	if err := npy.WriteFloat64(filepath.Join(dir, "X.npy"), x, n, d); err != nil {
		return err
	}
	if err := npy.WriteInt64(filepath.Join(dir, "y.npy"), y); err != nil {
		return err
	}
	ts := make([]string, len(theta))
	for m, v := range theta {
		ts[m] = strconv.FormatFloat(v, 'g', 17, 64)
	}
	return os.WriteFile(filepath.Join(dir, "theta.txt"), []byte(strings.Join(ts, ",")+"\n"), 0o644)
}

// everyClassLabels returns n labels in 0…M−1: points 0…M−1 get one class
// each (every class present), the rest a class from rng.
func everyClassLabels(rng *rand.Rand, n, M int) []int {
	labels := make([]int, n)
	for i := range labels {
		if i < M {
			labels[i] = i
		} else {
			labels[i] = rng.Intn(M)
		}
	}
	return labels
}

package optlayer

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The benchmark family: Gaussian embeddings in 16 dimensions with
// class-shifted means, Euclidean costs, ϑ = 0.1 × median cost, fixed seeds.
var benchCases = []struct {
	n, M int
	seed int64
}{{50, 5, 1}, {200, 10, 2}, {500, 10, 3}, {2000, 10, 4}}

func benchProblem(n, M int, seed int64) *Problem { return gaussProblem(seed, n, M, 16, 0.1) }

func benchGrad(M, n int) []float64 {
	rng := rand.New(rand.NewSource(99))
	g := make([]float64, M*n)
	for k := range g {
		g[k] = rng.NormFloat64()
	}
	return g
}

func BenchmarkForwardBackward(b *testing.B) {
	for _, c := range benchCases {
		b.Run(fmt.Sprintf("n=%d/M=%d", c.n, c.M), func(b *testing.B) {
			p := benchProblem(c.n, c.M, c.seed)
			g := benchGrad(c.M, c.n)
			b.ResetTimer()
			var r *Result
			c0 := cpuTime()
			best := time.Duration(math.MaxInt64)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				var err error
				r, err = Solve(p, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.VJP(g); err != nil {
					b.Fatal(err)
				}
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
			// the fastest single run: the least disturbed by other load
			b.ReportMetric(float64(best)/1e6, "min-ms")
			b.ReportMetric(r.RelGap, "relgap")
			b.ReportMetric(r.Objective, "objective")
			b.ReportMetric(float64(r.Iterations), "iters")
		})
	}
}

// cpuTime is the process's user+system CPU time in nanoseconds: on a shared,
// loaded machine it is a steadier measure than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)
}

func BenchmarkForward(b *testing.B) {
	for _, c := range benchCases {
		b.Run(fmt.Sprintf("n=%d/M=%d", c.n, c.M), func(b *testing.B) {
			p := benchProblem(c.n, c.M, c.seed)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Solve(p, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBackward(b *testing.B) {
	for _, c := range benchCases {
		p := benchProblem(c.n, c.M, c.seed)
		g := benchGrad(c.M, c.n)
		r, err := Solve(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d/M=%d", c.n, c.M), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := r.VJP(g); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("envelope/n=%d/M=%d", c.n, c.M), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := r.ObjectiveGrad(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var exportDir = flag.String("export", "", "write the benchmark instances (and our objectives) to this directory for scripts/highs_bench.py")

// TestExportBenchInstances writes the benchmark instances as text:
// line 1 "n M theta", line 2 the labels, then n lines of n costs (%.17g).
// It also writes ours_<n>_<M>.txt with our objective and bounds. Run with
//
//	go test ./optlayer -run TestExportBenchInstances -args -export DIR
func TestExportBenchInstances(t *testing.T) {
	if *exportDir == "" {
		t.Skip("no -export directory given")
	}
	if err := os.MkdirAll(*exportDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range benchCases {
		p := benchProblem(c.n, c.M, c.seed)
		name := filepath.Join(*exportDir, fmt.Sprintf("lfd_%d_%d.txt", c.n, c.M))
		if err := writeInstance(name, p, c.M); err != nil {
			t.Fatal(err)
		}
		if c.n > 500 {
			continue
		}
		r, err := Solve(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(*exportDir, fmt.Sprintf("ours_%d_%d.txt", c.n, c.M))
		s := fmt.Sprintf("%.12g %.12g %.6g\n", r.Objective, r.LowerBound, r.RelGap)
		if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeInstance(name string, p *Problem, M int) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%d %d %.17g\n", p.N, M, p.Theta[0])
	for i, y := range p.Labels {
		if i > 0 {
			w.WriteByte(' ')
		}
		fmt.Fprint(w, y)
	}
	w.WriteByte('\n')
	for i := 0; i < p.N; i++ {
		for j := 0; j < p.N; j++ {
			if j > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "%.17g", p.Cost[i*p.N+j])
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// miniSets is the trainer's typical batch (train/risk.go): count mini-sets
// of n points and M classes from the benchmark family, costs divided by
// their mean, ϑ = 0.1 (relative), ε = 0.01, Tol = 1e-3.
func miniSets(count, n, M int) []*Problem {
	ps := make([]*Problem, count)
	for k := range ps {
		p := gaussProblem(int64(1000+k), n, M, 16, 0.1)
		var mean float64
		for _, c := range p.Cost {
			mean += c
		}
		mean /= float64(n * n)
		for j := range p.Cost {
			p.Cost[j] /= mean
		}
		p.Theta = []float64{0.1}
		ps[k] = p
	}
	return ps
}

// BenchmarkMiniSets is the training step's LFD work: SolveBatch on two
// workers plus one VJP per mini-set.
func BenchmarkMiniSets(b *testing.B) {
	for _, c := range []struct{ count, n, M int }{{32, 10, 2}, {32, 25, 5}, {32, 50, 5}} {
		b.Run(fmt.Sprintf("%dx/n=%d/M=%d", c.count, c.n, c.M), func(b *testing.B) {
			ps := miniSets(c.count, c.n, c.M)
			set := &Settings{Epsilon: 0.01, Tol: 1e-3}
			g := benchGrad(c.M, c.n)
			b.ResetTimer()
			c0 := cpuTime()
			var iters, gap float64
			best := time.Duration(math.MaxInt64)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				rs, err := SolveBatch(ps, set, 2)
				if err != nil {
					b.Fatal(err)
				}
				iters, gap = 0, 0
				for _, r := range rs {
					if _, err := r.VJP(g); err != nil {
						b.Fatal(err)
					}
					iters += float64(r.Iterations)
					gap = math.Max(gap, r.RelGap)
				}
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(float64(best)/1e6, "min-ms")
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(iters/float64(c.count), "iters")
			b.ReportMetric(gap, "maxrelgap")
		})
	}
}

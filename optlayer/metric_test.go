package optlayer

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"
)

// costsRowByRow is Costs as it was before the tiles: every pair by sqDist,
// row after row. Costs must match it bit for bit.
func costsRowByRow(x []float64, n, dim int, metric Metric) []float64 {
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := sqDist(x[i*dim:(i+1)*dim], x[j*dim:(j+1)*dim])
			if metric == Euclidean {
				v = math.Sqrt(v)
			}
			c[i*n+j], c[j*n+i] = v, v
		}
	}
	return c
}

// TestCostsBitIdentical checks the tiled Costs against the row-by-row sums
// at sizes around every blocking boundary (4 pairs, costTile points,
// costChunk features), both metrics, on one goroutine and on two.
func TestCostsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{1, 2, 3, 5, 63, 64, 65, 131} {
			for _, dim := range []int{1, 3, 4, 255, 256, 257, 600} {
				x := make([]float64, n*dim)
				for k := range x {
					x[k] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
				}
				for _, metric := range []Metric{Euclidean, SqEuclidean} {
					got, err := Costs(x, n, dim, metric)
					if err != nil {
						t.Fatal(err)
					}
					want := costsRowByRow(x, n, dim, metric)
					for k := range want {
						if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
							t.Fatalf("GOMAXPROCS %d, n = %d, dim = %d, metric %d: c[%d][%d] = %v, want %v", procs, n, dim, metric, k/n, k%n, got[k], want[k])
						}
					}
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestCostsOverflow: the first overflowing pair in row order is named, on
// one goroutine and on two (n²·dim above costsParMin).
func TestCostsOverflow(t *testing.T) {
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		const n, dim = 300, 50
		x := make([]float64, n*dim)
		x[170*dim+7] = 1e200 // point 170: (i, 170) overflows for every i < 170
		x[250*dim] = -1e200
		_, err := Costs(x, n, dim, Euclidean)
		runtime.GOMAXPROCS(prev)
		if err == nil || !strings.Contains(err.Error(), "cost between points 0 and 170 overflows (+Inf)") {
			t.Fatalf("GOMAXPROCS %d: err = %v", procs, err)
		}
	}
}

// BenchmarkCosts: the tiled Costs beside the row-by-row sums it replaced
// (the same bits).
func BenchmarkCosts(b *testing.B) {
	for _, sz := range [][2]int{{200, 16}, {2000, 16}, {2000, 784}, {2000, 3072}} {
		n, dim := sz[0], sz[1]
		rng := rand.New(rand.NewSource(1))
		x := make([]float64, n*dim)
		for k := range x {
			x[k] = rng.Float64()
		}
		b.Run(fmt.Sprintf("n=%d/dim=%d/tiled", n, dim), func(b *testing.B) {
			for b.Loop() {
				if _, err := Costs(x, n, dim, Euclidean); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/dim=%d/rowbyrow", n, dim), func(b *testing.B) {
			for b.Loop() {
				costsRowByRow(x, n, dim, Euclidean)
			}
		})
	}
}

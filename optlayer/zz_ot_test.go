package optlayer

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

func TestScratchOT(t *testing.T) {
	for _, n := range []int{2000, 3000} {
		for _, seed := range []int64{4, 11, 12} {
			M, dim := 10, 2
			rng := rand.New(rand.NewSource(seed))
			labels := everyClassLabels(rng, n, M)
			x := normalPoints(rng, n, dim)
			for k := range x {
				x[k] = float64(rng.Intn(3))
			}
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
			theta := 0.1 * v[len(v)/2]
			// locations
			loc := map[string]int{}
			var locs [][]float64
			li := make([]int, n)
			for i := 0; i < n; i++ {
				key := fmt.Sprint(x[i*dim : (i+1)*dim])
				l, ok := loc[key]
				if !ok {
					l = len(locs)
					loc[key] = l
					locs = append(locs, x[i*dim:(i+1)*dim])
				}
				li[i] = l
			}
			L := len(locs)
			cnt := make([]float64, L)
			cm := make([][]float64, M)
			nm := make([]float64, M)
			for m := range cm {
				cm[m] = make([]float64, L)
			}
			for i := 0; i < n; i++ {
				cnt[li[i]]++
				cm[labels[i]][li[i]]++
				nm[labels[i]]++
			}
			worst := 0.0
			for m := 0; m < M; m++ {
				// OT from a = cm/nm to b = cnt/n over L×L
				c := make([]float64, L*L)
				A := mat.NewDense(2*L, L*L, nil)
				b := make([]float64, 2*L)
				for i := 0; i < L; i++ {
					for j := 0; j < L; j++ {
						var d2 float64
						for k := 0; k < dim; k++ {
							d := locs[i][k] - locs[j][k]
							d2 += d * d
						}
						c[i*L+j] = math.Sqrt(d2)
						A.Set(i, i*L+j, 1)
						A.Set(L+j, i*L+j, 1)
					}
					b[i] = cm[m][i] / nm[m]
					b[L+i] = cnt[i] / float64(n)
				}
				// drop one redundant row
				A2 := mat.DenseCopyOf(A.Slice(0, 2*L-1, 0, L*L))
				f, _, err := lp.Simplex(c, A2, b[:2*L-1], 1e-10, nil)
				if err != nil {
					t.Fatal(err)
				}
				worst = math.Max(worst, f/theta)
			}
			t.Logf("n=%d seed=%d L=%d theta=%.4f worst OT/theta=%.4f", n, seed, L, theta, worst)
		}
	}
}

package optlayer

import (
	"math/rand"
	"slices"
	"testing"
)

// cheapSelection is selectCands(selCost, …, kmax) on a fresh solver of in
// with random duals (randomizeDuals, dualSeed), the cut of selectCheapest on or off: the
// candidates' rows by column (nil: full) and each column's thr.
func cheapSelection(t *testing.T, in *instance, dualSeed int64, kmax int, noCut bool) ([][]int32, []float64) {
	t.Helper()
	s := newSolver(in)
	s.init(nil)
	randomizeDuals(s, dualSeed)
	s.noCostCut = noCut
	s.selectCands(selCost, 0, 0, 0, kmax)
	rows := make([][]int32, s.n)
	for q := range rows {
		if !s.kfull[q] {
			rows[q] = slices.Clone(s.colRows(q))
			if len(rows[q]) == 0 {
				rows[q] = []int32{} // a column of no rows is not a full one
			}
		}
	}
	return rows, slices.Clone(s.thr)
}

// TestSelectCheapest checks the first selection of a large problem (the
// kmax cheapest rows of every column) taken among the rows under
// costCut's cut against the same selection among all rows: the same rows
// and the same least key left out, bit for bit, on costs with ties, exact
// duplicates (zero-cost rows beyond kmax), and columns built so that the
// cut keeps too few rows (the fallback).
func TestSelectCheapest(t *testing.T) {
	const n = 1200
	var cases []*Problem
	for _, kind := range []string{"ties", "dup", "overlap", "separated"} {
		cases = append(cases, hardProblem(kind, 7, n, 4))
	}
	// a cost matrix whose sampled rows (every stride-th, for kmax = 64:
	// the first 20 of them, more than costCut's j = 15, low, the others high)
	// and the other rows a middle cost: the cut keeps 16 < kmax rows
	const kFew = 64
	stride := n / (2 * kFew)
	cost := make([]float64, n*n)
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case i == j:
			case i%stride == 0 && i/stride < 20:
				cost[i*n+j] = 0.1 + 0.01*rng.Float64()
			case i%stride == 0:
				cost[i*n+j] = 5
			default:
				cost[i*n+j] = 1 + rng.Float64()
			}
		}
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
	}
	few := &Problem{N: n, Cost: cost, Labels: labels, Theta: []float64{0.5}}
	cases = append(cases, few)
	fallbacks := 0
	for c, p := range cases {
		in, err := p.instance()
		if err != nil {
			t.Fatal(err)
		}
		for _, kmax := range []int{1, 7, kFew, candK, n / 4, n/4 + 1, n} {
			a, athr := cheapSelection(t, in, int64(c+1), kmax, false)
			b, bthr := cheapSelection(t, in, int64(c+1), kmax, true)
			for q := range a {
				if !slices.Equal(a[q], b[q]) || (a[q] == nil) != (b[q] == nil) {
					t.Fatalf("case %d, kmax %d, column %d: rows %v under the cut, %v among all", c, kmax, q, a[q], b[q])
				}
				if athr[q] != bthr[q] {
					t.Fatalf("case %d, kmax %d, column %d: thr %v under the cut, %v among all", c, kmax, q, athr[q], bthr[q])
				}
				if want := min(kmax, n); a[q] != nil && len(a[q]) < want {
					t.Fatalf("case %d, kmax %d, column %d: %d rows", c, kmax, q, len(a[q]))
				}
			}
		}
		if p == few {
			// the fallback did run: the cut of a column keeps too few
			s := newSolver(in)
			for q := 0; q < n; q++ {
				col := s.fullCol(q, make([]float64, n))
				tc := costCut(col, kFew, make([]float64, n))
				kept := 0
				for _, v := range col {
					if v <= tc {
						kept++
					}
				}
				if kept < kFew {
					fallbacks++
				}
			}
		}
	}
	if fallbacks == 0 {
		t.Fatal("no column's cut kept too few rows: the fallback went untested")
	}
}

// TestSymmetric checks the symmetry test on both sides of symParMin: a
// symmetric matrix passes, and one changed entry anywhere (either
// goroutine's rows of tiles, the last partial tile, above or below the
// diagonal) fails it.
func TestSymmetric(t *testing.T) {
	for _, n := range []int{1, 63, 130, symParMin - 1, symParMin + 37} {
		rng := rand.New(rand.NewSource(int64(n)))
		c := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				v := rng.Float64()
				c[i*n+j], c[j*n+i] = v, v
			}
		}
		if !symmetric(c, n) {
			t.Fatalf("n = %d: a symmetric matrix reported asymmetric", n)
		}
		if n < 2 {
			continue
		}
		for _, ij := range [][2]int{{0, 1}, {1, 0}, {n - 2, n - 1}, {n - 1, 0}, {67 % n, 200 % n}, {rng.Intn(n), rng.Intn(n)}} {
			i, j := ij[0], ij[1]
			if i == j {
				continue
			}
			old := c[i*n+j]
			c[i*n+j] = old + 1
			if symmetric(c, n) {
				t.Fatalf("n = %d: c(%d,%d) changed, reported symmetric", n, i, j)
			}
			c[i*n+j] = old
		}
	}
}

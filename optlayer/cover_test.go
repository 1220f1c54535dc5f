package optlayer

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// With s.cover every selection keeps, for every row i and class m, the
// coverK columns of class m with the least reduced cost
// α_m(i) + λ_m c(i,j) − g(j) — found here by sorting each row's reduced
// costs — on top of the key window, and the cap leaves them in.
func TestCoverageKeepsRowsLeastReducedCosts(t *testing.T) {
	n, M := 90, 3
	in, s := randomDuals(t, 7, 3, n, M)
	for _, kmax := range []int{0, 3} {
		s.cover = true
		s.selectCands(selKeys, 1e-3, 1, 0, kmax) // a window of 1e-3: about one row per column
		for m := 0; m < M; m++ {
			for i := 0; i < n; i++ {
				type rc struct {
					r float64
					q int
				}
				var rs []rc
				for q := s.off[m]; q < s.off[m+1]; q++ {
					rs = append(rs, rc{s.alpha[m*n+i] + s.lam[m]*in.cost[i*n+s.order[q]] - s.g[q], q})
				}
				slices.SortStableFunc(rs, func(a, b rc) int {
					switch {
					case a.r < b.r:
						return -1
					case a.r > b.r:
						return 1
					}
					return 0
				})
				for _, e := range rs[:min(coverK, len(rs))] {
					if rows := s.colRows(e.q); rows != nil && !slices.Contains(rows, int32(i)) {
						t.Fatalf("kmax %d: row %d, class %d: column position %d (reduced cost %.4g) is not a candidate", kmax, i, m, e.q, e.r)
					}
				}
			}
		}
		if kmax > 0 {
			// the cap held for the window's rows: at most kmax besides
			// the covered and zero-cost ones
			for q := 0; q < n; q++ {
				extra := 0
				for _, i := range s.colRows(q) {
					if !slices.Contains(s.coverRows[q], i) && in.cost[int(i)*n+s.order[q]] != 0 {
						extra++
					}
				}
				if extra > kmax {
					t.Fatalf("column position %d: %d rows beyond the covered ones, cap %d", q, extra, kmax)
				}
			}
		}
		// without the coverage the same window keeps far fewer entries
		covered := len(s.kk)
		s.cover = false
		s.selectCands(selKeys, 1e-3, 1, 0, kmax)
		if len(s.kk) >= covered {
			t.Fatalf("kmax %d: %d entries with the coverage, %d without", kmax, covered, len(s.kk))
		}
	}
}

// LPOnly above candFull in the band below the pooled radius on separated
// classes (the hard set's separated kind): the narrow selections with row
// coverage must certify the same LP value as the regularised solve, with a
// feasible P, and stay below the cap's size per column at the target ε
// (before them the candidates grew to about half of n²).
func TestLPOnlyLargeNarrow(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 1100, two solves")
	}
	p := hardProblem("separated", 4, candFull+100, 10)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := (&Settings{LPOnly: true}).config(in)
	covered, maxNNZ := false, 0
	// the dual's own bound where Phase A's stages end and where Newton
	// starts at the target ε (after Phase B's opening sweep)
	lbAbove, lbOpen := math.NaN(), math.NaN()
	cfg.trace = func(_ int, s *solver, _ float64) {
		covered = covered || s.cover
		if s.eps <= cfg.eps {
			maxNNZ = max(maxNNZ, len(s.kk))
			if math.IsNaN(lbOpen) {
				lbOpen = s.lowerDense()
			}
		} else {
			lbAbove = s.lowerDense()
		}
	}
	fast := solveInstance(in, cfg)
	ref := againstRegularised(t, p, in, fast, "separated, ϑ = 0.7 × median")
	if !covered {
		t.Fatal("the row coverage was never on")
	}
	if maxNNZ > candK*in.n {
		t.Fatalf("%d candidates at or below the target ε, more than candK per column", maxNNZ)
	}
	// Phase B opens near where Phase A left the duals (ten sweeps there
	// took the bound from 1.23 to −0.95 on this family at n = 2000)
	if !(lbOpen >= lbAbove-0.1*math.Abs(lbAbove)) {
		t.Fatalf("the dual's bound %.6f at the last stage above the target ε, %.6f where Newton starts at the target", lbAbove, lbOpen)
	}
	t.Logf("[%.6f, %.6f] in %d iterations (regularised [%.6f, %.6f] in %d), at most %d candidates at or below the target ε; dual bound %.6f → %.6f into Phase B",
		fast.LowerBound, fast.Objective, fast.Iterations, ref.LowerBound, ref.Objective, ref.Iterations, maxNNZ, lbAbove, lbOpen)
}

// minKey is the least key of one running minimum, bit for bit, at every
// length (the four-way loop and its tail).
func TestMinKeyMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for n := 0; n < 40; n++ {
		am, c := make([]float64, n), make([]float64, n)
		for i := range am {
			am[i] = rng.Float64()
			c[i] = rng.ExpFloat64()
			if rng.Intn(5) == 0 {
				c[i] = 0
			}
		}
		lam := rng.Float64()
		want := math.Inf(1)
		for i := range c {
			if x := am[i] + lam*c[i]; x < want {
				want = x
			}
		}
		if got := minKey(am, c, lam); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("n = %d: %v, want %v", n, got, want)
		}
	}
}

// selUnion with a cap (lpLarge's validations, validateMax): every current
// candidate stays, at most kmax rows are added to a column, those with the
// least keys α_m(i) + λ_m c(i,j), the count returned is theirs, and the
// bound's threshold is the least key left out.
func TestSelectUnionCap(t *testing.T) {
	n, M := 90, 3
	in, s := randomDuals(t, 5, 8, n, M)
	s.selectCands(selKeys, 1e-3, 100, 0, 0) // a window of 0.1
	before := make([][]int32, n)
	for q := range before {
		before[q] = slices.Clone(s.colRows(q))
		if before[q] == nil {
			t.Fatalf("column position %d is full after the narrow selection", q)
		}
	}
	const kmax = 5
	added := s.selectCands(selUnion, 1, 100, 0, kmax) // every row is within the window
	total, capped := 0, 0
	for q := 0; q < n; q++ {
		m := in.labels[s.order[q]]
		key := func(i int) float64 { return s.alpha[m*n+i] + s.lam[m]*in.cost[i*n+s.order[q]] }
		rows := s.colRows(q)
		for _, i := range before[q] {
			if !slices.Contains(rows, i) {
				t.Fatalf("column position %d: candidate row %d was dropped", q, i)
			}
		}
		var newKeys, outKeys []float64
		for i := 0; i < n; i++ {
			switch {
			case slices.Contains(before[q], int32(i)):
			case slices.Contains(rows, int32(i)):
				newKeys = append(newKeys, key(i))
			default:
				outKeys = append(outKeys, key(i))
			}
		}
		if len(newKeys) > kmax {
			t.Fatalf("column position %d: %d rows added, cap %d", q, len(newKeys), kmax)
		}
		total += len(newKeys)
		if len(outKeys) == 0 {
			continue
		}
		capped++
		least := slices.Min(outKeys)
		if len(newKeys) > 0 && slices.Max(newKeys) > least {
			t.Fatalf("column position %d: an added row's key %v above a left-out row's %v", q, slices.Max(newKeys), least)
		}
		if s.thr[q] != least {
			t.Fatalf("column position %d: threshold %v, want the least key left out %v", q, s.thr[q], least)
		}
	}
	if added != total {
		t.Fatalf("selectCands reported %d rows added, counted %d", added, total)
	}
	if capped == 0 {
		t.Fatal("no column was capped: nothing tested")
	}
}

// randomDuals is a solver on gaussProblem(seed, n, M, 4, 0.3) with random
// duals drawn from dualSeed: α and g uniform on [0, 1), λ on [0.05, 1.05).
func randomDuals(t *testing.T, seed, dualSeed int64, n, M int) (*instance, *solver) {
	t.Helper()
	in, err := gaussProblem(seed, n, M, 4, 0.3).instance()
	if err != nil {
		t.Fatal(err)
	}
	s := newSolver(in)
	s.init(nil)
	randomizeDuals(s, dualSeed)
	return in, s
}

// randomizeDuals draws s's duals from dualSeed: α and g uniform on [0, 1),
// λ on [0.05, 1.05).
func randomizeDuals(s *solver, dualSeed int64) {
	rng := rand.New(rand.NewSource(dualSeed))
	for k := range s.alpha {
		s.alpha[k] = rng.Float64()
	}
	for m := range s.lam {
		s.lam[m] = 0.05 + rng.Float64()
	}
	for q := range s.g {
		s.g[q] = rng.Float64()
	}
}

package optlayer

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// TestInterleavedSums: dot4Seq, dot4Sparse and axpy4Seq give, bit for bit,
// the sums of one column at a time in the same order (the operator's
// products must not depend on how the columns are grouped), including
// columns of unequal lengths, zero and negative entries and zero factors.
func TestInterleavedSums(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	vec := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			switch rng.Intn(4) {
			case 0: // zero entries, as a full column's negligible ones
			case 1:
				x[i] = -rng.ExpFloat64() * 1e-9
			default:
				x[i] = rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
			}
		}
		return x
	}
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.Intn(300)
		a := vec(n)
		// full columns
		cols := [][]float64{vec(n), vec(n), vec(n), vec(n)}
		got := make([]float64, 4)
		dot4Seq(got, cols, a)
		for c := range cols {
			if want := dotSeq(cols[c], a); math.Float64bits(got[c]) != math.Float64bits(want) {
				t.Fatalf("trial %d: dot4Seq[%d] = %v, one column at a time %v", trial, c, got[c], want)
			}
		}
		f := vec(4)
		f[rng.Intn(4)] = 0
		y := vec(n)
		want := slices.Clone(y)
		for c := range cols {
			if f[c] == 0 {
				continue // the one-column loop skips a zero factor
			}
			for i := range want {
				want[i] += cols[c][i] * f[c]
			}
		}
		axpy4Seq(y, cols, f)
		for i := range y {
			if y[i] != want[i] { // ±0 compare equal; every other value bit for bit
				t.Fatalf("trial %d: axpy4Seq[%d] = %v, one column at a time %v", trial, i, y[i], want[i])
			}
		}
		// sparse columns of unequal lengths
		ri := make([][]int32, 4)
		gv := make([][]float64, 4)
		for c := range ri {
			for i := 0; i < n; i++ {
				if rng.Intn(3) == 0 {
					ri[c] = append(ri[c], int32(i))
				}
			}
			gv[c] = vec(len(ri[c]))
		}
		dot4Sparse(got, ri, gv, a)
		for c := range ri {
			var want float64
			for k, i := range ri[c] {
				want += gv[c][k] * a[i]
			}
			if math.Float64bits(got[c]) != math.Float64bits(want) {
				t.Fatalf("trial %d: dot4Sparse[%d] = %v, one column at a time %v", trial, c, got[c], want)
			}
		}
	}
}

// TestFullColumnOperator: Newton's operator over full columns stored as
// dense vectors (loadState, colFull) gives the same solve, bit for bit, as
// over their entries: the same iterations, bounds, P and regularised
// solution. n = 700 > kktMax starts dense (n ≤ candFull), so its Newton
// steps take the full columns.
func TestFullColumnOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 700, two solves")
	}
	p := hardProblem("overlap", 4, 700, 5)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	var res [2]*Result
	var full, cols [2]int
	for k := range res {
		cfg, err := (&Settings{}).config(in)
		if err != nil {
			t.Fatal(err)
		}
		cfg.noFullOp = k == 1
		cfg.trace = func(_ int, s *solver, _ float64) {
			if st := s.nst; st != nil {
				for _, f := range st.colFull {
					if f {
						full[k]++
					}
				}
				cols[k] += len(st.colFull)
			}
		}
		res[k] = solveInstance(in, cfg)
		if res[k].Status != Optimal {
			t.Fatalf("noFullOp %v: status %v", k == 1, res[k].Status)
		}
	}
	t.Logf("full columns in Newton's states: %d of %d (%d without)", full[0], cols[0], full[1])
	if full[0] == 0 || full[1] != 0 {
		t.Fatalf("full columns %d with, %d without: the two operators were not compared", full[0], full[1])
	}
	a, b := res[0], res[1]
	if a.Iterations != b.Iterations || a.Objective != b.Objective || a.LowerBound != b.LowerBound || a.RegValue != b.RegValue {
		t.Fatalf("full columns: %d iterations, bounds %.17g / %.17g, regularised %.17g; entries: %d, %.17g / %.17g, %.17g",
			a.Iterations, a.Objective, a.LowerBound, a.RegValue, b.Iterations, b.Objective, b.LowerBound, b.RegValue)
	}
	if !slices.Equal(a.P, b.P) || !slices.Equal(a.PReg, b.PReg) {
		t.Fatal("full columns: P or PReg differ from the entries' solve")
	}
}

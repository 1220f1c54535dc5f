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
// columns of unequal lengths, zero and negative entries and zero factors;
// the sparse sums and scatterAdd give the same with 16-bit rows as with
// 32-bit ones.
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
		ri16 := make([][]uint16, 4)
		for c := range ri {
			for _, i := range ri[c] {
				ri16[c] = append(ri16[c], uint16(i))
			}
		}
		got16 := make([]float64, 4)
		dot4Sparse(got, ri, gv, a)
		dot4Sparse(got16, ri16, gv, a)
		for c := range ri {
			var want float64
			for k, i := range ri[c] {
				want += gv[c][k] * a[i]
			}
			if math.Float64bits(got[c]) != math.Float64bits(want) {
				t.Fatalf("trial %d: dot4Sparse[%d] = %v, one column at a time %v", trial, c, got[c], want)
			}
			if math.Float64bits(got16[c]) != math.Float64bits(want) {
				t.Fatalf("trial %d: dot4Sparse[%d] with 16-bit rows = %v, with 32-bit %v", trial, c, got16[c], want)
			}
			if d, d16 := dotSparse(ri[c], gv[c], a), dotSparse(ri16[c], gv[c], a); math.Float64bits(d) != math.Float64bits(want) || math.Float64bits(d16) != math.Float64bits(want) {
				t.Fatalf("trial %d: dotSparse[%d] = %v (16-bit rows %v), the loop %v", trial, c, d, d16, want)
			}
		}
		y32, y16 := vec(n), make([]float64, n)
		copy(y16, y32)
		for c := range ri {
			scatterAdd(y32, ri[c], gv[c], f[c])
			scatterAdd(y16, ri16[c], gv[c], f[c])
		}
		for i := range y32 {
			if math.Float64bits(y32[i]) != math.Float64bits(y16[i]) {
				t.Fatalf("trial %d: scatterAdd row %d: 32-bit rows %v, 16-bit %v", trial, i, y32[i], y16[i])
			}
		}
	}
}

// TestFullColumnOperator: Newton's operator over full columns stored as
// dense vectors (loadState, colFull), over 16-bit rows (st.short) and with
// its row products in row blocks (st.blocked, here blocks of 117 rows)
// gives the same solve, bit for bit, as over 32-bit entries: the same
// iterations, bounds, P and regularised solution. n = 700 > kktMax starts
// dense (n ≤ candFull), so its Newton steps take the full columns, and the
// columns its selections narrow take the 16-bit rows.
func TestFullColumnOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 700, two solves")
	}
	p := hardProblem("overlap", 4, 700, 5)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	// k = 0: full columns and 16-bit rows; 1: full columns, 32-bit rows;
	// 2: 32-bit entries only; 3: as 0, in row blocks
	var res [4]*Result
	var full, short, cols, blocked [4]int
	for k := range res {
		cfg, err := (&Settings{}).config(in)
		if err != nil {
			t.Fatal(err)
		}
		cfg.noShortRows = k == 1
		cfg.noFullOp = k == 2
		if k == 3 {
			cfg.rowBlock = 128
		}
		cfg.trace = func(_ int, s *solver, _ float64) {
			if st := s.nst; st != nil {
				if st.blocked {
					blocked[k]++
				}
				for q, f := range st.colFull {
					switch {
					case f:
						full[k]++
					case st.short && st.cp[q+1] > st.cp[q]:
						short[k]++
					}
				}
				cols[k] += len(st.colFull)
			}
		}
		res[k] = solveInstance(in, cfg)
		if res[k].Status != Optimal {
			t.Fatalf("configuration %d: status %v", k, res[k].Status)
		}
	}
	t.Logf("Newton's states' columns: %d full and %d with 16-bit rows of %d (%d / %d with 32-bit rows, %d full without full columns); %d states in row blocks",
		full[0], short[0], cols[0], full[1], short[1], full[2], blocked[3])
	if full[0] == 0 || short[0] == 0 || short[1] != 0 || full[2] != 0 || short[2] != 0 || blocked[0] != 0 || blocked[3] == 0 {
		t.Fatalf("full / 16-bit columns %d / %d, %d / %d, %d / %d: the operators were not compared",
			full[0], short[0], full[1], short[1], full[2], short[2])
	}
	for k := 1; k < len(res); k++ {
		a, b := res[0], res[k]
		if a.Iterations != b.Iterations || a.Objective != b.Objective || a.LowerBound != b.LowerBound || a.RegValue != b.RegValue {
			t.Fatalf("full columns, 16-bit rows: %d iterations, bounds %.17g / %.17g, regularised %.17g; configuration %d: %d, %.17g / %.17g, %.17g",
				a.Iterations, a.Objective, a.LowerBound, a.RegValue, k, b.Iterations, b.Objective, b.LowerBound, b.RegValue)
		}
		if !slices.Equal(a.P, b.P) || !slices.Equal(a.PReg, b.PReg) {
			t.Fatalf("configuration %d: P or PReg differ from the full columns' and 16-bit rows' solve", k)
		}
	}
}

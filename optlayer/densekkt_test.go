package optlayer

import (
	"math"
	"testing"
)

// TestKKTDirect: the sparse direct solve of densekkt.go solves the system
// that state.assemble forms (with and without the LM term), at small and
// large ε.
func TestKKTDirect(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		for _, eps := range []float64{1e-3, 0.01, 0.1} {
			for _, reg := range []float64{0, 0.01} {
				r, err := Solve(benchProblem(50, 5, seed), &Settings{Epsilon: eps})
				if err != nil {
					t.Fatal(err)
				}
				st := &state{}
				*st = *r.st
				st.hbuf, st.sym = nil, nil
				st.reg = reg
				H, _ := st.assemble()
				var k kktDense
				if !st.kktFactor(&k) {
					if eps == 1e-3 {
						t.Fatalf("seed %d ε %g reg %g: no factorisation", seed, eps, reg)
					}
					continue // dense plans at large ε may exceed the fill cap
				}
				dim := st.n + st.L
				b := make([]float64, dim)
				for i := range b {
					b[i] = float64(i%7) - 3
				}
				x := make([]float64, dim)
				k.solve(b, x)
				var num, den float64
				for i := 0; i < dim; i++ {
					var v float64
					for j := 0; j < dim; j++ {
						v += H.At(i, j) * x[j]
					}
					num += (v - b[i]) * (v - b[i])
					den += b[i] * b[i]
				}
				if rel := math.Sqrt(num / den); rel > 1e-10 {
					t.Errorf("seed %d ε %g reg %g: relative residual %.3g", seed, eps, reg, rel)
				}
			}
		}
	}
}

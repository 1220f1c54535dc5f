package optlayer

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzSolve builds small problems from raw bytes (arbitrary float64 bit
// patterns included) and checks that Solve never panics, rejects bad input
// with ErrInvalid, and otherwise returns bracketing bounds and a feasible P,
// with and without Settings.LPOnly.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{3, 2, 1, 0, 1, 64, 9, 33, 251, 84, 68, 45, 24, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte{1, 1, 0, 0})
	f.Add([]byte{5, 3, 0, 1, 2, 0, 1, 255, 255, 255, 255, 255, 255, 239, 127, 0, 0, 0, 0, 0, 0, 248, 127})
	f.Add([]byte{4, 4, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{6, 2, 0, 0, 0, 1, 1, 1, 7, 7, 7, 7, 7, 7, 7, 7, 1, 2, 200, 100, 3})
	f.Add([]byte{2, 1, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 16}) // n = 3, M = 2, LPOnly, every point a copy: the LP over locations (distinct.go)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := int(data[0]%8) + 1
		M := int(data[1]%4) + 1
		data = data[2:]
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		labels := make([]int, n)
		for i := range labels {
			labels[i] = int(next()) % (M + 1) // may leave gaps or exceed: must be rejected, not panic
		}
		raw := next()
		c := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i == j {
					continue
				}
				if raw&1 == 1 && len(data) >= 8 {
					c[i*n+j] = math.Float64frombits(binary.LittleEndian.Uint64(data))
					data = data[8:]
				} else {
					c[i*n+j] = float64(next()) / 16
				}
			}
		}
		th := []float64{float64(next()) / 64}
		if raw&2 == 2 {
			th = make([]float64, M)
			for m := range th {
				th[m] = float64(next()) / 64
			}
		}
		p := &Problem{N: n, Cost: c, Labels: labels, Theta: th}
		// bit 2 of raw: the LP answer only (drknn-lfd without -grad-p:
		// its own ε stages, lpstages.go)
		r, err := Solve(p, &Settings{MaxIter: 400, LPOnly: raw&4 == 4})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if r.LowerBound > r.Objective*(1+1e-9) {
			t.Fatalf("lower bound %v > objective %v", r.LowerBound, r.Objective)
		}
		if r.Objective < 1-1e-9 || r.Objective > float64(r.M)+1e-9 {
			t.Fatalf("objective %v outside [1, M=%d]", r.Objective, r.M)
		}
		for m := 0; m < r.M; m++ {
			var s float64
			for i := 0; i < n; i++ {
				x := r.P[m*n+i]
				if !(x >= 0) {
					t.Fatalf("P[%d][%d] = %v", m, i, x)
				}
				s += x
			}
			if math.Abs(s-1) > 1e-9 {
				t.Fatalf("row %d of P sums to %v", m, s)
			}
		}
		g := make([]float64, r.M*n)
		for k := range g {
			g[k] = float64(k%3) - 1
		}
		if _, err := r.VJP(g); err != nil && !errors.Is(err, ErrNotConverged) {
			t.Fatalf("VJP: %v", err)
		}
		if _, err := r.ObjectiveGrad(); err != nil && !(raw&4 == 4 && errors.Is(err, ErrNotConverged)) {
			t.Fatal(err) // with LPOnly the regularised solution may be refused, never a panic
		}
	})
}

package optlayer

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
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
		p, raw, _ := fuzzProblem(data)
		if p == nil {
			return
		}
		n := p.N
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

// fuzzProblem builds FuzzSolve's problem from data: n ≤ 8 points, labels
// that may leave gaps or exceed M (to be rejected), costs as small
// multiples of 1/16 or raw float64 bit patterns, one ϑ or one per class. It
// returns the flags byte raw and the bytes left; nil when data is too short.
func fuzzProblem(data []byte) (p *Problem, raw byte, rest []byte) {
	if len(data) < 2 {
		return nil, 0, nil
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
	raw = next()
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
	return &Problem{N: n, Cost: c, Labels: labels, Theta: th}, raw, data
}

// FuzzSolveBlocks solves FuzzSolve's problems whole and in blocks (a
// partition drawn from the bytes left, or Blocks'): SolveBlocks never panics, and its
// bounds bracket the whole problem's value: its lower bound is at most the
// whole answer's objective and its objective at least the whole lower bound.
func FuzzSolveBlocks(f *testing.F) {
	f.Add([]byte{3, 2, 1, 0, 1, 64, 9, 33, 251, 84, 68, 45, 24, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1, 2})
	f.Add([]byte{7, 2, 0, 1, 0, 1, 0, 1, 0, 4, 3, 9, 27, 81, 2, 5, 0, 1, 2, 0, 1, 2, 0})
	f.Add([]byte{5, 3, 0, 1, 2, 0, 1, 2, 255, 255, 255, 255, 255, 255, 239, 127, 0, 0, 0, 0, 0, 0, 248, 127})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, raw, rest := fuzzProblem(data)
		if p == nil {
			return
		}
		whole, err := Solve(p, &Settings{MaxIter: 400, LPOnly: true})
		if err != nil {
			return // FuzzSolve checks the errors
		}
		nb := len(rest)%3 + 1
		blocks := make([][]int, nb)
		for i := 0; i < p.N; i++ {
			b := 0
			if i < len(rest) {
				b = int(rest[i]) % nb
			}
			blocks[b] = append(blocks[b], i)
		}
		blocks = slices.DeleteFunc(blocks, func(b []int) bool { return len(b) == 0 })
		if len(rest) > 0 && rest[0]&1 == 1 {
			// the command's partition: copies (from the bytes' costs) together
			size := int(rest[0]/2)%p.N + 1
			if blocks, err = Blocks(p, size, int64(raw)); err != nil {
				t.Fatalf("Blocks(size %d): %v", size, err)
			}
			seen := make([]bool, p.N)
			for _, b := range blocks {
				if len(b) == 0 || len(b) > size {
					t.Fatalf("Blocks(size %d): a block of %d points", size, len(b))
				}
				for _, i := range b {
					if seen[i] {
						t.Fatalf("Blocks: point %d twice", i)
					}
					seen[i] = true
				}
			}
			if slices.Contains(seen, false) {
				t.Fatalf("Blocks(size %d): %v misses a point", size, blocks)
			}
		}
		r, err := SolveBlocks(p, blocks, &Settings{MaxIter: 400, LPOnly: raw&4 == 4})
		if err != nil {
			t.Fatalf("blocks %v: %v", blocks, err)
		}
		if r.LowerBound > whole.Objective*(1+1e-9)+1e-12 || r.Objective < whole.LowerBound*(1-1e-9)-1e-12 {
			t.Fatalf("blocks %v: [%v, %v], whole problem [%v, %v]", blocks, r.LowerBound, r.Objective, whole.LowerBound, whole.Objective)
		}
		for m := 0; m < r.M; m++ {
			var s float64
			for i := 0; i < p.N; i++ {
				if x := r.P[m*p.N+i]; !(x >= 0) {
					t.Fatalf("P[%d][%d] = %v", m, i, x)
				}
				s += r.P[m*p.N+i]
			}
			if math.Abs(s-1) > 1e-9 {
				t.Fatalf("row %d of P sums to %v", m, s)
			}
		}
	})
}

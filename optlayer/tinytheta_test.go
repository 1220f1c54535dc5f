package optlayer

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// tinyProblem is 12 Euclidean points in 3 dimensions, 4 per class.
func tinyProblem(features bool, theta ...float64) *Problem {
	rng := rand.New(rand.NewSource(7))
	n, d := 12, 3
	x := make([]float64, n*d)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	labels := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	p := &Problem{N: n, Labels: labels, Theta: theta}
	if features {
		p.Features, p.Dim = x, d
		return p
	}
	c, err := Costs(x, n, d, Euclidean)
	if err != nil {
		panic(err)
	}
	p.Cost = c
	return p
}

func finiteAll(xs []float64) bool {
	for _, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// A positive radius far below the costs' scale (subnormal ones included,
// down to the least float64 5e-324) is solved as the zero radius: the same
// P, bounds, duals and gradient as ϑ_m = 0, bit for bit, alone or beside
// normal radii on other classes, forward and backward, from costs or
// features, whole or in blocks. (Solved as given, a subnormal ϑ made the
// multiplier ε/ϑ = +Inf and P NaN.)
func TestNegligibleThetaIsZero(t *testing.T) {
	r := 0.3
	for _, tiny := range []float64{1e-320, 1e-310, 5e-324, 1e-300} {
		for _, mix := range [][2][]float64{
			{{tiny}, {0}},
			{{tiny, r, r}, {0, r, r}},
			{{r, tiny, 2 * r}, {r, 0, 2 * r}},
			{{tiny, 5e-324, r}, {0, 0, r}},
		} {
			for _, features := range []bool{false, true} {
				for _, lpOnly := range []bool{true, false} {
					name := fmt.Sprintf("%g/%v/features=%v/lpOnly=%v", tiny, mix[0], features, lpOnly)
					t.Run(name, func(t *testing.T) {
						got, err := Solve(tinyProblem(features, mix[0]...), &Settings{LPOnly: lpOnly})
						if err != nil {
							t.Fatal(err)
						}
						want, err := Solve(tinyProblem(features, mix[1]...), &Settings{LPOnly: lpOnly})
						if err != nil {
							t.Fatal(err)
						}
						if !finiteAll(got.P) || !finiteAll(got.PReg) || !finiteAll(got.Dual.Lambda) {
							t.Fatalf("non-finite answer: P %v, λ %v", got.P, got.Dual.Lambda)
						}
						if got.Status != Optimal || !slices.Equal(got.P, want.P) || got.Objective != want.Objective ||
							got.LowerBound != want.LowerBound || !slices.Equal(got.PReg, want.PReg) ||
							!slices.Equal(got.Dual.Lambda, want.Dual.Lambda) {
							t.Fatalf("ϑ %v: status %v objective %v bound %v λ %v; ϑ %v: objective %v bound %v λ %v",
								mix[0], got.Status, got.Objective, got.LowerBound, got.Dual.Lambda,
								mix[1], want.Objective, want.LowerBound, want.Dual.Lambda)
						}
						if len(mix[0]) == 1 && got.Objective != 3 {
							t.Fatalf("objective %v, want M = 3 (P = P̂)", got.Objective)
						}
						// the tiny class's row is P̂_m: 1/4 on its own points (to the
						// rounding the zero radius's answer has)
						for m, th := range mix[0] {
							if th > 1e-200 {
								continue
							}
							for i := range 12 {
								y := i / 4
								w := 0.0
								if y == m {
									w = 0.25
								}
								if p := got.P[m*12+i]; math.Abs(p-w) > 1e-15 { // the zero radius's own rounding
									t.Fatalf("P[%d][%d] = %v, want %v", m, i, p, w)
								}
							}
						}
						if lpOnly {
							return
						}
						g := make([]float64, 3*12)
						for k := range g {
							g[k] = math.Sin(float64(k))
						}
						dg, err := got.VJP(g)
						if err != nil {
							t.Fatalf("VJP: %v", err)
						}
						dw, err := want.VJP(g)
						if err != nil {
							t.Fatal(err)
						}
						if !finiteAll(dg) || !slices.Equal(dg, dw) {
							t.Fatalf("VJP differs from the zero radius's")
						}
					})
				}
			}
		}
	}
}

// The same through SolveBlocks: the whole problem's bound sees the zero
// radius too (with the radius kept, the blocks' λ = 0 left it at 1).
func TestNegligibleThetaBlocks(t *testing.T) {
	for _, tiny := range []float64{1e-320, 1e-310, 5e-324} {
		for _, features := range []bool{false, true} {
			p := tinyProblem(features, tiny)
			blocks, err := Blocks(p, 6, 1)
			if err != nil {
				t.Fatal(err)
			}
			res, err := SolveBlocks(p, blocks, nil)
			if err != nil {
				t.Fatalf("%g features=%v: %v", tiny, features, err)
			}
			if !finiteAll(res.P) || res.Objective != 3 || res.LowerBound != 3 {
				t.Fatalf("%g features=%v: objective %v, bound %v, want 3 and 3", tiny, features, res.Objective, res.LowerBound)
			}
			g := make([]float64, 3*12)
			for k := range g {
				g[k] = math.Cos(float64(k))
			}
			if dg, err := res.VJP(g); err != nil || !finiteAll(dg) {
				t.Fatalf("%g features=%v: VJP %v", tiny, features, err)
			}
		}
	}
}

// The rule's edge: ϑ_m ≤ 2⁻⁵⁴·c_m/n is dropped, the next float64 up is
// kept, and a class whose moves all cost 0 keeps any radius.
func TestNegligibleThetaEdge(t *testing.T) {
	for _, features := range []bool{false, true} {
		p := tinyProblem(features, 1)
		in, err := p.instance()
		if err != nil {
			t.Fatal(err)
		}
		cm := math.Inf(1) // least positive cost out of class 1
		for i := range 12 {
			for j := 4; j < 8; j++ {
				if c := in.cost[i*12+j]; c > 0 {
					cm = min(cm, c)
				}
			}
		}
		edge := 0x1p-54 * cm / 12
		for _, c := range []struct {
			theta, want float64
		}{{edge, 0}, {math.Nextafter(edge, 1), math.Nextafter(edge, 1)}, {1e-17, 1e-17}} {
			p.Theta = []float64{0.5, c.theta, 0.5}
			in, err := p.checked()
			if err != nil {
				t.Fatal(err)
			}
			if in.theta[1] != c.want || in.theta[0] != 0.5 || in.theta[2] != 0.5 {
				t.Fatalf("features=%v ϑ = %v: kept %v, want %v (c_1 = %v)", features, c.theta, in.theta, c.want, cm)
			}
			if p.Theta[1] != c.theta {
				t.Fatalf("the problem's Theta was changed")
			}
		}
	}
	// every point at one place: nothing to spend a radius on
	p := &Problem{N: 3, Cost: make([]float64, 9), Labels: []int{0, 1, 1}, Theta: []float64{1e-320}}
	in, err := p.checked()
	if err != nil {
		t.Fatal(err)
	}
	if in.theta[0] != 1e-320 {
		t.Fatalf("ϑ = %v on zero costs, want kept", in.theta)
	}
}

package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/optlayer"
)

// fakeSolver returns P̂ (mass 1/n_m on the points of class m) for the radii
// in hat and the labels swapped between the two classes otherwise (every
// vote then points to the wrong class). Its dual numbers the points, so the
// warm starts it receives show which point was left out.
type fakeSolver struct {
	hat   map[float64]bool
	calls []fakeCall
}

type fakeCall struct {
	n     int
	theta float64
	warmG []float64
}

func (f *fakeSolver) solve(e []float64, n int, y []int, theta float64, warm *optlayer.Dual) (*optlayer.Result, error) {
	c := fakeCall{n: n, theta: theta}
	if warm != nil {
		c.warmG = slices.Clone(warm.G)
	}
	f.calls = append(f.calls, c)
	const m = 2
	count := make([]int, m)
	for _, l := range y {
		count[l]++
	}
	p := make([]float64, m*n)
	for i, l := range y {
		to := l
		if !f.hat[theta] {
			to = 1 - l
		}
		p[to*n+i] = 1 / float64(count[l])
	}
	r := &optlayer.Result{M: m, N: n, P: p, Dual: optlayer.Dual{G: make([]float64, n), Lambda: []float64{0, 0}, Alpha: make([]float64, m*n)}}
	for j := range n {
		r.Dual.G[j] = float64(j)
		r.Dual.Alpha[j], r.Dual.Alpha[n+j] = float64(j), float64(100+j)
	}
	return r, nil
}

// Points on a line: class 0 at 0 and 1, class 1 at 10, 11, 12. Left out
// one at a time, each point's nearest other point (k = 1) has its label —
// 11 is as far from 10 as from 12 and the lower index, 10, wins — so the
// radii that return P̂ classify all 5 correctly and the swapped ones none.
func TestChooseThetaLOOHandWorked(t *testing.T) {
	e := []float64{0, 1, 10, 11, 12}
	y := []int{0, 0, 1, 1, 1}
	f := &fakeSolver{hat: map[float64]bool{0: true, 0.1: true}}
	got, err := ChooseThetaLOO(e, 5, 1, y, 2, 1, []float64{0.5, 0.1, 0}, 0.1, f.solve)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Correct, []int{0, 5, 5}) || got.Counted != 5 || got.Theta != 0.1 {
		t.Fatalf("correct %v, counted %d, theta %v; want [0 5 5], 5, 0.1 (the default among the tied)", got.Correct, got.Counted, got.Theta)
	}
	// Per radius: one solve on all 5 points, then one per left-out point,
	// warm-started from the full solve without the left-out point.
	if len(f.calls) != 3*6 {
		t.Fatalf("%d solves, want 18", len(f.calls))
	}
	for g := range 3 {
		full := f.calls[g*6]
		if full.n != 5 || full.warmG != nil {
			t.Fatalf("radius %d: first solve %+v, want all 5 points and no warm start", g, full)
		}
		for i := range 5 {
			c := f.calls[g*6+1+i]
			want := slices.Delete([]float64{0, 1, 2, 3, 4}, i, i+1)
			if c.n != 4 || !slices.Equal(c.warmG, want) {
				t.Fatalf("radius %d, point %d left out: n = %d, warm G %v; want 4, %v", g, i, c.n, c.warmG, want)
			}
		}
	}

	// The configured radius is not a candidate: the smallest tied one wins.
	f = &fakeSolver{hat: map[float64]bool{0: true, 0.1: true}}
	got, err = ChooseThetaLOO(e, 5, 1, y, 2, 1, []float64{0.5, 0.1, 0}, 0.3, f.solve)
	if err != nil || got.Theta != 0 {
		t.Fatalf("theta %v, %v; want 0 (smallest of the tied)", got.Theta, err)
	}
	// A strict winner beats the default.
	f = &fakeSolver{hat: map[float64]bool{0.5: true}}
	got, err = ChooseThetaLOO(e, 5, 1, y, 2, 1, []float64{0.5, 0.1, 0}, 0.1, f.solve)
	if err != nil || got.Theta != 0.5 || !slices.Equal(got.Correct, []int{5, 0, 0}) {
		t.Fatalf("%+v, %v; want 0.5 with [5 0 0]", got, err)
	}
}

// A point alone in its class cannot be left out: it is skipped for every
// radius, and the solver never sees a problem without that class.
func TestChooseThetaLOOSingletonClass(t *testing.T) {
	e := []float64{0, 1, 2, 10}
	y := []int{0, 0, 0, 1}
	f := &fakeSolver{hat: map[float64]bool{0: true}}
	got, err := ChooseThetaLOO(e, 4, 1, y, 2, 5, []float64{0}, 0, f.solve)
	if err != nil {
		t.Fatal(err)
	}
	// k = 5 is capped at the 3 points left; each class-0 point keeps two
	// class-0 neighbours against one class-1 point: 2/2 against 1/1 is a
	// tie in the weights, broken by the count (2 against 1).
	if got.Counted != 3 || got.Correct[0] != 3 || len(f.calls) != 1+3 {
		t.Fatalf("counted %d, correct %v, %d solves; want 3, [3], 4", got.Counted, got.Correct, len(f.calls))
	}
}

// With the real solver, ϑ = 0 gives P = P̂ and Dr.k-NN with k = 1 is 1-NN:
// the leave-one-out count can be worked out by hand. Class 0 at 0, 1, 2,
// class 1 at 5, 6, 7 and a mislabelled class-1 point at 1.5. Left out, 0
// (nearest 1), 5, 6 and 7 are right; 1 and 2 find 1.5 (class 1) and 1.5
// finds 1 (class 0): 4 of 7.
func TestChooseThetaLOORealSolver(t *testing.T) {
	e := []float64{0, 1, 2, 5, 6, 7, 1.5}
	y := []int{0, 0, 0, 1, 1, 1, 1}
	cfg := Default()
	solve := func(e []float64, n int, y []int, theta float64, warm *optlayer.Dual) (*optlayer.Result, error) {
		return solveLFD(cfg, e, n, 1, y, []float64{theta}, warm)
	}
	got, err := ChooseThetaLOO(e, 7, 1, y, 2, 1, []float64{0, 0.05, 0.2}, 0.05, solve)
	if err != nil {
		t.Fatal(err)
	}
	if got.Counted != 7 || got.Correct[0] != 4 {
		t.Fatalf("counted %d, correct %v; want 7 and 4 at ϑ = 0", got.Counted, got.Correct)
	}
	if want := pickTheta(got.Grid, got.Correct, 0.05); got.Theta != want {
		t.Fatalf("theta %v, want %v from %v", got.Theta, want, got.Correct)
	}
}

func TestPickTheta(t *testing.T) {
	for _, c := range []struct {
		grid    []float64
		correct []int
		def     float64
		want    float64
	}{
		{[]float64{0, 0.1, 0.3}, []int{4, 4, 4}, 0.1, 0.1},
		{[]float64{0, 0.1, 0.3}, []int{4, 3, 4}, 0.1, 0},
		{[]float64{0.3, 0.1, 0}, []int{4, 3, 4}, 0.1, 0},
		{[]float64{0.3, 0.1, 0}, []int{5, 3, 4}, 0.1, 0.3},
		{[]float64{0.3}, []int{0}, 0.1, 0.3},
	} {
		if got := pickTheta(c.grid, c.correct, c.def); got != c.want {
			t.Errorf("pickTheta(%v, %v, %v) = %v, want %v", c.grid, c.correct, c.def, got, c.want)
		}
	}
}

func TestChooseThetaLOOBadInput(t *testing.T) {
	f := &fakeSolver{hat: map[float64]bool{0: true}}
	e := []float64{0, 1, 10, 11}
	y := []int{0, 0, 1, 1}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"empty grid", func() error { _, err := ChooseThetaLOO(e, 4, 1, y, 2, 1, nil, 0, f.solve); return err }, "empty grid"},
		{"negative radius", func() error { _, err := ChooseThetaLOO(e, 4, 1, y, 2, 1, []float64{-1}, 0, f.solve); return err }, "grid[0] = -1"},
		{"short labels", func() error { _, err := ChooseThetaLOO(e, 4, 1, y[:3], 2, 1, []float64{0}, 0, f.solve); return err }, "3 labels for 4"},
		{"label range", func() error {
			_, err := ChooseThetaLOO(e, 4, 1, []int{0, 0, 1, 2}, 2, 1, []float64{0}, 0, f.solve)
			return err
		}, "label 2 of point 3"},
		{"one point", func() error { _, err := ChooseThetaLOO(e[:1], 1, 1, y[:1], 2, 1, []float64{0}, 0, f.solve); return err }, "want ≥ 2"},
		{"k", func() error { _, err := ChooseThetaLOO(e, 4, 1, y, 2, 0, []float64{0}, 0, f.solve); return err }, "k = 0"},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

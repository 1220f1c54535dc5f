package experiment

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestFlipLabels(t *testing.T) {
	y := []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}
	orig := slices.Clone(y)
	noisy, flipped, err := FlipLabels(y, 2, 0.3, 1001)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y, orig) {
		t.Fatal("FlipLabels changed its input")
	}
	if len(flipped) != 3 || !slices.IsSorted(flipped) || len(slices.Compact(slices.Clone(flipped))) != 3 {
		t.Fatalf("flipped %v: want 3 distinct positions in increasing order", flipped)
	}
	for i := range y {
		if changed := noisy[i] != y[i]; changed != slices.Contains(flipped, i) {
			t.Fatalf("position %d: %d → %d, listed as flipped: %v", i, y[i], noisy[i], slices.Contains(flipped, i))
		}
	}
	again, flipped2, _ := FlipLabels(y, 2, 0.3, 1001)
	if !slices.Equal(again, noisy) || !slices.Equal(flipped2, flipped) {
		t.Fatal("the same seed gave different flips")
	}
	differ := false
	for s := int64(1002); s < 1012 && !differ; s++ {
		other, _, _ := FlipLabels(y, 2, 0.3, s)
		differ = !slices.Equal(other, noisy)
	}
	if !differ {
		t.Fatal("ten other seeds all gave the same flips")
	}
	// round(rate·n): 10% of 25 is 2.5 → 3; 10% of 10 is 1; rate 0 flips nothing.
	for _, c := range []struct {
		n    int
		rate float64
		want int
	}{{25, 0.1, 3}, {10, 0.1, 1}, {20, 0.3, 6}, {50, 0.3, 15}, {10, 0, 0}, {4, 0.1, 0}} {
		yy := make([]int, c.n)
		for i := range yy {
			yy[i] = i % 5
		}
		ways := min(5, c.n)
		_, f, err := FlipLabels(yy, ways, c.rate, 7)
		if err != nil || len(f) != c.want {
			t.Errorf("n = %d, rate %v: %d flips (%v), want %d", c.n, c.rate, len(f), err, c.want)
		}
	}
}

// Over many seeds every position is flipped equally often and a flipped
// label lands on each of the other classes equally often.
func TestFlipLabelsUniform(t *testing.T) {
	const ways, seeds = 5, 4000
	y := []int{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}
	pos := make([]int, len(y))
	to := make([][]int, ways)
	for c := range to {
		to[c] = make([]int, ways)
	}
	for s := range int64(seeds) {
		noisy, flipped, err := FlipLabels(y, ways, 0.3, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range flipped {
			pos[i]++
			to[y[i]][noisy[i]]++
		}
	}
	for i, c := range pos { // expected 0.3·4000 = 1200 each
		if math.Abs(float64(c)-1200) > 120 {
			t.Errorf("position %d flipped %d times, want ≈ 1200", i, c)
		}
	}
	for from := range ways {
		total := 0
		for _, c := range to[from] {
			total += c
		}
		for dst, c := range to[from] {
			if dst == from {
				if c != 0 {
					t.Errorf("class %d 'flipped' to itself %d times", from, c)
				}
				continue
			}
			if math.Abs(float64(c)/float64(total)-0.25) > 0.04 {
				t.Errorf("class %d → %d: %d of %d flips, want ≈ 1/4", from, dst, c, total)
			}
		}
	}
}

// Flips that would empty a class are redrawn: one point per class, two
// flips, and every class must keep a point (only swaps qualify).
func TestFlipLabelsKeepsEveryClass(t *testing.T) {
	y := []int{0, 1, 2, 3, 4}
	for s := range int64(200) {
		noisy, flipped, err := FlipLabels(y, 5, 0.4, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(flipped) != 2 {
			t.Fatalf("seed %d: %d flips, want 2", s, len(flipped))
		}
		for c := range 5 {
			if !slices.Contains(noisy, c) {
				t.Fatalf("seed %d: class %d lost its only point: %v", s, c, noisy)
			}
		}
	}
	if _, _, err := FlipLabels([]int{0, 1}, 2, 0.5, 1); err == nil || !strings.Contains(err.Error(), "empty a class") {
		t.Fatalf("one flip of two singleton classes: %v, want an error", err)
	}
}

func TestFlipLabelsBadInput(t *testing.T) {
	for _, c := range []struct {
		y    []int
		ways int
		rate float64
		want string
	}{
		{[]int{0, 1}, 2, -0.1, "rate -0.1"},
		{[]int{0, 1}, 2, 1, "rate 1"},
		{[]int{0, 1}, 2, math.NaN(), "rate NaN"},
		{[]int{0, 0}, 1, 0.1, "1 classes"},
		{[]int{0, 2}, 2, 0.1, "label 2 of point 1"},
	} {
		_, _, err := FlipLabels(c.y, c.ways, c.rate, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FlipLabels(%v, %d, %v): %v, want an error containing %q", c.y, c.ways, c.rate, err, c.want)
		}
	}
}

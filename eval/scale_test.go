package eval

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Cosine's distance depends on the angle alone: scaling the features by
// 1e160 or 1e-170 (where the squared norms overflow or underflow float64)
// gives the same neighbours and predictions as at scale 1. Before, the
// product of the squared norms was Inf/Inf = NaN at 1e160 (and 0 at
// 1e-170: "a zero vector"), and the first k indices were the neighbours.
func TestCosineAnyScale(t *testing.T) {
	x := []float64{1, 2, 3, -1, -3, -2} // 1-D: three positive, three negative
	y := []int{0, 0, 0, 1, 1, 1}
	q := []float64{-5, 4}
	for _, scale := range []float64{1, 1e160, 1e-170, 1e300, 1e-300} {
		xs, qs := make([]float64, len(x)), make([]float64, len(q))
		for i, v := range x {
			xs[i] = v * scale
		}
		for i, v := range q {
			qs[i] = v * scale
		}
		if d := (Cosine{}).Distance(qs[:1], xs[3:4]); d != 0 {
			t.Fatalf("scale %g: cosine distance of two negative numbers %v, want 0", scale, d)
		}
		if d := (Cosine{}).Distance(qs[:1], xs[:1]); d != 2 {
			t.Fatalf("scale %g: cosine distance of opposite numbers %v, want 2", scale, d)
		}
		c := &KNN{K: 3, Metric: Cosine{}}
		if err := c.Fit(xs, 6, 1, y, 2); err != nil {
			t.Fatal(err)
		}
		pred, err := c.Predict(qs, 2)
		if err != nil || !slices.Equal(pred, []int{1, 0}) {
			t.Fatalf("scale %g: predictions %v (%v), want [1 0]", scale, pred, err)
		}
	}
	if d := (Cosine{}).Distance([]float64{0, 0}, []float64{1e-300, 0}); d != 1 {
		t.Fatalf("zero vector: distance %v, want 1", d)
	}
	// Unchanged bit for bit in the normal range.
	a, b := []float64{0.3, -1.7, 2.2}, []float64{1.1, 0.4, -0.9}
	ab, aa, bb := 0.3*1.1+-1.7*0.4+2.2*-0.9, 0.3*0.3+1.7*1.7+2.2*2.2, 1.1*1.1+0.4*0.4+0.9*0.9
	if d := (Cosine{}).Distance(a, b); d != 1-ab/math.Sqrt(aa*bb) {
		t.Fatalf("normal range: %v, want %v", d, 1-ab/math.Sqrt(aa*bb))
	}
}

// A bandwidth so small that 1/(2h²) overflows made every kernel weight 0 or
// NaN and the votes uniform (class 0 for every query); it is an error now,
// and the same data at scale 1 votes as worked out by hand.
func TestKernelSmoothingTinyBandwidth(t *testing.T) {
	x := []float64{0, 1, 2, 10, 11, 12}
	y := []int{0, 0, 0, 1, 1, 1}
	p := []float64{.5, .3, .2, 0, 0, 0, 0, 0, .1, .1, .4, .4}
	c := &KernelSmoothing{P: p}
	if err := c.Fit(x, 6, 1, y, 2); err != nil {
		t.Fatal(err)
	}
	// The median of the 15 pairwise distances {1,2,10,11,12, 1,9,10,11, 8,9,10, 1,2, 1} is 9.
	if c.Bandwidth() != 9 {
		t.Fatalf("median bandwidth %v, want 9", c.Bandwidth())
	}
	pr, err := c.Proba([]float64{0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Votes at q = 0, h = 9: Σ_i P_m(i) exp(−x_i²/162).
	k := func(v float64) float64 { return math.Exp(-v * v / 162) }
	v0 := .5*k(0) + .3*k(1) + .2*k(2)
	v1 := .1*k(2) + .1*k(10) + .4*k(11) + .4*k(12)
	if want := v0 / (v0 + v1); math.Abs(pr[0]-want) > 1e-12 {
		t.Fatalf("vote for class 0 %v, want %v", pr[0], want)
	}
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = v * 1e-160
	}
	for _, h := range []float64{0, 1e-200} {
		c := &KernelSmoothing{P: p, H: h}
		err := c.Fit(xs, 6, 1, y, 2)
		if err == nil || !strings.Contains(err.Error(), "too small") {
			t.Fatalf("H = %g on features at 1e-160: %v, want an error saying the bandwidth is too small", h, err)
		}
		if _, err := c.Proba(xs[:1], 1); err == nil {
			t.Fatalf("H = %g: Proba after a failed Fit gave no error", h)
		}
	}
}

// MedianDistance checks its shape instead of slicing out of range.
func TestMedianDistanceShape(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		n, d int
	}{{[]float64{1, 2}, 3, 1}, {[]float64{1, 2}, 1, 1}, {[]float64{1, 2}, 2, 0}, {nil, -1, 1}, {[]float64{1, 2, 3}, 2, 2}} {
		if _, err := MedianDistance(c.x, c.n, c.d); err == nil {
			t.Fatalf("MedianDistance(%d values, %d, %d): no error", len(c.x), c.n, c.d)
		}
	}
	if m, err := MedianDistance(nil, 0, 3); err != nil || m != 1 {
		t.Fatalf("no rows: %v %v, want 1", m, err)
	}
}

// The Euclidean distance is right at any scale: at 1e-170 the squares
// underflowed to 0 (every training row at distance 0, the first k indices
// were the neighbours) and at 1e160 they overflowed to +Inf (the same).
// In the normal range it is bit-identical to √(sqDist).
func TestEuclideanAnyScale(t *testing.T) {
	x := []float64{1, 2, 3, -1, -3, -2} // 1-D: three positive, three negative
	y := []int{0, 0, 0, 1, 1, 1}
	q := []float64{-2.5, 2.4}
	for _, scale := range []float64{1, 1e160, 1e-170, 1e300, 1e-300, 1e-320} {
		xs, qs := make([]float64, len(x)), make([]float64, len(q))
		for i, v := range x {
			xs[i] = v * scale
		}
		for i, v := range q {
			qs[i] = v * scale
		}
		a, b := []float64{3 * scale, 0}, []float64{0, 4 * scale}
		if d, want := (Euclidean{}).Distance(a, b), 5*scale; math.Abs(d-want) > 1e-15*want && scale > 1e-300 {
			t.Fatalf("scale %g: distance %v, want %v", scale, d, want)
		}
		c := &KNN{K: 3, Metric: Euclidean{}}
		if err := c.Fit(xs, 6, 1, y, 2); err != nil {
			t.Fatal(err)
		}
		pred, err := c.Predict(qs, 2)
		if err != nil || !slices.Equal(pred, []int{1, 0}) {
			t.Fatalf("scale %g: predictions %v (%v), want [1 0]", scale, pred, err)
		}
		// Dr.k-NN with k = 1 and uniform class distributions: the nearest
		// row decides.
		third := 1.0 / 3
		dr := &DrKNN{K: 1, P: []float64{third, third, third, 0, 0, 0, 0, 0, 0, third, third, third}}
		if err := dr.Fit(xs, 6, 1, y, 2); err != nil {
			t.Fatal(err)
		}
		if pred, err := dr.Predict(qs, 2); err != nil || !slices.Equal(pred, []int{1, 0}) {
			t.Fatalf("scale %g: Dr.k-NN predictions %v (%v), want [1 0]", scale, pred, err)
		}
	}
	if d := (Euclidean{}).Distance([]float64{1e-300, 2}, []float64{1e-300, 2}); d != 0 {
		t.Fatalf("equal points: %v, want 0", d)
	}
	if d := (Euclidean{}).Distance([]float64{math.Inf(1)}, []float64{0}); !math.IsInf(d, 1) {
		t.Fatalf("infinite coordinate: %v, want +Inf", d)
	}
	a, b := []float64{0.3, -1.7, 2.2, 5, 1}, []float64{1.1, 0.4, -0.9, 2, 3}
	if d := (Euclidean{}).Distance(a, b); d != math.Sqrt(sqDist(a, b)) {
		t.Fatalf("normal range: %v, want %v", d, math.Sqrt(sqDist(a, b)))
	}
}

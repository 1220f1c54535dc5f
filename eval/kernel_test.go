package eval

import (
	"math"
	"testing"
)

func TestKernelSmoothingHandWorked(t *testing.T) {
	// Two points, identity LFD, h = 1, ξ = 0.5:
	// log-votes −0.5²/2 and −1.5²/2 differ by 1, so p̃ = (1, e⁻¹)/(1+e⁻¹).
	c := &KernelSmoothing{H: 1, P: []float64{1, 0, 0, 1}}
	if err := c.Fit([]float64{0, 2}, 2, 1, []int{0, 1}, 2); err != nil {
		t.Fatal(err)
	}
	v, err := c.Votes([]float64{0.5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want0 := 1 / (1 + math.Exp(-1))
	if !near(v[0], want0, 1e-15) || !near(v[1], 1-want0, 1e-15) {
		t.Fatalf("votes %v, want [%v %v]", v, want0, 1-want0)
	}
	if got := predictOne(t, c, 1.2); got != 1 {
		t.Errorf("ξ = 1.2 predicts %d, want 1", got)
	}
	// Midpoint: exact tie, lowest index.
	if got := predictOne(t, c, 1); got != 0 {
		t.Errorf("ξ = 1 predicts %d, want 0", got)
	}
}

func TestKernelSmoothingMatchesDirectSum(t *testing.T) {
	n, nq, d, m := 25, 30, 4, 3
	x, y, p, q := randomProblem(4, n, nq, d, m)
	for _, h := range []float64{0.7, 1.5, 4} {
		c := &KernelSmoothing{H: h, P: p}
		if err := c.Fit(x, n, d, y, m); err != nil {
			t.Fatal(err)
		}
		v, _ := c.Votes(q, nq)
		for j := 0; j < nq; j++ {
			raw := make([]float64, m)
			s := 0.0
			for cl := 0; cl < m; cl++ {
				for i := 0; i < n; i++ {
					raw[cl] += p[cl*n+i] * math.Exp(-sqDist(q[j*d:(j+1)*d], x[i*d:(i+1)*d])/(2*h*h))
				}
				s += raw[cl]
			}
			for cl := 0; cl < m; cl++ {
				if !near(v[j*m+cl], raw[cl]/s, 1e-12) {
					t.Fatalf("h=%v query %d: votes %v, direct %v", h, j, v[j*m:(j+1)*m], raw)
				}
			}
		}
	}
}

func TestKernelSmoothingUnderflow(t *testing.T) {
	// Query at 1000 with h = 0.01: every kernel value underflows to 0, so
	// the direct sum ties every class at 0. In the log domain the nearer
	// point (1, class 1) still wins, by a factor exp(−(999²−1000²)/2h²).
	x := []float64{0, 1}
	h := 0.01
	for _, xi := range x {
		if k := math.Exp(-(1000 - xi) * (1000 - xi) / (2 * h * h)); k != 0 {
			t.Fatalf("test premise: kernel %v does not underflow", k)
		}
	}
	c := &KernelSmoothing{H: h, P: []float64{1, 0, 0, 1}}
	if err := c.Fit(x, 2, 1, []int{0, 1}, 2); err != nil {
		t.Fatal(err)
	}
	v, _ := c.Votes([]float64{1000, -1000}, 2)
	if v[0] != 0 || v[1] != 1 || v[2] != 1 || v[3] != 0 {
		t.Fatalf("underflow votes %v, want [0 1 1 0]", v)
	}
	for _, vv := range v {
		if math.IsNaN(vv) {
			t.Fatal("NaN vote")
		}
	}
	pred, _ := c.Predict([]float64{1000, -1000}, 2)
	if pred[0] != 1 || pred[1] != 0 {
		t.Fatalf("underflow predictions %v, want [1 0]", pred)
	}
}

func TestKernelBandwidth(t *testing.T) {
	x := []float64{0, 1, 3}
	if m, _ := MedianDistance(x, 3, 1); m != 2 {
		t.Fatalf("median distance %v, want 2", m)
	}
	// Pairs 1 3 7 2 6 4 → sorted 1 2 3 4 6 7 → median (3+4)/2.
	if m, _ := MedianDistance([]float64{0, 1, 3, 7}, 4, 1); m != 3.5 {
		t.Fatalf("median distance %v, want 3.5", m)
	}
	if m, _ := MedianDistance([]float64{2, 2}, 2, 1); m != 1 {
		t.Fatalf("median of coincident points %v, want fallback 1", m)
	}
	c := &KernelSmoothing{P: []float64{0.5, 0.5, 0, 0, 0, 1}}
	if err := c.Fit(x, 3, 1, []int{0, 0, 1}, 2); err != nil {
		t.Fatal(err)
	}
	if c.Bandwidth() != 2 {
		t.Fatalf("median heuristic bandwidth %v, want 2", c.Bandwidth())
	}
	// The sweep equals separate fits.
	n, nq, d, m := 20, 40, 3, 3
	xr, yr, p, q := randomProblem(5, n, nq, d, m)
	hs := []float64{0.05, 0.3, 1, 10}
	ks := &KernelSmoothing{H: 1, P: p}
	ks.Fit(xr, n, d, yr, m)
	sw, err := ks.PredictBandwidths(q, nq, hs)
	if err != nil {
		t.Fatal(err)
	}
	for b, h := range hs {
		one := &KernelSmoothing{H: h, P: p}
		one.Fit(xr, n, d, yr, m)
		pr, _ := one.Predict(q, nq)
		for j := range pr {
			if pr[j] != sw[b][j] {
				t.Fatalf("h=%v query %d: sweep %d, fit %d", h, j, sw[b][j], pr[j])
			}
		}
	}
	// Errors.
	for _, h := range []float64{-1, math.NaN(), math.Inf(1)} {
		bad := &KernelSmoothing{H: h, P: p}
		if err := bad.Fit(xr, n, d, yr, m); err == nil {
			t.Errorf("h = %v accepted", h)
		}
	}
	if _, err := ks.PredictBandwidths(q, nq, []float64{1, 0}); err == nil {
		t.Error("sweep with h = 0 accepted")
	}
	if _, err := (&KernelSmoothing{H: 1}).Predict(q, nq); err == nil {
		t.Error("predict before fit accepted")
	}
	if err := (&KernelSmoothing{H: 1, P: p[:len(p)-1]}).Fit(xr, n, d, yr, m); err == nil {
		t.Error("short P accepted")
	}
}

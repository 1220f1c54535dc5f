package eval

import (
	"math"
	"strings"
	"testing"
)

func TestAccuracy(t *testing.T) {
	a, err := Accuracy([]int{0, 1, 2, 1}, []int{0, 1, 1, 1})
	if err != nil || a != 0.75 {
		t.Fatalf("accuracy %v %v, want 0.75", a, err)
	}
	if _, err := Accuracy([]int{0}, []int{0, 1}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := Accuracy(nil, nil); err == nil {
		t.Error("empty accepted")
	}
}

func TestStudentTQuantile(t *testing.T) {
	// ν = 1 is Cauchy, t = tan(π(p−½)); ν = 2 has t = (2p−1)/√(2p(1−p));
	// ν = 9, 30 from scipy.stats.t.ppf (accurate to ~1e-10).
	p := 0.975
	for nu, want := range map[float64]float64{
		1: math.Tan(math.Pi * (p - 0.5)), 2: (2*p - 1) / math.Sqrt(2*p*(1-p)),
		9: 2.2621571627409915, 30: 2.0422724563012373,
	} {
		if got := StudentTQuantile(0.975, nu); !near(got, want, 1e-9*want) {
			t.Errorf("t_{0.975,%v} = %v, want %v", nu, got, want)
		}
	}
}

func TestSummarize(t *testing.T) {
	s, err := Summarize([]float64{0.8, 0.9, 1.0})
	if err != nil {
		t.Fatal(err)
	}
	// mean 0.9, sd 0.1, half-width t_{0.975,2}·0.1/√3.
	hw := 4.302652729749464 * 0.1 / math.Sqrt(3)
	if s.N != 3 || !near(s.Mean, 0.9, 1e-15) || !near(s.Std, 0.1, 1e-15) || !near(s.HalfWidth, hw, 1e-12) {
		t.Fatalf("summary %+v, want mean 0.9 sd 0.1 half-width %v", s, hw)
	}
	if !near(s.Lo(), 0.9-hw, 1e-12) || !near(s.Hi(), 0.9+hw, 1e-12) {
		t.Fatalf("interval [%v, %v]", s.Lo(), s.Hi())
	}
	if got := s.String(); got != "0.900 ± 0.248 (n=3)" {
		t.Errorf("String %q", got)
	}
	one, err := Summarize([]float64{0.7})
	if err != nil || one.Mean != 0.7 || !math.IsNaN(one.HalfWidth) || !math.IsNaN(one.Std) {
		t.Fatalf("one repeat: %+v %v", one, err)
	}
	if !strings.Contains(one.String(), "n/a") {
		t.Errorf("one repeat prints %q", one.String())
	}
	same, _ := Summarize([]float64{0.5, 0.5})
	if same.HalfWidth != 0 {
		t.Errorf("identical repeats: half-width %v, want 0", same.HalfWidth)
	}
	for _, bad := range [][]float64{nil, {0.5, math.NaN()}, {math.Inf(1)}} {
		if _, err := Summarize(bad); err == nil {
			t.Errorf("Summarize(%v) accepted", bad)
		}
	}
}

func TestNewMethods(t *testing.T) {
	n, nq, d, m := 20, 15, 6, 3
	x, y, p, q := randomProblem(11, n, nq, d, m)
	s := Settings{K: 3, Tau: 0.5, Bandwidth: 1, OutDim: 2}
	for _, name := range Methods() {
		c, err := New(name, s, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Fit(x, n, d, y, m); err != nil {
			t.Fatalf("%s: fit: %v", name, err)
		}
		v, err := c.Votes(q, nq)
		if err != nil {
			t.Fatalf("%s: votes: %v", name, err)
		}
		pred, err := c.Predict(q, nq)
		if err != nil {
			t.Fatalf("%s: predict: %v", name, err)
		}
		for j := 0; j < nq; j++ {
			row := v[j*m : (j+1)*m]
			if pred[j] < 0 || pred[j] >= m || row[pred[j]] < maxOf(row)*(1-1e-12) {
				t.Fatalf("%s: query %d predicted %d with votes %v", name, j, pred[j], row)
			}
		}
		if NeedsP(name) {
			if _, err := New(name, s, nil); err == nil {
				t.Errorf("%s without P accepted", name)
			}
		}
	}
	if _, err := New("svm", s, p); err == nil {
		t.Error("unknown method accepted")
	}
	if _, err := New(MethodDrKNN, Settings{K: 3, Metric: "hamming"}, p); err == nil {
		t.Error("unknown metric accepted")
	}
	c, _ := New(MethodEmbeddingKNN, Settings{K: 0}, nil)
	if err := c.Fit(x, n, d, y, m); err == nil {
		t.Error("k = 0 accepted")
	}
	if !OnRawPixels(MethodNCAKNN) || OnRawPixels(MethodDrKNN) {
		t.Error("OnRawPixels")
	}
}

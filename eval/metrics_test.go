package eval

import (
	"math"
	"slices"
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

func TestPaperTableAndMarkdown(t *testing.T) {
	// Spot checks against DESIGN.md §7 and the paper's Table 1.
	for _, tc := range []struct {
		method string
		col    Column
		want   float64
	}{
		{MethodDrKNN, Column{"mnist", 2, 5}, 0.838},
		{MethodDrKNN, Column{"mnist", 5, 10}, 0.831},
		{MethodDrKNN, Column{"lung", 3, 8}, 0.704},
		{MethodDrKNN, Column{"covid", 2, 10}, 0.752},
		{MethodPCAKNN, Column{"mnist", 2, 5}, 0.801},
		{MethodNCAKNN, Column{"omniglot", 5, 10}, 0.346},
		{"metaoptnet", Column{"cifar10", 5, 10}, 0.298},
	} {
		if got, ok := PaperAccuracy(tc.method, tc.col); !ok || got != tc.want {
			t.Errorf("paper %s %v = %v %v, want %v", tc.method, tc.col, got, ok, tc.want)
		}
	}
	if _, ok := PaperAccuracy(MethodDrKNN, Column{"mnist", 3, 5}); ok {
		t.Error("paper cell for mnist 3-way found")
	}
	if len(PaperColumns()) != 20 || len(paperTable()) != len(PaperMethods()) {
		t.Error("paper table shape")
	}
	var tb Table
	tb.Add(MethodDrKNN, Column{"mnist", 2, 5}, Summary{N: 10, Mean: 0.85, HalfWidth: 0.02})
	tb.Add("custom", Column{"synthetic", 2, 5}, Summary{N: 1, Mean: 0.5, HalfWidth: math.NaN()})
	tb.Add(MethodEmbeddingKNN, Column{"mnist", 2, 5}, Summary{N: 10, Mean: 0.8, HalfWidth: 0.03})
	want := "| method | mnist 2-way 5-shot | synthetic 2-way 5-shot |\n" +
		"|---|---|---|\n" +
		"| embedding_knn | 0.800 ± 0.030 (0.792) | – |\n" +
		"| drknn | 0.850 ± 0.020 (0.838) | – |\n" +
		"| custom | – | 0.500 ± n/a |\n"
	if got := tb.Markdown(true); got != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, want)
	}
}

// The network baselines' rows carry the paper's value under the names the
// methods run as, and the table lists them in the paper's row order.
func TestPaperNetworkBaselines(t *testing.T) {
	c := Column{"mnist", 2, 5}
	for _, tc := range []struct {
		method string
		want   float64
	}{
		{MethodMatchingNet, 0.732},
		{MethodProtoNet, 0.742},
		{"prototypical_net", 0.742}, // the row's former key
		{MethodMetaOptNet, 0.725},
	} {
		if got, ok := PaperAccuracy(tc.method, c); !ok || got != tc.want {
			t.Errorf("PaperAccuracy(%q, %v) = %v, %v; want %v, true", tc.method, c, got, ok, tc.want)
		}
	}
	for _, m := range FewShotMethods() {
		_, ok := PaperAccuracy(m, c)
		if want := m != MethodMetaOptNetRR; ok != want {
			t.Errorf("PaperAccuracy(%q) has a value: %v, want %v", m, ok, want)
		}
		if want := m != MethodMetaOptNetRR; slices.Contains(PaperMethods(), m) != want {
			t.Errorf("PaperMethods() contains %q: %v, want %v", m, !want, want)
		}
	}
	var tb Table
	for _, m := range []string{MethodMetaOptNetRR, MethodMetaOptNet, MethodProtoNet, MethodMatchingNet} {
		tb.Add(m, c, Summary{N: 2, Mean: 0.7, HalfWidth: 0.01})
	}
	want := "| method | mnist 2-way 5-shot |\n" +
		"|---|---|\n" +
		"| matching_net | 0.700 ± 0.010 (0.732) |\n" +
		"| proto_net | 0.700 ± 0.010 (0.742) |\n" +
		"| metaoptnet | 0.700 ± 0.010 (0.725) |\n" +
		"| metaoptnet_rr | 0.700 ± 0.010 |\n"
	if got := tb.Markdown(true); got != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, want)
	}
}

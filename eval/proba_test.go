package eval

import (
	"errors"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestLogLossHandWorked(t *testing.T) {
	proba := []float64{0.8, 0.2, 0.3, 0.7, 0.5, 0.5}
	truth := []int{0, 0, 1}
	got, err := LogLoss(proba, 2, truth, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := -(math.Log(0.8) + math.Log(0.3) + math.Log(0.5)) / 3; !near(got, want, 1e-15) {
		t.Errorf("log-loss %v, want %v", got, want)
	}
	// A zero probability on the truth is clipped at ε: −log 1e-15.
	got, _ = LogLoss([]float64{1, 0}, 2, []int{1}, 0)
	if want := 15 * math.Log(10); !near(got, want, 1e-12) {
		t.Errorf("clipped log-loss %v, want %v", got, want)
	}
	got, _ = LogLoss([]float64{1, 0}, 2, []int{1}, 0.01)
	if !near(got, math.Log(100), 1e-12) {
		t.Errorf("log-loss with ε = 0.01: %v, want log 100", got)
	}
	// Uniform rows score log m.
	got, _ = LogLoss([]float64{0.2, 0.2, 0.2, 0.2, 0.2}, 5, []int{3}, 0)
	if !near(got, math.Log(5), 1e-15) {
		t.Errorf("uniform log-loss %v, want log 5", got)
	}
}

func TestECEHandWorked(t *testing.T) {
	// Predictions 0 at confidence 0.8 (right), 1 at 0.7 (wrong), 0 at 0.5
	// (right).
	proba := []float64{0.8, 0.2, 0.3, 0.7, 0.5, 0.5}
	pred := []int{0, 1, 0}
	truth := []int{0, 0, 0}
	// 15 bins: three bins of one query each, |1−0.8| + |0−0.7| + |1−0.5|.
	got, err := ECE(pred, proba, 2, truth, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (0.2 + 0.7 + 0.5) / 3; !near(got, want, 1e-15) {
		t.Errorf("ECE(15 bins) %v, want %v", got, want)
	}
	// 2 bins: (0.5, 1] holds 0.8 and 0.7 (accuracy ½, confidence 0.75),
	// [0, 0.5] holds 0.5 (accuracy 1): (2/3)·0.25 + (1/3)·0.5 = 1/3.
	got, _ = ECE(pred, proba, 2, truth, 2)
	if !near(got, 1.0/3, 1e-15) {
		t.Errorf("ECE(2 bins) %v, want 1/3", got)
	}
	// Perfect calibration: ten queries at confidence 0.7, seven right.
	var p10 []float64
	var y10 []int
	for j := 0; j < 10; j++ {
		p10 = append(p10, 0.7, 0.3)
		y10 = append(y10, map[bool]int{true: 0, false: 1}[j < 7])
	}
	if got, _ := ECE(make([]int, 10), p10, 2, y10, 0); !near(got, 0, 1e-15) {
		t.Errorf("calibrated ECE %v, want 0", got)
	}
	// On a tie the prediction given is scored, not the lowest index:
	// [0.4, 0.4, 0.2] with truth 1 is right at 0.4 when class 1 is
	// predicted, wrong at 0.4 when class 0 is.
	tied := []float64{0.4, 0.4, 0.2}
	if got, _ := ECE([]int{1}, tied, 3, []int{1}, 0); !near(got, 0.6, 1e-15) {
		t.Errorf("tie predicted as 1: ECE %v, want 0.6", got)
	}
	if got, _ := ECE([]int{0}, tied, 3, []int{1}, 0); !near(got, 0.4, 1e-15) {
		t.Errorf("tie predicted as 0: ECE %v, want 0.4", got)
	}
	// The confidence is the probability of the predicted class.
	if got, _ := ECE([]int{1}, []float64{0.8, 0.2}, 2, []int{1}, 0); !near(got, 0.8, 1e-15) {
		t.Errorf("prediction at 0.2: ECE %v, want |1 − 0.2| = 0.8", got)
	}
}

// Dr.k-NN breaks an exact tie of votes by the neighbours' label counts:
// Score's ECE must score that prediction — the one Accuracy counts — not
// the lowest tied index of Proba. Training points 0 (class 0), 0.1, 0.2
// (class 1) and 5 (class 2); the query 0.05 with k = 3 gets votes 0.4,
// 0.4, 0.2: a tie that class 1 wins by two neighbours to one. It is right
// at confidence 0.4, so ECE = 0.6.
func TestScoresECEOfTheClassifiersPrediction(t *testing.T) {
	x := []float64{0, 0.1, 0.2, 5}
	y := []int{0, 1, 1, 2}
	p := []float64{
		0.4, 0, 0, 0.6,
		0, 0.2, 0.2, 0.6,
		0.1, 0.05, 0.05, 0.8,
	}
	for name, c := range map[string]Voter{
		"drknn":           &DrKNN{K: 3, P: p},
		"drknn_truncated": &TruncatedDrKNN{DrKNN: DrKNN{K: 3, P: p}, Tau: 0.9},
	} {
		s, pred, proba, err := EvaluateScores(c, x, 4, 1, y, 3, []float64{0.05}, 1, []int{1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(pred, []int{1}) || !near(proba[0], proba[1], 1e-15) {
			t.Fatalf("%s: prediction %v, probabilities %v; want class 1 on a tie of classes 0 and 1", name, pred, proba)
		}
		if s.Accuracy != 1 || !near(s.ECE, 0.6, 1e-15) {
			t.Errorf("%s: accuracy %v, ECE %v; want 1 and 0.6 (right at confidence 0.4)", name, s.Accuracy, s.ECE)
		}
	}
}

func TestConfidenceBin(t *testing.T) {
	for _, bins := range []int{1, 2, 3, 10, 15} {
		nb := float64(bins)
		if confidenceBin(0, bins) != 0 || confidenceBin(1, bins) != bins-1 {
			t.Fatalf("bins=%d: ends in bins %d, %d", bins, confidenceBin(0, bins), confidenceBin(1, bins))
		}
		for b := 1; b <= bins; b++ {
			if got := confidenceBin(float64(b)/nb, bins); got != b-1 {
				t.Errorf("bins=%d: edge %d/%d in bin %d, want %d", bins, b, bins, got, b-1)
			}
		}
		rng := rand.New(rand.NewSource(int64(bins)))
		for i := 0; i < 1000; i++ {
			p := rng.Float64()
			b := confidenceBin(p, bins)
			if !(float64(b)/nb < p || b == 0) || !(p <= float64(b+1)/nb) {
				t.Fatalf("bins=%d: p=%v in bin %d", bins, p, b)
			}
		}
	}
}

func TestMetricErrors(t *testing.T) {
	good := []float64{0.8, 0.2, 0.3, 0.7}
	cases := map[string]struct {
		p []float64
		m int
		y []int
	}{
		"no queries":  {nil, 2, nil},
		"m=0":         {good, 0, []int{0, 1}},
		"short":       {good[:3], 2, []int{0, 1}},
		"label":       {good, 2, []int{0, 2}},
		"label<0":     {good, 2, []int{-1, 0}},
		"NaN":         {[]float64{math.NaN(), 1, 0.3, 0.7}, 2, []int{0, 1}},
		"+Inf":        {[]float64{math.Inf(1), 0, 0.3, 0.7}, 2, []int{0, 1}},
		"negative":    {[]float64{1.5, -0.5, 0.3, 0.7}, 2, []int{0, 1}},
		"sum≠1":       {[]float64{0.8, 0.3, 0.3, 0.7}, 2, []int{0, 1}},
		"Dr.k-NN sum": {[]float64{0.1, 0.1, 0.3, 0.7}, 2, []int{0, 1}},
	}
	for name, c := range cases {
		if _, err := LogLoss(c.p, c.m, c.y, 0); err == nil {
			t.Errorf("LogLoss %s accepted", name)
		}
		if _, err := ECE(make([]int, len(c.y)), c.p, c.m, c.y, 0); err == nil {
			t.Errorf("ECE %s accepted", name)
		}
	}
	for name, pred := range map[string][]int{"no predictions": nil, "short": {0}, "class 2": {0, 2}, "class −1": {-1, 0}} {
		if _, err := ECE(pred, good, 2, []int{0, 1}, 0); err == nil {
			t.Errorf("ECE with predictions %s (%v) accepted", name, pred)
		}
	}
	if _, err := LogLoss(good, 2, []int{0, 1}, 1); err == nil {
		t.Error("ε = 1 accepted")
	}
	if _, err := Score([]int{0}, good, 2, []int{0, 1}); err == nil {
		t.Error("Score with 1 prediction for 2 queries accepted")
	}
}

func TestProbaHandWorked(t *testing.T) {
	// Dr.k-NN, lineP, k = 3: ξ = 0.9 votes (0.9, 0.3)/3 → (0.75, 0.25);
	// ξ = 10.4 votes (0.3, 0.9)/3.
	c := &DrKNN{K: 3, P: lineP}
	c.Fit(lineX, 5, 1, lineY, 2)
	p, err := c.Proba([]float64{0.9, 10.4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkVotes(t, "drknn proba", p, []float64{0.75, 0.25, 0.25, 0.75})
	// Neighbours without mass fall back to the vanilla vote: points 0 and
	// 1 carry nothing, point 2 everything.
	zx, zy := []float64{0, 1, 10}, []int{0, 1, 1}
	zp := []float64{0, 0, 1, 0, 0, 1}
	c = &DrKNN{K: 2, P: zp}
	c.Fit(zx, 3, 1, zy, 2)
	p, _ = c.Proba([]float64{0.4, 9}, 2)
	// ξ = 0.4: neighbours 0, 1 (no mass) → (½, ½); ξ = 9: neighbours 2
	// and 1 → mass (1, 1)/2 → (½, ½) by normalisation.
	checkVotes(t, "zero-mass fall-back", p, []float64{0.5, 0.5, 0.5, 0.5})
	c.K = 1
	c.Fit(zx, 3, 1, zy, 2)
	p, _ = c.Proba([]float64{0.1, 0.9}, 2)
	checkVotes(t, "zero-mass fall-back k=1", p, []float64{1, 0, 0, 1})
	// Truncated Dr.k-NN (truncP, τ = 0.9, K = 2 with the floor keeps 0–4):
	// ξ = 4.6 votes (0, 0.2, 0.3) → (0, 0.4, 0.6).
	tr := &TruncatedDrKNN{DrKNN: DrKNN{K: 2, P: truncP}, Tau: 0.9, Guard: GuardFloor}
	tr.Fit([]float64{0, 1, 2, 3, 4, 5}, 6, 1, []int{2, 0, 0, 2, 1, 0}, 3)
	p, _ = tr.Proba([]float64{4.6}, 1)
	checkVotes(t, "truncated proba", p, []float64{0, 0.4, 0.6})
	// k-NN: fractions of the neighbours' labels.
	kn := &KNN{K: 3}
	kn.Fit(lineX, 5, 1, lineY, 2)
	p, _ = kn.Proba([]float64{0.9}, 1)
	checkVotes(t, "knn proba", p, []float64{2.0 / 3, 1.0 / 3})
}

func TestNearestCentroid(t *testing.T) {
	// Class 0 at 0 and 2 (μ = 1), class 1 at 10 and 12 (μ = 11): pooled
	// variance (1+1+1+1)/(d·(n−M)) = 4/2 = 2, so 2σ² = 4.
	c := &NearestCentroid{}
	x, y := []float64{0, 2, 10, 12}, []int{0, 0, 1, 1}
	if err := c.Fit(x, 4, 1, y, 2); err != nil {
		t.Fatal(err)
	}
	mu, s2 := c.Centroids()
	if !slices.Equal(mu, []float64{1, 11}) || s2 != 2 {
		t.Fatalf("centroids %v σ² %v, want [1 11] 2", mu, s2)
	}
	// ξ = 5: distances² 16 and 36 → softmax(−4, −9).
	p, err := c.Proba([]float64{5, 6}, 2)
	if err != nil {
		t.Fatal(err)
	}
	p0 := 1 / (1 + math.Exp(-5))
	checkVotes(t, "centroid proba", p[:2], []float64{p0, 1 - p0})
	if !near(p[2], 0.5, 1e-15) || !near(p[3], 0.5, 1e-15) {
		t.Errorf("equidistant query: %v", p[2:])
	}
	pred, _ := c.Predict([]float64{5, 6, 6.1, -100}, 4)
	if !slices.Equal(pred, []int{0, 0, 1, 0}) {
		t.Errorf("predictions %v, want [0 0 1 0]", pred)
	}
	// One point per class: σ² from the spread of the means, μ̄ = 2,
	// (4 + 4)/(d·(M−1)) = 8: ξ = 1 gives softmax(−1/16, −9/16).
	c.Fit([]float64{0, 4}, 2, 1, []int{0, 1}, 2)
	if _, s2 := c.Centroids(); s2 != 8 {
		t.Fatalf("one-shot σ² %v, want 8", s2)
	}
	p, _ = c.Proba([]float64{1}, 1)
	p0 = 1 / (1 + math.Exp(-0.5))
	checkVotes(t, "one-shot proba", p, []float64{p0, 1 - p0})
	// No spread at all: uniform.
	c.Fit([]float64{3, 3}, 2, 1, []int{0, 1}, 2)
	p, _ = c.Proba([]float64{1}, 1)
	checkVotes(t, "degenerate proba", p, []float64{0.5, 0.5})
	// A far query does not underflow: the nearer class gets ≈ 1.
	c.Fit(x, 4, 1, y, 2)
	p, _ = c.Proba([]float64{1e6}, 1)
	if p[1] != 1 || p[0] != 0 {
		t.Errorf("far query %v, want [0 1]", p)
	}
	// Errors: an empty class, predicting before Fit, a non-Euclidean metric.
	if err := c.Fit(x, 4, 1, []int{0, 0, 0, 0}, 2); err == nil || !strings.Contains(err.Error(), "class 1") {
		t.Errorf("empty class: %v", err)
	}
	if _, err := c.Predict([]float64{1}, 1); !errors.Is(err, ErrNotFitted) {
		t.Errorf("predict after a failed fit: %v", err)
	}
	if _, err := New(MethodNearestCentroid, Settings{Metric: "cosine"}, nil); err == nil {
		t.Error("nearest centroid with the cosine metric accepted")
	}
}

// TestProbaAllMethods checks every method's probabilities on random
// problems: rows in [0, 1] summing to 1, the predicted class the most
// probable, and EvaluateScores consistent with Score.
func TestProbaAllMethods(t *testing.T) {
	for _, m := range []int{2, 5} {
		n, nq, d := 6*m, 40, 6
		x, y, p, q := randomProblem(int64(40+m), n, nq, d, m)
		yq := make([]int, nq)
		for j := range yq {
			yq[j] = j % m
		}
		for _, name := range Methods() {
			c, err := New(name, Settings{K: 3, Tau: 0.9, OutDim: 3}, p)
			if err != nil {
				t.Fatal(err)
			}
			s, pred, proba, err := EvaluateScores(c, x, n, d, y, m, q, nq, yq)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for j := 0; j < nq; j++ {
				row := proba[j*m : (j+1)*m]
				sum := 0.0
				for _, v := range row {
					if v < 0 || v > 1 {
						t.Fatalf("%s: query %d probabilities %v", name, j, row)
					}
					sum += v
				}
				if !near(sum, 1, 1e-12) || row[pred[j]] < maxOf(row)*(1-1e-12) {
					t.Fatalf("%s M=%d: query %d predicted %d with probabilities %v (sum %v)", name, m, j, pred[j], row, sum)
				}
			}
			want, err := Score(pred, proba, m, yq)
			if err != nil || want != s {
				t.Fatalf("%s: EvaluateScores %+v, Score %+v (%v)", name, s, want, err)
			}
			if acc, _ := Accuracy(pred, yq); acc != s.Accuracy || !(s.LogLoss > 0) || s.ECE < 0 || s.ECE > 1 {
				t.Fatalf("%s: scores %+v (accuracy %v)", name, s, acc)
			}
		}
	}
}

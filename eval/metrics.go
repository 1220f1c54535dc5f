package eval

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Accuracy returns the fraction of predictions equal to the truth.
func Accuracy(pred, truth []int) (float64, error) {
	if len(pred) != len(truth) {
		return 0, fmt.Errorf("eval: %d predictions for %d true labels", len(pred), len(truth))
	}
	if len(pred) == 0 {
		return 0, fmt.Errorf("eval: accuracy of zero predictions is undefined")
	}
	hit := 0
	for i, p := range pred {
		if p == truth[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(pred)), nil
}

// Summary is the mean of repeated measurements with a 95% confidence
// interval from the t-distribution with N−1 degrees of freedom:
// Mean ± HalfWidth, HalfWidth = t_{0.975, N−1} · Std/√N, Std the sample
// standard deviation (N−1 denominator).
//
// With N = 1 the spread is unknown: Std and HalfWidth are NaN (not 0, which
// would claim a certainty one draw cannot give); String prints "n/a".
type Summary struct {
	N         int
	Mean      float64
	Std       float64
	HalfWidth float64
}

// Lo and Hi are the ends of the 95% confidence interval.
func (s Summary) Lo() float64 { return s.Mean - s.HalfWidth }

// Hi is the upper end of the 95% confidence interval.
func (s Summary) Hi() float64 { return s.Mean + s.HalfWidth }

// String formats the summary as "0.838 ± 0.021 (n=10)".
func (s Summary) String() string {
	if math.IsNaN(s.HalfWidth) {
		return fmt.Sprintf("%.3f ± n/a (n=%d)", s.Mean, s.N)
	}
	return fmt.Sprintf("%.3f ± %.3f (n=%d)", s.Mean, s.HalfWidth, s.N)
}

// Summarize returns the mean and 95% t-interval of xs.
func Summarize(xs []float64) (Summary, error) {
	if len(xs) == 0 {
		return Summary{}, fmt.Errorf("eval: summary of no values")
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Summary{}, fmt.Errorf("eval: value %d is %v", i, x)
		}
	}
	s := Summary{N: len(xs), Mean: stat.Mean(xs, nil), Std: math.NaN(), HalfWidth: math.NaN()}
	if s.N >= 2 {
		s.Std = stat.StdDev(xs, nil)
		s.HalfWidth = StudentTQuantile(0.975, float64(s.N-1)) * s.Std / math.Sqrt(float64(s.N))
	}
	return s, nil
}

// Evaluate fits c on the training set, predicts the nq test rows q and
// returns the accuracy against yq with the predictions.
func Evaluate(c Classifier, x []float64, n, d int, y []int, m int, q []float64, nq int, yq []int) (float64, []int, error) {
	return evaluate(func() error { return c.Fit(x, n, d, y, m) }, func() ([]int, error) { return c.Predict(q, nq) }, yq)
}

// evaluate runs fit, then predict, and returns the accuracy against truth
// with the predictions.
func evaluate(fit func() error, predict func() ([]int, error), truth []int) (float64, []int, error) {
	if err := fit(); err != nil {
		return 0, nil, err
	}
	pred, err := predict()
	if err != nil {
		return 0, nil, err
	}
	acc, err := Accuracy(pred, truth)
	return acc, pred, err
}

// DefaultLogLossEps is the clipping ε of LogLoss: a probability below ε
// counts as ε, so one confidently wrong query adds at most −log ε ≈ 34.5 to
// the sum (scikit-learn's long-standing default).
const DefaultLogLossEps = 1e-15

// DefaultECEBins is the number of equal-width confidence bins of ECE (as
// in Guo et al. 2017).
const DefaultECEBins = 15

// probaTol is how far a probability row may sum from 1, or an entry fall
// below 0, before LogLoss and ECE reject it.
const probaTol = 1e-6

// checkProba validates nq = len(truth) rows of m class probabilities.
func checkProba(proba []float64, m int, truth []int) error {
	switch {
	case m < 1:
		return fmt.Errorf("eval: m = %d classes, want ≥ 1", m)
	case len(truth) == 0:
		return fmt.Errorf("eval: no queries to score")
	case len(proba) != len(truth)*m:
		return fmt.Errorf("eval: %d probabilities for %d queries × %d classes", len(proba), len(truth), m)
	}
	for j, y := range truth {
		if y < 0 || y >= m {
			return fmt.Errorf("eval: true label %d of query %d outside [0, %d)", y, j, m)
		}
		s := 0.0
		for c, v := range proba[j*m : (j+1)*m] {
			if math.IsNaN(v) || v < -probaTol || v > 1+probaTol {
				return fmt.Errorf("eval: probability of class %d for query %d is %v, want a value in [0, 1]", c, j, v)
			}
			s += v
		}
		if math.Abs(s-1) > probaTol {
			return fmt.Errorf("eval: probabilities of query %d sum to %v, want 1", j, s)
		}
	}
	return nil
}

// LogLoss returns the mean negative log-likelihood of the true classes,
//
//	(1/N) Σ_j −log max(p_j[y_j], ε),
//
// for N = len(truth) rows of m probabilities (row-major, each summing to 1
// within 1e-6). eps ≤ 0 means DefaultLogLossEps. Lower is better; a
// classifier that always says 1/m scores log m.
func LogLoss(proba []float64, m int, truth []int, eps float64) (float64, error) {
	if err := checkProba(proba, m, truth); err != nil {
		return 0, err
	}
	if eps <= 0 {
		eps = DefaultLogLossEps
	}
	if !(eps < 1) {
		return 0, fmt.Errorf("eval: log-loss clipping ε = %v, want 0 < ε < 1", eps)
	}
	sum := 0.0
	for j, y := range truth {
		sum -= math.Log(math.Max(proba[j*m+y], eps))
	}
	return sum / float64(len(truth)), nil
}

// ECE returns the expected calibration error of the top-label predictions
// pred (Guo et al. 2017) against truth: each query's confidence is the
// probability proba gives its predicted class — the classifier's own
// prediction (Predict, under its tie rule), as sklearn's calibration
// takes predicted labels, so that ECE and Accuracy describe the same
// predictions; for a prediction that is the argmax of its row it is the
// largest probability. The queries are grouped by confidence into bins
// equal-width bins, bin b holding the confidences in (b/bins, (b+1)/bins]
// (bin 0 also holds 0; the edges are the float64 values b/bins), and
//
//	ECE = Σ_b (n_b/N) · |accuracy_b − mean confidence_b|
//
// over the non-empty bins. bins ≤ 0 means DefaultECEBins. 0 is perfect
// calibration.
func ECE(pred []int, proba []float64, m int, truth []int, bins int) (float64, error) {
	if err := checkProba(proba, m, truth); err != nil {
		return 0, err
	}
	if len(pred) != len(truth) {
		return 0, fmt.Errorf("eval: %d predictions for %d queries", len(pred), len(truth))
	}
	for j, c := range pred {
		if c < 0 || c >= m {
			return 0, fmt.Errorf("eval: predicted class %d of query %d outside [0, %d)", c, j, m)
		}
	}
	if bins <= 0 {
		bins = DefaultECEBins
	}
	count := make([]int, bins)
	hit := make([]float64, bins)
	conf := make([]float64, bins)
	for j, y := range truth {
		p := proba[j*m+pred[j]]
		b := confidenceBin(p, bins)
		count[b]++
		conf[b] += p
		if pred[j] == y {
			hit[b]++
		}
	}
	ece := 0.0
	for b, k := range count {
		if k > 0 {
			ece += math.Abs(hit[b]-conf[b]) / float64(len(truth))
		}
	}
	return ece, nil
}

// confidenceBin returns the bin b with b/bins < p ≤ (b+1)/bins (0 for
// p ≤ 0, bins−1 for p ≥ 1), comparing with the float64 edges so that a
// confidence equal to an edge lands in the bin the edge closes.
func confidenceBin(p float64, bins int) int {
	nb := float64(bins)
	b := int(math.Ceil(p*nb)) - 1
	b = max(min(b, bins-1), 0)
	if b > 0 && p <= float64(b)/nb {
		b--
	}
	if b < bins-1 && p > float64(b+1)/nb {
		b++
	}
	return b
}

// Scores are the measures of one classifier on one set of queries.
type Scores struct {
	Accuracy float64 `json:"accuracy"` // fraction of predictions equal to the truth
	LogLoss  float64 `json:"log_loss"` // LogLoss with DefaultLogLossEps
	ECE      float64 `json:"ece"`      // ECE of the predictions with DefaultECEBins bins
}

// Score returns the accuracy of pred, the log-loss of proba (len(truth)
// rows of m probabilities) and the expected calibration error of pred with
// proba's confidences, against truth, with the default ε and bins.
func Score(pred []int, proba []float64, m int, truth []int) (Scores, error) {
	var s Scores
	var err error
	if s.Accuracy, err = Accuracy(pred, truth); err != nil {
		return Scores{}, err
	}
	if s.LogLoss, err = LogLoss(proba, m, truth, 0); err != nil {
		return Scores{}, err
	}
	if s.ECE, err = ECE(pred, proba, m, truth, 0); err != nil {
		return Scores{}, err
	}
	return s, nil
}

// EvaluateScores fits c on the training set and scores it on the nq test
// rows q with labels yq: accuracy of Predict, log-loss of Proba, ECE of
// Predict's classes at Proba's confidences.
// It also returns the predictions and the probabilities (nq×m).
func EvaluateScores(c Voter, x []float64, n, d int, y []int, m int, q []float64, nq int, yq []int) (Scores, []int, []float64, error) {
	if err := c.Fit(x, n, d, y, m); err != nil {
		return Scores{}, nil, nil, err
	}
	pred, err := c.Predict(q, nq)
	if err != nil {
		return Scores{}, nil, nil, err
	}
	proba, err := c.Proba(q, nq)
	if err != nil {
		return Scores{}, nil, nil, err
	}
	s, err := Score(pred, proba, m, yq)
	return s, pred, proba, err
}

// StudentTQuantile returns the p-quantile (0.5 < p < 1) of Student's t
// distribution with nu degrees of freedom (gonum's distuv.StudentsT).
func StudentTQuantile(p, nu float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
}

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
	if err := c.Fit(x, n, d, y, m); err != nil {
		return 0, nil, err
	}
	pred, err := c.Predict(q, nq)
	if err != nil {
		return 0, nil, err
	}
	acc, err := Accuracy(pred, yq)
	return acc, pred, err
}

// StudentTQuantile returns the p-quantile (0.5 < p < 1) of Student's t
// distribution with nu degrees of freedom (gonum's distuv.StudentsT).
func StudentTQuantile(p, nu float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
}

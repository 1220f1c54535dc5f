package eval

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// NearestCentroid classifies a query by the nearest class mean (Euclidean
// distance), the classic nearest-centroid rule; on a learned embedding it
// is the test-time rule of prototypical networks without their training.
// It is a cheap baseline (method "nearest_centroid") and the centroid
// classifier of transfer evaluation.
//
// Probabilities are the posterior of a Gaussian model with the class means
// μ_m and a shared isotropic covariance σ²I,
//
//	Pr(m | ξ) = exp(−‖ξ − μ_m‖²/(2σ²)) / Σ_m' exp(−‖ξ − μ_m'‖²/(2σ²)),
//
// (a softmax of −distance²/(2σ²), computed with log-sum-exp), σ² the pooled
// within-class variance per coordinate, Σ_i ‖xⁱ − μ_{yⁱ}‖² / (d·(n − M)).
// With one training point per class (n = M) or no within-class spread, σ²
// is the variance of the class means per coordinate,
// Σ_m ‖μ_m − μ̄‖² / (d·(M − 1)); if that is 0 too, every class is equally
// probable. The temperature is thus fixed by the training set alone, with
// no tuning. A query whose squared distance to every mean overflows
// float64 gets the uniform distribution. Votes returns the same
// probabilities. Every class needs a training point. Ties in distance go to
// the lowest class index.
type NearestCentroid struct {
	Workers int

	mu    []float64 // m×d class means
	m, d  int
	sigma float64 // σ², 0 for the uniform fall-back
}

// Fit computes the class means and σ².
func (c *NearestCentroid) Fit(x []float64, n, d int, y []int, m int) error {
	c.mu, c.sigma = nil, 0
	if err := checkTrain(x, n, d, y, m); err != nil {
		return err
	}
	mu, _, empty := classMeans(x, y, d, m)
	if empty >= 0 {
		return fmt.Errorf("eval: nearest centroid: class %d has no training point", empty)
	}
	var within float64
	for i, cl := range y {
		within += sqDist(x[i*d:(i+1)*d], mu[cl*d:(cl+1)*d])
	}
	sigma := 0.0
	if n > m {
		sigma = within / float64(d*(n-m))
	}
	if !(sigma > 0) && m > 1 {
		mean := make([]float64, d)
		for cl := 0; cl < m; cl++ {
			for j, v := range mu[cl*d : (cl+1)*d] {
				mean[j] += v / float64(m)
			}
		}
		var between float64
		for cl := 0; cl < m; cl++ {
			between += sqDist(mu[cl*d:(cl+1)*d], mean)
		}
		sigma = between / float64(d*(m-1))
	}
	if math.IsInf(sigma, 0) || math.IsNaN(sigma) {
		return fmt.Errorf("eval: nearest centroid: variance of the training points overflows (%v)", sigma)
	}
	c.mu, c.m, c.d, c.sigma = mu, m, d, sigma
	return nil
}

// Centroids returns the M×d class means (row-major) and σ².
func (c *NearestCentroid) Centroids() ([]float64, float64) {
	return append([]float64(nil), c.mu...), c.sigma
}

// distances returns the nq×M squared distances to the class means.
func (c *NearestCentroid) distances(q []float64, nq int) ([]float64, error) {
	if c.mu == nil {
		return nil, ErrNotFitted
	}
	if err := checkQuery(q, nq, c.d); err != nil {
		return nil, err
	}
	m, d := c.m, c.d
	out := make([]float64, nq*m)
	err := parallel(nq, c.Workers, func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			for cl := 0; cl < m; cl++ {
				out[j*m+cl] = sqDist(q[j*d:(j+1)*d], c.mu[cl*d:(cl+1)*d])
			}
		}
		return nil
	})
	return out, err
}

// Proba returns the Gaussian posterior of each class (see NearestCentroid).
func (c *NearestCentroid) Proba(q []float64, nq int) ([]float64, error) {
	dist, err := c.distances(q, nq)
	if err != nil {
		return nil, err
	}
	m := c.m
	for j := 0; j < nq; j++ {
		row := dist[j*m : (j+1)*m]
		if c.sigma == 0 {
			for cl := range row {
				row[cl] = 1 / float64(m)
			}
			continue
		}
		for cl, v := range row {
			row[cl] = -v / (2 * c.sigma)
		}
		normalise(row) // softmax with the maximum subtracted
	}
	return dist, nil
}

// Votes returns the same values as Proba.
func (c *NearestCentroid) Votes(q []float64, nq int) ([]float64, error) { return c.Proba(q, nq) }

// Predict returns the class of the nearest mean (ties to the lowest index).
func (c *NearestCentroid) Predict(q []float64, nq int) ([]int, error) {
	dist, err := c.distances(q, nq)
	if err != nil {
		return nil, err
	}
	for i, v := range dist {
		dist[i] = -v
	}
	return predictFromVotes(dist, nq, c.m, nil), nil
}

// classMeans returns the m×d means of the rows of x (d values each) by
// label, the class sizes, and the lowest class without a row (−1 if none;
// its mean is left 0).
func classMeans(x []float64, y []int, d, m int) (mu []float64, count []int, empty int) {
	mu = make([]float64, m*d)
	count = make([]int, m)
	for i, cl := range y {
		count[cl]++
		floats.Add(mu[cl*d:(cl+1)*d], x[i*d:(i+1)*d])
	}
	empty = -1
	for cl, k := range count {
		if k == 0 {
			if empty < 0 {
				empty = cl
			}
			continue
		}
		row := mu[cl*d : (cl+1)*d]
		for j := range row {
			row[j] /= float64(k)
		}
	}
	return mu, count, empty
}

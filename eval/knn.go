package eval

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// KNN is the vanilla k-NN classifier (eq. (1)): the vote of class m is the
// fraction of the K nearest training points labelled m. It is the
// "feature embedding + k-NN" baseline when run on the learned embedding.
// Ties between classes go to the lowest class index (the TieVanillaCount
// rule reduces to that here: the votes are the counts).
type KNN struct {
	K       int
	Metric  Metric // nil means Euclidean
	Workers int

	base knnBase
}

// Fit checks and stores the training set.
func (c *KNN) Fit(x []float64, n, d int, y []int, m int) error {
	c.base = knnBase{}
	if err := checkK(c.K, n); err != nil {
		return err
	}
	return c.base.fit(x, n, d, y, m)
}

// Votes returns the neighbour-label fractions for each query.
func (c *KNN) Votes(q []float64, nq int) ([]float64, error) {
	v, _, err := c.base.weightedVotes(c.Metric, c.K, c.Workers, nil, nil, q, nq)
	return v, err
}

// Proba returns the vote fractions #{neighbours labelled m}/K, which sum
// to 1: the same values as Votes.
func (c *KNN) Proba(q []float64, nq int) ([]float64, error) { return c.Votes(q, nq) }

// Predict returns the majority label of each query's K nearest neighbours.
func (c *KNN) Predict(q []float64, nq int) ([]int, error) {
	return argmaxOf(c.base.m)(c.Votes(q, nq))
}

// Projector learns a linear map from d to Dim() dimensions on a training
// set and applies it to new rows.
type Projector interface {
	FitProjection(x []float64, n, d int, y []int, m int) error
	Transform(x []float64, n int) ([]float64, error)
	Dim() int
}

// ProjectedKNN runs KNN after a learned projection: the PCA+k-NN,
// SVD+k-NN and NCA+k-NN baselines, fitted on the raw training samples
// (flattened pixels) of an episode.
type ProjectedKNN struct {
	Proj Projector
	KNN  KNN

	fitted bool
}

// Fit learns the projection and fits the k-NN on the projected points.
func (c *ProjectedKNN) Fit(x []float64, n, d int, y []int, m int) error {
	c.fitted = false
	if c.Proj == nil {
		return fmt.Errorf("eval: ProjectedKNN without a projector")
	}
	if err := checkTrain(x, n, d, y, m); err != nil {
		return err
	}
	if err := checkK(c.KNN.K, n); err != nil {
		return err
	}
	if err := c.Proj.FitProjection(x, n, d, y, m); err != nil {
		return err
	}
	z, err := c.Proj.Transform(x, n)
	if err != nil {
		return err
	}
	if err := c.KNN.Fit(z, n, c.Proj.Dim(), y, m); err != nil {
		return err
	}
	c.fitted = true
	return nil
}

// Votes projects the queries and returns their k-NN votes.
func (c *ProjectedKNN) Votes(q []float64, nq int) ([]float64, error) {
	if !c.fitted {
		return nil, ErrNotFitted
	}
	z, err := c.Proj.Transform(q, nq)
	if err != nil {
		return nil, err
	}
	return c.KNN.Votes(z, nq)
}

// Proba projects the queries and returns their k-NN vote fractions.
func (c *ProjectedKNN) Proba(q []float64, nq int) ([]float64, error) { return c.Votes(q, nq) }

// Predict projects the queries and returns their k-NN labels.
func (c *ProjectedKNN) Predict(q []float64, nq int) ([]int, error) {
	return argmaxOf(c.KNN.base.m)(c.Votes(q, nq))
}

// DefaultDim caps the default output dimension of PCA, SVD and NCA.
const DefaultDim = 10

// linearMap is z = (x − mean)·W, W d×p; mean nil means no centring.
type linearMap struct {
	w    *mat.Dense
	mean []float64
	d, p int
}

func (l *linearMap) transform(x []float64, n int) ([]float64, error) {
	if l.w == nil {
		return nil, ErrNotFitted
	}
	if err := checkQuery(x, n, l.d); err != nil {
		return nil, err
	}
	out := make([]float64, n*l.p)
	if n == 0 {
		return out, nil
	}
	xc := x
	if l.mean != nil {
		xc = make([]float64, len(x))
		for i := range x {
			xc[i] = x[i] - l.mean[i%l.d]
		}
	}
	z := mat.NewDense(n, l.p, out)
	z.Mul(mat.NewDense(n, l.d, xc), l.w)
	return out, nil
}

// PCA projects centred rows on the leading OutDim principal directions
// (right singular vectors of the centred training matrix). OutDim 0 means
// min(n−1, d, DefaultDim) (at least 1); an explicit OutDim must not exceed
// min(n−1, d), the rank of the centred data (with n = 1, OutDim ≤ 1). Each
// direction's sign is fixed so that its largest-magnitude coordinate is
// positive.
type PCA struct {
	OutDim int
	linearMap
}

// FitProjection computes the principal directions of x.
func (p *PCA) FitProjection(x []float64, n, d int, y []int, m int) error {
	p.linearMap = linearMap{}
	if err := checkTrain(x, n, d, y, m); err != nil {
		return err
	}
	maxDim := max(min(n-1, d), 1)
	dim, err := pickDim(p.OutDim, maxDim, "PCA")
	if err != nil {
		return err
	}
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			mean[j] += x[i*d+j]
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	xc := make([]float64, n*d)
	for i := range x {
		xc[i] = x[i] - mean[i%d]
	}
	w, err := topRightSingular(xc, n, d, dim)
	if err != nil {
		return err
	}
	p.linearMap = linearMap{w: w, mean: mean, d: d, p: dim}
	return nil
}

// Transform projects rows of x (n×d) to n×Dim.
func (p *PCA) Transform(x []float64, n int) ([]float64, error) { return p.transform(x, n) }

// Dim is the output dimension after FitProjection.
func (p *PCA) Dim() int { return p.p }

// Components returns the d×Dim matrix whose columns are the principal
// directions, and the training mean.
func (p *PCA) Components() (*mat.Dense, []float64) {
	if p.w == nil {
		return nil, nil
	}
	return mat.DenseCopyOf(p.w), append([]float64(nil), p.mean...)
}

// SVD projects uncentred rows on the leading OutDim right singular vectors of
// the training matrix (truncated SVD, as scikit-learn's TruncatedSVD).
// OutDim 0 means min(n, d, DefaultDim); an explicit OutDim must not exceed
// min(n, d). Signs are fixed as for PCA.
type SVD struct {
	OutDim int
	linearMap
}

// FitProjection computes the leading right singular vectors of x.
func (s *SVD) FitProjection(x []float64, n, d int, y []int, m int) error {
	s.linearMap = linearMap{}
	if err := checkTrain(x, n, d, y, m); err != nil {
		return err
	}
	dim, err := pickDim(s.OutDim, min(n, d), "SVD")
	if err != nil {
		return err
	}
	w, err := topRightSingular(x, n, d, dim)
	if err != nil {
		return err
	}
	s.linearMap = linearMap{w: w, d: d, p: dim}
	return nil
}

// Transform projects rows of x (n×d) to n×Dim.
func (s *SVD) Transform(x []float64, n int) ([]float64, error) { return s.transform(x, n) }

// Dim is the output dimension after FitProjection.
func (s *SVD) Dim() int { return s.p }

// Components returns the d×Dim matrix of right singular vectors.
func (s *SVD) Components() *mat.Dense {
	if s.w == nil {
		return nil
	}
	return mat.DenseCopyOf(s.w)
}

func pickDim(want, maxDim int, what string) (int, error) {
	if want == 0 {
		return min(maxDim, DefaultDim), nil
	}
	if want < 0 || want > maxDim {
		return 0, fmt.Errorf("eval: %s dimension %d, want 1…%d for this training set", what, want, maxDim)
	}
	return want, nil
}

// topRightSingular returns the d×dim matrix of the leading right singular
// vectors of the n×d matrix a, with signs fixed (largest-magnitude
// coordinate positive).
func topRightSingular(a []float64, n, d, dim int) (*mat.Dense, error) {
	// LAPACK's SVD does not return on a NaN or ±Inf (PCA's centring of
	// features near ±MaxFloat64 overflows to them)
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("eval: the %d×%d training matrix overflows (features near ±%g): no SVD", n, d, math.MaxFloat64)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, d, append([]float64(nil), a...)), mat.SVDThin) {
		return nil, fmt.Errorf("eval: SVD of the %d×%d training matrix did not converge", n, d)
	}
	var v mat.Dense
	svd.VTo(&v) // d × min(n, d), singular values in decreasing order
	w := mat.NewDense(d, dim, nil)
	w.Copy(v.Slice(0, d, 0, dim))
	fixSigns(w)
	return w, nil
}

func fixSigns(w *mat.Dense) {
	r, c := w.Dims()
	for j := 0; j < c; j++ {
		best := 0.0
		for i := 0; i < r; i++ {
			if v := w.At(i, j); math.Abs(v) > math.Abs(best) {
				best = v
			}
		}
		if best < 0 {
			for i := 0; i < r; i++ {
				w.Set(i, j, -w.At(i, j))
			}
		}
	}
}

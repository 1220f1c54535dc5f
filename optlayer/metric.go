package optlayer

import (
	"math"

	"github.com/drknn/drknn/optlayer/internal/vexp"
)

// Costs returns the n×n row-major cost matrix of n points with dim features
// each (row-major x) under the metric. It rejects bad shapes and non-finite
// features or costs.
func Costs(x []float64, n, dim int, metric Metric) ([]float64, error) {
	if err := checkFeatures(x, n, dim, metric); err != nil {
		return nil, err
	}
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		xi := x[i*dim : (i+1)*dim]
		for j := i + 1; j < n; j++ {
			d2 := sqDist(xi, x[j*dim:(j+1)*dim])
			v := d2
			if metric == Euclidean {
				v = math.Sqrt(d2)
			}
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, invalidf("cost between points %d and %d overflows (%v)", i, j, v)
			}
			c[i*n+j] = v
			c[j*n+i] = v
		}
	}
	return c, nil
}

func checkFeatures(x []float64, n, dim int, metric Metric) error {
	if n < 1 {
		return invalidf("N = %d, want ≥ 1", n)
	}
	if dim < 1 {
		return invalidf("Dim = %d, want ≥ 1 with Features", dim)
	}
	if len(x) != n*dim {
		return invalidf("len(Features) = %d, want N×Dim = %d×%d = %d", len(x), n, dim, n*dim)
	}
	if metric != Euclidean && metric != SqEuclidean {
		return invalidf("unknown Metric %d", int(metric))
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalidf("Features[%d] (point %d, dim %d) = %v is not finite", k, k/dim, k%dim, v)
		}
	}
	return nil
}

// CostGrad chains ∂L/∂C (n×n row-major) through the metric and returns
// ∂L/∂X (n×dim row-major). For Euclidean costs the derivative at zero
// distance is taken as 0 (a valid subgradient).
func CostGrad(x []float64, n, dim int, metric Metric, gradC []float64) ([]float64, error) {
	return costGrad(x, n, dim, metric, gradC, nil)
}

// CostGradDist is CostGrad with the costs of x at hand: dist is the n×n
// matrix Costs(x, n, dim, metric) returned (before any normalisation), and
// the distances are read from it instead of being recomputed. The result is
// bit-identical to CostGrad's.
func CostGradDist(x []float64, n, dim int, metric Metric, gradC, dist []float64) ([]float64, error) {
	if len(dist) != n*n {
		return nil, invalidf("len(dist) = %d, want N² = %d", len(dist), n*n)
	}
	return costGrad(x, n, dim, metric, gradC, dist)
}

func costGrad(x []float64, n, dim int, metric Metric, gradC, dist []float64) ([]float64, error) {
	if err := checkFeatures(x, n, dim, metric); err != nil {
		return nil, err
	}
	if len(gradC) != n*n {
		return nil, invalidf("len(gradC) = %d, want N² = %d", len(gradC), n*n)
	}
	for k, v := range gradC {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, invalidf("gradC[%d] = %v is not finite", k, v)
		}
	}
	out := make([]float64, n*dim)
	// Written before the loop adds into it: a large fresh allocation is
	// untouched pages, and adding into one maps the shared zero page on the
	// read and copies it on the write, with a TLB flush on every CPU of the
	// process (an interrupt that traps to the hypervisor in a VM): 1.6% of
	// a CIFAR-10 table cell's CPU before this clear.
	clear(out)
	for i := 0; i < n; i++ {
		xi := x[i*dim : (i+1)*dim]
		oi := out[i*dim : (i+1)*dim]
		for j := i + 1; j < n; j++ {
			w := gradC[i*n+j] + gradC[j*n+i]
			if w == 0 {
				continue
			}
			xj := x[j*dim : (j+1)*dim]
			oj := out[j*dim : (j+1)*dim]
			var f float64
			switch {
			case metric == SqEuclidean:
				f = 2 * w
			case dist != nil:
				// Costs stored √d2 of the same sum: d2 == 0 exactly when it is 0.
				if dist[i*n+j] == 0 {
					continue
				}
				f = w / dist[i*n+j]
			default:
				d2 := sqDist(xi, xj)
				if d2 == 0 {
					continue
				}
				f = w / math.Sqrt(d2)
			}
			vexp.PairUpdate(f, xi, xj, oi, oj)
		}
	}
	return out, nil
}

// sqDist is Σ_k (a_k − b_k)², summed in order k = 0, 1, … (the order
// Costs sums in, so the two agree bit for bit).
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var d2 float64
	for k, v := range a {
		d := v - b[k]
		d2 += d * d
	}
	return d2
}

// FeatureGrad chains ∂L/∂C through the metric of a problem given by
// Features and returns ∂L/∂Features (N×Dim).
func (r *Result) FeatureGrad(gradC []float64) ([]float64, error) {
	if r.st == nil {
		return nil, ErrNoState
	}
	if r.st.feat == nil {
		return nil, invalidf("FeatureGrad: the problem was given by Cost, not Features")
	}
	return CostGrad(r.st.feat, r.st.n, r.st.dim, r.st.metric, gradC)
}

package eval

import (
	"fmt"
	"math"
	"strings"
)

// Metric measures the distance between two points of equal length. Only
// the order of distances matters to k-NN, so a monotone transform of a
// metric (such as the squared Euclidean distance) selects the same
// neighbours.
type Metric interface {
	Distance(a, b []float64) float64
}

// Euclidean is the L2 distance ‖a − b‖₂, the default metric and the
// paper's cost.
type Euclidean struct{}

// Distance returns ‖a − b‖₂. Where the sum of squares leaves float64's
// normal range (differences beyond about 1e154 or below about 1e-154) the
// differences are first divided by the largest of them, as math.Hypot
// does, so the distance is right at any scale.
func (Euclidean) Distance(a, b []float64) float64 {
	s := sqDist(a, b)
	if s < math.SmallestNonzeroFloat64*(1<<52) || math.IsInf(s, 0) {
		return euclideanScaled(a, b)
	}
	return math.Sqrt(s)
}

// euclideanScaled is ‖a − b‖₂ computed as m·‖(a − b)/m‖₂ with m the largest
// absolute difference.
func euclideanScaled(a, b []float64) float64 {
	var m float64
	for i, v := range a {
		m = math.Max(m, math.Abs(v-b[i]))
	}
	if m == 0 || math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var s float64
	for i, v := range a {
		t := (v - b[i]) / m
		s += t * t
	}
	return m * math.Sqrt(s)
}

// SquaredEuclidean is ‖a − b‖₂²; it orders neighbours as Euclidean does
// while the squares stay in float64's range (use Euclidean for features
// beyond about 1e154 or below about 1e-154: there the squares overflow or
// underflow and distinct distances tie).
type SquaredEuclidean struct{}

// Distance returns ‖a − b‖₂².
func (SquaredEuclidean) Distance(a, b []float64) float64 { return sqDist(a, b) }

// Manhattan is the L1 distance.
type Manhattan struct{}

// Distance returns ‖a − b‖₁.
func (Manhattan) Distance(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += math.Abs(v - b[i])
	}
	return s
}

// Cosine is 1 − cos∠(a, b); a zero vector is at distance 1 from everything.
type Cosine struct{}

// Distance returns 1 − a·b / (‖a‖‖b‖). Vectors whose squared norms or
// product leave float64's normal range (coordinates beyond about 1e154 or
// below about 1e-154) are first scaled by their largest coordinate, which
// leaves the angle as it is.
func (Cosine) Distance(a, b []float64) float64 {
	var ab, aa, bb float64
	for i, v := range a {
		ab += v * b[i]
		aa += v * v
		bb += b[i] * b[i]
	}
	if p := aa * bb; p < math.SmallestNonzeroFloat64*(1<<52) || math.IsInf(p, 0) || math.IsInf(ab, 0) {
		return cosineScaled(a, b)
	}
	return 1 - ab/math.Sqrt(aa*bb)
}

// cosineScaled is Cosine's distance with a and b divided by their largest
// absolute coordinates: a zero vector is at distance 1.
func cosineScaled(a, b []float64) float64 {
	var sa, sb float64
	for i, v := range a {
		sa = math.Max(sa, math.Abs(v))
		sb = math.Max(sb, math.Abs(b[i]))
	}
	if sa == 0 || sb == 0 {
		return 1
	}
	var ab, aa, bb float64
	for i, v := range a {
		x, y := v/sa, b[i]/sb
		ab += x * y
		aa += x * x
		bb += y * y
	}
	return 1 - ab/math.Sqrt(aa*bb)
}

// ParseMetric maps "euclidean", "sqeuclidean", "manhattan" and "cosine"
// (case-insensitive; "" means euclidean) to a Metric.
func ParseMetric(name string) (Metric, error) {
	switch strings.ToLower(name) {
	case "", "euclidean", "l2":
		return Euclidean{}, nil
	case "sqeuclidean", "squared_euclidean":
		return SquaredEuclidean{}, nil
	case "manhattan", "l1", "cityblock":
		return Manhattan{}, nil
	case "cosine":
		return Cosine{}, nil
	}
	return nil, fmt.Errorf("eval: unknown metric %q (want euclidean, sqeuclidean, manhattan or cosine)", name)
}

// sqDist returns ‖a − b‖² with four partial sums (a fixed order, so the
// result is deterministic).
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		t0 := a[i] - b[i]
		t1 := a[i+1] - b[i+1]
		t2 := a[i+2] - b[i+2]
		t3 := a[i+3] - b[i+3]
		s0 += t0 * t0
		s1 += t1 * t1
		s2 += t2 * t2
		s3 += t3 * t3
	}
	for ; i < len(a); i++ {
		t := a[i] - b[i]
		s0 += t * t
	}
	return (s0 + s1) + (s2 + s3)
}

// nearest writes into idx (length k) the indices of the k training rows
// (among the rows listed in keep, or all n rows when keep is nil) nearest
// to query row q, nearest first. Ties in distance go to the lower training
// index: rows are scanned in increasing index order and a row displaces a
// kept one only when strictly closer. dist is scratch of length k.
func nearest(metric Metric, x []float64, n, d int, keep []int, q []float64, idx []int, dist []float64) {
	k := len(idx)
	filled := 0
	consider := func(i int) {
		di := metric.Distance(q, x[i*d:(i+1)*d])
		if filled == k && !(di < dist[k-1]) {
			return
		}
		pos := filled
		if filled == k {
			pos = k - 1
		} else {
			filled++
		}
		for pos > 0 && di < dist[pos-1] {
			dist[pos], idx[pos] = dist[pos-1], idx[pos-1]
			pos--
		}
		dist[pos], idx[pos] = di, i
	}
	if keep == nil {
		for i := 0; i < n; i++ {
			consider(i)
		}
	} else {
		for _, i := range keep {
			consider(i)
		}
	}
}

// knnBase holds a fitted training set and searches it.
type knnBase struct {
	x    []float64
	y    []int
	n, d int
	m    int
}

func (b *knnBase) fit(x []float64, n, d int, y []int, m int) error {
	if err := checkTrain(x, n, d, y, m); err != nil {
		return err
	}
	b.x = append([]float64(nil), x...)
	b.y = append([]int(nil), y...)
	b.n, b.d, b.m = n, d, m
	return nil
}

// weightedVotes computes for every query the k nearest training rows (from
// keep, or all rows) and
//
//	votes[j][c] = (1/k) Σ_{neighbours i} w(c, i)
//	counts[j][c] = #{neighbours i with label c}
//
// w(c, i) = 1{y_i = c} when w is nil (vanilla k-NN).
func (b *knnBase) weightedVotes(metric Metric, k, workers int, keep []int, w func(c, i int) float64,
	q []float64, nq int) (votes []float64, counts []int, err error) {
	if b.x == nil {
		return nil, nil, ErrNotFitted
	}
	if err := checkQuery(q, nq, b.d); err != nil {
		return nil, nil, err
	}
	avail := b.n
	if keep != nil {
		avail = len(keep)
	}
	if k < 1 || k > avail {
		// K was changed after Fit.
		return nil, nil, fmt.Errorf("eval: k = %d, want 1 ≤ k ≤ %d (the points the fit kept)", k, avail)
	}
	if metric == nil {
		metric = Euclidean{}
	}
	m := b.m
	votes = make([]float64, nq*m)
	counts = make([]int, nq*m)
	_ = parallel(nq, workers, func(lo, hi int) error {
		idx := make([]int, k)
		dist := make([]float64, k)
		for j := lo; j < hi; j++ {
			nearest(metric, b.x, b.n, b.d, keep, q[j*b.d:(j+1)*b.d], idx, dist)
			v := votes[j*m : (j+1)*m]
			c := counts[j*m : (j+1)*m]
			for _, i := range idx {
				c[b.y[i]]++
				if w == nil {
					v[b.y[i]]++
				} else {
					for cl := 0; cl < m; cl++ {
						v[cl] += w(cl, i)
					}
				}
			}
			for cl := range v {
				v[cl] /= float64(k)
			}
		}
		return nil
	})
	return votes, counts, nil
}

package eval

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"github.com/drknn/drknn/internal/par"
)

// KernelSmoothing replaces the k-NN vote of Dr.k-NN by a Gaussian kernel
// smoothing of the least-favourable distributions (the paper's
// eq. (kernel-smoothing), Section 5):
//
//	p̃_m(ξ) = Σ_i P*_m(ξⁱ) κ_h(ξ − ξⁱ),   κ_h(u) ∝ exp(−‖u‖²/(2h²)).
//
// H is the kernel's standard deviation; the paper writes the covariance as
// H_h = h·I, so its h is our H². The normalising constant of κ is common to
// every class and is dropped. Sums are taken in the log domain
// (log-sum-exp), so a query far from every training point relative to H —
// where every kernel value underflows to 0 — is still classified by the
// relative sizes of its votes. Votes are reported normalised to sum to 1
// over the classes (the argmax is unchanged); a query whose squared
// distance to every training point overflows float64 gets uniform votes. Ties go to the lowest class
// index: there is no neighbour set for TieVanillaCount to count.
type KernelSmoothing struct {
	// H is the bandwidth (> 0). 0 selects the median heuristic: the median
	// Euclidean distance between distinct pairs of training points (1 if
	// that is 0 or there is a single point).
	H       float64
	P       []float64 // M×n row-major, as for DrKNN
	SumTol  float64   // 0 means DefaultSumTol
	Workers int

	base knnBase
	logp []float64
	h    float64
}

// Fit checks and stores the training set and P and fixes the bandwidth.
func (c *KernelSmoothing) Fit(x []float64, n, d int, y []int, m int) error {
	c.base, c.logp, c.h = knnBase{}, nil, 0
	if math.IsNaN(c.H) || math.IsInf(c.H, 0) || c.H < 0 {
		return fmt.Errorf("eval: kernel bandwidth h = %v, want h > 0 (or 0 for the median heuristic)", c.H)
	}
	if err := checkP(c.P, m, n, c.SumTol); err != nil {
		return err
	}
	if err := c.base.fit(x, n, d, y, m); err != nil {
		return err
	}
	c.logp = make([]float64, len(c.P))
	for i, v := range c.P {
		c.logp[i] = math.Log(math.Max(v, 0)) // −Inf for zero mass
	}
	c.h = c.H
	if c.h == 0 {
		c.h, _ = MedianDistance(x, n, d) // x is n×d: checked by fit
		if math.IsInf(c.h, 0) {
			c.base, c.logp = knnBase{}, nil
			return fmt.Errorf("eval: kernel bandwidth: the median distance between training points overflows float64; set the bandwidth explicitly")
		}
	}
	if 2*c.h*c.h < math.SmallestNonzeroFloat64*(1<<52) {
		// 1/(2h²) would overflow (or be rounded far off): every kernel
		// weight would come out 0 or NaN and the votes uniform.
		h := c.h
		c.base, c.logp, c.h = knnBase{}, nil, 0
		if c.H == 0 {
			return fmt.Errorf("eval: kernel bandwidth: the median distance between training points is %g, too small for float64's squared distances (2h² < 2.2e-308); rescale the features", h)
		}
		return fmt.Errorf("eval: kernel bandwidth h = %g is too small for float64 (2h² < 2.2e-308); use a larger bandwidth or rescale the features", h)
	}
	return nil
}

// Bandwidth returns the bandwidth in use after Fit.
func (c *KernelSmoothing) Bandwidth() float64 { return c.h }

// MedianDistance returns the median Euclidean distance over the n(n−1)/2
// distinct pairs of rows of x (n×d), or 1 when n < 2 or the median is 0.
// x must hold n·d values (n ≥ 0, d ≥ 1); otherwise it returns an error.
//
// The median is the one a sort of the distances gives (sort.Float64s: a NaN
// distance counts as the least), found by selection on the squared
// distances, whose order the square root keeps: O(n²) time after the
// distances, not O(n² log n). The distances are computed on GOMAXPROCS
// goroutines, each pair exactly as by one.
func MedianDistance(x []float64, n, d int) (float64, error) {
	if n < 0 || d < 1 || n > 0 && n > math.MaxInt/d || len(x) != n*d {
		return 0, fmt.Errorf("eval: median distance of %d values as %d rows of %d", len(x), n, d)
	}
	if n < 2 {
		return 1, nil
	}
	l := n * (n - 1) / 2
	sq := make([]float64, l)
	// Row i's pairs (i, j), j > i, start at off(i); the rows are cut into
	// pieces of about equal numbers of pairs.
	off := func(i int) int { return i*n - i*(i+1)/2 }
	const pieces = 64
	rows := make([]int, pieces+1)
	for p, i := 1, 0; p <= pieces; p++ {
		for i < n && off(i) < p*(l/pieces)+min(p, l%pieces) {
			i++
		}
		rows[p] = i
	}
	rows[pieces] = n
	_ = par.For(pieces, runtime.GOMAXPROCS(0), func(p int) error {
		for i := rows[p]; i < rows[p+1]; i++ {
			a, o := x[i*d:(i+1)*d], off(i)-i-1
			for j := i + 1; j < n; j++ {
				sq[o+j] = sqDist(a, x[j*d:(j+1)*d])
			}
		}
		return nil
	})
	k := l / 2
	selectNth(sq, k)
	med := math.Sqrt(sq[k])
	if l%2 == 0 {
		lo := sq[0] // the greatest of sq[:k], the (k−1)-th
		for _, v := range sq[1:k] {
			if floatLess(lo, v) {
				lo = v
			}
		}
		med = (math.Sqrt(lo) + med) / 2
	}
	if med == 0 {
		return 1, nil
	}
	return med, nil
}

// floatLess is sort.Float64s's order: NaN before every number.
func floatLess(a, b float64) bool { return a < b || a != a && b == b }

// selectNth reorders v so that v[k] is the value a sort by floatLess puts
// there, with every element of v[:k] not after it and every element of
// v[k+1:] not before it (a three-way quickselect; median-of-three pivots,
// and a sort of what is left should the partitions stay unbalanced).
func selectNth(v []float64, k int) {
	lo, hi := 0, len(v) // v[k] lies in v[lo:hi]
	budget := 2 * bits.Len(uint(len(v)))
	for hi-lo > 16 {
		if budget--; budget < 0 {
			slices.SortFunc(v[lo:hi], func(a, b float64) int {
				if floatLess(a, b) {
					return -1
				}
				if floatLess(b, a) {
					return 1
				}
				return 0
			})
			return
		}
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi-1]
		if floatLess(b, a) {
			a, b = b, a
		}
		if floatLess(c, b) {
			b = c
			if floatLess(b, a) {
				b = a
			}
		}
		pivot := b
		// v[lo:lt] < pivot, v[lt:i] == pivot, v[gt:hi] > pivot
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch {
			case floatLess(v[i], pivot):
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case floatLess(pivot, v[i]):
				gt--
				v[gt], v[i] = v[i], v[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return
		}
	}
	// insertion sort of the last few
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && floatLess(v[j], v[j-1]); j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// logVotes writes l_m = log Σ_i P_m(i) exp(−sq_i/(2h²)) for each class.
func (c *KernelSmoothing) logVotes(sq []float64, h float64, out []float64) {
	n, m := c.base.n, c.base.m
	s := 1 / (2 * h * h)
	for cl := 0; cl < m; cl++ {
		lp := c.logp[cl*n : (cl+1)*n]
		mx := math.Inf(-1)
		for i, l := range lp {
			if t := l - sq[i]*s; t > mx {
				mx = t
			}
		}
		if math.IsInf(mx, -1) {
			out[cl] = mx
			continue
		}
		sum := 0.0
		for i, l := range lp {
			sum += math.Exp(l - sq[i]*s - mx)
		}
		out[cl] = mx + math.Log(sum)
	}
}

// normalise turns log-votes into votes summing to 1, in place (a softmax).
// When every log-vote is −Inf — a query whose squared distance to every
// training point overflows float64, so every kernel weight is 0 — the votes
// carry no information and are uniform.
func normalise(l []float64) {
	mx := math.Inf(-1)
	for _, v := range l {
		mx = math.Max(mx, v)
	}
	if math.IsInf(mx, -1) {
		for i := range l {
			l[i] = 1 / float64(len(l))
		}
		return
	}
	sum := 0.0
	for i, v := range l {
		l[i] = math.Exp(v - mx)
		sum += l[i]
	}
	for i := range l {
		l[i] /= sum
	}
}

// sweep computes normalised votes for every query and bandwidth:
// result[b] is nq×M for bandwidth hs[b].
func (c *KernelSmoothing) sweep(q []float64, nq int, hs []float64) ([][]float64, error) {
	if c.logp == nil {
		return nil, ErrNotFitted
	}
	if err := checkQuery(q, nq, c.base.d); err != nil {
		return nil, err
	}
	for _, h := range hs {
		if !(h > 0) || math.IsInf(h, 0) {
			return nil, fmt.Errorf("eval: kernel bandwidth h = %v, want a finite h > 0", h)
		}
	}
	n, d, m := c.base.n, c.base.d, c.base.m
	out := make([][]float64, len(hs))
	for b := range out {
		out[b] = make([]float64, nq*m)
	}
	_ = parallel(nq, c.Workers, func(lo, hi int) error {
		sq := make([]float64, n)
		for j := lo; j < hi; j++ {
			qj := q[j*d : (j+1)*d]
			for i := 0; i < n; i++ {
				sq[i] = sqDist(qj, c.base.x[i*d:(i+1)*d])
			}
			for b, h := range hs {
				v := out[b][j*m : (j+1)*m]
				c.logVotes(sq, h, v)
				normalise(v)
			}
		}
		return nil
	})
	return out, nil
}

// Votes returns the normalised p̃(ξ) for each query, nq rows of M values.
func (c *KernelSmoothing) Votes(q []float64, nq int) ([]float64, error) {
	v, err := c.sweep(q, nq, []float64{c.h})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// Proba returns the kernel-smoothed votes normalised over the classes,
// Pr(m | ξ) = p̃_m(ξ)/Σ_m' p̃_m'(ξ) (computed in the log domain, so a query
// far from every training point still gets a proper distribution): the
// same values as Votes.
func (c *KernelSmoothing) Proba(q []float64, nq int) ([]float64, error) { return c.Votes(q, nq) }

// Predict returns argmax_m p̃_m(ξ) for each query, ties to the lowest index.
func (c *KernelSmoothing) Predict(q []float64, nq int) ([]int, error) {
	return argmaxOf(c.base.m)(c.Votes(q, nq))
}

// PredictBandwidths predicts every query under each bandwidth in hs,
// computing the distances once: result[b][j] is query j's label under
// hs[b]. It does not change c.H.
func (c *KernelSmoothing) PredictBandwidths(q []float64, nq int, hs []float64) ([][]int, error) {
	vs, err := c.sweep(q, nq, hs)
	if err != nil {
		return nil, err
	}
	out := make([][]int, len(hs))
	for b, v := range vs {
		out[b] = predictFromVotes(v, nq, c.base.m, nil)
	}
	return out, nil
}

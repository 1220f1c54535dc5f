package optlayer

import (
	"math"
	"runtime"
	"sync"

	"github.com/drknn/drknn/optlayer/internal/vexp"
)

// Costs returns the n×n row-major cost matrix of n points with dim features
// each (row-major x) under the metric. It rejects bad shapes and non-finite
// features or costs.
//
// Each distance is summed in order k = 0, 1, … (sqDist's order), so the
// matrix is the same bit for bit however the work is split: the pairs come
// in tiles of costTile × costTile points, the features in chunks of
// costChunk (the tile's rows stay in cache: a row-by-row pass streamed every
// later row from memory for every row), sixteen pairs per vector kernel
// (vexp.SqDist16: independent sums in the lanes, no add waiting on
// another's latency), and large inputs on two goroutines, each owning whole
// tiles.
func Costs(x []float64, n, dim int, metric Metric) ([]float64, error) {
	if err := checkFeatures(x, n, dim, metric); err != nil {
		return nil, err
	}
	c := make([]float64, n*n)
	forCostTiles(x, n, dim, func(acc []float64, i0, j0 int) {
		tileCosts(acc, i0, j0, n, metric, func(i, j int, v float64) {
			c[i*n+j] = v
			c[j*n+i] = v
		})
	})
	for i := 0; i < n; i++ {
		for j, v := range c[i*n+i+1 : (i+1)*n] {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, invalidf("cost between points %d and %d overflows (%v)", i, i+1+j, v)
			}
		}
	}
	return c, nil
}

// forCostTiles calls store with the partial sums acc of every tile of
// costTile × costTile pairs (i0 ≤ j0; tileSums), on two goroutines for
// large inputs, each owning whole tiles.
func forCostTiles(x []float64, n, dim int, store func(acc []float64, i0, j0 int)) {
	nb := (n + costTile - 1) / costTile
	tiles := nb * (nb + 1) / 2 // (bi, bj) with bi ≤ bj
	work := func(first, step int) {
		acc := make([]float64, costTile*costTile)
		pack := make([]float64, costTile*costChunk)
		t := 0
		for bi := 0; bi < nb; bi++ {
			for bj := bi; bj < nb; bj++ {
				if t%step == first {
					tileSums(x, acc, pack, bi*costTile, bj*costTile, n, dim)
					store(acc, bi*costTile, bj*costTile)
				}
				t++
			}
		}
	}
	if float64(n)*float64(n)*float64(dim) >= costsParMin && tiles > 1 && runtime.GOMAXPROCS(0) > 1 {
		var wg sync.WaitGroup
		wg.Go(func() { work(1, 2) })
		work(0, 2)
		wg.Wait()
	} else {
		work(0, 1)
	}
}

// Costs' blocking: tiles of costTile × costTile pairs, features in chunks
// of costChunk (two tiles' chunks: 2·64·256·8 B = 256 KiB, within L2), and
// two goroutines from n²·dim = costsParMin on (about 2 ms of work).
const (
	costTile    = 64
	costChunk   = 256
	costsParMin = 4e6
)

// tileSums sets acc[(i−i0)·costTile + j−j0] to the squared distance of
// the points i < j for i in the tile of rows from i0 and j in the tile from
// j0 (i0 ≤ j0; pairs with j ≤ i are not meaningful). acc holds the tile's
// partial sums between chunks; pack (costTile·costChunk values)
// the tile's j rows of one chunk, sixteen rows interleaved for
// vexp.SqDist16 (feature k of the sixteen rows side by side), the rows of
// the last incomplete block of sixteen by sqDist4 and one by one.
func tileSums(x, acc, pack []float64, i0, j0, n, dim int) {
	i1, j1 := min(i0+costTile, n), min(j0+costTile, n)
	blocks := (j1 - j0) / 16
	jr := j0 + 16*blocks // first row after the blocks
	clear(acc)
	for k0 := 0; k0 < dim; k0 += costChunk {
		k1 := min(k0+costChunk, dim)
		kc := k1 - k0
		for b := 0; b < blocks; b++ {
			pb := pack[16*kc*b : 16*kc*(b+1)]
			for l := 0; l < 16; l++ {
				xr := x[(j0+16*b+l)*dim+k0 : (j0+16*b+l)*dim+k1]
				for k, v := range xr {
					pb[16*k+l] = v
				}
			}
		}
		for i := i0; i < i1; i++ {
			a := x[i*dim+k0 : i*dim+k1]
			row := acc[(i-i0)*costTile : (i-i0+1)*costTile]
			for b := 0; b < blocks; b++ {
				if j0+16*b+15 <= i {
					continue // every pair of the block has j ≤ i
				}
				// (pairs with j ≤ i in a block are summed and never stored)
				vexp.SqDist16(a, pack[16*kc*b:16*kc*(b+1)], (*[16]float64)(row[16*b:16*b+16]))
			}
			j := max(jr, i+1)
			for ; j+4 <= j1; j += 4 {
				r := row[j-j0 : j-j0+4]
				r[0], r[1], r[2], r[3] = sqDist4(a, x[j*dim+k0:], x[(j+1)*dim+k0:], x[(j+2)*dim+k0:], x[(j+3)*dim+k0:], r[0], r[1], r[2], r[3])
			}
			for ; j < j1; j++ {
				s := row[j-j0]
				xj := x[j*dim+k0 : j*dim+k1]
				for k, v := range a {
					d := v - xj[k]
					s += d * d
				}
				row[j-j0] = s
			}
		}
	}
}

// tileCosts calls put(i, j, c(i, j)) for the pairs i < j of tileSums'
// tile.
func tileCosts(acc []float64, i0, j0, n int, metric Metric, put func(i, j int, v float64)) {
	i1, j1 := min(i0+costTile, n), min(j0+costTile, n)
	for i := i0; i < i1; i++ {
		row := acc[(i-i0)*costTile:]
		for j := max(j0, i+1); j < j1; j++ {
			v := row[j-j0]
			if metric == Euclidean {
				v = math.Sqrt(v)
			}
			put(i, j, v)
		}
	}
}

// sqDist4 adds Σ_k (a_k − b_k)² for each of b0…b3 (each at least len(a)
// long) to s0…s3, in order k = 0, 1, … as sqDist.
func sqDist4(a, b0, b1, b2, b3 []float64, s0, s1, s2, s3 float64) (float64, float64, float64, float64) {
	d := len(a)
	b0, b1, b2, b3 = b0[:d], b1[:d], b2[:d], b3[:d]
	for k, v := range a {
		e0 := v - b0[k]
		e1 := v - b1[k]
		e2 := v - b2[k]
		e3 := v - b3[k]
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
	}
	return s0, s1, s2, s3
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
	return costGrad(nil, x, n, dim, metric, gradC, nil)
}

// CostGradDist is CostGrad with the costs of x at hand: dist is the n×n
// matrix Costs(x, n, dim, metric) returned (before any normalisation), and
// the distances are read from it instead of being recomputed. The result is
// bit-identical to CostGrad's.
func CostGradDist(x []float64, n, dim int, metric Metric, gradC, dist []float64) ([]float64, error) {
	if len(dist) != n*n {
		return nil, invalidf("len(dist) = %d, want N² = %d", len(dist), n*n)
	}
	return costGrad(nil, x, n, dim, metric, gradC, dist)
}

// CostGradTo is CostGradDist (CostGrad when dist is nil) writing ∂L/∂X
// into dst, which must have length n·dim; its previous values are
// overwritten. It returns dst. A caller that differentiates the same shapes
// step after step (the risk layer of package gop) reuses one dst instead of
// taking fresh memory each time. The values are bit-identical to
// CostGradDist's and CostGrad's. dst nil allocates.
func CostGradTo(dst, x []float64, n, dim int, metric Metric, gradC, dist []float64) ([]float64, error) {
	if dist != nil && len(dist) != n*n {
		return nil, invalidf("len(dist) = %d, want N² = %d", len(dist), n*n)
	}
	if dst != nil && len(dst) != n*dim {
		return nil, invalidf("len(dst) = %d, want N·dim = %d", len(dst), n*dim)
	}
	return costGrad(dst, x, n, dim, metric, gradC, dist)
}

func costGrad(out, x []float64, n, dim int, metric Metric, gradC, dist []float64) ([]float64, error) {
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
	if out == nil {
		out = make([]float64, n*dim)
	}
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

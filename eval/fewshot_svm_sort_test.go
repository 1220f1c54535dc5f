package eval

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// projectSimplexSort is projectSimplex with sort.Sort (its form before the
// inline insertion sort): the reference of TestProjectSimplexSameBits.
func projectSimplexSort(v []float64, r float64) {
	u := append([]float64(nil), v...)
	sort.Sort(sort.Reverse(sort.Float64Slice(u)))
	var cum, theta float64
	for k, x := range u {
		cum += x
		t := (cum - r) / float64(k+1)
		if x-t > 0 {
			theta = t
		}
	}
	for k, x := range v {
		v[k] = math.Max(x-theta, 0)
	}
}

// TestProjectSimplexSameBits: the inline insertion sort gives the bits of
// sort.Sort on 1…14 elements, with ties, ±0, infinities and NaNs.
func TestProjectSimplexSameBits(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pool := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 2.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-300, -3}
	for trial := 0; trial < 20000; trial++ {
		n := 1 + rng.Intn(14)
		v := make([]float64, n)
		for i := range v {
			if rng.Intn(3) == 0 {
				v[i] = pool[rng.Intn(len(pool))]
			} else {
				v[i] = float64(rng.Intn(7)) - 3 + rng.Float64()*float64(rng.Intn(2))
			}
		}
		r := []float64{1, 0.1, 10, 0}[rng.Intn(4)]
		got, want := append([]float64(nil), v...), append([]float64(nil), v...)
		projectSimplex(got, r)
		projectSimplexSort(want, r)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("v %v r %v: got %v, want %v", v, r, got, want)
			}
		}
	}
}

// TestSweepRowSameBits: the 2- and 5-class register forms of the SVM
// sweep's row sum give the general loop's bits (zeros in the row skipped,
// ±0 and signed sums included).
func TestSweepRowSameBits(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for trial := 0; trial < 3000; trial++ {
		m := []int{2, 3, 5}[rng.Intn(3)]
		ns := 1 + rng.Intn(60)
		k, alpha := make([]float64, ns), make([]float64, ns*m)
		for j := range k {
			switch rng.Intn(4) {
			case 0:
				k[j] = 0
			case 1:
				k[j] = math.Copysign(0, -1)
			default:
				k[j] = rng.NormFloat64() * math.Pow(10, float64(rng.Intn(9)-4))
			}
		}
		for j := range alpha {
			if rng.Intn(3) > 0 {
				alpha[j] = rng.NormFloat64()
			}
		}
		i := rng.Intn(ns)
		got, want := make([]float64, m), make([]float64, m)
		for c := range got {
			got[c] = rng.NormFloat64() // garbage: sweepRow overwrites h
		}
		sweepRow(got, k, alpha, i, m)
		sweepRowGeneral(want, k, alpha, i, m)
		for c := range got {
			if math.Float64bits(got[c]) != math.Float64bits(want[c]) {
				t.Fatalf("m %d ns %d: h[%d] = %v, general loop %v", m, ns, c, got[c], want[c])
			}
		}
	}
}

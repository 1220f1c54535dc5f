package optlayer

import (
	"math"
	"math/rand"
	"testing"
)

// TestNormalizeCosts: the normalised costs have mean 1, a scaled input gives
// the same output, and the VJP matches central finite differences of
// L(c) = Σ w ⊙ (c / mean(c)).
func TestNormalizeCosts(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	c := make([]float64, 16)
	w := make([]float64, len(c))
	for i := range c {
		c[i], w[i] = rng.Float64()*3, rng.NormFloat64()
	}
	loss := func(c []float64) float64 {
		x := append([]float64(nil), c...)
		if _, err := NormalizeCosts(x); err != nil {
			t.Fatal(err)
		}
		var s float64
		for i := range x {
			s += w[i] * x[i]
		}
		return s
	}
	x := append([]float64(nil), c...)
	mean, err := NormalizeCosts(x)
	if err != nil {
		t.Fatal(err)
	}
	var sum, want float64
	for i, v := range x {
		sum += v
		want += c[i]
	}
	if math.Abs(sum/float64(len(x))-1) > 1e-15 || math.Abs(mean-want/float64(len(c))) > 1e-15 {
		t.Fatalf("normalised mean %v, returned mean %v (want %v)", sum/float64(len(x)), mean, want/float64(len(c)))
	}
	big := make([]float64, len(c))
	for i, v := range c {
		big[i] = 10 * v
	}
	if math.Abs(loss(big)-loss(c)) > 1e-12 {
		t.Fatalf("not scale-invariant: %v vs %v", loss(big), loss(c))
	}
	g := append([]float64(nil), w...)
	NormalizeCostsVJP(g, x, mean)
	const h = 1e-6
	for i := range c {
		p, m := append([]float64(nil), c...), append([]float64(nil), c...)
		p[i] += h
		m[i] -= h
		fd := (loss(p) - loss(m)) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-7 {
			t.Errorf("∂L/∂c[%d] = %v, finite difference %v", i, g[i], fd)
		}
	}
	for _, bad := range [][]float64{{0, 0, 0, 0}, {1, math.Inf(1)}, {1, math.NaN()}} {
		in := append([]float64(nil), bad...)
		if _, err := NormalizeCosts(in); err == nil {
			t.Errorf("NormalizeCosts(%v) accepted", bad)
		}
		for i := range in {
			if !(in[i] == bad[i] || math.IsNaN(in[i]) && math.IsNaN(bad[i])) {
				t.Errorf("NormalizeCosts(%v) changed its input on error: %v", bad, in)
			}
		}
	}
}

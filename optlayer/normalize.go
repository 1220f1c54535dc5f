package optlayer

import (
	"fmt"
	"math"
)

// NormalizeCosts divides the costs c (any length, usually an n×n matrix) in
// place by their mean and returns that mean s̄, so that radii ϑ are in units
// of the problem's typical cost and the LFD is invariant to a rescaling of
// the features (DESIGN.md §5: without it a network can inflate its
// embedding until the adversary can move no mass). It fails, leaving c
// unchanged, when the mean is not a positive finite number (all points
// coincide, or a cost is infinite). The trainer's layer, the test-time LFD
// and every other caller use this one function, so training and evaluation
// normalise identically.
//
// The gradient through the normalisation is NormalizeCostsVJP.
func NormalizeCosts(c []float64) (mean float64, err error) {
	var s float64
	for _, v := range c {
		s += v
	}
	mean = s / float64(len(c))
	if !(mean > 0) || math.IsInf(mean, 0) {
		return mean, fmt.Errorf("cannot normalise costs by their mean %v (all points coincide?)", mean)
	}
	for i := range c {
		c[i] /= mean
	}
	return mean, nil
}

// NormalizeCostsVJP turns g = ∂L/∂c̃, the gradient with respect to the
// normalised costs c̃ = c/s̄ that NormalizeCosts returned (with s̄ = mean(c)),
// into ∂L/∂c in place:
//
//	∂L/∂c = (g − ⟨g, c̃⟩/N) / s̄,   N = len(c).
func NormalizeCostsVJP(g, normalized []float64, mean float64) {
	var dot float64
	for i := range g {
		dot += g[i] * normalized[i]
	}
	shift := dot / float64(len(g))
	for i := range g {
		g[i] = (g[i] - shift) / mean
	}
}

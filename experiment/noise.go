package experiment

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
)

// labelNoiseSalt separates the label-noise generator from the episode's
// (which is seeded by the same repeat seed).
const labelNoiseSalt = 0x6e6f697365 // "noise"

// maxNoiseDraws bounds the redraws of FlipLabels when a draw empties a class.
const maxNoiseDraws = 1000

// FlipLabels applies symmetric label noise to an episode's support labels:
// round(rate·n) of the n labels, chosen uniformly without replacement, are
// each changed to one of the other ways−1 classes, uniformly. The draws
// come from a generator seeded by seed alone, so the same seed gives the
// same flips. A draw that would leave a class with no point is redrawn
// from the same generator (Algorithm 1 and the LFD need every class).
// It returns the noisy copy (y is not changed) and the flipped positions in
// increasing order. Only support (training) labels are meant to go through
// here; query labels stay the truth the accuracy is measured against.
func FlipLabels(y []int, ways int, rate float64, seed int64) (noisy, flipped []int, err error) {
	if !(rate >= 0 && rate < 1) {
		return nil, nil, fmt.Errorf("label noise: rate %v, want 0 ≤ rate < 1", rate)
	}
	if ways < 2 {
		return nil, nil, fmt.Errorf("label noise: %d classes, want ≥ 2", ways)
	}
	count := make([]int, ways)
	for i, l := range y {
		if l < 0 || l >= ways {
			return nil, nil, fmt.Errorf("label noise: label %d of point %d outside 0…%d", l, i, ways-1)
		}
		count[l]++
	}
	n := len(y)
	nf := int(math.Round(rate * float64(n)))
	if nf == 0 {
		return slices.Clone(y), []int{}, nil
	}
	rng := rand.New(rand.NewSource(seed ^ labelNoiseSalt))
	for range maxNoiseDraws {
		noisy = slices.Clone(y)
		c := slices.Clone(count)
		flipped = rng.Perm(n)[:nf]
		for _, i := range flipped {
			to := rng.Intn(ways - 1)
			if to >= y[i] {
				to++
			}
			noisy[i] = to
			c[y[i]]--
			c[to]++
		}
		if !slices.Contains(c, 0) {
			slices.Sort(flipped)
			return noisy, flipped, nil
		}
	}
	return nil, nil, fmt.Errorf("label noise: %d flips of %d labels empty a class in %d draws", nf, n, maxNoiseDraws)
}

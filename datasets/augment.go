package datasets

import (
	"fmt"
	"math"
	"math/rand"
)

// AugmentSettings describe the random image transformations applied to an
// episode's training samples during training (never to queries, never at
// evaluation). The zero value is no augmentation.
type AugmentSettings struct {
	// Shift is the largest translation in pixels: each image is padded
	// with Shift zero pixels on every side and a random H×W window is cut
	// out, i.e. moved by dy, dx ∈ {−Shift…Shift} with zeros shifted in.
	Shift int
	// Flip mirrors each image left–right with probability 1/2.
	Flip bool
}

// Enabled reports whether s changes any image.
func (s AugmentSettings) Enabled() bool { return s.Shift > 0 || s.Flip }

// Validate checks s against the image shape [C, H, W].
func (s AugmentSettings) Validate(shape []int) error {
	if s.Shift < 0 {
		return fmt.Errorf("augment: shift %d, want ≥ 0", s.Shift)
	}
	if !s.Enabled() {
		return nil
	}
	if len(shape) != 3 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 {
		return fmt.Errorf("augment: samples of shape %v are not images [C, H, W]", shape)
	}
	if s.Shift >= shape[1] || s.Shift >= shape[2] {
		return fmt.Errorf("augment: shift %d is not smaller than the %d×%d image", s.Shift, shape[1], shape[2])
	}
	return nil
}

// Augment writes a randomly transformed copy of the n images src (each of
// shape [C, H, W], row-major) to dst, which must have the same length.
// For each image in turn it draws, from rng, the vertical then the
// horizontal offset of the crop window (rng.Intn(2·Shift+1) each, when
// Shift > 0) and then whether to mirror it (rng.Intn(2) == 1, when Flip),
// so the result is a function of the images, s and the generator's state.
// The image is mirrored first and then shifted: output pixel (c, y, x) is
// mirrored(c, y+dy, x+dx), or 0 outside the image. The same transformation
// applies to every channel of an image.
func Augment(dst, src []float32, n int, shape []int, s AugmentSettings, rng *rand.Rand) error {
	if err := s.Validate(shape); err != nil {
		return err
	}
	if !s.Enabled() {
		if len(dst) != len(src) {
			return fmt.Errorf("augment: %d output values for %d input values", len(dst), len(src))
		}
		copy(dst, src)
		return nil
	}
	c, h, w := shape[0], shape[1], shape[2]
	size := c * h * w
	if n < 0 || len(src) != n*size || len(dst) != len(src) {
		return fmt.Errorf("augment: %d input and %d output values for %d images of shape %v", len(src), len(dst), n, shape)
	}
	for i := 0; i < n; i++ {
		dy, dx := 0, 0
		if s.Shift > 0 {
			dy = rng.Intn(2*s.Shift+1) - s.Shift
			dx = rng.Intn(2*s.Shift+1) - s.Shift
		}
		flip := s.Flip && rng.Intn(2) == 1
		shiftFlip(dst[i*size:(i+1)*size], src[i*size:(i+1)*size], c, h, w, dy, dx, flip)
	}
	return nil
}

// shiftFlip writes to out the image in (c planes of h×w) mirrored
// left–right when flip, then shifted: out(ch, y, x) = m(ch, y+dy, x+dx),
// 0 where y+dy or x+dx falls outside the image.
func shiftFlip(out, in []float32, c, h, w, dy, dx int, flip bool) {
	for ch := 0; ch < c; ch++ {
		plane, oplane := in[ch*h*w:(ch+1)*h*w], out[ch*h*w:(ch+1)*h*w]
		for y := 0; y < h; y++ {
			sy := y + dy
			orow := oplane[y*w : (y+1)*w]
			if sy < 0 || sy >= h {
				clear(orow)
				continue
			}
			row := plane[sy*w : (sy+1)*w]
			for x := 0; x < w; x++ {
				sx := x + dx
				if sx < 0 || sx >= w {
					orow[x] = 0
					continue
				}
				if flip {
					sx = w - 1 - sx
				}
				orow[x] = row[sx]
			}
		}
	}
}

// StandardizeSamples rescales each of the n samples of x (size values
// each) in place to mean 0 and standard deviation 1 over its own values.
// A constant sample becomes all zeros. It uses no other sample, so it
// applies to training and query samples alike.
func StandardizeSamples(x []float32, n, size int) error {
	if n < 0 || size < 1 || len(x) != n*size {
		return fmt.Errorf("standardize: %d values for %d samples of size %d", len(x), n, size)
	}
	for i := 0; i < n; i++ {
		s := x[i*size : (i+1)*size]
		var sum float64
		for _, v := range s {
			sum += float64(v)
		}
		mean := sum / float64(size)
		var ss float64
		for _, v := range s {
			d := float64(v) - mean
			ss += d * d
		}
		sd := math.Sqrt(ss / float64(size))
		inv := 0.0
		if sd > 0 {
			inv = 1 / sd
		}
		for j, v := range s {
			s[j] = float32((float64(v) - mean) * inv)
		}
	}
	return nil
}

// ChannelStats returns the mean and standard deviation of every channel
// over the n samples of x. shape is [C, H, W] (per channel, over all
// pixels of all samples) or [F] (per feature). A channel with standard
// deviation 0 gets 1, so that standardising it only centres it.
func ChannelStats(x []float32, n int, shape []int) (mean, sd []float64, err error) {
	c, plane, err := channels(shape)
	if err != nil {
		return nil, nil, err
	}
	if n < 1 || len(x) != n*c*plane {
		return nil, nil, fmt.Errorf("standardize: %d values for %d samples of shape %v", len(x), n, shape)
	}
	mean, sd = make([]float64, c), make([]float64, c)
	cnt := float64(n * plane)
	for i := 0; i < n; i++ {
		for ch := 0; ch < c; ch++ {
			for _, v := range x[(i*c+ch)*plane : (i*c+ch+1)*plane] {
				mean[ch] += float64(v)
			}
		}
	}
	for ch := range mean {
		mean[ch] /= cnt
	}
	for i := 0; i < n; i++ {
		for ch := 0; ch < c; ch++ {
			for _, v := range x[(i*c+ch)*plane : (i*c+ch+1)*plane] {
				d := float64(v) - mean[ch]
				sd[ch] += d * d
			}
		}
	}
	for ch := range sd {
		sd[ch] = math.Sqrt(sd[ch] / cnt)
		if !(sd[ch] > 0) {
			sd[ch] = 1
		}
	}
	return mean, sd, nil
}

// StandardizeChannels applies (v − mean[c]) / sd[c] in place to every value
// of channel (or feature) c of the n samples of x.
func StandardizeChannels(x []float32, n int, shape []int, mean, sd []float64) error {
	c, plane, err := channels(shape)
	if err != nil {
		return err
	}
	if n < 0 || len(x) != n*c*plane || len(mean) != c || len(sd) != c {
		return fmt.Errorf("standardize: %d values, %d means, %d deviations for %d samples of shape %v", len(x), len(mean), len(sd), n, shape)
	}
	for i := 0; i < n; i++ {
		for ch := 0; ch < c; ch++ {
			s := x[(i*c+ch)*plane : (i*c+ch+1)*plane]
			for j, v := range s {
				s[j] = float32((float64(v) - mean[ch]) / sd[ch])
			}
		}
	}
	return nil
}

// channels splits a sample shape into channels × values per channel:
// [C, H, W] → C, H·W; [F] → F, 1.
func channels(shape []int) (c, plane int, err error) {
	switch {
	case len(shape) == 3 && shape[0] > 0 && shape[1] > 0 && shape[2] > 0:
		return shape[0], shape[1] * shape[2], nil
	case len(shape) == 1 && shape[0] > 0:
		return shape[0], 1, nil
	}
	return 0, 0, fmt.Errorf("standardize: sample shape %v is neither [C, H, W] nor [F]", shape)
}

// RelevanceWeights returns one weight per value position of the n samples
// of x (size values each) from their labels 0…m−1: the square root of the
// correlation ratio η² = Σ_c n_c (μ_c − μ)² / Σ_i (x_i − μ)², the share of
// the position's variance over the samples that its class means explain.
// A weight lies in [0, 1]: 1 when the position is constant within every
// class and varies between them, 0 when the class means coincide or the
// position is constant over all n samples. Multiplying the values by
// these weights (ScaleValues) lets the positions that separate the
// training samples' classes dominate a Euclidean distance.
func RelevanceWeights(x []float32, n, size int, labels []int, m int) ([]float64, error) {
	if n < 1 || size < 1 || len(x) != n*size {
		return nil, fmt.Errorf("relevance: %d values for %d samples of size %d", len(x), n, size)
	}
	if len(labels) != n || m < 1 {
		return nil, fmt.Errorf("relevance: %d labels for %d samples of %d classes", len(labels), n, m)
	}
	count := make([]float64, m)
	for i, c := range labels {
		if c < 0 || c >= m {
			return nil, fmt.Errorf("relevance: label %d of sample %d, want 0…%d", c, i, m-1)
		}
		count[c]++
	}
	mean := make([]float64, size)
	classMean := make([]float64, m*size)
	for i, c := range labels {
		row := x[i*size : (i+1)*size]
		cm := classMean[c*size : (c+1)*size]
		for j, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("relevance: sample %d, value %d is %v", i, j, v)
			}
			mean[j] += float64(v)
			cm[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	between := make([]float64, size)
	for c := 0; c < m; c++ {
		if count[c] == 0 {
			continue
		}
		cm := classMean[c*size : (c+1)*size]
		for j := range cm {
			d := cm[j]/count[c] - mean[j]
			between[j] += count[c] * d * d
		}
	}
	total := make([]float64, size)
	for i := 0; i < n; i++ {
		for j, v := range x[i*size : (i+1)*size] {
			d := float64(v) - mean[j]
			total[j] += d * d
		}
	}
	w := make([]float64, size)
	for j := range w {
		if total[j] > 0 {
			w[j] = math.Sqrt(min(between[j]/total[j], 1))
		}
	}
	return w, nil
}

// ScaleValues multiplies value position j of each of the n samples of x
// (len(w) values each) by w[j], in place.
func ScaleValues(x []float32, n int, w []float64) error {
	size := len(w)
	if n < 0 || size < 1 || len(x) != n*size {
		return fmt.Errorf("relevance: %d values for %d samples of %d weights", len(x), n, size)
	}
	for i := 0; i < n; i++ {
		s := x[i*size : (i+1)*size]
		for j, v := range s {
			s[j] = float32(float64(v) * w[j])
		}
	}
	return nil
}

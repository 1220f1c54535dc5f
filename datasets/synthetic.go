package datasets

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
)

// SyntheticSettings controls the built-in synthetic data sets. Zero fields
// take the documented defaults of each generator; the same settings always
// give the same data set.
type SyntheticSettings struct {
	Classes  int     // number of classes
	PerClass int     // samples per class
	Noise    float64 // standard deviation of the Gaussian noise
	Size     int     // image side (SyntheticImages only)
	Seed     int64
}

// Limits of the synthetic generators.
const (
	maxSyntheticSamples = 1 << 22
	// SyntheticImageClasses is the number of distinct shapes SyntheticImages draws.
	SyntheticImageClasses = 10
)

func (s *SyntheticSettings) fill(classes, perClass int, noise float64) error {
	if s.Classes == 0 {
		s.Classes = classes
	}
	if s.PerClass == 0 {
		s.PerClass = perClass
	}
	if s.Noise == 0 {
		s.Noise = noise
	}
	if s.Classes < 1 {
		return fmt.Errorf("synthetic: %d classes", s.Classes)
	}
	if s.PerClass < 1 {
		return fmt.Errorf("synthetic: %d samples per class", s.PerClass)
	}
	if s.Classes > maxSyntheticSamples/s.PerClass {
		return fmt.Errorf("synthetic: %d classes × %d samples exceeds %d samples", s.Classes, s.PerClass, maxSyntheticSamples)
	}
	if s.Noise < 0 || math.IsNaN(s.Noise) || math.IsInf(s.Noise, 0) {
		return fmt.Errorf("synthetic: noise %v, want a finite value ≥ 0", s.Noise)
	}
	return nil
}

func numberedClasses(prefix string, m int) []string {
	c := make([]string, m)
	for i := range c {
		c[i] = prefix + strconv.Itoa(i)
	}
	return c
}

// SyntheticGauss returns M 2-D Gaussian classes (default M = 2, 500 per
// class): class m has mean 2·(cos 2πm/M, sin 2πm/M) and isotropic standard
// deviation Noise (default 1), so neighbouring classes overlap. Shape [2];
// natural order class 0's samples, then class 1's, and so on.
func SyntheticGauss(s SyntheticSettings) (*Dataset, error) {
	if err := s.fill(2, 500, 1); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(s.Seed))
	d := &Dataset{Name: "synthetic-gauss", Shape: []int{2}, Classes: numberedClasses("g", s.Classes)}
	for m := 0; m < s.Classes; m++ {
		a := 2 * math.Pi * float64(m) / float64(s.Classes)
		mx, my := 2*math.Cos(a), 2*math.Sin(a)
		for i := 0; i < s.PerClass; i++ {
			d.X = append(d.X, float32(mx+s.Noise*rng.NormFloat64()), float32(my+s.Noise*rng.NormFloat64()))
			d.Labels = append(d.Labels, m)
		}
	}
	return d, nil
}

// SwissRoll returns the two-class "Swiss roll" of interleaved spirals in
// 2-D (default 500 per class): with t = 1.5π(1 + 2u), u uniform on [0, 1],
// class 0 is (t cos t, t sin t)/(4.5π) and class 1 the same spiral turned by
// π, i.e. −(t cos t, t sin t)/(4.5π); each coordinate gets Gaussian noise of
// standard deviation Noise (default 0.05; the arms are about 0.22 apart).
// Classes must be 0 or 2. Shape [2], class-major order.
func SwissRoll(s SyntheticSettings) (*Dataset, error) {
	if s.Classes != 0 && s.Classes != 2 {
		return nil, fmt.Errorf("synthetic-swissroll: %d classes, the Swiss roll has 2", s.Classes)
	}
	if err := s.fill(2, 500, 0.05); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(s.Seed))
	d := &Dataset{Name: "synthetic-swissroll", Shape: []int{2}, Classes: []string{"roll0", "roll1"}}
	const scale = 4.5 * math.Pi
	for m := 0; m < 2; m++ {
		sign := 1.0
		if m == 1 {
			sign = -1
		}
		for i := 0; i < s.PerClass; i++ {
			t := 1.5 * math.Pi * (1 + 2*rng.Float64())
			x := sign*t*math.Cos(t)/scale + s.Noise*rng.NormFloat64()
			y := sign*t*math.Sin(t)/scale + s.Noise*rng.NormFloat64()
			d.X = append(d.X, float32(x), float32(y))
			d.Labels = append(d.Labels, m)
		}
	}
	return d, nil
}

// syntheticShapeNames name the classes of SyntheticImages, in label order.
var syntheticShapeNames = [SyntheticImageClasses]string{
	"ring", "vbar", "hbar", "plus", "cross", "square", "block", "disc", "triangle", "dots",
}

// inShape reports whether the point (x, y), measured from the shape's centre
// in pixels (y downwards), is inked for shape k of half-size s and stroke
// half-width w.
func inShape(k int, x, y, s, w float64) bool {
	ax, ay := math.Abs(x), math.Abs(y)
	r := math.Hypot(x, y)
	switch k {
	case 0: // ring
		return math.Abs(r-s) <= w
	case 1: // vertical bar
		return ax <= w && ay <= s
	case 2: // horizontal bar
		return ay <= w && ax <= s
	case 3: // plus
		return (ax <= w && ay <= s) || (ay <= w && ax <= s)
	case 4: // diagonal cross
		return ax <= 0.8*s && ay <= 0.8*s && (math.Abs(x-y) <= w*math.Sqrt2 || math.Abs(x+y) <= w*math.Sqrt2)
	case 5: // square outline
		return math.Abs(math.Max(ax, ay)-0.8*s) <= w
	case 6: // filled square
		return math.Max(ax, ay) <= 0.6*s
	case 7: // filled disc
		return r <= 0.7*s
	case 8: // filled triangle, apex up
		return y >= -s && y <= 0.8*s && ax <= (y+s)/2
	default: // two dots side by side
		return math.Hypot(ax-0.5*s, y) <= 0.35*s
	}
}

// SyntheticImages returns small grey images of class-dependent shapes
// (default 10 classes, 100 per class, 28×28): ring, vertical bar,
// horizontal bar, plus, diagonal cross, square outline, filled square, disc,
// triangle, two dots — at most 10 classes, taken in that order. Each image
// jitters the shape's centre by up to ±Size/8 pixels, its half-size between
// 0.22·Size and 0.32·Size, its stroke and its ink level (0.7…1), then adds
// Gaussian pixel noise of standard deviation Noise (default 0.1) and clips to
// [0, 1]. Shape [1, Size, Size] (Size ≥ 8), class-major order. It needs no
// files, so every command can be tried without downloading anything.
func SyntheticImages(s SyntheticSettings) (*Dataset, error) {
	if s.Size == 0 {
		s.Size = 28
	}
	if s.Size < 8 || s.Size > 256 {
		return nil, fmt.Errorf("synthetic-images: size %d, want 8…256", s.Size)
	}
	if s.Classes > SyntheticImageClasses {
		return nil, fmt.Errorf("synthetic-images: %d classes, at most %d shapes exist", s.Classes, SyntheticImageClasses)
	}
	if err := s.fill(SyntheticImageClasses, 100, 0.1); err != nil {
		return nil, err
	}
	if s.Classes*s.PerClass > maxSyntheticSamples/(s.Size*s.Size) {
		return nil, fmt.Errorf("synthetic-images: %d images of %d×%d is too large", s.Classes*s.PerClass, s.Size, s.Size)
	}
	rng := rand.New(rand.NewSource(s.Seed))
	side := s.Size
	n := s.Classes * s.PerClass
	d := &Dataset{
		Name:    "synthetic-images",
		Shape:   []int{1, side, side},
		X:       make([]float32, n*side*side),
		Labels:  make([]int, 0, n),
		Classes: append([]string(nil), syntheticShapeNames[:s.Classes]...),
	}
	S := float64(side)
	i := 0
	for m := 0; m < s.Classes; m++ {
		for k := 0; k < s.PerClass; k++ {
			cx := S/2 + (rng.Float64()*2-1)*S/8
			cy := S/2 + (rng.Float64()*2-1)*S/8
			half := S * (0.22 + 0.10*rng.Float64())
			w := math.Max(0.75, S*(0.04+0.03*rng.Float64()))
			ink := 0.7 + 0.3*rng.Float64()
			img := d.X[i*side*side : (i+1)*side*side]
			for py := 0; py < side; py++ {
				for px := 0; px < side; px++ {
					v := 0.0
					if inShape(m, float64(px)+0.5-cx, float64(py)+0.5-cy, half, w) {
						v = ink
					}
					v += s.Noise * rng.NormFloat64()
					img[py*side+px] = float32(math.Min(1, math.Max(0, v)))
				}
			}
			d.Labels = append(d.Labels, m)
			i++
		}
	}
	return d, nil
}

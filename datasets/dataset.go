// Package datasets reads the data sets of the Dr.k-NN paper in their
// upstream formats (MNIST IDX, CIFAR-10 binary batches, Omniglot folders and
// zips, UCI Lung Cancer, COVID-CT image folders, miniImageNet CSV layout),
// provides built-in synthetic data, and draws the few-shot episodes and the
// mini-sets of Algorithm 1.
//
// Every reader returns a *Dataset: samples stored contiguously as float32,
// pixels scaled to [0, 1], labels 0…len(Classes)−1 in the data set's natural
// order (the order the reader documents), so that indices reported by the
// samplers can be checked independently.
package datasets

import "fmt"

// Dataset is an in-memory labelled data set.
type Dataset struct {
	Name    string
	Shape   []int     // shape of one sample: [C, H, W] for images, [F] for feature rows
	X       []float32 // N × prod(Shape), row-major, one sample after another
	Labels  []int     // length N, values 0…len(Classes)−1
	Classes []string  // class names, index = label
	Files   []string  // optional: source file (or file:record) of each sample
}

// Len returns the number of samples.
func (d *Dataset) Len() int { return len(d.Labels) }

// SampleSize returns the number of values in one sample.
func (d *Dataset) SampleSize() int {
	s := 1
	for _, v := range d.Shape {
		s *= v
	}
	return s
}

// Sample returns sample i (a view into X, not a copy).
func (d *Dataset) Sample(i int) []float32 {
	s := d.SampleSize()
	return d.X[i*s : (i+1)*s]
}

// Validate checks internal consistency: sizes agree, labels are in range.
func (d *Dataset) Validate() error {
	s := d.SampleSize()
	if s <= 0 {
		return fmt.Errorf("dataset %s: bad sample shape %v", d.Name, d.Shape)
	}
	if len(d.X) != s*len(d.Labels) {
		return fmt.Errorf("dataset %s: %d values for %d samples of size %d", d.Name, len(d.X), len(d.Labels), s)
	}
	for i, y := range d.Labels {
		if y < 0 || y >= len(d.Classes) {
			return fmt.Errorf("dataset %s: sample %d has label %d outside 0…%d", d.Name, i, y, len(d.Classes)-1)
		}
	}
	if d.Files != nil && len(d.Files) != len(d.Labels) {
		return fmt.Errorf("dataset %s: %d file names for %d samples", d.Name, len(d.Files), len(d.Labels))
	}
	return nil
}

// Subset returns a new Dataset holding the samples at idx, in that order.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := d.SampleSize()
	out := &Dataset{Name: d.Name, Shape: append([]int(nil), d.Shape...), Classes: d.Classes,
		X: make([]float32, 0, len(idx)*s), Labels: make([]int, 0, len(idx))}
	if d.Files != nil {
		out.Files = make([]string, 0, len(idx))
	}
	for _, i := range idx {
		out.X = append(out.X, d.Sample(i)...)
		out.Labels = append(out.Labels, d.Labels[i])
		if d.Files != nil {
			out.Files = append(out.Files, d.Files[i])
		}
	}
	return out
}

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

import (
	"fmt"
	"strings"
)

// Dataset is an in-memory labelled data set.
type Dataset struct {
	Name    string
	Shape   []int     // shape of one sample: [C, H, W] for images, [F] for feature rows
	X       []float32 // N × prod(Shape), row-major, one sample after another
	Labels  []int     // length N, values 0…len(Classes)−1
	Classes []string  // class names, index = label
	Files   []string  // optional: source file (or file:record) of each sample
	// Test, for a data set read from a split folder (imagefolder with train/
	// and test/), is true for the samples of the test part; nil otherwise.
	Test []bool
	// Features names the columns of feature rows (csv), one per value of a
	// sample; nil when the columns have no names.
	Features []string
	// ImageShape, for images flattened into feature rows (an MLP on
	// images: Shape is then [C·H·W]), is the images' [C, H, W], so that
	// a model trained on them can still be given images; nil otherwise.
	ImageShape []int
	// Report says what the reader skipped or could not fill in, for the
	// caller to log (library code never prints); nil when there is nothing
	// to say. It describes the data set as read, not its subsets.
	Report *Report
}

// Report is what a reader passed over or left open, for the caller to log.
type Report struct {
	Hidden   int // hidden files and folders skipped (".DS_Store", ".git", "__MACOSX", …)
	NotImage int // files skipped because they are not images (by content; no image extension)
	Loose    int // files outside any class folder, skipped
	// LinkLoops counts symbolic links to a folder they are inside of
	// (followed, they would repeat without end), skipped; other links to
	// folders are followed.
	LinkLoops int
	// Channels says how an image folder's channel count was chosen.
	Channels string
	// TrainOnly and TestOnly list, for a split folder, the classes that
	// have samples in one part only.
	TrainOnly, TestOnly []string
	// Missing lists the cells a table reader read as missing (NaN), in
	// file order; see Impute.
	Missing []Cell
}

// Cell locates one value of a table: Row is the sample index (natural
// order), Line the line of the file it comes from (1 = the header), Column
// the column's name.
type Cell struct {
	Row, Line int
	Column    string
}

// Summary returns the report as one line ("" when there is nothing to
// report), e.g. "skipped 2 hidden, 1 non-image file; channels: RGB".
func (r *Report) Summary() string {
	if r == nil {
		return ""
	}
	var parts []string
	var skipped []string
	for _, c := range []struct {
		n    int
		what string
	}{{r.Hidden, "hidden"}, {r.NotImage, "non-image"}, {r.Loose, "outside class folders"}} {
		if c.n > 0 {
			skipped = append(skipped, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(skipped) > 0 {
		parts = append(parts, "skipped "+strings.Join(skipped, ", ")+" (files)")
	}
	if r.LinkLoops > 0 {
		parts = append(parts, fmt.Sprintf("skipped %d symbolic link(s) to a folder they are in (loops)", r.LinkLoops))
	}
	if r.Channels != "" {
		parts = append(parts, "channels: "+r.Channels)
	}
	if len(r.TrainOnly) > 0 {
		parts = append(parts, "classes only in train/: "+strings.Join(r.TrainOnly, ", "))
	}
	if len(r.TestOnly) > 0 {
		parts = append(parts, "classes only in test/: "+strings.Join(r.TestOnly, ", "))
	}
	if n := len(r.Missing); n > 0 {
		c := r.Missing[0]
		parts = append(parts, fmt.Sprintf("%d missing cells (first: line %d, column %q)", n, c.Line, c.Column))
	}
	return strings.Join(parts, "; ")
}

// Split returns the indices of the training and of the test samples of a
// data set read from a split folder (Test not nil), in natural order; for
// any other data set every index is a training index.
func (d *Dataset) Split() (train, test []int) {
	for i := range d.Labels {
		if d.Test != nil && d.Test[i] {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	return train, test
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

// Float64 returns the samples X widened to float64 (a new N×SampleSize
// slice), the form the classifiers of package eval take.
func (d *Dataset) Float64() []float64 {
	out := make([]float64, len(d.X))
	for i, v := range d.X {
		out[i] = float64(v)
	}
	return out
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
	if d.Test != nil && len(d.Test) != len(d.Labels) {
		return fmt.Errorf("dataset %s: %d train/test marks for %d samples", d.Name, len(d.Test), len(d.Labels))
	}
	if d.Features != nil && (len(d.Shape) != 1 || len(d.Features) != d.Shape[0]) {
		return fmt.Errorf("dataset %s: %d feature names for samples of shape %v", d.Name, len(d.Features), d.Shape)
	}
	return nil
}

// Indices returns index after checking that every entry is a sample of d,
// or every sample's index (0…Len−1) when index is nil.
func (d *Dataset) Indices(index []int) ([]int, error) {
	if index == nil {
		index = make([]int, d.Len())
		for i := range index {
			index[i] = i
		}
	}
	for _, i := range index {
		if i < 0 || i >= d.Len() {
			return nil, fmt.Errorf("sample %d outside 0…%d", i, d.Len()-1)
		}
	}
	return index, nil
}

// Subset returns a new Dataset holding the samples at idx, in that order.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := d.SampleSize()
	out := &Dataset{Name: d.Name, Shape: append([]int(nil), d.Shape...), Classes: d.Classes, Features: d.Features, ImageShape: d.ImageShape,
		X: make([]float32, 0, len(idx)*s), Labels: make([]int, 0, len(idx))}
	if d.Files != nil {
		out.Files = make([]string, 0, len(idx))
	}
	if d.Test != nil {
		out.Test = make([]bool, 0, len(idx))
	}
	for _, i := range idx {
		out.X = append(out.X, d.Sample(i)...)
		out.Labels = append(out.Labels, d.Labels[i])
		if d.Files != nil {
			out.Files = append(out.Files, d.Files[i])
		}
		if d.Test != nil {
			out.Test = append(out.Test, d.Test[i])
		}
	}
	return out
}

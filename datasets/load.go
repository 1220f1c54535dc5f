package datasets

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/drknn/drknn/internal/datadir"
)

// Options are the reader settings Load passes on. Each field applies only
// to the data sets named in its comment; the others ignore it.
type Options struct {
	// Grey: cifar10, miniimagenet and imagefolder return one BT.601 luma
	// channel (Shape [1, H, W]); the other image sets are grey already. For
	// imagefolder false means automatic: grey when every image is grey,
	// else RGB (ImageFolderOptions.Grey).
	Grey bool
	// Size is the image side: synthetic-images (default 28), omniglot
	// (0 = native 105; overrides Omniglot.Size when > 0), covid-ct and
	// miniimagenet (their readers' defaults when 0), imagefolder (0 = the
	// images' common native size; else Catmull-Rom resampling to Size×Size).
	Size int
	// Split: miniimagenet "train", "val" or "test"; omniglot a
	// comma-separated list of sets ("background,evaluation"), overriding
	// Omniglot.Sets; mnist "test" (t10k), "train" or "all" (train then
	// t10k), "" = the test split when present, else train (ReadMNISTSplit);
	// imagefolder "train" or "test" reads one part of a split folder, ""
	// both (marked in Dataset.Test).
	Split string
	// Label: csv, the name of the label column ("" = the last column).
	Label string
	// Missing: csv (and any data set with NaN values), what to do with
	// missing values: "error" or "" (Load fails naming the first one),
	// "mean" or "mode" (Load keeps them as NaN and lists them in
	// Dataset.Report.Missing; fill them per episode with Impute, from the
	// episode's training samples only).
	Missing string
	// Features: covid-ct "histogram" (FeaturesHistogram) gives each image
	// as the HistogramBins-bin histogram of its full-resolution luma
	// (ReadCOVIDCTHistogram, Shape [64]) instead of its pixels; "" = pixels.
	Features string
	// OneHot: lung-cancer encodes each nominal attribute as 4 indicator
	// features (Shape [224], see LungOneHot) instead of value/3.
	OneHot bool
	// Omniglot holds the remaining Omniglot settings.
	Omniglot OmniglotOptions
	// Synthetic data sets: classes, samples per class, noise standard
	// deviation (0 → each generator's default) and seed.
	Classes  int
	PerClass int
	Noise    float64
	Seed     int64
}

// loaders maps each data set name to its reader and the sub-folder of the
// shared data folder where its upstream files conventionally live ("" for
// generated data).
var loaders = map[string]struct {
	subdir string
	load   func(dir string, o Options) (*Dataset, error)
}{
	"imagefolder": {"", func(dir string, o Options) (*Dataset, error) {
		return ReadImageFolder(DirFS(dir), dir, ImageFolderOptions{Grey: o.Grey, Size: o.Size, Part: o.Split})
	}},
	"csv":     {"", func(dir string, o Options) (*Dataset, error) { return ReadCSV(dir, CSVOptions{Label: o.Label}) }},
	"npy":     {"", func(dir string, o Options) (*Dataset, error) { return ReadNPY(dir) }},
	"mnist":   {"mnist", func(dir string, o Options) (*Dataset, error) { return ReadMNISTSplit(dir, o.Split) }},
	"cifar10": {"cifar-10", func(dir string, o Options) (*Dataset, error) { return ReadCIFAR10(dir, CIFAROptions{Grey: o.Grey}) }},
	"lung-cancer": {"lung-cancer", func(dir string, o Options) (*Dataset, error) {
		d, err := ReadLungCancer(dir)
		if err != nil || !o.OneHot {
			return d, err
		}
		return LungOneHot(d)
	}},
	"synthetic-gauss": {"", func(_ string, o Options) (*Dataset, error) {
		return SyntheticGauss(SyntheticSettings{Classes: o.Classes, PerClass: o.PerClass, Noise: o.Noise, Seed: o.Seed})
	}},
	"synthetic-swissroll": {"", func(_ string, o Options) (*Dataset, error) {
		return SwissRoll(SyntheticSettings{Classes: o.Classes, PerClass: o.PerClass, Noise: o.Noise, Seed: o.Seed})
	}},
	"synthetic-images": {"", func(_ string, o Options) (*Dataset, error) {
		return SyntheticImages(SyntheticSettings{Classes: o.Classes, PerClass: o.PerClass, Noise: o.Noise, Size: o.Size, Seed: o.Seed})
	}},
	"omniglot": {"omniglot", func(dir string, o Options) (*Dataset, error) {
		oo := o.Omniglot
		if o.Size > 0 {
			oo.Size = o.Size
		}
		if o.Split != "" {
			oo.Sets = nil
			for _, s := range strings.Split(o.Split, ",") {
				if s = strings.TrimSpace(s); s != "" {
					oo.Sets = append(oo.Sets, s)
				}
			}
		}
		return ReadOmniglot(dir, oo)
	}},
	"covid-ct": {"covid-ct", func(dir string, o Options) (*Dataset, error) {
		switch o.Features {
		case "":
			return ReadCOVIDCT(dir, o.Size)
		case FeaturesHistogram:
			return ReadCOVIDCTHistogram(dir, HistogramBins)
		}
		return nil, fmt.Errorf("covid-ct: features %q, want %q or none", o.Features, FeaturesHistogram)
	}},
	"miniimagenet": {"miniimagenet", func(dir string, o Options) (*Dataset, error) {
		if o.Split == "" {
			return nil, fmt.Errorf("miniimagenet: no split chosen (Options.Split: train, val or test)")
		}
		d, err := ReadMiniImageNet(dir, o.Split, o.Size)
		if err != nil || !o.Grey {
			return d, err
		}
		return d.Grey()
	}},
}

// ownData are the kinds that read the user's own files from data_dir
// (which must be given): image folders, CSV tables and NumPy arrays.
var ownData = map[string]bool{"imagefolder": true, "csv": true, "npy": true}

// OwnData reports whether name is a kind of the user's own data
// (imagefolder, csv, npy): its folder or file must be given explicitly —
// there is no conventional place under the data root.
func OwnData(name string) bool { return ownData[name] }

// Names returns the data set names Load accepts, sorted.
func Names() []string {
	out := make([]string, 0, len(loaders))
	for n := range loaders {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Synthetic reports whether name is a generated data set (no files needed).
func Synthetic(name string) bool {
	l, ok := loaders[name]
	return ok && l.subdir == "" && !ownData[name]
}

// Subdir returns the folder, relative to a data root laid out like the
// project's shared data folder, that holds name's files ("mnist",
// "cifar-10", "lung-cancer", "omniglot", "covid-ct", "miniimagenet"), and ""
// for synthetic or unknown names.
func Subdir(name string) string { return loaders[name].subdir }

// Load reads the data set called name from the folder dir (ignored for the
// synthetic-* data sets) with the reader settings in opts, and validates the
// result. Names: mnist, cifar10, lung-cancer, omniglot, covid-ct,
// miniimagenet, synthetic-gauss, synthetic-swissroll, synthetic-images, and
// for the user's own data imagefolder (ReadImageFolder), csv (ReadCSV) and
// npy (ReadNPY). Errors wrap ErrNotFound or ErrCorrupt where the data is
// missing or broken.
func Load(name, dir string, opts Options) (*Dataset, error) {
	l, ok := loaders[name]
	if !ok {
		return nil, fmt.Errorf("unknown data set %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if (l.subdir != "" || ownData[name]) && dir == "" {
		return nil, fmt.Errorf("%s: no data folder given", name)
	}
	if m := opts.Missing; m != "" && m != ImputeError && m != ImputeMean && m != ImputeMode {
		return nil, fmt.Errorf("%s: missing values: unknown mode %q (want error, mean or mode)", name, m)
	}
	d, err := l.load(dir, opts)
	if err != nil {
		var fix saysFix // a partial download, say: the reader said what to do
		if errors.Is(err, ErrNotFound) && !errors.As(err, &fix) {
			return nil, fmt.Errorf("%w (%s)", err, howToGet(name, l.subdir))
		}
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, corruptf("%w", err)
	}
	if opts.Missing == "" || opts.Missing == ImputeError {
		if _, err := Impute(d, nil, ImputeError); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// howToGet says how to make a missing data set available.
func howToGet(name, subdir string) string {
	switch name {
	case "mnist", "cifar10", "omniglot", "lung-cancer", "covid-ct":
		return fmt.Sprintf("set data_dir, or %s to a folder holding %s/, or download it: drknn-data get %s", datadir.EnvVar, subdir, name)
	case "miniimagenet":
		return "point data_dir at a miniImageNet folder (images/ and split CSVs); it cannot be downloaded by drknn-data"
	}
	return "check data_dir"
}

// Grey returns a copy of an RGB image data set (Shape [3, H, W]) reduced to
// ITU-R BT.601 luma 0.299R + 0.587G + 0.114B, Shape [1, H, W]. A data set
// that already has one channel is returned as is; any other shape is an
// error.
func (d *Dataset) Grey() (*Dataset, error) {
	if len(d.Shape) == 3 && d.Shape[0] == 1 {
		return d, nil
	}
	if len(d.Shape) != 3 || d.Shape[0] != 3 {
		return nil, fmt.Errorf("dataset %s: cannot make shape %v grey (want [3 H W])", d.Name, d.Shape)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	plane := d.Shape[1] * d.Shape[2]
	out := &Dataset{Name: d.Name, Shape: []int{1, d.Shape[1], d.Shape[2]}, Classes: d.Classes,
		Labels: append([]int(nil), d.Labels...), X: make([]float32, d.Len()*plane),
		Test: append([]bool(nil), d.Test...), Report: d.Report}
	if d.Test == nil {
		out.Test = nil
	}
	if d.Files != nil {
		out.Files = append([]string(nil), d.Files...)
	}
	for i := 0; i < d.Len(); i++ {
		src := d.Sample(i)
		dst := out.X[i*plane : (i+1)*plane]
		for p := range dst {
			dst[p] = 0.299*src[p] + 0.587*src[plane+p] + 0.114*src[2*plane+p]
		}
	}
	return out, nil
}

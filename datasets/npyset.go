package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/drknn/drknn/internal/npy"
)

// NumPy data set files, in the folder ReadNPY reads.
const (
	NPYFeatures = "X.npy"       // n×… samples
	NPYLabels   = "y.npy"       // n integer labels
	NPYClasses  = "classes.txt" // optional: one class name a line
)

// ReadNPY reads a data set saved with NumPy: dir/X.npy holds the n samples
// (any rank ≥ 1, C or Fortran order), dir/y.npy their n integer labels
// (int8…int64 or uint8…uint64), and optionally dir/classes.txt the class
// names, one a line (blank lines at the end ignored).
//
// Values: float32 and float64 samples are kept as they are (converted to
// float32; NaN, ±Inf or values beyond float32 are errors); uint8 samples
// are pixel values and become v/255. Other integer dtypes are converted as
// numbers. Shape of one sample: X's shape without its first dimension —
// [F] for feature rows (a 1-d X gives [1]), [1, H, W] for n×H×W (grey
// images), [C, H, W] for n×C×H×W; an n×H×W×C array with C of 1 or 3 (and H,
// W not) is taken for channels-last images and transposed to [C, H, W]
// (said in Report.Channels); an n×H×W×4 array (H not 1, 3 or 4) is refused
// as RGBA channels-last images.
//
// Labels: with classes.txt, y must use exactly the values 0…K−1 for its K
// names; without it the distinct values of y, sorted, are the classes (their
// decimal forms the names) and labels are their ranks. Natural order: the
// rows of X; Files holds "X.npy:ROW".
func ReadNPY(dir string) (*Dataset, error) {
	xPath, yPath := filepath.Join(dir, NPYFeatures), filepath.Join(dir, NPYLabels)
	for _, p := range []string{xPath, yPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, classify(fmt.Errorf("npy: %w", err))
		}
	}
	xa, err := npy.Read(xPath)
	if err != nil {
		return nil, classify(err)
	}
	ya, err := npy.ReadInts(yPath)
	if err != nil {
		return nil, classify(err)
	}
	if err := npyRows(xa, xPath); err != nil {
		return nil, err
	}
	n := xa.Shape[0]
	if len(ya.Shape) != 1 || ya.Shape[0] != n {
		return nil, corruptf("npy: %s: shape %v, want (%d,): one label per row of %s", yPath, ya.Shape, n, NPYFeatures)
	}
	yv, err := ya.Int64()
	if err != nil {
		return nil, corruptf("npy: %s: %w", yPath, err)
	}
	x, shape, note, err := npySamples(xa, xPath, true)
	if err != nil {
		return nil, err
	}
	rep := &Report{Channels: note}
	d := &Dataset{Name: "npy", Shape: shape, X: x, Labels: make([]int, n), Files: make([]string, n)}
	if rep.Channels != "" {
		d.Report = rep
	}
	for i := range d.Files {
		d.Files[i] = NPYFeatures + ":" + strconv.Itoa(i)
	}
	names, err := readClassNames(filepath.Join(dir, NPYClasses))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		distinct := slices.Compact(slices.Sorted(slices.Values(yv)))
		for _, v := range distinct {
			d.Classes = append(d.Classes, strconv.FormatInt(v, 10))
		}
		for i, v := range yv {
			d.Labels[i], _ = slices.BinarySearch(distinct, v)
		}
	case err != nil:
		return nil, classify(fmt.Errorf("npy: %w", err))
	default:
		seen := make([]bool, len(names))
		for i, v := range yv {
			if v < 0 || v >= int64(len(names)) {
				return nil, corruptf("npy: %s: label %d of row %d is outside 0…%d (%s names %d classes)", yPath, v, i, len(names)-1, NPYClasses, len(names))
			}
			d.Labels[i] = int(v)
			seen[v] = true
		}
		if k := slices.Index(seen, false); k >= 0 {
			return nil, corruptf("npy: %s names %d classes but %s never uses label %d (%q)", NPYClasses, len(names), yPath, k, names[k])
		}
		d.Classes = names
	}
	if err := d.Validate(); err != nil {
		return nil, corruptf("npy: %w", err)
	}
	return d, nil
}

// npySamples converts the n×… array xa read from path into samples as
// ReadNPY documents (uint8 pixels / 255; [F], [1, H, W] or [C, H, W];
// channels-last images transposed, which note says). With rejectNonFinite
// a NaN or ±Inf value (or a float64 beyond the float32 range) is an error;
// otherwise they stay (NaN, ±Inf), for the caller to judge sample by
// sample.
func npySamples(xa *npy.Array, path string, rejectNonFinite bool) (x []float32, shape []int, note string, err error) {
	if err := npyRows(xa, path); err != nil {
		return nil, nil, "", err
	}
	n := xa.Shape[0]
	if x, err = xa.Float32(rejectNonFinite); err != nil {
		return nil, nil, "", corruptf("npy: %s: %w", path, err)
	}
	if xa.Kind == npy.Uint && xa.Size == 1 {
		for i, v := range x {
			x[i] = byteScale[int(v)]
		}
	}
	shape = slices.Clone(xa.Shape[1:])
	switch len(shape) {
	case 0:
		shape = []int{1}
	case 2:
		shape = []int{1, shape[0], shape[1]}
	case 3:
		if shape[2] == 4 && shape[0] != 1 && shape[0] != 3 && shape[0] != 4 {
			// RGBA channels-last: read as 4×… it would be a C×H×W array
			// of the wrong sizes, silently
			return nil, nil, "", corruptf("npy: %s: shape %v looks like n×H×W×4 RGBA images; drop the alpha channel (X[..., :3]) or save channels-first n×C×H×W", path, xa.Shape)
		}
		if c := shape[2]; (c == 1 || c == 3) && shape[0] != 1 && shape[0] != 3 {
			x = channelsFirst(x, n, shape[0], shape[1], c)
			shape = []int{c, shape[0], shape[1]}
			note = fmt.Sprintf("%s is n×H×W×C (C = %d): transposed to C×H×W", filepath.Base(path), c)
		}
	}
	for _, s := range shape {
		if s < 1 {
			return nil, nil, "", corruptf("npy: %s: shape %v has an empty dimension", path, xa.Shape)
		}
	}
	return x, shape, note, nil
}

// npyRows refuses an array of samples read from path that is not n×…
// with n ≥ 1: a scalar, or a file that holds no rows (in the words every
// reader of inputs uses: "PATH holds no rows").
func npyRows(xa *npy.Array, path string) error {
	switch {
	case len(xa.Shape) < 1:
		return corruptf("npy: %s: shape %v (a scalar), want n×… with n ≥ 1 samples", path, xa.Shape)
	case xa.Shape[0] < 1:
		return corruptf("npy: %s holds no rows (shape %v); want n×… with n ≥ 1 samples", path, xa.Shape)
	}
	return nil
}

// NonFinite is a value of a sample that is not a finite float32, as the
// file holds it (1e+300 in a float64 file, not the +Inf it rounds to), and
// its index within the sample in the file's order ("3"; "(0, 1, 2)" for an
// H×W×C image, which is transposed for the model).
type NonFinite struct {
	Index string
	Value float64
}

// ReadNPYSamples reads a .npy file of n samples (n×…) exactly as ReadNPY
// reads X.npy — uint8 pixels scaled to [0, 1], n×H×W as [1, H, W],
// channels-last images transposed — for tools that classify new samples
// with a model trained on NumPy data. NaN values are kept (missing values
// for the caller to fill or refuse), and so are ±Inf (values beyond the
// float32 range become ±Inf), for the caller to refuse sample by sample:
// nonFinite[i] is sample i's first such value as the file holds it and
// where it is; samples without one are not in it.
func ReadNPYSamples(path string) (x []float32, n int, shape []int, nonFinite map[int]NonFinite, err error) {
	xa, err := npy.Read(path)
	if err != nil {
		return nil, 0, nil, nil, classify(err)
	}
	if x, shape, _, err = npySamples(xa, path, false); err != nil {
		return nil, 0, nil, nil, err
	}
	n = xa.Shape[0]
	size := len(x) / n
	for i := 0; i < n; i++ {
		for j := i * size; j < (i+1)*size; j++ {
			if !math.IsInf(float64(x[j]), 0) {
				continue
			}
			// x may be transposed: find the value in the file's order
			for k := i * size; k < (i+1)*size; k++ {
				if f := xa.Float64(k); !math.IsNaN(f) && math.IsInf(float64(float32(f)), 0) {
					if nonFinite == nil {
						nonFinite = map[int]NonFinite{}
					}
					nonFinite[i] = NonFinite{npy.MultiIndex(k-i*size, xa.Shape[1:]), f}
					break
				}
			}
			break
		}
	}
	return x, n, shape, nonFinite, nil
}

// readClassNames reads one class name a line (surrounding spaces trimmed;
// blank lines at the end ignored). An empty or repeated name is an error.
func readClassNames(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		names = append(names, strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff")))
	}
	if err := sc.Err(); err != nil {
		return nil, corruptf("%s: %w", p, err)
	}
	for len(names) > 0 && names[len(names)-1] == "" {
		names = names[:len(names)-1]
	}
	if len(names) == 0 {
		return nil, corruptf("%s: no class names", p)
	}
	seen := map[string]int{}
	for i, n := range names {
		if n == "" {
			return nil, corruptf("%s: line %d is empty (one class name a line)", p, i+1)
		}
		if j, dup := seen[n]; dup {
			return nil, corruptf("%s: lines %d and %d both name %q", p, j+1, i+1, n)
		}
		seen[n] = i
	}
	return names, nil
}

// channelsFirst reorders n images from H×W×C to C×H×W.
func channelsFirst(x []float32, n, h, w, c int) []float32 {
	out := make([]float32, len(x))
	s := h * w * c
	for i := 0; i < n; i++ {
		src, dst := x[i*s:(i+1)*s], out[i*s:(i+1)*s]
		for p := 0; p < h*w; p++ {
			for k := 0; k < c; k++ {
				dst[k*h*w+p] = src[p*c+k]
			}
		}
	}
	return out
}

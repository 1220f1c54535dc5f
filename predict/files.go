package predict

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	_ "image/gif"  // registered for image.DecodeConfig: the formats the imagefolder reader decodes
	_ "image/jpeg" // registered for image.DecodeConfig
	_ "image/png"  // registered for image.DecodeConfig
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/errkind"
	"github.com/drknn/drknn/internal/filekind"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/internal/par"
	_ "golang.org/x/image/bmp"  // registered for image.DecodeConfig
	_ "golang.org/x/image/webp" // registered for image.DecodeConfig
)

// Inputs are new samples given as files, in exactly one of four forms.
type Inputs struct {
	// Images are image files (PNG, JPEG, GIF, BMP, WebP, decoded by
	// content) or folders, contributing in sorted order the files the
	// imagefolder reader reads from them (see ExpandImages).
	Images []string
	// CSV is a table of feature rows. For a model trained on a CSV its
	// columns are matched by header name to the model's features (other
	// columns, such as the label, are ignored); otherwise each row holds
	// the model's F numbers (a non-numeric first line is a header).
	// Missing cells (empty, NA, N/A, NaN, ?) are filled as the model's
	// training filled them (data.missing), or make the row fail.
	CSV string
	// NPY is a .npy file of n samples, read as the npy data set reads
	// X.npy (uint8 pixels / 255; n×F, n×H×W, n×C×H×W or n×H×W×C), of the
	// model's sample shape or flat (n × its number of values). A flat row
	// is in the model's C×H×W order: X.reshape(n, -1) of colour images
	// n×H×W×C is not, and cannot be told from its shape (pass them
	// unflattened, or flatten X.transpose(0, 3, 1, 2)).
	NPY string
	// Embeddings is an nq×D float64 .npy of embeddings made by the same
	// network.
	Embeddings string
	// Invert overrides the polarity of images for a model of a built-in
	// image data set (nil: its reader's: inverted for Omniglot); refused
	// for a model trained on an image folder or NumPy images, whose
	// readers never invert.
	Invert *bool
}

// Check reports inputs given in none or several forms, or -invert without
// images.
func (in Inputs) Check() error {
	forms := 0
	for _, given := range []bool{len(in.Images) > 0, in.CSV != "", in.NPY != "", in.Embeddings != ""} {
		if given {
			forms++
		}
	}
	if forms != 1 {
		return fmt.Errorf("give exactly one of images, a CSV, a .npy of samples and embeddings")
	}
	if in.Invert != nil && len(in.Images) == 0 {
		return fmt.Errorf("-invert applies only to images")
	}
	return nil
}

// Failed counts the predictions that carry an error.
func Failed(preds []Prediction) int {
	n := 0
	for _, p := range preds {
		if p.Error != "" {
			n++
		}
	}
	return n
}

// sample is one input on its way to the network: its name, its values (the
// reader's preprocessing applied) or the error that stopped it.
type sample struct {
	name    string
	x       []float32
	err     error
	warning string
}

// PredictFiles reads the inputs, prepares them as the model's training
// samples were prepared (the reader's decoding and resizing, missing values
// filled, standardisation), embeds them with the model's network
// (embeddings are used as given) and classifies them. It returns one
// Prediction per input, in order, named by its file (CSV rows as
// FILE:LINE, .npy rows as FILE:ROW from 0, embeddings by row number). An
// input that cannot be read or does not fit (a corrupt image, a row with
// text in a number column) gets a Prediction with Error set and the others
// are still classified; the error return is for problems with the model or
// the whole input (a missing CSV column, samples of the wrong shape), which
// wrap ErrInput where the input is at fault.
func (m *Model) PredictFiles(in Inputs, o Options) ([]Prediction, error) {
	return m.PredictFilesContext(context.Background(), in, o)
}

// PredictFilesContext is PredictFiles stopped by ctx: it is checked
// between its phases (read, embed, classify), while reading between rows
// and images, while embedding between the network's batches and while
// classifying between chunks of queries (a few milliseconds of work each);
// a cancelled run returns ctx's error and no predictions. The chunks do
// not change the predictions.
func (m *Model) PredictFilesContext(ctx context.Context, in Inputs, o Options) ([]Prediction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := in.Check(); err != nil {
		return nil, err
	}
	// Built once, before any work (a bad method or k fails here), and
	// used for every input.
	c, err := m.Classifier(o)
	if err != nil {
		return nil, err
	}
	if in.Embeddings != "" {
		return m.predictEmbeddings(ctx, in.Embeddings, c)
	}
	var samples []sample
	switch {
	case in.CSV != "":
		samples, err = m.csvSamples(ctx, in.CSV)
	case in.NPY != "":
		samples, err = m.npySamples(in.NPY)
	default:
		samples, err = m.imageSamples(ctx, in.Images, in.Invert)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m.classifySamples(ctx, samples, c)
}

// classifySamples embeds the samples that were read and classifies them
// with c (the model's Classifier), keeping the failed ones in place. A sample with a value that is not
// finite after the model's standardisation (a huge value divided by a
// small deviation overflows float32), or whose embedding is not finite,
// fails alone, named.
func (m *Model) classifySamples(ctx context.Context, samples []sample, c eval.Voter) ([]Prediction, error) {
	out := make([]Prediction, len(samples))
	var x []float32
	var ok []int
	for i, s := range samples {
		out[i] = Prediction{Input: s.name, Class: -1, Warning: s.warning}
		if s.err != nil {
			out[i].Error = s.err.Error()
			continue
		}
		x = append(x, s.x...)
		ok = append(ok, i)
	}
	if len(ok) == 0 {
		return out, nil
	}
	net, x, err := m.netInput(x, len(ok))
	if err != nil {
		return nil, err
	}
	size := net.Config().InSize()
	fail := func(i int, format string, args ...any) {
		out[i].Error = fmt.Sprintf("%s: ", samples[i].name) + fmt.Sprintf(format, args...)
		out[i].Warning = ""
	}
	// Drop the samples with a non-finite value, keeping the others in order.
	good, kept := x[:0], ok[:0]
	for j, i := range ok {
		v := x[j*size : (j+1)*size]
		if c := nonFinite32(v); c >= 0 {
			what := fmt.Sprintf("value %d", c)
			if in := m.Settings.Input; in != nil && len(in.Features) == size {
				what = "column " + datasets.QuoteCell(in.Features[c])
			}
			fail(i, "%s is %v after the model's input standardisation (data.standardize): too large for the model", what, v[c])
			continue
		}
		good, kept = append(good, v...), append(kept, i)
	}
	ok = kept
	if len(ok) == 0 {
		return out, nil
	}
	q, err := embedContext(ctx, net, good, len(ok))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := net.Dim()
	var goodQ []float64
	var names []string
	kept = nil
	for j, i := range ok {
		e := q[j*d : (j+1)*d]
		if c := nonFinite64(e); c >= 0 {
			fail(i, "embedding coordinate %d is %v: its values are too large for the network", c, e[c])
			continue
		}
		goodQ, kept, names = append(goodQ, e...), append(kept, i), append(names, samples[i].name)
	}
	ok = kept
	if len(ok) == 0 {
		return out, nil
	}
	preds, err := m.classifyContext(ctx, c, goodQ, len(ok), names)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for j, i := range ok {
		preds[j].Warning = out[i].Warning
		out[i] = preds[j]
	}
	return out, nil
}

func nonFinite32(x []float32) int {
	for j, v := range x {
		if v != v || math.IsInf(float64(v), 0) {
			return j
		}
	}
	return -1
}

// predictEmbeddings classifies the rows of an embeddings .npy with c (the
// model's Classifier); a row with
// a non-finite value fails alone, and a file of no rows is an ErrInput
// error.
func (m *Model) predictEmbeddings(ctx context.Context, path string, c eval.Voter) ([]Prediction, error) {
	q, nq, d, err := npy.ReadMatrix(path, false)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d != m.D {
		return nil, fmt.Errorf("%w: %s: embeddings of width %d, the model's are %d", ErrInput, path, d, m.D)
	}
	if nq == 0 {
		// as the other inputs: an empty CSV, .npy or image folder is refused
		return nil, fmt.Errorf("%w: %s holds no rows (0×%d embeddings)", ErrInput, path, d)
	}
	out := make([]Prediction, nq)
	var good []float64
	var ok []int
	var names []string
	for i := range nq {
		row := q[i*d : (i+1)*d]
		name := fmt.Sprintf("%s:%d", path, i) // as -npy names its rows
		out[i] = Prediction{Input: name, Class: -1}
		if j := nonFinite64(row); j >= 0 {
			out[i].Error = fmt.Sprintf("%s row %d: coordinate %d is %v", path, i, j, row[j])
			continue
		}
		good = append(good, row...)
		ok, names = append(ok, i), append(names, name)
	}
	if len(ok) == 0 {
		return out, nil
	}
	preds, err := m.classifyContext(ctx, c, good, len(ok), names)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for j, i := range ok {
		out[i] = preds[j]
	}
	return out, nil
}

func nonFinite64(x []float64) int {
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return j
		}
	}
	return -1
}

// inputSize is the number of values of one raw sample: the recorded input
// shape's, else the network's.
func (m *Model) inputShape() ([]int, error) {
	if in := m.Settings.Input; in != nil {
		return in.Shape, nil
	}
	net, err := m.Net()
	if err != nil {
		return nil, err
	}
	return net.Config().InShape, nil
}

func prod(shape []int) int {
	n := 1
	for _, v := range shape {
		n *= v
	}
	return n
}

// fill replaces the missing values (NaN) of a sample as the model's
// training filled them, or reports the first one (named by name(j)) when
// the model was trained without data.missing.
func (m *Model) fill(x []float32, name func(j int) string) error {
	im := m.Settings.Impute
	for j, v := range x {
		if v == v {
			continue
		}
		if im == nil || j >= len(im.Values) {
			return fmt.Errorf("missing value in %s (the model was trained without data.missing, so it has no value to fill it with)", name(j))
		}
		x[j] = float32(im.Values[j])
	}
	return nil
}

// missingCell reports whether a CSV cell (trimmed) stands for a missing
// value, as the csv reader does: empty, NA, N/A, NaN or ? (any case).
func missingCell(s string) bool {
	switch strings.ToLower(s) {
	case "", "na", "n/a", "nan", "?":
		return true
	}
	return false
}

// csvCheckRows is how many CSV rows are read between checks of the
// context: a few milliseconds of parsing.
const csvCheckRows = 4096

// csvSamples reads the rows of a CSV of feature rows (see Inputs.CSV).
func (m *Model) csvSamples(ctx context.Context, path string) ([]sample, error) {
	shape, err := m.inputShape()
	if err != nil {
		return nil, err
	}
	if len(shape) != 1 {
		return nil, fmt.Errorf("%w: %s: the model takes images of shape %v, not feature rows (use -images or -npy)", ErrInput, path, shape)
	}
	f := shape[0]
	var features []string
	if in := m.Settings.Input; in != nil {
		features = in.Features
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	// A device or a pipe (/dev/zero) has no end to wait for.
	if fi, err := file.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: not a regular file (%s)", ErrInput, path, filekind.Of(fi.Mode()))
	}
	return m.readCSVSamplesContext(ctx, file, path, f, features)
}

// readCSVSamples parses a CSV of feature rows (named path in messages) for
// a model taking f features, named features when not nil.
func (m *Model) readCSVSamples(r io.Reader, path string, f int, features []string) ([]sample, error) {
	return m.readCSVSamplesContext(context.Background(), r, path, f, features)
}

// readCSVSamplesContext is readCSVSamples stopped by ctx (checked every
// csvCheckRows rows).
func (m *Model) readCSVSamplesContext(ctx context.Context, r io.Reader, path string, f int, features []string) ([]sample, error) {
	// Opened as the csv reader of training opens its file (byte-order
	// mark, spaces, no comment character), so both take the same files.
	cr := datasets.NewCSVReader(r)
	var cols []int // column of each feature
	colName := func(j int) string { return fmt.Sprintf("field %d", j+1) }
	var out []sample
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInput, path, err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if features != nil {
				if cols, err = matchColumns(rec, features, path); err != nil {
					return nil, err
				}
				colName = func(j int) string { return "column " + datasets.QuoteCell(features[j]) }
				continue
			}
			if !numericRow(rec) {
				continue // a header
			}
		}
		if cols == nil {
			cols = make([]int, f)
			for j := range cols {
				cols[j] = j
			}
		}
		if len(out)%csvCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if len(out) == MaxFeatureRows {
			return nil, fmt.Errorf("%w: %s: more than %d rows", ErrInput, path, MaxFeatureRows)
		}
		s := sample{name: fmt.Sprintf("%s:%d", path, line)}
		s.x, s.err = m.csvRow(rec, cols, f, features == nil, colName)
		if s.err != nil {
			s.err = fmt.Errorf("%s line %d: %w", path, line, s.err)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no rows", ErrInput, path)
	}
	return out, nil
}

// matchColumns finds each feature's column in a header row. Header cells
// are named as the csv reader of training names them (trimmed; an empty
// one is "column N", N counted from 1). A name that appears twice is an
// error only when the model reads that column.
func matchColumns(header, features []string, path string) ([]int, error) {
	at := map[string][]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			h = "column " + strconv.Itoa(i+1)
		}
		at[h] = append(at[h], i)
	}
	cols := make([]int, len(features))
	for j, name := range features {
		switch is := at[name]; len(is) {
		case 0:
			return nil, fmt.Errorf("%w: %s: no column %s in the header (the model's feature columns: %s)", ErrInput, path, datasets.QuoteCell(name), datasets.ListCells(features, ", "))
		case 1:
			cols[j] = is[0]
		default:
			return nil, fmt.Errorf("%w: %s: column %s appears twice in the header (columns %d and %d), and the model reads it", ErrInput, path, datasets.QuoteCell(name), is[0]+1, is[1]+1)
		}
	}
	return cols, nil
}

func numericRow(rec []string) bool {
	for _, v := range rec {
		v = strings.TrimSpace(v)
		if missingCell(v) {
			continue
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return true
}

// csvRow parses the features of one row (exact: the row must hold exactly
// f fields).
func (m *Model) csvRow(rec []string, cols []int, f int, exact bool, colName func(int) string) ([]float32, error) {
	if exact && len(rec) != f {
		return nil, fmt.Errorf("%d values, the model takes %d features", len(rec), f)
	}
	x := make([]float32, f)
	for j, c := range cols {
		if c >= len(rec) {
			return nil, fmt.Errorf("%d fields: no value for %s", len(rec), colName(j))
		}
		v := strings.TrimSpace(rec[c])
		if missingCell(v) {
			x[j] = float32(math.NaN())
			continue
		}
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || math.Abs(p) > math.MaxFloat32 {
			return nil, fmt.Errorf("%s: %s is not a finite number", colName(j), datasets.QuoteCell(rec[c]))
		}
		x[j] = float32(p)
	}
	if err := m.fill(x, colName); err != nil {
		return nil, err
	}
	return x, nil
}

// npySamples reads the rows of a .npy of samples (see Inputs.NPY).
func (m *Model) npySamples(path string) ([]sample, error) {
	shape, err := m.inputShape()
	if err != nil {
		return nil, err
	}
	x, n, got, nonFinite, err := datasets.ReadNPYSamples(path)
	if err != nil {
		// the reader names the file, and says "PATH holds no rows" for
		// one of none, as the other inputs
		if errors.Is(err, datasets.ErrCorrupt) {
			err = errkind.Mark(ErrInput, err)
		}
		return nil, err
	}
	// The model's shape as the npy reader gives it (n×H×W read as
	// [1, H, W], channels-last images transposed), or flat: the same
	// number of values in another shape would be scrambled pixels.
	size := prod(shape)
	if !slices.Equal(got, shape) && !slices.Equal(got, []int{size}) {
		return nil, fmt.Errorf("%w: %s: samples of shape %v, the model takes %v (or %d values a row)", ErrInput, path, got, shape, size)
	}
	out := make([]sample, n)
	for i := range out {
		s := sample{name: fmt.Sprintf("%s:%d", path, i), x: x[i*size : (i+1)*size]}
		if bad, ok := nonFinite[i]; ok {
			// as the file holds it (1e+300 in a float64 file), not +Inf
			s.err = fmt.Errorf("%s row %d: value %s is not a finite float32 (%v in the file)", path, i, bad.Index, bad.Value)
		}
		if s.err != nil {
			s.x = nil
		} else if err := m.fill(s.x, func(j int) string { return fmt.Sprintf("value %d", j) }); err != nil {
			s.x, s.err = nil, fmt.Errorf("%s row %d: %w", path, i, err)
		}
		out[i] = s
	}
	return out, nil
}

// ExpandImages lists the image files that paths mean: a file is taken as
// it is; a folder (or a symbolic link to one) contributes, recursively and
// in the reader's natural order, the files the imagefolder reader of
// training would read from it (datasets.WalkFolderFiles: regular files and
// links to them, not hidden — names starting with ".", "__MACOSX"; hidden
// folders are skipped whole —, symbolic links to folders followed unless
// they loop) whose name has an image extension, or whose content is an
// image (PNG, JPEG, GIF, BMP or WebP, recognised by its header: a .jfif or
// a file without extension); other files are skipped, as the reader skips
// them. A path that does not exist is kept, so that it fails as an input
// of its own.
func ExpandImages(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			out = append(out, p)
			continue
		}
		// datasets.DirFS opens p itself through a link: a folder named by a
		// symbolic link is read (filepath.WalkDir does not follow one).
		err = datasets.WalkFolderFiles(datasets.DirFS(p), ".", &datasets.Report{}, func(fp string) {
			if path := filepath.Join(p, filepath.FromSlash(fp)); datasets.IsFolderImage(path) {
				out = append(out, path)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}

// MinImageFraction: an image whose width or height is below this fraction
// of the network's is still classified, with a warning (it is stretched
// more than 2×; a 1×1 image carries no shape).
const MinImageFraction = 0.5

// imageSamples decodes image files (see Inputs.Images), in parallel, each
// failing alone, as the model's reader prepared its own files
// (datasets.DecodeReaderImage), inverted as invert says (nil: as the
// reader did; a model fitted on a support folder: as its support images
// were).
func (m *Model) imageSamples(ctx context.Context, paths []string, invert *bool) ([]sample, error) {
	shape, err := m.inputShape()
	if err != nil {
		return nil, err
	}
	if len(shape) != 3 {
		return nil, fmt.Errorf("%w: the model takes feature rows of shape %v, not images (use -csv or -npy)", ErrInput, shape)
	}
	c, h, w := shape[0], shape[1], shape[2]
	if c != 1 && c != 3 {
		return nil, fmt.Errorf("%w: the model takes %d-channel images; only 1 (grey) or 3 (RGB) can be made from image files", ErrInput, c)
	}
	if m.imageInvert != nil {
		// A model fitted on a support folder: its queries are prepared
		// as its support images were.
		if invert != nil && *invert != *m.imageInvert {
			return nil, fmt.Errorf("-invert=%v for the queries, but the support images were prepared with -invert=%v: both must be prepared alike", *invert, *m.imageInvert)
		}
		invert = m.imageInvert
	}
	// The reader whose preparation new images get: the recorded one, else
	// (exports written before it was recorded) the data set's.
	reader := m.Settings.Dataset
	if in := m.Settings.Input; in != nil && in.Reader != "" {
		reader = in.Reader
	}
	inv := reader == "omniglot"
	if invert != nil {
		inv = *invert
	}
	if reader == "imagefolder" || reader == "npy" {
		// Those readers never invert: the model knows one polarity only,
		// the images' own.
		if invert != nil {
			return nil, fmt.Errorf("-invert applies to models of the built-in image data sets (whose readers fix the polarity, Omniglot's inverted); this model was trained on %s images, taken as they are, so new images are too", reader)
		}
	}
	files, err := ExpandImages(paths)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no image files in %s", ErrInput, strings.Join(paths, ", "))
	}
	out := make([]sample, len(files))
	// Every file gets its own result (an unreadable one an error): the
	// loop itself never fails.
	err = par.For(len(files), runtime.GOMAXPROCS(0), func(i int) error {
		if err := ctx.Err(); err != nil {
			return err // stopped: no image after this one is read
		}
		path := files[i]
		out[i] = sample{name: path}
		data, err := readImageFile(path)
		if err == nil {
			if cfg, _, cerr := datasets.DecodeConfig(bytes.NewReader(data)); cerr == nil &&
				(float64(cfg.Width) < MinImageFraction*float64(w) || float64(cfg.Height) < MinImageFraction*float64(h)) {
				out[i].warning = fmt.Sprintf("%s is %d×%d, the model takes %d×%d: stretched more than %.0f×", path, cfg.Width, cfg.Height, w, h, 1/MinImageFraction)
			}
			// The reader's own preparation, bit for bit (miniImageNet:
			// RGB stretched, then luma; Omniglot: inverted before
			// stretching; image folders: Catmull-Rom resampling).
			out[i].x, err = datasets.DecodeReaderImage(data, reader, c, h, w, inv)
		}
		if err != nil {
			out[i].err = fmt.Errorf("%s: %w", path, err)
			out[i].warning = ""
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readImageFile reads one image file, refusing one larger than the readers
// accept.
func readImageFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(path); lerr == nil {
			return nil, fmt.Errorf("a broken symbolic link (to %s, which does not exist)", target)
		}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, datasets.MaxImageFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > datasets.MaxImageFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", datasets.MaxImageFileBytes)
	}
	return data, nil
}

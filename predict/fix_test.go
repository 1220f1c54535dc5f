package predict

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"slices"
	"strconv"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/npy"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/model"
)

// Queries checks the query files against the SHA-256 the manifest records:
// a query_embeddings.npy or query_labels.npy of the right shape copied
// from another export is refused, naming the file.
func TestQueriesVerified(t *testing.T) {
	a := makeExport(t, cnnConfig, "mnist", 12, 2, 6)
	b := makeExport(t, model.Config{Kind: model.CNN, InShape: []int{1, 8, 8}, Channels: 3, Dim: 6, DType: model.Float64}, "mnist", 12, 3, 6)
	for _, name := range []string{"query_embeddings.npy", "query_labels.npy"} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join(a.Dir, name))
			must(t, err)
			defer func() { must(t, os.WriteFile(filepath.Join(a.Dir, name), orig, 0o644)) }()
			data, err := os.ReadFile(filepath.Join(b.Dir, name))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(a.Dir, name), data, 0o644))
			e, err := Load(a.Dir)
			must(t, err)
			_, _, _, err = e.Queries()
			if err == nil || !strings.Contains(err.Error(), name+" does not belong to this export") {
				t.Fatalf("Queries with %s of another export: %v", name, err)
			}
		})
	}
	e, err := Load(a.Dir)
	must(t, err)
	if _, nq, _, err := e.Queries(); err != nil || nq != 6 {
		t.Fatalf("the export's own queries: %d, %v", nq, err)
	}
}

// csvFeatures returns the feature columns the training csv reader gives a
// table with this header (and one label column, named label).
func csvFeatures(t *testing.T, header string) []string {
	t.Helper()
	d, err := datasets.ParseCSV(strings.NewReader(header+"\n1,2,3,x\n4,5,6,y\n"), "train.csv", datasets.CSVOptions{Label: "label"})
	must(t, err)
	return d.Features
}

// A header whose first column starts with '#' is a header at prediction
// as in training (the csv reader has no comment character).
func TestCSVHashHeader(t *testing.T) {
	features := csvFeatures(t, "#a,b,c,label")
	if !slices.Equal(features, []string{"#a", "b", "c"}) {
		t.Fatalf("training features %q", features)
	}
	m := featureModel(t, features, nil)
	got, err := m.readCSVSamples(strings.NewReader("#a,b,c,label\n1,2,3,x\n#4,5,6,y\n"), "new.csv", 3, features)
	must(t, err)
	if len(got) != 2 || got[0].name != "new.csv:2" || got[0].err != nil || !slices.Equal(got[0].x, []float32{1, 2, 3}) {
		t.Fatalf("rows %+v", got)
	}
	// A data row starting with '#' is not dropped: it fails alone, named.
	if got[1].name != "new.csv:3" || got[1].err == nil || !strings.Contains(got[1].err.Error(), `new.csv line 3: column "#a": "#4" is not a finite number`) {
		t.Fatalf("row 3: %+v", got[1])
	}
}

// An empty header cell is "column N" at prediction as in training.
func TestCSVEmptyHeaderCell(t *testing.T) {
	features := csvFeatures(t, "a,,c,label")
	if !slices.Equal(features, []string{"a", "column 2", "c"}) {
		t.Fatalf("training features %q", features)
	}
	m := featureModel(t, features, nil)
	got, err := m.readCSVSamples(strings.NewReader("a, ,c,label\n1,2,3,x\n"), "new.csv", 3, features)
	must(t, err)
	if len(got) != 1 || got[0].err != nil || !slices.Equal(got[0].x, []float32{1, 2, 3}) {
		t.Fatalf("rows %+v", got)
	}
	// The empty cell elsewhere is another column: "column 2" is missing.
	if _, err := m.readCSVSamples(strings.NewReader("a,c,\n1,3,2\n"), "new.csv", 3, features); err == nil || !strings.Contains(err.Error(), `no column "column 2"`) {
		t.Fatalf("empty cell in column 3: %v", err)
	}
}

// Duplicate names of columns the model does not read are ignored like any
// other extra column; a duplicate of a column it reads is an error naming
// both positions.
func TestCSVDuplicateColumns(t *testing.T) {
	features := []string{"a", "b", "c"}
	m := featureModel(t, features, nil)
	got, err := m.readCSVSamples(strings.NewReader("id,a,id,b,,c,\n9,1,9,2,0,3,0\n"), "new.csv", 3, features)
	must(t, err)
	if len(got) != 1 || got[0].err != nil || !slices.Equal(got[0].x, []float32{1, 2, 3}) {
		t.Fatalf("rows %+v", got)
	}
	_, err = m.readCSVSamples(strings.NewReader("a,b,c, b\n1,2,3,4\n"), "new.csv", 3, features)
	if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), `new.csv: column "b" appears twice in the header (columns 2 and 4)`) {
		t.Fatalf("ambiguous column b: %v", err)
	}
}

// A row whose value is finite in the file but overflows after the recorded
// standardisation fails alone, named by
// FILE:LINE; the other rows are classified as they are on their own.
func TestOverflowingRowFailsAlone(t *testing.T) {
	f := makeExport(t, model.Config{Kind: model.MLP, InShape: []int{2}, Hidden: 4, Dim: 3, DType: model.Float32}, "csv", 12, 2, 4)
	newModel := func(st *Standardize) *Model {
		m, err := NewModel(f.Net, f.Emb, f.N, f.D, f.Labels, f.P, f.Names, Settings{K: 3, Standardize: st,
			Input: &Input{Kind: InputFeatures, Reader: "csv", Shape: []int{2}, Features: []string{"a", "b"}}})
		must(t, err)
		return m
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	must(t, os.WriteFile(good, []byte("a,b\n0.1,0.2\n0.3,0.4\n"), 0o644))
	for name, tc := range map[string]struct {
		st   *Standardize
		row  string
		want string
	}{
		"standardised":  {&Standardize{Mode: "channel", Mean: []float64{0, 0}, SD: []float64{0.5, 0.5}}, "3e38,0", `bad.csv:3: column "a" is +Inf after the model's input standardisation`},
		"standardised2": {&Standardize{Mode: "channel", Mean: []float64{0, 0}, SD: []float64{0.5, 0.5}}, "0,-3.3e38", `bad.csv:3: column "b" is -Inf`},
	} {
		t.Run(name, func(t *testing.T) {
			m := newModel(tc.st)
			bad := filepath.Join(dir, "bad.csv")
			must(t, os.WriteFile(bad, []byte("a,b\n0.1,0.2\n"+tc.row+"\n0.3,0.4\n"), 0o644))
			preds, err := m.PredictFiles(Inputs{CSV: bad}, Options{})
			if err != nil {
				t.Fatalf("the whole batch failed: %v", err)
			}
			alone, err := m.PredictFiles(Inputs{CSV: good}, Options{})
			must(t, err)
			if len(preds) != 3 || Failed(preds) != 1 || preds[1].Class != -1 || !strings.Contains(preds[1].Error, tc.want) {
				t.Fatalf("predictions %+v, want row 2 failed with %q", preds, tc.want)
			}
			for j, i := range []int{0, 2} {
				if preds[i].Error != "" || preds[i].Class != alone[j].Class || !slices.Equal(preds[i].Proba, alone[j].Proba) {
					t.Errorf("row %d: %+v, alone %+v", i, preds[i], alone[j])
				}
			}
		})
	}
}

// -npy takes the model's sample shape (channels first or last, as the npy
// reader reads X.npy) or flat rows; the same number of values in another
// shape is an ErrInput error naming the file and both shapes.
func TestNPYShapeChecked(t *testing.T) {
	f := makeExport(t, model.Config{Kind: model.CNN, InShape: []int{3, 4, 4}, Channels: 2, Dim: 3, DType: model.Float64}, "imagefolder", 8, 2, 2)
	e, err := Load(f.Dir)
	must(t, err)
	e.Settings.Input = &Input{Kind: InputImages, Reader: "npy", Shape: []int{3, 4, 4}}
	x := make([]float64, len(f.QueryX))
	for i, v := range f.QueryX {
		x[i] = float64(v)
	}
	last := make([]float64, len(x)) // n×H×W×C
	for i := range 2 {
		for c := range 3 {
			for p := range 16 {
				last[i*48+p*3+c] = x[i*48+c*16+p]
			}
		}
	}
	dir := t.TempDir()
	write := func(name string, data []float64, shape ...int) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, npyBytes(t, data, shape...), 0o644))
		return p
	}
	want, err := e.Classify(f.Query, 2, nil, Options{})
	must(t, err)
	for name, p := range map[string]string{
		"first": write("first.npy", x, 2, 3, 4, 4), "flat": write("flat.npy", x, 2, 48), "last": write("last.npy", last, 2, 4, 4, 3)} {
		preds, err := e.PredictFiles(Inputs{NPY: p}, Options{})
		must(t, err)
		for i := range preds {
			if preds[i].Error != "" || preds[i].Class != want[i].Class || !slices.EqualFunc(preds[i].Proba, want[i].Proba, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
				t.Errorf("%s: sample %d: %+v, want %+v", name, i, preds[i], want[i])
			}
		}
	}
	for name, tc := range map[string]struct{ shape, sample []int }{
		"scrambled": {[]int{2, 2, 4, 6}, []int{2, 4, 6}},
		"two-d":     {[]int{2, 4, 12}, []int{1, 4, 12}},
		"wide":      {[]int{2, 1, 48}, []int{1, 1, 48}},
	} {
		p := write(name+".npy", x, tc.shape...)
		_, err := e.PredictFiles(Inputs{NPY: p}, Options{})
		wantMsg := fmt.Sprintf("%s: samples of shape %v, the model takes [3 4 4]", p, tc.sample)
		if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s: %v, want %q", name, err, wantMsg)
		}
	}
}

// npyBytes encodes data as a little-endian float64 .npy of any shape.
func npyBytes(t *testing.T, data []float64, shape ...int) []byte {
	t.Helper()
	var flat bytes.Buffer
	must(t, npy.EncodeFloat64(&flat, data, len(data)))
	b := flat.Bytes()
	payload := b[10+int(binary.LittleEndian.Uint16(b[8:10])):]
	dims := make([]string, len(shape))
	for i, v := range shape {
		dims[i] = strconv.Itoa(v)
	}
	dict := "{'descr': '<f8', 'fortran_order': False, 'shape': (" + strings.Join(dims, ", ") + "), }"
	pad := (64 - (10+len(dict)+1)%64) % 64
	h := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)+pad+1))
	h = append(append(append(h, dict...), bytes.Repeat([]byte(" "), pad)...), '\n')
	return append(h, payload...)
}

// A folder given to -images contributes exactly the files the imagefolder
// reader of training reads from it, in its order: images by content too
// (.jfif, no extension, nested folders, links to files), not text files,
// hidden files or folders, __MACOSX. A broken .png is taken (it fails
// alone), as is a non-image named explicitly.
func TestExpandImagesAsReader(t *testing.T) {
	dir := t.TempDir()
	img := func(v uint8) []byte {
		g := image.NewGray(image.Rect(0, 0, 5, 4))
		for i := range g.Pix {
			g.Pix[i] = v + uint8(i)
		}
		var b bytes.Buffer
		must(t, png.Encode(&b, g))
		return b.Bytes()
	}
	jpg := func(v uint8) []byte {
		g := image.NewGray(image.Rect(0, 0, 5, 4))
		for i := range g.Pix {
			g.Pix[i] = v
		}
		var b bytes.Buffer
		must(t, jpeg.Encode(&b, g, nil))
		return b.Bytes()
	}
	files := map[string][]byte{
		"cat/a.png": img(10), "cat/b.jfif": jpg(40), "cat/noext": img(20), "cat/notes.txt": []byte("not an image"),
		"cat/.hidden.png": img(30), "cat/.git/c.png": img(30), "cat/sub/d.JPG": jpg(90), "dog/__MACOSX/e.png": img(1),
		"dog/f.webp.bak": img(200), "dog/g.bmp": bmpBytes(), "dog/empty": nil,
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, data, 0o644))
	}
	must(t, os.Symlink(filepath.Join(dir, "cat", "a.png"), filepath.Join(dir, "dog", "link")))
	d, err := datasets.ReadImageFolder(os.DirFS(dir), dir, datasets.ImageFolderOptions{Size: 4})
	must(t, err)
	var want []string
	for _, f := range d.Files {
		want = append(want, filepath.Join(dir, filepath.FromSlash(f)))
	}
	got, err := ExpandImages([]string{dir})
	must(t, err)
	if !slices.Equal(got, want) || len(got) != 7 {
		t.Fatalf("ExpandImages:\n%q\nthe reader reads:\n%q", got, want)
	}
	// Predicted as the reader decodes them: every file classified.
	m := imageFolderModel(t, d)
	preds, err := m.PredictFiles(Inputs{Images: []string{dir}}, Options{})
	must(t, err)
	if len(preds) != 7 || Failed(preds) != 0 {
		t.Fatalf("predictions %+v", preds)
	}
	broken := filepath.Join(dir, "dog", "zz.png")
	must(t, os.WriteFile(broken, []byte("\x89PNG\r\n\x1a\nbroken"), 0o644))
	text := filepath.Join(dir, "cat", "notes.txt")
	if got, err = ExpandImages([]string{dir, text}); err != nil || len(got) != 9 || got[7] != broken || got[8] != text {
		t.Fatalf("with a broken .png and a named text file: %q, %v", got, err)
	}
	preds, err = m.PredictFiles(Inputs{Images: []string{dir, text}}, Options{})
	must(t, err)
	if Failed(preds) != 2 || !strings.Contains(preds[7].Error, broken) || !strings.Contains(preds[8].Error, text) {
		t.Fatalf("predictions %+v", preds)
	}
}

// bmpBytes is a 2×2 24-bit BMP.
func bmpBytes() []byte {
	b := []byte("BM")
	b = binary.LittleEndian.AppendUint32(b, 54+16)
	b = append(b, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, 54)
	b = binary.LittleEndian.AppendUint32(b, 40)
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 24)
	b = append(b, make([]byte, 24)...)
	return append(b, 1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0)
}

// imageFolderModel is a model with a fresh CNN for the image folder d's
// samples, recorded as trained on it.
func imageFolderModel(t *testing.T, d *datasets.Dataset) *Model {
	t.Helper()
	net, err := model.New(model.Config{Kind: model.CNN, InShape: d.Shape, Channels: 2, Dim: 3, DType: model.Float64}, 1)
	must(t, err)
	emb, err := net.Embed(d.X, d.Len())
	must(t, err)
	n := d.Len()
	count := make([]float64, len(d.Classes))
	for _, y := range d.Labels {
		count[y]++
	}
	p := make([]float64, len(d.Classes)*n)
	for i, y := range d.Labels {
		p[y*n+i] = 1 / count[y]
	}
	m, err := NewModel(net, emb, n, net.Dim(), d.Labels, p, d.Classes, Settings{K: 1,
		Input: &Input{Kind: InputImages, Reader: "imagefolder", Shape: d.Shape}})
	must(t, err)
	return m
}

// -invert is refused for a model trained on an image folder or NumPy
// images (their readers never invert), whatever its value; it still
// applies to a model of a built-in data set.
func TestInvertRefusedForFolderModels(t *testing.T) {
	dir := t.TempDir()
	g := image.NewGray(image.Rect(0, 0, 4, 4))
	for _, name := range []string{"a/1.png", "a/2.png", "b/1.png", "b/2.png"} {
		g.Pix[0] += 50
		var b bytes.Buffer
		must(t, png.Encode(&b, g))
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b.Bytes(), 0o644))
	}
	d, err := datasets.ReadImageFolder(os.DirFS(dir), dir, datasets.ImageFolderOptions{})
	must(t, err)
	m := imageFolderModel(t, d)
	for _, reader := range []string{"imagefolder", "npy"} {
		m.Settings.Input.Reader = reader
		for _, v := range []bool{true, false} {
			_, err := m.PredictFiles(Inputs{Images: []string{dir}, Invert: &v}, Options{})
			if err == nil || !strings.Contains(err.Error(), "-invert applies to models of the built-in image data sets") || !strings.Contains(err.Error(), reader) {
				t.Errorf("%s, -invert=%v: %v", reader, v, err)
			}
		}
	}
	m.Settings.Input.Reader, m.Settings.Dataset = "omniglot", "omniglot"
	inv := false
	preds, err := m.PredictFiles(Inputs{Images: []string{dir}, Invert: &inv}, Options{})
	if err != nil || Failed(preds) != 0 {
		t.Fatalf("omniglot model, -invert=false: %v %+v", err, preds)
	}
}

// A .npy row with a value beyond the float32 range fails alone, named
// FILE row N; the other rows are classified.
func TestNPYInfiniteRowFailsAlone(t *testing.T) {
	f := makeExport(t, model.Config{Kind: model.MLP, InShape: []int{2}, Hidden: 4, Dim: 3, DType: model.Float32}, "npy", 12, 2, 4)
	e, err := Load(f.Dir)
	must(t, err)
	p := filepath.Join(t.TempDir(), "x.npy")
	must(t, os.WriteFile(p, npyBytes(t, []float64{0.1, 0.2, 1e300, 0, 0.3, math.Inf(-1), 0.3, 0.4}, 4, 2), 0o644))
	preds, err := e.PredictFiles(Inputs{NPY: p}, Options{})
	if err != nil {
		t.Fatalf("the whole file failed: %v", err)
	}
	if Failed(preds) != 2 || preds[0].Error != "" || preds[3].Error != "" ||
		!strings.Contains(preds[1].Error, p+" row 1: value 0 is not a finite float32") || !strings.Contains(preds[2].Error, p+" row 2: value 1") {
		t.Fatalf("predictions %+v", preds)
	}
	// the value as the file holds it, not its float32 rounding (+Inf)
	if !strings.Contains(preds[1].Error, "1e+300") || strings.Contains(preds[1].Error, "+Inf") || !strings.Contains(preds[2].Error, "-Inf") {
		t.Fatalf("errors %q, %q: want the values as read, 1e+300 and -Inf", preds[1].Error, preds[2].Error)
	}
}

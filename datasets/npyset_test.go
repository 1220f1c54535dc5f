package datasets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/numpytest"
)

// npyFile builds a .npy file (format 1.0, C order) by hand.
func npyFile(descr string, shape []int, payload []byte) []byte {
	sh := "("
	for i, s := range shape {
		if i > 0 {
			sh += ", "
		}
		sh += fmt.Sprint(s)
	}
	if len(shape) == 1 {
		sh += ","
	}
	sh += ")"
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + sh + ", }"
	pad := (64 - (10+len(dict)+1)%64) % 64
	dict += strings.Repeat(" ", pad) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
	return append(append(b, dict...), payload...)
}

func f32le(v ...float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func i64le(v ...int64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func writeNPYSet(t *testing.T, x, y []byte, classes string) string {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, NPYFeatures), x)
	writeTestFile(t, filepath.Join(dir, NPYLabels), y)
	if classes != "" {
		writeTestFile(t, filepath.Join(dir, NPYClasses), []byte(classes))
	}
	return dir
}

func TestNPYFeatureRowsAndLabels(t *testing.T) {
	x := npyFile("<f4", []int{5, 3}, f32le(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, -1.5))
	y := npyFile("<i8", []int{5}, i64le(3, 1, 3, 7, 1))
	d, err := Load("npy", writeNPYSet(t, x, y, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{3}) || !reflect.DeepEqual(d.Classes, []string{"1", "3", "7"}) ||
		!reflect.DeepEqual(d.Labels, []int{1, 0, 1, 2, 0}) || d.X[14] != -1.5 || d.Files[4] != "X.npy:4" {
		t.Fatalf("shape %v classes %v labels %v x %v files %v", d.Shape, d.Classes, d.Labels, d.X, d.Files)
	}
	// A 1-d X is one feature per sample.
	d, err = Load("npy", writeNPYSet(t, npyFile("<f8", []int{2}, append(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.25)), make([]byte, 8)...)),
		npyFile("|u1", []int{2}, []byte{0, 1}), ""), Options{})
	if err != nil || !reflect.DeepEqual(d.Shape, []int{1}) || d.X[0] != 0.25 {
		t.Fatalf("1-d X: %v %+v", err, d)
	}
}

func TestNPYImages(t *testing.T) {
	// uint8 n×H×W: grey images, v/255, names from classes.txt.
	pix := []byte{0, 51, 102, 255, 10, 20, 30, 40, 1, 2, 3, 4, 5, 6, 7, 8}
	x := npyFile("|u1", []int{4, 2, 2}, pix)
	y := npyFile("<i4", []int{4}, []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	d, err := Load("npy", writeNPYSet(t, x, y, "cat\n dog \n\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{1, 2, 2}) || !reflect.DeepEqual(d.Classes, []string{"cat", "dog"}) || !reflect.DeepEqual(d.Labels, []int{1, 0, 1, 0}) {
		t.Fatalf("shape %v classes %v labels %v", d.Shape, d.Classes, d.Labels)
	}
	for i, p := range pix {
		if d.X[i] != float32(p)/255 {
			t.Fatalf("pixel %d = %v, want %v/255", i, d.X[i], p)
		}
	}
	// Channels last (n×H×W×3) becomes channels first: value (h, w, c) = 100c + 10h + w.
	var hwc []byte
	for i := 0; i < 2; i++ {
		for h := 0; h < 2; h++ {
			for w := 0; w < 3; w++ {
				for c := 0; c < 3; c++ {
					hwc = append(hwc, byte(100*c+10*h+w+i))
				}
			}
		}
	}
	d, err = Load("npy", writeNPYSet(t, npyFile("|u1", []int{2, 2, 3, 3}, hwc), npyFile("|u1", []int{2}, []byte{0, 1}), ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{3, 2, 3}) || d.Report == nil || !strings.Contains(d.Report.Channels, "transposed") {
		t.Fatalf("channels last: shape %v report %+v", d.Shape, d.Report)
	}
	for c := 0; c < 3; c++ {
		for h := 0; h < 2; h++ {
			for w := 0; w < 3; w++ {
				if got, want := d.Sample(1)[c*6+h*3+w], float32(100*c+10*h+w+1)/255; got != want {
					t.Fatalf("(c%d,h%d,w%d) = %v, want %v", c, h, w, got*255, want*255)
				}
			}
		}
	}
	// n×C×H×W stays as it is.
	d, err = Load("npy", writeNPYSet(t, npyFile("|u1", []int{1, 3, 2, 2}, make([]byte, 12)), npyFile("|u1", []int{1}, []byte{4}), ""), Options{})
	if err != nil || !reflect.DeepEqual(d.Shape, []int{3, 2, 2}) || !reflect.DeepEqual(d.Classes, []string{"4"}) {
		t.Fatalf("NCHW: %v %+v", err, d)
	}
}

// TestNPYFromNumPy reads files numpy.save wrote.
func TestNPYFromNumPy(t *testing.T) {
	py := numpytest.Python(t)
	dir := t.TempDir()
	script := `
import numpy as np, sys, os
d = sys.argv[1]
np.save(os.path.join(d, "X.npy"), np.asfortranarray(np.arange(24, dtype=np.float64).reshape(6, 4) / 8))
np.save(os.path.join(d, "y.npy"), np.array([2, 0, 1, 2, 0, 1], dtype=np.int16))
open(os.path.join(d, "classes.txt"), "w").write("zero\none\ntwo\n")
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d, err := Load("npy", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{4}) || !reflect.DeepEqual(d.Labels, []int{2, 0, 1, 2, 0, 1}) || !reflect.DeepEqual(d.Classes, []string{"zero", "one", "two"}) {
		t.Fatalf("shape %v labels %v classes %v", d.Shape, d.Labels, d.Classes)
	}
	for i, v := range d.X {
		if v != float32(i)/8 {
			t.Fatalf("value %d = %v, want %v", i, v, float32(i)/8)
		}
	}
}

func TestNPYBadInput(t *testing.T) {
	x := npyFile("<f4", []int{2, 2}, f32le(1, 2, 3, 4))
	y := npyFile("<i8", []int{2}, i64le(0, 1))
	for _, c := range []struct {
		name    string
		x, y    []byte
		classes string
		kind    error
		want    string
	}{
		{"no X", nil, y, "", ErrNotFound, "X.npy"},
		{"no y", x, nil, "", ErrNotFound, "y.npy"},
		{"truncated X", x[:len(x)-2], y, "", ErrCorrupt, "X.npy"},
		{"label count", x, npyFile("<i8", []int{3}, i64le(0, 1, 1)), "", ErrCorrupt, "want (2,)"},
		{"float labels", x, npyFile("<f4", []int{2}, f32le(0, 1)), "", ErrCorrupt, "y.npy"},
		{"NaN", npyFile("<f4", []int{2, 2}, f32le(1, float32(math.NaN()), 3, 4)), y, "", ErrCorrupt, "element (0, 1)"},
		{"label beyond classes.txt", x, npyFile("<i8", []int{2}, i64le(0, 2)), "a\nb\n", ErrCorrupt, "label 2 of row 1 is outside 0…1"},
		{"class never used", x, y, "a\nb\nc\n", ErrCorrupt, `never uses label 2 ("c")`},
		{"duplicate class", x, y, "a\na\n", ErrCorrupt, "both name"},
		{"empty class line", x, y, "a\n\nb\n", ErrCorrupt, "line 2 is empty"},
		{"no samples", npyFile("<f4", []int{0, 2}, nil), npyFile("<i8", []int{0}, nil), "", ErrCorrupt, "X.npy holds no rows (shape [0 2])"},
		// the dtype found, by NumPy's name, and what is accepted — for the
		// labels the integer dtypes, not X's floats
		{"float labels named", x, npyFile("<f8", []int{2}, i64le(0, 1)), "", ErrCorrupt,
			`y.npy: unsupported dtype "<f8" (float64): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`},
		{"object labels", x, npyFile("|O", []int{2}, make([]byte, 16)), "", ErrCorrupt,
			`y.npy: unsupported dtype "|O" (Python objects): want an integer dtype (`},
		{"big-endian float16 labels", x, npyFile(">f2", []int{2}, make([]byte, 4)), "", ErrCorrupt,
			`y.npy: unsupported dtype ">f2" (float16, big-endian): want an integer dtype (`},
		{"complex X", npyFile("<c8", []int{2, 2}, make([]byte, 32)), y, "", ErrCorrupt,
			`X.npy: unsupported dtype "<c8" (complex64): want float64, float32, or a signed or unsigned integer of 1, 2, 4 or 8 bytes`},
		{"string X", npyFile("<U1", []int{2, 2}, make([]byte, 16)), y, "", ErrCorrupt,
			`X.npy: unsupported dtype "<U1" (Unicode strings of 1 character): want float64, float32`},
		{"RGBA channels-last", npyFile("|u1", []int{2, 5, 5, 4}, make([]byte, 2*5*5*4)), y, "", ErrCorrupt, "shape [2 5 5 4] looks like n×H×W×4 RGBA images"},
	} {
		dir := t.TempDir()
		if c.x != nil {
			writeTestFile(t, filepath.Join(dir, NPYFeatures), c.x)
		}
		if c.y != nil {
			writeTestFile(t, filepath.Join(dir, NPYLabels), c.y)
		}
		if c.classes != "" {
			writeTestFile(t, filepath.Join(dir, NPYClasses), []byte(c.classes))
		}
		d, err := Load("npy", dir, Options{})
		if err == nil || d != nil || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (want %v containing %q)", c.name, err, c.kind, c.want)
		}
	}
	if _, err := Load("npy", filepath.Join(t.TempDir(), "nothere"), Options{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing folder: %v", err)
	}
}

// TestReadNPYSamplesNoRows: the reader words a file of no rows as every
// input reader does ("PATH holds no rows"), for every caller (drknn-predict
// -npy used to read the header again to say so).
func TestReadNPYSamplesNoRows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x0.npy")
	writeTestFile(t, p, npyFile("<f4", []int{0, 3, 4}, nil))
	_, _, _, _, err := ReadNPYSamples(p)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p+" holds no rows (shape [0 3 4])") {
		t.Fatalf("ReadNPYSamples of no rows: %v", err)
	}
}

// TestReadNPYSamplesNonFinite: a sample holding a value that is not a
// finite float32 is described as the file holds it — 1e+300 in a float64
// file, not the +Inf it rounds to — at its index within the sample in the
// file's own order (h, w, c of channels-last images, which are transposed
// for the model).
func TestReadNPYSamplesNonFinite(t *testing.T) {
	dir := t.TempDir()
	f64le := func(v ...float64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	// 2 samples of 2×2×3 (channels last): sample 1 holds 1e300 at (0, 1, 2)
	vals := make([]float64, 24)
	vals[12+1*3+2] = 1e300
	p := filepath.Join(dir, "img.npy")
	writeTestFile(t, p, npyFile("<f8", []int{2, 2, 2, 3}, f64le(vals...)))
	_, _, shape, bad, err := ReadNPYSamples(p)
	if err != nil || !slices.Equal(shape, []int{3, 2, 2}) {
		t.Fatalf("shape %v, %v", shape, err)
	}
	if len(bad) != 1 || bad[1] != (NonFinite{"(0, 1, 2)", 1e300}) {
		t.Fatalf("non-finite %v", bad)
	}
	p = filepath.Join(dir, "rows.npy")
	writeTestFile(t, p, npyFile("<f8", []int{3, 2}, f64le(0, 1, 2, -1e39, math.Inf(1), 0)))
	if _, _, _, bad, err = ReadNPYSamples(p); err != nil || len(bad) != 2 || bad[1] != (NonFinite{"1", -1e39}) || bad[2] != (NonFinite{"0", math.Inf(1)}) {
		t.Fatalf("non-finite %v, %v", bad, err)
	}
}

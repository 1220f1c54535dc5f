package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	snpy "github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/drknn/drknn/internal/numpytest"
)

// rawFile builds a .npy file by hand: any version, any dictionary text,
// any payload.
func rawFile(major byte, dict string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteByte(major)
	b.WriteByte(0)
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(dict)))
	}
	b.WriteString(dict)
	b.Write(payload)
	return b.Bytes()
}

func f64bytes(order binary.ByteOrder, v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		order.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func f32bytes(order binary.ByteOrder, v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		order.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func i32bytes(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func sample(rows, cols int) []float64 {
	v := make([]float64, rows*cols)
	for i := range v {
		v[i] = float64(i)/7 - 3
	}
	return v
}

func TestRoundTripMatrix(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.npy")
	want := sample(3, 5)
	want[1] = math.Copysign(0, -1)
	want[2] = math.SmallestNonzeroFloat64
	want[3] = math.MaxFloat64
	if err := WriteFloat64(p, want, 3, 5); err != nil {
		t.Fatal(err)
	}
	got, r, c, err := ReadMatrix(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if r != 3 || c != 5 {
		t.Fatalf("shape %d×%d, want 3×5", r, c)
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("element %d: %v, want %v", i, got[i], want[i])
		}
	}
	// Header padded to 64 bytes as numpy.save does.
	b, _ := os.ReadFile(p)
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	if (10+hl)%64 != 0 || len(b) != 10+hl+8*15 {
		t.Fatalf("header length %d not 64-aligned or file size %d wrong", hl, len(b))
	}
	// No temporary files left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want 1", len(ents))
	}
	// npyio, an independent reader, sees the same matrix.
	var m mat.Dense
	if err := snpy.Read(bytes.NewReader(b), &m); err != nil {
		t.Fatal(err)
	}
	if mr, mc := m.Dims(); mr != 3 || mc != 5 || m.At(2, 4) != want[14] || m.At(1, 0) != want[5] {
		t.Fatalf("npyio reads %d×%d, At(2,4)=%v", mr, mc, m.At(2, 4))
	}
}

func TestRoundTripVectors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "v.npy")
	if err := WriteFloat64(p, []float64{1.5, -2}, 2); err != nil {
		t.Fatal(err)
	}
	v, shape, err := ReadFloat64(p, false)
	if err != nil || len(shape) != 1 || shape[0] != 2 || v[0] != 1.5 || v[1] != -2 {
		t.Fatalf("got %v %v %v", v, shape, err)
	}
	if _, _, _, err := ReadMatrix(p, false); !errors.Is(err, ErrRank) || !strings.Contains(err.Error(), p) {
		t.Fatalf("rank-1 file read as matrix: %v", err)
	}
	l := filepath.Join(dir, "y.npy")
	labels := []int64{0, 4, -1, math.MaxInt64, math.MinInt64}
	if err := WriteInt64(l, labels); err != nil {
		t.Fatal(err)
	}
	got, err := ReadInt64(l)
	if err != nil {
		t.Fatal(err)
	}
	for i := range labels {
		if got[i] != labels[i] {
			t.Fatalf("label %d: %d, want %d", i, got[i], labels[i])
		}
	}
	var viaNpyio []int64
	b, _ := os.ReadFile(l)
	if err := snpy.Read(bytes.NewReader(b), &viaNpyio); err != nil || len(viaNpyio) != 5 || viaNpyio[3] != math.MaxInt64 {
		t.Fatalf("npyio reads %v, %v", viaNpyio, err)
	}
	// Labels read as floats, or floats as labels: a dtype error.
	if _, _, err := ReadFloat64(l, false); !errors.Is(err, ErrDtype) {
		t.Fatalf("int file read as float: %v", err)
	}
	if _, err := ReadInt64(p); !errors.Is(err, ErrDtype) {
		t.Fatalf("float file read as int: %v", err)
	}
	// Overwriting an existing file replaces it.
	if err := WriteInt64(l, []int64{7}); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadInt64(l); err != nil || len(got) != 1 || got[0] != 7 {
		t.Fatalf("after overwrite: %v %v", got, err)
	}
	// Empty arrays are legal.
	if err := WriteFloat64(p, nil, 0, 4); err != nil {
		t.Fatal(err)
	}
	if v, r, c, err := ReadMatrix(p, true); err != nil || len(v) != 0 || r != 0 || c != 4 {
		t.Fatalf("empty matrix: %v %d %d %v", v, r, c, err)
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		data  []float64
		shape []int
	}{
		{[]float64{1, 2, 3}, []int{2, 2}},
		{[]float64{1}, nil},
		{[]float64{1}, []int{1, 1, 1}},
		{[]float64{}, []int{-1, 0}},
	} {
		if err := WriteFloat64(filepath.Join(dir, "x.npy"), tc.data, tc.shape...); err == nil {
			t.Errorf("shape %v with %d elements accepted", tc.shape, len(tc.data))
		}
	}
	if err := WriteInt64(filepath.Join(dir, "missing", "y.npy"), []int64{1}); err == nil ||
		!strings.Contains(err.Error(), "y.npy") {
		t.Errorf("write into a missing directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left %d files", len(ents))
	}
}

func TestDecodeVariants(t *testing.T) {
	// float32, Fortran order, big-endian, version 2 and 3, double quotes,
	// odd spacing and key order: all read as the same 2×3 matrix.
	want := []float64{1, 2, 3, 4, 5, 6} // C order of [[1 2 3] [4 5 6]]
	fortran := []float64{1, 4, 2, 5, 3, 6}
	cases := map[string][]byte{
		"f8 C":        rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n", f64bytes(binary.LittleEndian, want...)),
		"f8 Fortran":  rawFile(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n", f64bytes(binary.LittleEndian, fortran...)),
		"f4":          rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f32bytes(binary.LittleEndian, 1, 2, 3, 4, 5, 6)),
		">f8":         rawFile(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }\n", f64bytes(binary.BigEndian, want...)),
		">f4 Fortran": rawFile(2, "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }\n", f32bytes(binary.BigEndian, 1, 4, 2, 5, 3, 6)),
		"v3 reorder":  rawFile(3, "{ \"shape\":(2,3),'fortran_order':False,'descr':'<f8'}   \n", f64bytes(binary.LittleEndian, want...)),
		"long ints":   rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }\n", f64bytes(binary.LittleEndian, want...)),
	}
	for name, b := range cases {
		got, shape, err := DecodeFloat64(bytes.NewReader(b), true)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(shape) != 2 || shape[0] != 2 || shape[1] != 3 {
			t.Errorf("%s: shape %v", name, shape)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: got %v, want %v", name, got, want)
				break
			}
		}
	}
	// int32 labels widen; Fortran order for int matrices too.
	v, shape, err := DecodeInt64(bytes.NewReader(rawFile(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }\n", i32bytes(1, -3, 2, 4))))
	if err != nil || shape[0] != 2 || v[0] != 1 || v[1] != 2 || v[2] != -3 || v[3] != 4 {
		t.Fatalf("int32 Fortran: %v %v %v", v, shape, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", f64bytes(binary.LittleEndian, 1, 2))
	if _, _, err := DecodeFloat64(bytes.NewReader(good), true); err != nil {
		t.Fatal(err)
	}
	// Every proper prefix of a valid file is an error, never a panic.
	for n := 0; n < len(good); n++ {
		if _, _, err := DecodeFloat64(bytes.NewReader(good[:n]), true); !errors.Is(err, ErrFormat) {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}
	cases := map[string]struct {
		b    []byte
		want error
	}{
		"magic":       {append([]byte("\x93NUMPX"), good[6:]...), ErrFormat},
		"version":     {append(append([]byte(magic), 4, 0), good[8:]...), ErrFormat},
		"extra":       {append(append([]byte{}, good...), 0), ErrFormat},
		"no newline":  {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f64bytes(binary.LittleEndian, 1, 2)), ErrFormat},
		"missing key": {rawFile(1, "{'descr': '<f8', 'shape': (2,), }\n", f64bytes(binary.LittleEndian, 1, 2)), ErrFormat},
		"extra key":   {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", f64bytes(binary.LittleEndian, 1, 2)), ErrFormat},
		"dup key":     {rawFile(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", nil), ErrFormat},
		"bad bool":    {rawFile(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }\n", nil), ErrFormat},
		"neg dim":     {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }\n", nil), ErrFormat},
		"paren int":   {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }\n", f64bytes(binary.LittleEndian, 1, 2)), ErrFormat},
		"huge":        {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }\n", nil), ErrFormat},
		"huge v2":     {append(append([]byte(magic), 2, 0), 0xff, 0xff, 0xff, 0xff), ErrFormat},
		"short data":  {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n", f64bytes(binary.LittleEndian, 1, 2)), ErrFormat},
		"i8 as f":     {rawFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n", make([]byte, 16)), ErrDtype},
		"c16":         {rawFile(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }\n", make([]byte, 16)), ErrDtype},
		"u1":          {rawFile(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }\n", make([]byte, 1)), ErrDtype},
		"structured":  {rawFile(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }\n", make([]byte, 8)), ErrFormat},
		"rank 0":      {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", make([]byte, 8)), ErrRank},
		"rank 3":      {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1), }\n", make([]byte, 8)), ErrRank},
		"NaN":         {rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }\n", f64bytes(binary.LittleEndian, 1, math.NaN())), ErrNonFinite},
		"Inf f4":      {rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", f32bytes(binary.LittleEndian, float32(math.Inf(-1)), 1)), ErrNonFinite},
	}
	for name, tc := range cases {
		_, _, err := DecodeFloat64(bytes.NewReader(tc.b), true)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
	// NaN is accepted when the caller does not ask to reject it.
	nan := cases["NaN"].b
	if v, _, err := DecodeFloat64(bytes.NewReader(nan), false); err != nil || !math.IsNaN(v[1]) {
		t.Errorf("NaN with rejectNonFinite=false: %v %v", v, err)
	}
	// File-level errors name the file and the offending element.
	p := filepath.Join(t.TempDir(), "bad.npy")
	os.WriteFile(p, nan, 0o644)
	_, _, _, err := ReadMatrix(p, true)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "(0, 1)") {
		t.Errorf("error %v should name %s and element (0, 1)", err, p)
	}
	if _, err := ReadInt64(filepath.Join(t.TempDir(), "absent.npy")); err == nil || !strings.Contains(err.Error(), "absent.npy") {
		t.Errorf("missing file: %v", err)
	}
	y := filepath.Join(t.TempDir(), "y2.npy")
	os.WriteFile(y, rawFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }\n", make([]byte, 8)), 0o644)
	if _, err := ReadInt64(y); !errors.Is(err, ErrRank) {
		t.Errorf("rank-2 labels: %v", err)
	}
}

// TestNumPy checks against NumPy itself: np.load reads our files exactly,
// np.save writes byte-identical files, and we read what NumPy writes
// (float32, Fortran order, big-endian, int32).
func TestNumPy(t *testing.T) {
	py := numpytest.Python(t)
	dir := t.TempDir()
	x := sample(4, 3)
	x[0] = math.Copysign(0, -1)
	x[1] = 5e-324
	x[2] = 1e308
	if err := WriteFloat64(filepath.Join(dir, "go_x.npy"), x, 4, 3); err != nil {
		t.Fatal(err)
	}
	if err := WriteInt64(filepath.Join(dir, "go_y.npy"), []int64{0, 1, 2, -5, 1 << 40}); err != nil {
		t.Fatal(err)
	}
	script := `
import numpy as np, sys, os
d = sys.argv[1]
x = np.load(os.path.join(d, "go_x.npy"))
y = np.load(os.path.join(d, "go_y.npy"))
want = np.arange(12, dtype=np.float64).reshape(4, 3) / 7 - 3
want[0, 0] = -0.0; want[0, 1] = 5e-324; want[0, 2] = 1e308
assert x.dtype == np.float64 and x.shape == (4, 3) and x.flags.c_contiguous, (x.dtype, x.shape)
assert x.tobytes() == want.tobytes(), (x, want)
assert y.dtype == np.int64 and y.shape == (5,) and list(y) == [0, 1, 2, -5, 1 << 40], y
np.save(os.path.join(d, "np_x.npy"), want)
np.save(os.path.join(d, "np_y.npy"), np.array([0, 1, 2, -5, 1 << 40], dtype=np.int64))
np.save(os.path.join(d, "np_f32.npy"), want.astype(np.float32))
np.save(os.path.join(d, "np_fortran.npy"), np.asfortranarray(want))
np.save(os.path.join(d, "np_big.npy"), want.astype(">f8"))
np.save(os.path.join(d, "np_i32.npy"), np.array([3, -1, 7], dtype=np.int32))
np.save(os.path.join(d, "np_vec.npy"), want[:, 1].copy())
print("ok")
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("NumPy rejected our files: %v\n%s", err, out)
	}
	for _, pair := range [][2]string{{"go_x.npy", "np_x.npy"}, {"go_y.npy", "np_y.npy"}} {
		a, _ := os.ReadFile(filepath.Join(dir, pair[0]))
		b, _ := os.ReadFile(filepath.Join(dir, pair[1]))
		if !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ:\n%q\n%q", pair[0], pair[1], a[:64], b[:64])
		}
	}
	for _, name := range []string{"np_x.npy", "np_fortran.npy", "np_big.npy", "np_f32.npy"} {
		// float32 turns 1e308 into +Inf, so only reject non-finite for f8.
		got, r, c, err := ReadMatrix(filepath.Join(dir, name), name != "np_f32.npy")
		if err != nil || r != 4 || c != 3 {
			t.Fatalf("%s: %d×%d %v", name, r, c, err)
		}
		for i := range x {
			w := x[i]
			if name == "np_f32.npy" {
				w = float64(float32(w))
			}
			if math.Float64bits(got[i]) != math.Float64bits(w) {
				t.Fatalf("%s element %d: %v, want %v", name, i, got[i], w)
			}
		}
	}
	v, shape, err := ReadFloat64(filepath.Join(dir, "np_vec.npy"), true)
	if err != nil || len(shape) != 1 || shape[0] != 4 || v[3] != x[10] {
		t.Fatalf("np_vec: %v %v %v", v, shape, err)
	}
	l, err := ReadInt64(filepath.Join(dir, "np_i32.npy"))
	if err != nil || len(l) != 3 || l[0] != 3 || l[1] != -1 || l[2] != 7 {
		t.Fatalf("np_i32: %v %v", l, err)
	}
}

func FuzzDecode(f *testing.F) {
	var b bytes.Buffer
	EncodeFloat64(&b, sample(2, 3), 2, 3)
	f.Add(b.Bytes())
	b.Reset()
	EncodeInt64(&b, []int64{1, 2, 3}, 3)
	f.Add(b.Bytes())
	f.Add(rawFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", f32bytes(binary.LittleEndian, 1, 2, 3, 4)))
	f.Add(rawFile(2, "{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }\n", i32bytes(9)))
	f.Add(rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", make([]byte, 8)))
	f.Add([]byte("\x93NUMPY\x01\x00\x04\x00abcd"))
	// Every integer dtype the label reader takes (DecodeInt64), a uint64
	// beyond int64, and a Fortran-order uint16 matrix.
	f.Add(rawFile(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }\n", []byte{0, 1, 0xff}))
	f.Add(rawFile(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }\n", []byte{0, 1, 0xff}))
	f.Add(rawFile(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }\n", []byte{1, 0, 0, 0x80}))
	f.Add(rawFile(1, "{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }\n", []byte{0, 1, 0xff, 0xff}))
	f.Add(rawFile(1, "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2), }\n", []byte{1, 0, 3, 0, 2, 0, 4, 0}))
	f.Add(rawFile(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }\n", []byte{7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}))
	f.Add(rawFile(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }\n", append(make([]byte, 8), bytes.Repeat([]byte{0xff}, 8)...)))
	f.Add(rawFile(1, "{'descr': '>u8', 'fortran_order': False, 'shape': (1,), }\n", []byte{0, 0, 0, 0, 0, 0, 0, 5}))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, shape, err := DecodeFloat64(bytes.NewReader(data), false)
		if err == nil {
			// Whatever decodes re-encodes and decodes to the same bits.
			var out bytes.Buffer
			if err := EncodeFloat64(&out, v, shape...); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			w, shape2, err := DecodeFloat64(&out, false)
			if err != nil || len(w) != len(v) || len(shape2) != len(shape) {
				t.Fatalf("round trip: %v", err)
			}
			for i := range v {
				if math.Float64bits(v[i]) != math.Float64bits(w[i]) {
					t.Fatalf("element %d changed", i)
				}
			}
		} else if !IsFormatError(err) {
			t.Fatalf("unclassified error %v", err)
		}
		iv, ishape, err := DecodeInt64(bytes.NewReader(data))
		if err != nil {
			if iv != nil || !IsFormatError(err) {
				t.Fatalf("ints %v with error %v", iv, err)
			}
			return
		}
		if len(iv) > len(data) {
			t.Fatalf("decoded %d ints from %d bytes", len(iv), len(data))
		}
		// The general reader (Decode, Int64) agrees, value for value.
		a, err := Decode(bytes.NewReader(data))
		if err != nil || a.Kind == Float || !slices.Equal(a.Shape, ishape) {
			t.Fatalf("DecodeInt64 took what Decode reads as %+v, %v", a, err)
		}
		if w, err := a.Int64(); err != nil || !slices.Equal(w, iv) {
			t.Fatalf("DecodeInt64 %v, Decode.Int64 %v (%v)", iv, w, err)
		}
	})
}

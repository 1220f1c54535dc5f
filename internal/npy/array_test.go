package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/numpytest"
)

// TestDecodeArrayHandBuilt: n-d shapes, every integer width, both byte
// orders, Fortran order of rank 3, and a scalar.
func TestDecodeArrayHandBuilt(t *testing.T) {
	dict := func(descr, fortran, shape string) string {
		return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n"
	}
	// uint8 2×2×3, C order: values 0…11 scaled by 20.
	u8 := make([]byte, 12)
	for i := range u8 {
		u8[i] = byte(20 * i)
	}
	a, err := Decode(bytes.NewReader(rawFile(1, dict("|u1", "False", "(2, 2, 3)"), u8)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Float32(true)
	if err != nil || len(f) != 12 || f[11] != 220 || a.Kind != Uint || a.Size != 1 || len(a.Shape) != 3 {
		t.Fatalf("u1: %v %v %+v", f, err, a.Header)
	}
	// The same array stored in Fortran order: element (i,j,k) at i + 2j + 4k.
	ft := make([]byte, 12)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			for k := 0; k < 3; k++ {
				ft[i+2*j+4*k] = u8[i*6+j*3+k]
			}
		}
	}
	b, err := Decode(bytes.NewReader(rawFile(1, dict("|u1", "True", "(2, 2, 3)"), ft)))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := b.Float32(true)
	for i := range f {
		if f[i] != g[i] {
			t.Fatalf("Fortran rank 3: %v, want %v", g, f)
		}
	}
	// Integers of every width and both orders.
	for _, c := range []struct {
		descr   string
		payload []byte
		want    []int64
	}{
		{"|i1", []byte{0xff, 0x7f, 0x80}, []int64{-1, 127, -128}},
		{"<i2", []byte{0xfe, 0xff, 0x01, 0x00, 0x00, 0x80}, []int64{-2, 1, -32768}},
		{">i2", []byte{0xff, 0xfe, 0x00, 0x01, 0x80, 0x00}, []int64{-2, 1, -32768}},
		{"<u2", []byte{0xff, 0xff, 0x01, 0x00, 0x00, 0x80}, []int64{65535, 1, 32768}},
		{">u4", []byte{0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0, 0, 1, 0}, []int64{7, 4294967295, 256}},
		{"<i8", append(binary.LittleEndian.AppendUint64(nil, uint64(1<<62)), make([]byte, 16)...), []int64{1 << 62, 0, 0}},
	} {
		a, err := Decode(bytes.NewReader(rawFile(1, dict(c.descr, "False", "(3,)"), c.payload)))
		if err != nil {
			t.Fatalf("%s: %v", c.descr, err)
		}
		got, err := a.Int64()
		if err != nil || len(got) != 3 || got[0] != c.want[0] || got[1] != c.want[1] || got[2] != c.want[2] {
			t.Errorf("%s: %v %v, want %v", c.descr, got, err, c.want)
		}
	}
	// A uint64 above the int64 range, floats as labels, a scalar.
	a, _ = Decode(bytes.NewReader(rawFile(1, dict("<u8", "False", "(1,)"), bytes.Repeat([]byte{0xff}, 8))))
	if _, err := a.Int64(); err == nil || !strings.Contains(err.Error(), "int64 range") {
		t.Errorf("huge uint64: %v", err)
	}
	a, _ = Decode(bytes.NewReader(rawFile(1, dict("<f4", "False", "(1,)"), f32bytes(binary.LittleEndian, 1))))
	if _, err := a.Int64(); !errors.Is(err, ErrDtype) {
		t.Errorf("float labels: %v", err)
	}
	a, err = Decode(bytes.NewReader(rawFile(1, dict("<f8", "False", "()"), f64bytes(binary.LittleEndian, 2.5))))
	if v, _ := a.Float32(true); err != nil || len(v) != 1 || v[0] != 2.5 {
		t.Errorf("scalar: %v %v", v, err)
	}
	// Non-finite values and float64 beyond float32 when asked.
	for _, x := range []float64{math.NaN(), math.Inf(-1), 1e300} {
		a, _ := Decode(bytes.NewReader(rawFile(1, dict("<f8", "False", "(1, 1)"), f64bytes(binary.LittleEndian, x))))
		if _, err := a.Float32(true); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "(0, 0)") {
			t.Errorf("%v: %v", x, err)
		}
		if _, err := a.Float32(false); err != nil {
			t.Errorf("%v accepted without the check: %v", x, err)
		}
	}
	// Dtypes that stay unsupported; the rank-1/2 float reader refuses
	// integers (the integer reader takes every width: TestReadInt64Dtypes).
	for _, d := range []string{"<f2", "|u2", "<b1", "<c8", "|O", "<U5", "<i3"} {
		if _, err := Decode(bytes.NewReader(rawFile(1, dict(d, "False", "(1,)"), make([]byte, 8)))); !errors.Is(err, ErrDtype) {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, _, err := DecodeFloat64(bytes.NewReader(rawFile(1, dict("<i2", "False", "(1,)"), make([]byte, 2))), true); !errors.Is(err, ErrDtype) {
		t.Errorf("DecodeFloat64 of int16: %v", err)
	}
}

// TestNumPyArrays: files numpy.save writes (n-d uint8, every integer type,
// Fortran n-d, big-endian) read back to NumPy's own values.
func TestNumPyArrays(t *testing.T) {
	py := numpytest.Python(t)
	dir := t.TempDir()
	script := `
import numpy as np, sys, os
d = sys.argv[1]
x = (np.arange(2*3*4*5) * 7 % 256).astype(np.uint8).reshape(2, 3, 4, 5)
np.save(os.path.join(d, "u8.npy"), x)
np.save(os.path.join(d, "u8f.npy"), np.asfortranarray(x))
np.save(os.path.join(d, "f4.npy"), (x.astype(np.float32) / 3).reshape(2, 60))
np.save(os.path.join(d, "f8big.npy"), (x.astype(">f8") / 3))
for t in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", ">i2", ">u4"]:
    np.save(os.path.join(d, "y_" + t.replace(">", "big") + ".npy"), np.array([0, 5, 2, 127], dtype=t))
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := make([]float32, 120)
	for i := range want {
		want[i] = float32(i * 7 % 256)
	}
	for _, name := range []string{"u8.npy", "u8f.npy", "f4.npy", "f8big.npy"} {
		a, err := Read(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		v, err := a.Float32(true)
		if err != nil || len(v) != 120 {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range v {
			w := want[i]
			if name == "f4.npy" || name == "f8big.npy" {
				w = float32(float64(want[i]) / 3)
				if name == "f4.npy" {
					w = want[i] / 3
				}
			}
			if v[i] != w {
				t.Fatalf("%s element %d: %v, want %v", name, i, v[i], w)
			}
		}
		if name == "u8.npy" && (len(a.Shape) != 4 || a.Shape[3] != 5 || a.Descr != "|u1") {
			t.Fatalf("u8 header %+v", a.Header)
		}
	}
	for _, ty := range []string{"i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "bigi2", "bigu4"} {
		a, err := Read(filepath.Join(dir, "y_"+ty+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		y, err := a.Int64()
		if err != nil || len(y) != 4 || y[1] != 5 || y[3] != 127 {
			t.Errorf("%s: %v %v", ty, y, err)
		}
		// the label reader (drknn-lfd -labels, exports) takes each too
		if y, err := ReadInt64(filepath.Join(dir, "y_"+ty+".npy")); err != nil || len(y) != 4 || y[1] != 5 || y[3] != 127 {
			t.Errorf("ReadInt64 %s: %v %v", ty, y, err)
		}
	}
}

// FuzzDecodeArray: any bytes decode to a consistent array or fail with a
// format error; never a panic, never more elements than bytes.
func FuzzDecodeArray(f *testing.F) {
	f.Add(rawFile(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 1, 3), }\n", []byte{1, 2, 3, 4, 5, 6}))
	f.Add(rawFile(1, "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }\n", []byte{0, 1, 0, 2}))
	f.Add(rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", make([]byte, 8)))
	f.Add(rawFile(3, "{'descr': '<u8', 'fortran_order': False, 'shape': (1, 0, 4), }\n", nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Decode(bytes.NewReader(data))
		if err != nil {
			if a != nil || !IsFormatError(err) {
				t.Fatalf("array %v with error %v", a, err)
			}
			return
		}
		if a.Len()*a.Size > len(data) {
			t.Fatalf("%d elements of %d bytes from %d bytes", a.Len(), a.Size, len(data))
		}
		v, err := a.Float32(false)
		if err != nil || len(v) != a.Len() {
			t.Fatalf("Float32: %d values, %v", len(v), err)
		}
		if a.Kind != Float {
			if n, err := a.Int64(); err == nil && len(n) != a.Len() {
				t.Fatalf("Int64: %d values", len(n))
			}
		}
	})
}

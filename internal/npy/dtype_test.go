package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDtypeErrors: a file of a dtype a reader does not take is refused
// with one line naming the file, the dtype found (as written and by its
// NumPy name) and what that reader accepts — labels read as labels are
// told the integer dtypes, not the package's every dtype (an object or
// complex label file used to be told "float64, float32, or …").
func TestDtypeErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(descr string, size int) string {
		p := filepath.Join(dir, strings.NewReplacer("<", "le-", ">", "be-", "|", "na-", "[", "", "]", "").Replace(descr)+".npy")
		if err := os.WriteFile(p, rawFile(1, "{'descr': '"+descr+"', 'fortran_order': False, 'shape': (2, 2), }\n", make([]byte, 4*size)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	floats := func(p string) error { _, _, _, err := ReadMatrix(p, true); return err }
	ints := func(p string) error { _, err := ReadInt64(p); return err }
	anyArray := func(p string) error { _, err := Read(p); return err }
	intArray := func(p string) error { _, err := ReadInts(p); return err }
	intValues := func(p string) error {
		a, err := Read(p)
		if err != nil {
			return err
		}
		_, err = a.Int64()
		return fmt.Errorf("npy: %s: %w", p, err)
	}
	const (
		wantFloat = "want float64 or float32"
		wantAny   = "want float64, float32, or a signed or unsigned integer of 1, 2, 4 or 8 bytes"
		wantInts  = "want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)"
	)
	for _, c := range []struct {
		descr string
		size  int
		read  func(string) error
		named string // the dtype's name in the message
		want  string
	}{
		{"<f4", 4, ints, "float32", wantInts},
		{">f4", 4, ints, "float32, big-endian", wantInts},
		{"<f8", 8, ints, "float64", wantInts},
		{"<f2", 2, ints, "float16", wantInts},
		{"|b1", 1, ints, "bool", wantInts},
		{"|O", 8, ints, "Python objects", wantInts},
		{"<c16", 16, ints, "complex128", wantInts},
		{"<i8", 8, floats, "int64", wantFloat},
		{">i2", 2, floats, "int16, big-endian", wantFloat},
		{"<c8", 8, floats, "complex64", wantFloat},
		{"<f2", 2, floats, "float16", wantFloat},
		{"|b1", 1, floats, "bool", wantFloat},
		{"<U3", 12, floats, "Unicode strings of 3 characters", wantFloat},
		{"|S1", 1, floats, "byte strings of 1 byte", wantFloat},
		{"<M8[ns]", 8, floats, "datetime64[ns]", wantFloat},
		{"|V16", 16, floats, "raw records of 16 bytes", wantFloat},
		{"|O", 8, anyArray, "Python objects", wantAny},
		{">c16", 16, anyArray, "complex128, big-endian", wantAny},
		{"|O", 8, intArray, "Python objects", wantInts},
		{"<f8", 8, intArray, "float64", wantInts},
		{"<f4", 4, intValues, "float32", wantInts},
	} {
		p := file(c.descr, c.size)
		err := c.read(p)
		want := p + `: unsupported dtype "` + c.descr + `" (` + c.named + "): " + c.want
		if !errors.Is(err, ErrDtype) || !IsFormatError(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant one line containing %q", c.descr, err, want)
		}
	}
}

func TestDtypeName(t *testing.T) {
	for descr, want := range map[string]string{
		"<f8": "float64", "=f4": "float32", ">u4": "uint32, big-endian", "|b1": "bool", "<m8[s]": "timedelta64[s]",
		"": "not a NumPy dtype", "<": "not a NumPy dtype", "<x4": "not a NumPy dtype", "<f": "not a NumPy dtype",
		"<f99999999999999999999": "not a NumPy dtype", "<U-1": "not a NumPy dtype", "<M8[n\ns]": "not a NumPy dtype",
	} {
		if got := DtypeName(descr); got != want {
			t.Errorf("DtypeName(%q) = %q, want %q", descr, got, want)
		}
	}
}

// FuzzDtypeName: any descr string (from a file's header) is named without
// a panic, on one line.
func FuzzDtypeName(f *testing.F) {
	for _, s := range []string{"<f8", ">c16", "|O", "<U3", "<M8[ns]", "|V16", "", "<", "<f", "<U-1", "<m8[", "=b1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, descr string) {
		name := DtypeName(descr)
		if name == "" || strings.ContainsAny(name, "\n\r") {
			t.Fatalf("DtypeName(%q) = %q", descr, name)
		}
		_ = (&DtypeError{Descr: descr, Want: "x"}).Error()
	})
}

// TestReadInt64Dtypes: the label reader (ReadInt64: drknn-lfd's -labels,
// an export's labels) takes every integer dtype NumPy writes — int8,
// int16, int32, int64, uint8, uint16, uint32, uint64, either byte order,
// C or Fortran order — widened to int64; it used to take int64 and int32
// only. A uint64 beyond the int64 range is refused naming the element;
// floats stay refused even when every value is whole (labels saved as
// float64 by mistake), naming the dtype and the integer dtypes.
func TestReadInt64Dtypes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, descr, shape string, payload []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, rawFile(1, "{'descr': '"+descr+"', 'fortran_order': "+
			map[bool]string{true: "True", false: "False"}[strings.HasSuffix(name, "-f.npy")]+", 'shape': "+shape+", }\n", payload), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	le, be := binary.LittleEndian, binary.BigEndian
	for _, c := range []struct {
		descr   string
		payload []byte
		want    []int64
	}{
		{"|i1", []byte{0, 2, 0xff, 0x7f}, []int64{0, 2, -1, 127}},
		{"|u1", []byte{0, 2, 0xff, 0x7f}, []int64{0, 2, 255, 127}},
		{"<i2", le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(nil, 0), 2), 0x8000), 300), []int64{0, 2, -32768, 300}},
		{">i2", be.AppendUint16(be.AppendUint16(be.AppendUint16(be.AppendUint16(nil, 0), 2), 0xffff), 300), []int64{0, 2, -1, 300}},
		{"<u2", le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(nil, 0), 2), 0xffff), 300), []int64{0, 2, 65535, 300}},
		{">u2", be.AppendUint16(be.AppendUint16(be.AppendUint16(be.AppendUint16(nil, 0), 2), 0xffff), 300), []int64{0, 2, 65535, 300}},
		{"<u4", le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 0), 2), 0xffffffff), 300), []int64{0, 2, 4294967295, 300}},
		{">u4", be.AppendUint32(be.AppendUint32(be.AppendUint32(be.AppendUint32(nil, 0), 2), 0xffffffff), 300), []int64{0, 2, 4294967295, 300}},
		{"=i4", le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 0), 2), 0xffffffff), 300), []int64{0, 2, -1, 300}},
		{"<u8", le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0), 2), math.MaxInt64), 300), []int64{0, 2, math.MaxInt64, 300}},
		{">u8", be.AppendUint64(be.AppendUint64(be.AppendUint64(be.AppendUint64(nil, 0), 2), 7), 300), []int64{0, 2, 7, 300}},
		{"<i8", le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0), 2), math.MaxUint64), 300), []int64{0, 2, -1, 300}},
	} {
		p := write(strings.NewReplacer("<", "le-", ">", "be-", "|", "na-", "=", "ne-").Replace(c.descr)+".npy", c.descr, "(4,)", c.payload)
		got, err := ReadInt64(p)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.descr, got, err, c.want)
		}
	}
	// Fortran order: a 2×2 uint16 matrix stored column by column.
	v, shape, err := DecodeInt64(bytes.NewReader(rawFile(1, "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2), }\n",
		le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(nil, 1), 3), 2), 4))))
	if err != nil || !slices.Equal(v, []int64{1, 2, 3, 4}) || !slices.Equal(shape, []int{2, 2}) {
		t.Errorf("Fortran uint16: %v %v %v", v, shape, err)
	}
	// A uint64 beyond int64, named by its index.
	p := write("huge.npy", "<u8", "(3,)", le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0), 1), 1<<63))
	if _, err := ReadInt64(p); err == nil || !IsFormatError(err) ||
		!strings.Contains(err.Error(), p+": integer out of range: element 2 is 9223372036854775808, beyond the int64 range") {
		t.Errorf("uint64 2^63: %v", err)
	}
	// Whole-valued floats stay refused, with the dtype error.
	p = write("whole.npy", "<f8", "(3,)", f64bytes(le, 0, 1, 2))
	want := p + `: unsupported dtype "<f8" (float64): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`
	if _, err := ReadInt64(p); !errors.Is(err, ErrDtype) || !strings.Contains(err.Error(), want) {
		t.Errorf("whole-valued float64: %v\nwant %q", err, want)
	}
}

package npy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		wantInt   = "want int64 or int32"
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
		{"<f4", 4, ints, "float32", wantInt},
		{">f4", 4, ints, "float32, big-endian", wantInt},
		{"|i1", 1, ints, "int8", wantInt},
		{"|u1", 1, ints, "uint8", wantInt},
		{"<u8", 8, ints, "uint64", wantInt},
		{"|O", 8, ints, "Python objects", wantInt},
		{"<c16", 16, ints, "complex128", wantInt},
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

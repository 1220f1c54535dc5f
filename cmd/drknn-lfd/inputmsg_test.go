package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawNPY writes a .npy of dtype descr and shape (a Python tuple, "(6,)")
// with size zero bytes of data: what numpy.save writes for dtypes the
// command does not read (object, complex, big-endian float32, …).
func rawNPY(t *testing.T, path, descr, shape string, size int) string {
	t.Helper()
	return payloadNPY(t, path, descr, shape, make([]byte, size))
}

// payloadNPY writes a .npy of dtype descr and shape with the given data
// bytes, as numpy.save lays it out.
func payloadNPY(t *testing.T, path, descr, shape string, payload []byte) string {
	t.Helper()
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	dict += strings.Repeat(" ", (64-(10+len(dict)+1)%64)%64) + "\n"
	b := append([]byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(dict)), byte(len(dict) >> 8)}, dict...)
	if err := os.WriteFile(path, append(b, payload...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInputMessages: bad labels and files of the wrong dtype are bad input
// (exit 2) with one line naming the file: a class without points names the
// labels file (it used to be optlayer's "class 1 has no point" alone), and
// a dtype error names the file, the dtype found by NumPy's name and what
// that input accepts (an object or complex labels file used to be told
// "want float64, float32, or … integer of 1, 2, 4 or 8 bytes").
func TestInputMessages(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	x, y := problem1D(t, 2, n, 2)
	cpath := writeF(t, filepath.Join(dir, "c.npy"), costs1D(x), n, n)
	xpath := writeF(t, filepath.Join(dir, "x.npy"), x, n, 1)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	ygap := writeI(t, filepath.Join(dir, "ygap.npy"), []int64{0, 2, 0, 2, 0, 3})
	out := filepath.Join(dir, "p.npy")
	file := func(name, descr, shape string, size int) string {
		return rawNPY(t, filepath.Join(dir, name), descr, shape, size)
	}
	labels := func(path string) []string {
		return []string{"-cost", cpath, "-labels", path, "-theta", "0.1", "-out", out}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"class without points", labels(ygap), "-labels " + ygap + ": class 1 has no point: labels must be 0…M−1 with every class present (M = 4, from the largest label 3)"},
		{"theta count", []string{"-cost", cpath, "-labels", ypath, "-theta", "0.1,0.2,0.3", "-out", out}, "want 1 or M = 2 (one per class; M from -labels " + ypath + ")"},
		{"float32 labels", labels(file("yf4.npy", "<f4", "(6,)", 4*n)), `yf4.npy: unsupported dtype "<f4" (float32): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`},
		{"object labels", labels(file("yo.npy", "|O", "(6,)", 8*n)), `yo.npy: unsupported dtype "|O" (Python objects): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`},
		{"complex labels", labels(file("yc.npy", "<c16", "(6,)", 16*n)), `yc.npy: unsupported dtype "<c16" (complex128): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`},
		{"big-endian float labels", labels(file("ybe.npy", ">f8", "(6,)", 8*n)), `ybe.npy: unsupported dtype ">f8" (float64, big-endian): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`},
		{"complex features", []string{"-features", file("xc.npy", "<c16", "(6, 1)", 16*n), "-labels", ypath, "-theta", "0.1", "-out", out},
			`xc.npy: unsupported dtype "<c16" (complex128): want float64 or float32`},
		{"int8 features", []string{"-features", file("xi1.npy", "|i1", "(6, 1)", n), "-labels", ypath, "-theta", "0.1", "-out", out},
			`xi1.npy: unsupported dtype "|i1" (int8): want float64 or float32`},
		{"object costs", []string{"-cost", file("co.npy", "|O", "(6, 6)", 8*n*n), "-labels", ypath, "-theta", "0.1", "-out", out},
			`co.npy: unsupported dtype "|O" (Python objects): want float64 or float32`},
		{"big-endian int costs", []string{"-cost", file("cbe.npy", ">i4", "(6, 6)", 4*n*n), "-labels", ypath, "-theta", "0.1", "-out", out},
			`cbe.npy: unsupported dtype ">i4" (int32, big-endian): want float64 or float32`},
		{"float16 grad-p", []string{"-cost", cpath, "-labels", ypath, "-theta", "0.1", "-out", out, "-grad-p", file("g2.npy", "<f2", "(2, 6)", 2*2*n),
			"-grad-out", filepath.Join(dir, "d.npy")}, `g2.npy: unsupported dtype "<f2" (float16): want float64 or float32`},
	}
	for _, c := range cases {
		code, so, se := runCmd(t, c.args...)
		if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and one line containing %q", c.name, code, so, se, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%s: -out written", c.name)
		}
	}
	if code, _, se := runCmd(t, "-features", xpath, "-labels", ypath, "-theta", "0.1", "-out", out); code != 0 {
		t.Fatalf("the good inputs: exit %d: %s", code, se)
	}
}

// TestLabelDtypes: -labels takes every integer dtype numpy.save writes —
// int8, int16, int32, int64, uint8, uint16, uint32, uint64, either byte
// order — and solves exactly as with int64 labels (it used to take int64
// and int32 only: an int8 or uint8 file, NumPy's choice for small class
// numbers, was refused). A uint64 label beyond the int64 range, and labels
// saved as floats even with whole values, are bad input (exit 2) in one
// line naming the file.
func TestLabelDtypes(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	x, y := problem1D(t, 2, n, 2)
	cpath := writeF(t, filepath.Join(dir, "c.npy"), costs1D(x), n, n)
	ppath := filepath.Join(dir, "p.npy")
	solve := func(labels string) (int, string, string) {
		t.Helper()
		defer os.Remove(ppath)
		return runCmd(t, "-cost", cpath, "-labels", labels, "-theta", "0.1", "-out", ppath)
	}
	code, want, se := solve(writeI(t, filepath.Join(dir, "y.npy"), y))
	if code != 0 {
		t.Fatalf("int64 labels: exit %d: %s", code, se)
	}
	var o out
	if err := json.Unmarshal([]byte(want), &o); err != nil {
		t.Fatal(err)
	}
	le, be := binary.LittleEndian, binary.BigEndian
	for _, c := range []struct {
		descr string
		put   func(b []byte, v int64) []byte
	}{
		{"|i1", func(b []byte, v int64) []byte { return append(b, byte(int8(v))) }},
		{"|u1", func(b []byte, v int64) []byte { return append(b, byte(v)) }},
		{"<i2", func(b []byte, v int64) []byte { return le.AppendUint16(b, uint16(v)) }},
		{">i2", func(b []byte, v int64) []byte { return be.AppendUint16(b, uint16(v)) }},
		{"<u2", func(b []byte, v int64) []byte { return le.AppendUint16(b, uint16(v)) }},
		{"<i4", func(b []byte, v int64) []byte { return le.AppendUint32(b, uint32(v)) }},
		{"<u4", func(b []byte, v int64) []byte { return le.AppendUint32(b, uint32(v)) }},
		{">u4", func(b []byte, v int64) []byte { return be.AppendUint32(b, uint32(v)) }},
		{"<u8", func(b []byte, v int64) []byte { return le.AppendUint64(b, uint64(v)) }},
		{">i8", func(b []byte, v int64) []byte { return be.AppendUint64(b, uint64(v)) }},
	} {
		var payload []byte
		for _, v := range y {
			payload = c.put(payload, v)
		}
		name := strings.NewReplacer("<", "le", ">", "be", "|", "na").Replace(c.descr) + ".npy"
		code, so, se := solve(payloadNPY(t, filepath.Join(dir, name), c.descr, "(6,)", payload))
		var got out
		if code != 0 || json.Unmarshal([]byte(so), &got) != nil || got.Objective != o.Objective || got.Iterations != o.Iterations {
			t.Errorf("%s labels: exit %d, stdout %q, stderr %q; want the int64 labels' %q", c.descr, code, so, se, want)
		}
	}
	huge := binary.LittleEndian.AppendUint64(make([]byte, 8*(n-1)), 1<<63)
	for _, c := range []struct{ name, path, want string }{
		{"uint64 beyond int64", payloadNPY(t, filepath.Join(dir, "yhuge.npy"), "<u8", "(6,)", huge),
			"yhuge.npy: integer out of range: element 5 is 9223372036854775808, beyond the int64 range"},
		{"whole-valued float64", writeF(t, filepath.Join(dir, "yf8.npy"), []float64{0, 1, 0, 1, 0, 1}, n),
			`yf8.npy: unsupported dtype "<f8" (float64): want an integer dtype (int8, int16, int32, int64 or uint8 … uint64)`},
	} {
		code, so, se := solve(c.path)
		if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, "-labels: ") || !strings.Contains(se, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and one line containing %q", c.name, code, so, se, c.want)
		}
	}
}

package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drknn/drknn/internal/datadir"
)

// idxBytes builds an IDX file of unsigned bytes with the given magic and
// dimensions; data is taken as is (it may disagree with dims on purpose).
func idxBytes(magic uint32, dims []int, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// fakeMNIST returns n 28×28 images whose pixel p of item i is (i*31+p)%256
// and labels i%10.
func fakeMNIST(n int) (img, lab []byte) {
	pix := make([]byte, n*784)
	for i := range pix {
		pix[i] = byte((i/784)*31 + i%784)
	}
	labels := make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	return idxBytes(2051, []int{n, 28, 28}, pix), idxBytes(2049, []int{n}, labels)
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Expected facts of the real t10k split, computed independently with
// python3 (gzip + struct, no project code):
// per-class counts, first/last labels and a few pixels.
var (
	mnistT10kCounts = []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
	mnistT10kFirst  = []int{7, 2, 1, 0, 4, 1, 4, 9, 5, 9}
	mnistT10kLast   = []int{2, 3, 4, 5, 6}
	mnistT10kPixels = []struct{ item, row, col, value int }{
		{0, 7, 6, 84}, {0, 7, 7, 185}, {0, 12, 14, 0}, {1, 10, 10, 0},
		{9999, 14, 14, 18}, {9999, 20, 10, 253}, {5000, 14, 14, 244},
	}
	mnistT10kByteSum int64 = 264923200 // sum of all 7,840,000 pixel bytes
)

func TestReadMNISTRealT10k(t *testing.T) {
	dir, err := datadir.Require("mnist")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Len() != 10000 || !slices.Equal(d.Shape, []int{1, 28, 28}) || len(d.Classes) != 10 || d.Classes[7] != "7" {
		t.Fatalf("got %d samples, shape %v, classes %v", d.Len(), d.Shape, d.Classes)
	}
	if got := d.ClassCounts(); !slices.Equal(got, mnistT10kCounts) {
		t.Errorf("class counts %v, want %v", got, mnistT10kCounts)
	}
	if !slices.Equal(d.Labels[:10], mnistT10kFirst) || !slices.Equal(d.Labels[9995:], mnistT10kLast) {
		t.Errorf("labels start %v end %v", d.Labels[:10], d.Labels[9995:])
	}
	for _, p := range mnistT10kPixels {
		got := d.Sample(p.item)[p.row*28+p.col]
		if got != float32(p.value)/255 {
			t.Errorf("item %d pixel (%d,%d) = %v, want %d/255", p.item, p.row, p.col, got, p.value)
		}
	}
	var sum int64
	for _, v := range d.X {
		if v < 0 || v > 1 {
			t.Fatalf("pixel %v outside [0,1]", v)
		}
		sum += int64(v*255 + 0.5)
	}
	if sum != mnistT10kByteSum {
		t.Errorf("pixel byte sum %d, want %d", sum, mnistT10kByteSum)
	}
	if d.Files[0] != "t10k-images-idx3-ubyte.gz:0" || d.Files[9999] != "t10k-images-idx3-ubyte.gz:9999" {
		t.Errorf("files %q … %q", d.Files[0], d.Files[9999])
	}
}

func BenchmarkReadMNISTT10k(b *testing.B) {
	dir, err := datadir.Require("mnist")
	if err != nil {
		b.Fatal(err)
	}
	cpu0, wall0 := cpuTime(), time.Now()
	for b.Loop() {
		if _, err := ReadMNIST(dir); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, wall0)
}

// Train then t10k, gzip or not regardless of the file name.
func TestReadMNISTBothSplitsOrder(t *testing.T) {
	dir := t.TempDir()
	trImg, trLab := fakeMNIST(3)
	teImg, teLab := fakeMNIST(2)
	teLab[8], teLab[9] = 9, 8 // distinguish the t10k labels
	writeFile(t, dir, "train-images-idx3-ubyte", trImg)
	writeFile(t, dir, "train-labels-idx1-ubyte.gz", gz(t, trLab))
	writeFile(t, dir, "t10k-images-idx3-ubyte.gz", gz(t, teImg))
	writeFile(t, dir, "t10k-labels-idx1-ubyte", teLab)
	d, err := ReadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Labels, []int{0, 1, 2, 9, 8}) {
		t.Fatalf("labels %v, want train [0 1 2] then t10k [9 8]", d.Labels)
	}
	wantFiles := []string{"train-images-idx3-ubyte:0", "train-images-idx3-ubyte:1", "train-images-idx3-ubyte:2",
		"t10k-images-idx3-ubyte.gz:0", "t10k-images-idx3-ubyte.gz:1"}
	if strings.Join(d.Files, " ") != strings.Join(wantFiles, " ") {
		t.Fatalf("files %v", d.Files)
	}
	// pixel p of item i is (i*31+p)%256; t10k item 1 is sample 4.
	if got, want := d.Sample(4)[100], float32((31+100)%256)/255; got != want {
		t.Fatalf("sample 4 pixel 100 = %v, want %v", got, want)
	}
	if got, want := d.Sample(2)[783], float32((62+783)%256)/255; got != want {
		t.Fatalf("sample 2 pixel 783 = %v, want %v", got, want)
	}
	// An uncompressed file named .gz reads too (detection by content).
	dir2 := t.TempDir()
	writeFile(t, dir2, "t10k-images-idx3-ubyte.gz", teImg)
	writeFile(t, dir2, "t10k-labels-idx1-ubyte.gz", teLab)
	d2, err := ReadMNIST(dir2)
	if err != nil || d2.Len() != 2 {
		t.Fatalf("plain bytes named .gz: %v", err)
	}
}

func TestReadMNISTBadInput(t *testing.T) {
	img, lab := fakeMNIST(4)
	corruptGz := gz(t, img)
	corruptGz[len(corruptGz)-6] ^= 0xff // CRC-32 trailer
	cases := []struct {
		name     string
		img, lab []byte
		file     string // the file the error must name
		want     string
	}{
		{"image magic", idxBytes(2049, []int{4, 28, 28}, img[16:]), lab, "images", "magic 2049, want 2051"},
		{"label magic", img, idxBytes(2051, []int{4}, lab[8:]), "labels", "magic 2051, want 2049"},
		{"truncated images", img[:len(img)-1], lab, "images", "truncated"},
		{"truncated header", img[:10], lab, "images", "truncated"},
		{"trailing bytes", append(append([]byte(nil), img...), 0), lab, "images", "trailing"},
		{"count mismatch", img, idxBytes(2049, []int{3}, lab[8:11]), "labels", "3 labels"},
		{"label 10", img, idxBytes(2049, []int{4}, []byte{0, 1, 10, 3}), "labels", "label 10 of item 2"},
		{"27 rows", idxBytes(2051, []int{4, 27, 28}, img[16:16+4*27*28]), lab, "images", "[4 27 28]"},
		{"29 columns", idxBytes(2051, []int{4, 28, 29}, make([]byte, 4*28*29)), lab, "images", "[4 28 29]"},
		{"zero items", idxBytes(2051, []int{0, 28, 28}, nil), idxBytes(2049, []int{0}, nil), "images", "dimension 0 is 0"},
		{"empty file", nil, lab, "images", "truncated"},
		{"truncated gzip", gz(t, img)[:len(gz(t, img))/2], lab, "images", "truncated"},
		{"gzip checksum", corruptGz, lab, "images", "checksum"},
		{"huge header", idxBytes(2051, []int{1 << 25, 28, 28}, img[16:]), lab, "images", "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "t10k-images-idx3-ubyte.gz", c.img)
			writeFile(t, dir, "t10k-labels-idx1-ubyte.gz", c.lab)
			d, err := ReadMNIST(dir)
			if err == nil {
				t.Fatalf("no error; got %d samples", d.Len())
			}
			msg := err.Error()
			if d != nil || !strings.Contains(msg, "t10k-"+c.file) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line naming t10k-%s and %q", msg, c.file, c.want)
			}
		})
	}
	// Missing partner file, empty folder.
	dir := t.TempDir()
	if _, err := ReadMNIST(dir); err == nil || !strings.Contains(err.Error(), "no train-* or t10k-*") {
		t.Fatalf("empty folder: %v", err)
	}
	writeFile(t, dir, "train-images-idx3-ubyte", img)
	if _, err := ReadMNIST(dir); err == nil || !strings.Contains(err.Error(), "no train-labels-idx1-ubyte") {
		t.Fatalf("missing labels: %v", err)
	}
}

func FuzzParseIDX(f *testing.F) {
	img, lab := fakeMNIST(2)
	f.Add(img, uint32(2051))
	f.Add(lab, uint32(2049))
	f.Add(gz(f, img), uint32(2051))
	f.Add(gz(f, lab)[:20], uint32(2049))
	f.Add(idxBytes(2051, []int{3, 2}, []byte{1, 2, 3, 4, 5, 6}), uint32(2051))
	f.Add([]byte{0x1f, 0x8b}, uint32(2051))
	f.Add([]byte{}, uint32(2049))
	f.Add(gz(f, idxBytes(2051, []int{40, 28, 28}, make([]byte, 40*784))), uint32(2051))
	f.Fuzz(func(t *testing.T, data []byte, magic uint32) {
		x, err := ParseIDX(bytes.NewReader(data), magic)
		// The counting path (nothing kept past 1:1, then a second read)
		// must find exactly what the keeping path finds.
		y, yerr := parseIDX(bytes.NewReader(data), magic, idxLimits{ratio: 1})
		if (err == nil) != (yerr == nil) || (err == nil && !bytes.Equal(x.Data, y.Data)) {
			t.Fatalf("ParseIDX: %v; counting path: %v", err, yerr)
		}
		if err != nil {
			if x != nil {
				t.Fatal("result and error")
			}
			return
		}
		n := 1
		for _, d := range x.Dims {
			if d <= 0 {
				t.Fatalf("dimension %d accepted", d)
			}
			n *= d
		}
		if len(x.Data) != n {
			t.Fatalf("%d bytes for dimensions %v", len(x.Data), x.Dims)
		}
	})
}

func FuzzParseMNIST(f *testing.F) {
	img, lab := fakeMNIST(2)
	f.Add(img, lab)
	f.Add(gz(f, img), gz(f, lab))
	f.Add(img[:800], lab)
	f.Add(img, idxBytes(2049, []int{2}, []byte{3, 11}))
	f.Fuzz(func(t *testing.T, img, lab []byte) {
		d, err := ParseMNIST(bytes.NewReader(img), "img", bytes.NewReader(lab), "lab")
		if err != nil {
			if d != nil {
				t.Fatal("result and error")
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, v := range d.X {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("pixel %v", v)
			}
		}
	})
}

// bombIDX returns a gzip stream (level 9) of an IDX image header claiming
// 2^26 28×28 images (52.6 GB, the largest ParseIDX accepts) followed by
// only size zero bytes.
func bombIDX(t testing.TB, size int) []byte {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(idxBytes(2051, []int{maxIDXItems, 28, 28}, nil))
	zero := make([]byte, 1<<20)
	for n := 0; n < size; n += len(zero) {
		w.Write(zero[:min(len(zero), size-n)])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestReadMNISTGzipBombTruncated: a 65 KB file whose header claims 52.6 GB
// and which inflates to 64 MiB of zeros fails as truncated, naming the
// file, without holding the 64 MiB (the keeping reader allocated about 170
// MB for it: its buffer grew with every byte inflated).
func TestReadMNISTGzipBombTruncated(t *testing.T) {
	bomb := bombIDX(t, 64<<20)
	if len(bomb) > 100<<10 {
		t.Fatalf("test file is %d bytes, want a small one", len(bomb))
	}
	dir := t.TempDir()
	writeFile(t, dir, "t10k-images-idx3-ubyte.gz", bomb)
	_, lab := fakeMNIST(4)
	writeFile(t, dir, "t10k-labels-idx1-ubyte.gz", lab)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := ReadMNIST(dir)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatalf("no error; got %d samples", d.Len())
	}
	msg := err.Error()
	want := "t10k-images-idx3-ubyte.gz: IDX data truncated: 67108864 of 52613349376 bytes"
	if !strings.Contains(msg, want) || strings.Contains(msg, "\n") || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %q: want one line with %q", msg, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("allocated %d MB reading a %d-byte file", alloc>>20, len(bomb))
	}
}

// TestParseIDXCompressibleComplete: a complete file that inflates far more
// than real IDX files do (all zeros) is still read, by counting it first
// and reading it again into exactly its size; from a stream positioned
// after some other bytes, and from one that cannot seek (read as it comes).
func TestParseIDXCompressibleComplete(t *testing.T) {
	const n = 3000 // 2.35 MB of zeros: past the 1 MiB slack, ratio ~1000:1
	file := gz(t, idxBytes(2051, []int{n, 28, 28}, make([]byte, n*784)))
	check := func(name string, x *IDX, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(x.Dims, []int{n, 28, 28}) || len(x.Data) != n*784 || cap(x.Data) != n*784 || bytes.Count(x.Data, []byte{0}) != n*784 {
			t.Fatalf("%s: dims %v, %d bytes (cap %d)", name, x.Dims, len(x.Data), cap(x.Data))
		}
	}
	x, err := ParseIDX(bytes.NewReader(file), 2051)
	check("seekable", x, err)
	r := bytes.NewReader(append([]byte("prefix"), file...))
	r.Seek(6, io.SeekStart)
	x, err = ParseIDX(r, 2051)
	check("after a prefix", x, err)
	x, err = ParseIDX(struct{ io.Reader }{bytes.NewReader(file)}, 2051)
	if err != nil || len(x.Data) != n*784 {
		t.Fatalf("not seekable: %v", err)
	}
	// The same holds with the thresholds at their smallest, on a real-like
	// file: every limit path gives the keeping path's bytes.
	img, _ := fakeMNIST(50)
	y, err := parseIDX(bytes.NewReader(gz(t, img)), 2051, idxLimits{ratio: 1})
	if err != nil || !bytes.Equal(y.Data, img[16:]) {
		t.Fatalf("counting path: %v", err)
	}
	// A file that changes between the two reads (another header) is an
	// error, not an allocation of the new header's size.
	if _, err := parseIDX(bytes.NewReader(bombIDX(t, 10)), 2051, idxLimits{exact: 39200}); err == nil || !strings.Contains(err.Error(), "the file changed") {
		t.Fatalf("changed between reads: %v", err)
	}
	// Truncated and trailing bytes are still found on the counting path.
	if _, err := parseIDX(bytes.NewReader(gz(t, img[:len(img)-1])), 2051, idxLimits{ratio: 1}); err == nil || !strings.Contains(err.Error(), "truncated: 39199 of 39200") {
		t.Fatalf("truncated, counting path: %v", err)
	}
	if _, err := parseIDX(bytes.NewReader(gz(t, append(img, 7))), 2051, idxLimits{ratio: 1}); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Fatalf("trailing, counting path: %v", err)
	}
}

// Concatenated gzip members read as one stream (as gunzip does); garbage
// after the gzip stream is an error.
func TestParseIDXGzipMembers(t *testing.T) {
	img, _ := fakeMNIST(3)
	two := append(gz(t, img[:1000]), gz(t, img[1000:])...)
	x, err := ParseIDX(bytes.NewReader(two), 2051)
	if err != nil || !bytes.Equal(x.Data, img[16:]) {
		t.Fatalf("two gzip members: %v", err)
	}
	junk := append(gz(t, img), "junk"...)
	if _, err := ParseIDX(bytes.NewReader(junk), 2051); err == nil {
		t.Fatal("garbage after the gzip stream accepted")
	}
}

// TestReadMNISTSplitChoice: with train and t10k files both present, the
// default (Split "") reads t10k only — exactly what a folder with t10k alone
// gives, so adding the training files changes no episode; "train", "test"
// and "all" choose explicitly, and a required split that is absent is
// ErrNotFound.
func TestReadMNISTSplitChoice(t *testing.T) {
	trImg, trLab := fakeMNIST(3)
	teImg, teLab := fakeMNIST(2)
	teLab[8], teLab[9] = 9, 8
	testOnly, both, trainOnly := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{testOnly, both} {
		writeFile(t, d, "t10k-images-idx3-ubyte.gz", gz(t, teImg))
		writeFile(t, d, "t10k-labels-idx1-ubyte.gz", gz(t, teLab))
	}
	for _, d := range []string{both, trainOnly} {
		writeFile(t, d, "train-images-idx3-ubyte.gz", gz(t, trImg))
		writeFile(t, d, "train-labels-idx1-ubyte.gz", gz(t, trLab))
	}
	before, err := Load("mnist", testOnly, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, split string
		labels     []int
		first      string
	}{
		{testOnly, "", []int{9, 8}, "t10k-images-idx3-ubyte.gz:0"},
		{both, "", []int{9, 8}, "t10k-images-idx3-ubyte.gz:0"},
		{both, "test", []int{9, 8}, "t10k-images-idx3-ubyte.gz:0"},
		{both, "train", []int{0, 1, 2}, "train-images-idx3-ubyte.gz:0"},
		{both, "all", []int{0, 1, 2, 9, 8}, "train-images-idx3-ubyte.gz:0"},
		{trainOnly, "", []int{0, 1, 2}, "train-images-idx3-ubyte.gz:0"},
	} {
		d, err := Load("mnist", c.dir, Options{Split: c.split})
		if err != nil {
			t.Fatalf("%s split %q: %v", c.dir, c.split, err)
		}
		if !slices.Equal(d.Labels, c.labels) || d.Files[0] != c.first {
			t.Errorf("%s split %q: labels %v first %s, want %v %s", c.dir, c.split, d.Labels, d.Files[0], c.labels, c.first)
		}
		if c.split == "" && c.dir == both && (!slices.Equal(d.X, before.X) || !slices.Equal(d.Labels, before.Labels)) {
			t.Error("adding the training files changed the default data set")
		}
	}
	for _, c := range []struct{ dir, split, want string }{
		{testOnly, "train", "train-images-idx3-ubyte"},
		{testOnly, "all", "train-images-idx3-ubyte"},
		{trainOnly, "test", "t10k-images-idx3-ubyte"},
	} {
		_, err := Load("mnist", c.dir, Options{Split: c.split})
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("split %q without its files: %v", c.split, err)
		}
	}
}

package datasets

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// Facts of the real test_batch.bin, computed independently with python3
// (plain byte indexing, no project code).
var (
	cifarTestFirst  = []int{3, 8, 8, 0, 6, 6, 1, 6, 3, 1}
	cifarTestLast   = []int{5, 1, 7}
	cifarTestPixels = []struct{ item, ch, row, col, value int }{
		{0, 0, 0, 0, 158}, {0, 1, 0, 0, 112}, {0, 2, 0, 0, 49}, {0, 0, 31, 31, 21},
		{9999, 2, 16, 5, 29}, {123, 1, 10, 20, 46},
	}
	cifarTestByteSum int64 = 3733375634 // all pixel bytes (labels excluded)
	cifarLuma000           = 0.4649882352941176
)

func TestReadCIFAR10Real(t *testing.T) {
	root, err := datadir.Require("cifar-10")
	if err != nil {
		t.Fatal(err)
	}
	// The parent folder and the batches folder itself both work.
	for _, dir := range []string{root, filepath.Join(root, "cifar-10-batches-bin")} {
		d, err := ReadCIFAR10(dir, CIFAROptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if d.Len() != 10000 || !slices.Equal(d.Shape, []int{3, 32, 32}) {
			t.Fatalf("%d samples of shape %v", d.Len(), d.Shape)
		}
		if got := strings.Join(d.Classes, ","); got != "airplane,automobile,bird,cat,deer,dog,frog,horse,ship,truck" {
			t.Fatalf("classes %s", got)
		}
		for c, n := range d.ClassCounts() {
			if n != 1000 {
				t.Errorf("class %s has %d samples, want 1000", d.Classes[c], n)
			}
		}
		if !slices.Equal(d.Labels[:10], cifarTestFirst) || !slices.Equal(d.Labels[9997:], cifarTestLast) {
			t.Errorf("labels %v … %v", d.Labels[:10], d.Labels[9997:])
		}
		for _, p := range cifarTestPixels {
			if got := d.Sample(p.item)[p.ch*1024+p.row*32+p.col]; got != float32(p.value)/255 {
				t.Errorf("item %d ch %d (%d,%d) = %v, want %d/255", p.item, p.ch, p.row, p.col, got, p.value)
			}
		}
		var sum int64
		for _, v := range d.X {
			sum += int64(v*255 + 0.5)
		}
		if sum != cifarTestByteSum {
			t.Errorf("pixel byte sum %d, want %d", sum, cifarTestByteSum)
		}
		if d.Files[10] != "test_batch.bin:10" {
			t.Errorf("file %q", d.Files[10])
		}
	}
	g, err := ReadCIFAR10(root, CIFAROptions{Grey: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 10000 || !slices.Equal(g.Shape, []int{1, 32, 32}) {
		t.Fatalf("grey: %d samples of shape %v", g.Len(), g.Shape)
	}
	if got := g.Sample(0)[0]; math.Abs(float64(got)-cifarLuma000) > 1e-6 {
		t.Errorf("grey pixel (0,0) of item 0 = %v, want %v", got, cifarLuma000)
	}
}

// cifarRecords builds n records; record i has label labels[i] and pixel
// bytes (i + channel*7 + p) % 256.
func cifarRecords(labels ...byte) []byte {
	var b []byte
	for i, y := range labels {
		b = append(b, y)
		for ch := 0; ch < 3; ch++ {
			for p := 0; p < 1024; p++ {
				b = append(b, byte(i+ch*7+p))
			}
		}
	}
	return b
}

func TestReadCIFAR10BatchOrderAndGrey(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "test_batch.bin", cifarRecords(9))
	writeFile(t, dir, "data_batch_2.bin", cifarRecords(2, 3))
	writeFile(t, dir, "data_batch_1.bin", cifarRecords(0))
	d, err := ReadCIFAR10(dir, CIFAROptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Labels, []int{0, 2, 3, 9}) || d.Classes[9] != "truck" {
		t.Fatalf("labels %v classes %v", d.Labels, d.Classes)
	}
	if d.Files[1] != "data_batch_2.bin:0" || d.Files[2] != "data_batch_2.bin:1" || d.Files[3] != "test_batch.bin:0" {
		t.Fatalf("files %v", d.Files)
	}
	// Sample 2 is record 1 of data_batch_2: G plane pixel 5 = 1+7+5.
	if got := d.Sample(2)[1024+5]; got != 13.0/255 {
		t.Fatalf("pixel %v", got)
	}
	g, err := ReadCIFAR10(dir, CIFAROptions{Grey: true})
	if err != nil {
		t.Fatal(err)
	}
	// Hand-worked luma of sample 2, pixel 5: R=6, G=13, B=20.
	want := (0.299*6 + 0.587*13 + 0.114*20) / 255
	if got := g.Sample(2)[5]; math.Abs(float64(got)-want) > 1e-7 {
		t.Fatalf("grey pixel %v, want %v", got, want)
	}
	writeFile(t, dir, "batches.meta.txt", []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj"))
	if d, err = ReadCIFAR10(dir, CIFAROptions{}); err != nil || d.Classes[9] != "j" {
		t.Fatalf("meta without final newline: %v", err)
	}
}

func TestReadCIFAR10BadInput(t *testing.T) {
	good := cifarRecords(1, 2)
	cases := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"short record", "test_batch.bin", good[:len(good)-1], "not a whole number"},
		{"label 10", "test_batch.bin", cifarRecords(1, 10), "record 1 has label 10"},
		{"empty", "data_batch_1.bin", nil, "empty batch"},
		{"9 names", "batches.meta.txt", []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\n"), "9 class names"},
		{"duplicate name", "batches.meta.txt", []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\na\n"), "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "test_batch.bin", good)
			writeFile(t, dir, c.file, c.data)
			d, err := ReadCIFAR10(dir, CIFAROptions{})
			if err == nil || d != nil {
				t.Fatalf("no error")
			}
			if msg := err.Error(); !strings.Contains(msg, c.file) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line naming %s and %q", msg, c.file, c.want)
			}
		})
	}
	if _, err := ReadCIFAR10(t.TempDir(), CIFAROptions{}); err == nil || !strings.Contains(err.Error(), "no data_batch") {
		t.Fatalf("empty folder: %v", err)
	}
}

func FuzzParseCIFARBatch(f *testing.F) {
	f.Add(cifarRecords(0))
	f.Add(cifarRecords(3, 9))
	f.Add(cifarRecords(11))
	f.Add(cifarRecords(1)[:100])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseCIFARBatch(bytes.NewReader(data))
		if err != nil {
			if b != nil {
				t.Fatal("result and error")
			}
			return
		}
		if len(b.Labels)*3072 != len(b.Pixels) || len(b.Labels)*3073 != len(data) {
			t.Fatalf("%d labels, %d pixels from %d bytes", len(b.Labels), len(b.Pixels), len(data))
		}
		for _, grey := range []bool{false, true} {
			d := b.toDataset(grey)
			d.Classes = CIFAR10Classes
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, v := range d.X {
				if !(v >= 0 && v <= 1.0000001) {
					t.Fatalf("pixel %v (grey %v)", v, grey)
				}
			}
		}
	})
}

func FuzzParseCIFARMeta(f *testing.F) {
	f.Add([]byte(strings.Join(CIFAR10Classes, "\n") + "\n"))
	f.Add([]byte("a\r\nb\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		names, err := ParseCIFARMeta(bytes.NewReader(data))
		if err == nil && len(names) != 10 {
			t.Fatalf("%d names accepted", len(names))
		}
	})
}

func BenchmarkReadCIFAR10Test(b *testing.B) {
	dir, err := datadir.Require("cifar-10")
	if err != nil {
		b.Fatal(err)
	}
	for _, grey := range []bool{false, true} {
		name := "rgb"
		if grey {
			name = "grey"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ReadCIFAR10(dir, CIFAROptions{Grey: grey}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// DecodeReaderImage gives a CIFAR-10 image saved as a PNG the reader's
// sample bit for bit, in colour and grey (data.grey), on the first 2,000
// real test images. Grey used the one-channel decoder's float64 luma of
// [0, 1] values, which differs from the reader's float32 luma of the bytes
// by an ulp on some pixels.
func TestDecodeReaderImageCIFAR(t *testing.T) {
	dir, err := datadir.Require("cifar-10")
	if err != nil {
		t.Fatal(err)
	}
	var sets [2]*Dataset
	for i, grey := range []bool{false, true} {
		if sets[i], err = ReadCIFAR10(dir, CIFAROptions{Grey: grey}); err != nil {
			t.Fatal(err)
		}
	}
	rgb, grey := sets[0], sets[1]
	n := min(rgb.Len(), 2000)
	bad := [2]int{}
	for i := 0; i < n; i++ {
		src := rgb.Sample(i)
		img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
		for p := 0; p < 1024; p++ {
			for c := 0; c < 3; c++ {
				img.Pix[4*p+c] = uint8(math.Round(float64(src[c*1024+p]) * 255))
			}
			img.Pix[4*p+3] = 255
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		for k, want := range [][]float32{src, grey.Sample(i)} {
			got, err := DecodeReaderImage(buf.Bytes(), "cifar10", 3-2*k, 32, 32, false)
			if err != nil {
				t.Fatal(err)
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					bad[k]++
					break
				}
			}
		}
	}
	if bad != [2]int{} {
		t.Fatalf("of %d images, %d colour and %d grey differ from the reader's samples", n, bad[0], bad[1])
	}
}

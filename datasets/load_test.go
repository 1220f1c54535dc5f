package datasets

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

func TestLoadDispatch(t *testing.T) {
	root := datadir.Dir()
	for _, c := range []struct {
		name  string
		opts  Options
		n     int
		shape []int
	}{
		{"mnist", Options{}, 10000, []int{1, 28, 28}},
		{"cifar10", Options{Grey: true}, 10000, []int{1, 32, 32}},
		{"cifar10", Options{}, 10000, []int{3, 32, 32}},
		{"lung-cancer", Options{}, 32, []int{56}},
		{"synthetic-gauss", Options{Classes: 3, PerClass: 10}, 30, []int{2}},
		{"synthetic-swissroll", Options{PerClass: 10}, 20, []int{2}},
		{"synthetic-images", Options{Size: 16, PerClass: 3}, 30, []int{1, 16, 16}},
	} {
		dir := ""
		if !Synthetic(c.name) {
			var err error
			if dir, err = datadir.Require(Subdir(c.name)); err != nil {
				t.Fatal(err)
			}
		}
		d, err := Load(c.name, dir, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Len() != c.n || !slices.Equal(d.Shape, c.shape) {
			t.Errorf("%s: %d samples of shape %v, want %d of %v", c.name, d.Len(), d.Shape, c.n, c.shape)
		}
	}
	if _, err := Load("mnist", "", Options{}); err == nil || !strings.Contains(err.Error(), "no data folder") {
		t.Errorf("mnist without folder: %v", err)
	}
	if _, err := Load("mnist", filepath.Join(root, "cifar-10"), Options{}); err == nil || !strings.Contains(err.Error(), "no train-* or t10k-*") {
		t.Errorf("mnist from the wrong folder: %v", err)
	}
	if _, err := Load("imagenet", "", Options{}); err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Errorf("unknown name: %v", err)
	}
	want := "cifar10 covid-ct csv imagefolder lung-cancer miniimagenet mnist npy omniglot synthetic-gauss synthetic-images synthetic-swissroll"
	if got := strings.Join(Names(), " "); got != want {
		t.Errorf("Names() = %s", got)
	}
}

func pngBytes(t *testing.T, w, h int, c color.Color) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mkfile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Load reaches the other image readers with its options: Omniglot (size,
// sets from Split), COVID-CT (size) and miniImageNet (split, size, grey).
func TestLoadImageReaders(t *testing.T) {
	dir := t.TempDir()
	om := filepath.Join(dir, "omniglot")
	mkfile(t, filepath.Join(om, "images_background", "Alpha", "character01", "0001_01.png"), pngBytes(t, 105, 105, color.White))
	mkfile(t, filepath.Join(om, "images_background", "Alpha", "character02", "0002_01.png"), pngBytes(t, 105, 105, color.Black))
	d, err := Load("omniglot", om, Options{Size: 7, Split: "background"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || !slices.Equal(d.Shape, []int{1, 7, 7}) || len(d.Classes) != 2 {
		t.Fatalf("omniglot: %d samples of %v, classes %v", d.Len(), d.Shape, d.Classes)
	}

	mi := filepath.Join(dir, "miniimagenet")
	red := color.NRGBA{R: 255, A: 255}
	mkfile(t, filepath.Join(mi, "images", "n0000000100000001.jpg"), pngBytes(t, 10, 10, red))
	mkfile(t, filepath.Join(mi, "test.csv"), []byte("filename,label\nn0000000100000001.jpg,n00000001\n"))
	if _, err := Load("miniimagenet", mi, Options{}); err == nil || !strings.Contains(err.Error(), "no split") {
		t.Fatalf("miniimagenet without split: %v", err)
	}
	rgb, err := Load("miniimagenet", mi, Options{Split: "test", Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	grey, err := Load("miniimagenet", mi, Options{Split: "test", Size: 4, Grey: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rgb.Shape, []int{3, 4, 4}) || !slices.Equal(grey.Shape, []int{1, 4, 4}) {
		t.Fatalf("miniimagenet shapes %v, %v", rgb.Shape, grey.Shape)
	}
	if got := grey.X[0]; math.Abs(float64(got)-0.299) > 1e-6 {
		t.Fatalf("grey of pure red = %v, want 0.299", got)
	}

	cov := filepath.Join(dir, "covid")
	mkfile(t, filepath.Join(cov, "CT_COVID", "a.png"), pngBytes(t, 20, 30, color.White))
	mkfile(t, filepath.Join(cov, "CT_NonCOVID", "b.png"), pngBytes(t, 20, 30, color.Black))
	d, err = Load("covid-ct", cov, Options{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || !slices.Equal(d.Shape, []int{1, 5, 5}) || !slices.Equal(d.Labels, []int{0, 1}) {
		t.Fatalf("covid-ct: %d samples of %v, labels %v", d.Len(), d.Shape, d.Labels)
	}
}

// Grey() of the colour CIFAR-10 equals the reader's own grey option.
func TestGreyMatchesCIFARGrey(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "test_batch.bin", cifarRecords(1, 7, 3))
	rgb, err := ReadCIFAR10(dir, CIFAROptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ReadCIFAR10(dir, CIFAROptions{Grey: true})
	got, err := rgb.Grey()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Shape, want.Shape) || !slices.Equal(got.Labels, want.Labels) {
		t.Fatalf("shape %v labels %v", got.Shape, got.Labels)
	}
	for i := range got.X {
		if math.Abs(float64(got.X[i]-want.X[i])) > 1e-6 {
			t.Fatalf("value %d: %v vs %v", i, got.X[i], want.X[i])
		}
	}
	if same, _ := want.Grey(); same != want {
		t.Fatal("grey data set copied")
	}
	if _, err := (&Dataset{Shape: []int{56}}).Grey(); err == nil {
		t.Fatal("feature rows made grey")
	}
}

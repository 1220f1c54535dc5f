package datasets

import (
	"image/color"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// Hand-worked histograms: a 4×2 grey PNG with levels 0, 3, 4, 127, 128,
// 251, 252, 255 puts one pixel in each of 64-bin bins 0, 0, 1, 31, 32, 62,
// 63, 63; a red RGBA PNG (luma 0.299·255 = 76.2 → 76) is all in bin 19.
func TestCOVIDCTHistogramFixture(t *testing.T) {
	dir := t.TempDir()
	levels := []uint8{0, 3, 4, 127, 128, 251, 252, 255}
	writeTestFile(t, filepath.Join(dir, "CT_COVID", "g.png"), pngGrey(t, 4, 2, func(x, y int) uint8 { return levels[y*4+x] }))
	writeTestFile(t, filepath.Join(dir, "CT_COVID", "r.png"), pngRGBA(t, 5, 3, func(x, y int) color.NRGBA { return color.NRGBA{255, 0, 0, 255} }))
	writeTestFile(t, filepath.Join(dir, "CT_NonCOVID", "1.jpg"), jpegFlat(t, 16, 16, color.RGBA{0, 0, 0, 255}))
	d, err := ReadCOVIDCTHistogram(dir, HistogramBins)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{64}) || !reflect.DeepEqual(d.Labels, []int{0, 0, 1}) ||
		!reflect.DeepEqual(d.Files, []string{"CT_COVID/g.png", "CT_COVID/r.png", "CT_NonCOVID/1.jpg"}) {
		t.Fatalf("shape %v labels %v files %v", d.Shape, d.Labels, d.Files)
	}
	want := make([][]float32, 3)
	for i := range want {
		want[i] = make([]float32, 64)
	}
	for _, b := range []int{0, 0, 1, 31, 32, 62, 63, 63} {
		want[0][b] += 1.0 / 8
	}
	want[1][19] = 1
	want[2][0] = 1 // flat black JPEG: Y = 0 everywhere
	for i := range want {
		if got := d.Sample(i); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: histogram %v, want %v", d.Files[i], got, want[i])
		}
	}
	// Through Load, and the option is checked.
	l, err := Load("covid-ct", dir, Options{Features: FeaturesHistogram})
	if err != nil || !reflect.DeepEqual(l.X, d.X) {
		t.Fatalf("Load with Features histogram: %v", err)
	}
	if _, err := Load("covid-ct", dir, Options{Features: "hog"}); err == nil || !strings.Contains(err.Error(), `features "hog"`) {
		t.Fatalf("Load with an unknown feature kind: %v", err)
	}
	if _, err := ReadCOVIDCTHistogram(dir, 0); err == nil {
		t.Fatal("0 bins accepted")
	}
}

// The real images: 746 histograms that each sum to 1, and for PNG files
// (whose luma Go and PIL compute alike) exactly the counts of NumPy's
// bincount(asarray(Image.open(f).convert("L")) >> 2) divided by the pixel
// count, checked on one file of each PNG mode.
func TestCOVIDCTHistogramReal(t *testing.T) {
	dir, err := datadir.Require("covid-ct")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadCOVIDCTHistogram(dir, HistogramBins)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 746 {
		t.Fatalf("%d images, want 746", d.Len())
	}
	for i := range d.Len() {
		s := 0.0
		for _, v := range d.Sample(i) {
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Fatalf("%s: histogram sums to %v", d.Files[i], s)
		}
	}
	// file → pixels, bins 0, 16, 32, 63 (PIL 9.4 / NumPy 1.24).
	for name, c := range map[string][5]int{
		"CT_COVID/2019-novel-Coronavirus-severe-adult-respiratory-dist_2020_International-Jour-p3-89%0.png": {194300, 0, 898, 1514, 2340},      // RGBA
		"CT_COVID/2020.02.10.20021584-p6-52%0.png":                                                          {57974, 0, 1389, 136, 5817},       // RGB
		"CT_COVID/2020.03.13.20035212-p23-152.png":                                                          {225280, 31683, 1714, 321, 75959}, // L
		"CT_NonCOVID/102.png": {80878, 16914, 191, 982, 282}, // RGB
	} {
		i := indexOf(d.Files, name)
		if i < 0 {
			t.Fatalf("%s not read", name)
		}
		h := d.Sample(i)
		for j, b := range []int{0, 16, 32, 63} {
			if got := float64(h[b]) * float64(c[0]); math.Abs(got-float64(c[j+1])) > 0.05 { // float32 counts/pixels
				t.Errorf("%s: bin %d holds %.2f pixels, want %d", name, b, got, c[j+1])
			}
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

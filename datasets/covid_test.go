package datasets

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// realCOVID64 reads the real COVID-CT set at 64×64 once for the tests
// that inspect it (the read takes seconds).
var realCOVID struct {
	once sync.Once
	d    *Dataset
	err  error
}

func realCOVID64(t *testing.T, dir string) *Dataset {
	t.Helper()
	realCOVID.once.Do(func() { realCOVID.d, realCOVID.err = ReadCOVIDCT(dir, 64) })
	if realCOVID.err != nil {
		t.Fatal(realCOVID.err)
	}
	return realCOVID.d
}

func writeCOVIDFixture(tb testing.TB, dir string) {
	// CT_COVID: a grey PNG, a JPEG stored under a .png name (as 34 upstream
	// files are), and a colour PNG; CT_NonCOVID: a .jpg and a hidden file.
	writeTestFile(tb, filepath.Join(dir, "CT_COVID", "b.png"), pngGrey(tb, 8, 6, func(x, y int) uint8 { return 51 }))
	writeTestFile(tb, filepath.Join(dir, "CT_COVID", "a%1.png"), jpegFlat(tb, 16, 12, color.RGBA{200, 200, 200, 255}))
	writeTestFile(tb, filepath.Join(dir, "CT_COVID", "c.png"), pngRGBA(tb, 5, 9, func(x, y int) color.NRGBA { return color.NRGBA{255, 0, 0, 255} }))
	writeTestFile(tb, filepath.Join(dir, "CT_NonCOVID", "1.jpg"), jpegFlat(tb, 20, 20, color.RGBA{0, 0, 0, 255}))
	writeTestFile(tb, filepath.Join(dir, "CT_NonCOVID", ".DS_Store"), []byte("junk"))
}

func TestCOVIDCTFixture(t *testing.T) {
	dir := t.TempDir()
	writeCOVIDFixture(t, dir)
	d, err := ReadCOVIDCT(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Files, []string{"CT_COVID/a%1.png", "CT_COVID/b.png", "CT_COVID/c.png", "CT_NonCOVID/1.jpg"}) ||
		!reflect.DeepEqual(d.Labels, []int{0, 0, 0, 1}) || !reflect.DeepEqual(d.Classes, COVIDCTClasses) ||
		!reflect.DeepEqual(d.Shape, []int{1, 4, 4}) {
		t.Fatalf("files %v labels %v classes %v shape %v", d.Files, d.Labels, d.Classes, d.Shape)
	}
	want := []float64{200.0 / 255, 51.0 / 255, 0.299, 0}
	tol := []float64{2.0 / 255, 1e-6, 1e-6, 2.0 / 255}
	for i := range want {
		for _, v := range d.Sample(i) {
			if math.Abs(float64(v)-want[i]) > tol[i] {
				t.Fatalf("%s: pixel %g, want %g", d.Files[i], v, want[i])
			}
		}
	}
	// size 0 means the default.
	if d, err := ReadCOVIDCT(dir, 0); err != nil || d.Shape[1] != DefaultCOVIDCTSize {
		t.Fatalf("default size: %v %v", err, d)
	}
}

func TestCOVIDCTBadInput(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(dir string)
		size   int
		want   []string
	}{
		{"non-image", func(dir string) {
			os.WriteFile(filepath.Join(dir, "CT_NonCOVID", "list.txt"), []byte("1.jpg\n"), 0o644)
		}, 8, []string{"CT_NonCOVID/list.txt", "not a PNG or JPEG"}},
		{"truncated", func(dir string) {
			p := filepath.Join(dir, "CT_COVID", "c.png")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-15], 0o644)
		}, 8, []string{"CT_COVID/c.png", "corrupt png"}},
		{"truncated jpeg", func(dir string) {
			p := filepath.Join(dir, "CT_COVID", "a%1.png")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-10], 0o644)
		}, 8, []string{"a%1.png", "corrupt jpeg"}},
		{"empty class", func(dir string) {
			os.RemoveAll(filepath.Join(dir, "CT_NonCOVID"))
			os.Mkdir(filepath.Join(dir, "CT_NonCOVID"), 0o755)
		}, 8, []string{"CT_NonCOVID", "empty folder"}},
		{"missing class", func(dir string) { os.RemoveAll(filepath.Join(dir, "CT_COVID")) }, 8,
			[]string{"CT_COVID", "no such file"}},
		{"sub-folder", func(dir string) { os.Mkdir(filepath.Join(dir, "CT_COVID", "more"), 0o755) }, 8,
			[]string{"more", "unexpected folder"}},
		{"negative size", func(string) {}, -3, []string{"size -3"}},
	}
	for _, c := range cases {
		dir := t.TempDir()
		writeCOVIDFixture(t, dir)
		c.break_(dir)
		d, err := ReadCOVIDCT(dir, c.size)
		checkReadError(t, c.name, d, err, c.want)
	}
}

// TestCOVIDCTReal reads all 746 real images and checks counts, the 34
// JPEG-in-PNG files, and values computed independently with Python/PIL 9.4
// and NumPy (luma 0.299R+0.587G+0.114B of the PNG pixels; libjpeg's Y
// channel for JPEG data; exact area averaging to 64×64 as A_h·img·A_wᵀ).
func TestCOVIDCTReal(t *testing.T) {
	dir, err := datadir.Require("covid-ct")
	if err != nil {
		t.Fatal(err)
	}
	d := realCOVID64(t, dir)
	counts := make([]int, 2)
	for _, y := range d.Labels {
		counts[y]++
	}
	if d.Len() != 746 || counts[0] != 349 || counts[1] != 397 {
		t.Fatalf("%d images, per class %v; want 746 = 349 + 397", d.Len(), counts)
	}
	// The upstream .png files holding JPEG data: 34, all in CT_COVID.
	jpegInPNG := 0
	for _, f := range d.Files {
		if !strings.HasSuffix(f, ".png") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, format, err := image.DecodeConfig(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		} else if format == "jpeg" {
			if !strings.HasPrefix(f, "CT_COVID/") {
				t.Errorf("JPEG-in-PNG outside CT_COVID: %s", f)
			}
			jpegInPNG++
		}
	}
	if jpegInPNG != 34 {
		t.Fatalf("%d .png files hold JPEG data, want 34", jpegInPNG)
	}
	type px struct {
		r, c int
		v    float64
	}
	refs := []struct {
		idx       int
		file      string
		w, h      int
		sum       float64 // native luma sum
		mean64    float64
		sumsq64   float64
		native    []px
		at64      []px
		tol       float64 // per-pixel tolerance: exact for PNG; JPEG decoders differ by ±1–2 levels
		sumRelTol float64
	}{
		{0, "CT_COVID/2019-novel-Coronavirus-severe-adult-respiratory-dist_2020_International-Jour-p3-89%0.png", 580, 335,
			123234.9006, 0.634251, 1890.882724,
			[]px{{0, 0, 1}, {167, 290, 0.866667}, {111, 145, 0.298039}, {67, 82, 0.313725}, {223, 348, 0.929412}, {334, 579, 0.905882}, {167, 193, 0.454902}},
			[]px{{0, 0, 0.849018}, {32, 32, 0.839979}, {10, 50, 0.381992}}, 2e-6, 1e-6},
		{187, "CT_COVID/2020.03.12.20034686-p17-91-1.png", 578, 408,
			170672.8667, 0.723730, 2487.763738,
			[]px{{0, 0, 0}, {204, 289, 1}, {136, 144, 0.447059}, {81, 82, 1}, {272, 346, 0.529412}, {407, 577, 0.694118}, {204, 192, 0.533333}},
			[]px{{0, 0, 0.178439}, {32, 32, 1}, {10, 50, 1}}, 3.0 / 255, 2e-3},
		{418, "CT_NonCOVID/13.jpg", 664, 498,
			238973.0431, 0.722689, 2448.134194,
			[]px{{0, 0, 0}, {249, 332, 1}, {166, 166, 0.733333}, {99, 94, 0.490196}, {332, 398, 1}, {497, 663, 0}, {249, 221, 1}},
			[]px{{0, 0, 0}, {32, 32, 0.999886}, {10, 50, 0.477783}}, 3.0 / 255, 2e-3},
		{356, "CT_NonCOVID/102.png", 371, 218,
			25132.2392, 0.310743, 579.588560,
			[]px{{0, 0, 0.003922}, {109, 185, 0.388235}, {72, 92, 0.694118}, {43, 53, 0.309804}, {145, 222, 0.803922}, {217, 370, 0.003922}, {109, 123, 0.003922}},
			[]px{{0, 0, 0.003922}, {32, 32, 0.373579}, {10, 50, 0.321318}}, 2e-6, 1e-6},
	}
	for _, r := range refs {
		if d.Files[r.idx] != r.file {
			t.Fatalf("sample %d is %s, want %s", r.idx, d.Files[r.idx], r.file)
		}
		s, sq := 0.0, 0.0
		for _, v := range d.Sample(r.idx) {
			s += float64(v)
			sq += float64(v) * float64(v)
		}
		if math.Abs(s/4096-r.mean64) > r.tol/4+1e-6 || math.Abs(sq-r.sumsq64) > r.sumRelTol*r.sumsq64+1e-3 {
			t.Errorf("%s at 64×64: mean %g sum of squares %g, want %g %g", r.file, s/4096, sq, r.mean64, r.sumsq64)
		}
		for _, p := range r.at64 {
			if v := float64(d.Sample(r.idx)[p.r*64+p.c]); math.Abs(v-p.v) > r.tol+1e-6 {
				t.Errorf("%s at 64×64 pixel (%d,%d) = %g, want %g", r.file, p.r, p.c, v, p.v)
			}
		}
		// Native resolution through the same decoder.
		b, err := os.ReadFile(filepath.Join(dir, r.file))
		if err != nil {
			t.Fatal(err)
		}
		plane, h, w, err := toGrey(b, 0)
		if err != nil || h != r.h || w != r.w {
			t.Fatalf("%s: %v, %d×%d, want %d×%d", r.file, err, w, h, r.w, r.h)
		}
		ns := 0.0
		for _, v := range plane {
			ns += float64(v)
		}
		if math.Abs(ns-r.sum) > r.sumRelTol*r.sum+0.01 {
			t.Errorf("%s: native luma sum %g, want %g", r.file, ns, r.sum)
		}
		for _, p := range r.native {
			if v := float64(plane[p.r*w+p.c]); math.Abs(v-p.v) > r.tol+1e-6 {
				t.Errorf("%s pixel (%d,%d) = %g, want %g", r.file, p.r, p.c, v, p.v)
			}
		}
	}
}

// checkReadError wants a reader's call named name to have failed (no data
// set) with a one-line error that mentions every string of want.
func checkReadError(t *testing.T, name string, d *Dataset, err error, want []string) {
	t.Helper()
	if err == nil || d != nil {
		t.Errorf("%s: data set %v, error %v", name, d != nil, err)
		return
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: multi-line error %q", name, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", name, err, w)
		}
	}
}

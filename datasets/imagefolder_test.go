package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/image/bmp"
	"golang.org/x/image/draw"
)

// tinyWebPPixels are the pixels of testdata/tiny-lossless.webp, row by row
// (4×3, made with cwebp -lossless -exact; see testdata/README.md).
var tinyWebPPixels = [12][3]uint8{
	{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255},
	{10, 20, 30}, {40, 50, 60}, {70, 80, 90}, {0, 0, 0},
	{200, 100, 50}, {50, 100, 200}, {128, 128, 128}, {1, 2, 3},
}

// gifColours is the palette of the GIF fixture; pixel (x, y) uses entry
// (x + y) % 4.
var gifColours = []color.Color{color.RGBA{0, 0, 0, 255}, color.RGBA{250, 10, 20, 255}, color.RGBA{30, 200, 40, 255}, color.RGBA{60, 70, 180, 255}}

// bmpPixel is pixel (x, y) of the BMP fixture.
func bmpPixel(x, y int) color.RGBA {
	return color.RGBA{uint8(60 * x), uint8(80 * y), uint8(5 + x + y), 255}
}

func gifBytes(t testing.TB) []byte {
	img := image.NewPaletted(image.Rect(0, 0, 4, 3), gifColours)
	for y := 0; y < 3; y++ {
		for x := 0; x < 4; x++ {
			img.SetColorIndex(x, y, uint8((x+y)%4))
		}
	}
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func bmpBytes(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for y := 0; y < 3; y++ {
		for x := 0; x < 4; x++ {
			img.SetRGBA(x, y, bmpPixel(x, y))
		}
	}
	var b bytes.Buffer
	if err := bmp.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readTestdata(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// greyA is the grey PNG fixture cat/a.png: pixel (x, y) = 10·(x + 4y).
func greyA(x, y int) uint8 { return uint8(10 * (x + 4*y)) }

// folderFixture is an image folder with every format, classes out of
// case order, a nested folder, and everything the reader must skip:
//
//	.DS_Store, __MACOSX/…, cat/.thumbs/… (hidden: 3 entries), README.txt
//	(loose: 1), dog/notes.txt (not an image: 1), dog/.hidden.png (hidden).
func folderFixture(t testing.TB) map[string][]byte {
	return map[string][]byte{
		"Zebra/sub/z.png":      pngGrey(t, 4, 3, func(x, y int) uint8 { return 200 }),
		"cat/a.png":            pngGrey(t, 4, 3, greyA),
		"cat/b.jpg":            jpegFlat(t, 4, 3, color.RGBA{200, 40, 90, 255}),
		"cat/.thumbs/t.png":    pngGrey(t, 4, 3, greyA),
		"dog/c.gif":            gifBytes(t),
		"dog/d.bmp":            bmpBytes(t),
		"dog/e.webp":           readTestdata(t, "tiny-lossless.webp"),
		"dog/f":                pngGrey(t, 4, 3, func(x, y int) uint8 { return 7 }), // an image without extension
		"dog/notes.txt":        []byte("photos from the shelter\n"),
		"dog/.hidden.png":      []byte("not even an image"),
		".DS_Store":            []byte("junk"),
		"__MACOSX/dog/._c.gif": []byte("resource fork"),
		"README.txt":           []byte("three classes\n"),
	}
}

func mapFS(files map[string][]byte) fstest.MapFS {
	m := fstest.MapFS{}
	for p, b := range files {
		m[p] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	return m
}

func writeTree(t testing.TB, dir string, files map[string][]byte) {
	for p, b := range files {
		writeTestFile(t, filepath.Join(dir, filepath.FromSlash(p)), b)
	}
}

func TestImageFolderFormatsOrderAndSkips(t *testing.T) {
	files := folderFixture(t)
	d, err := ReadImageFolder(mapFS(files), "pets", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"Zebra/sub/z.png", "cat/a.png", "cat/b.jpg", "dog/c.gif", "dog/d.bmp", "dog/e.webp", "dog/f"}
	if !reflect.DeepEqual(d.Files, wantFiles) || !reflect.DeepEqual(d.Classes, []string{"Zebra", "cat", "dog"}) ||
		!reflect.DeepEqual(d.Labels, []int{0, 1, 1, 2, 2, 2, 2}) || !reflect.DeepEqual(d.Shape, []int{3, 3, 4}) || d.Test != nil {
		t.Fatalf("files %v classes %v labels %v shape %v test %v", d.Files, d.Classes, d.Labels, d.Shape, d.Test)
	}
	r := d.Report
	if r == nil || r.Hidden != 4 || r.NotImage != 1 || r.Loose != 1 || !strings.HasPrefix(r.Channels, "RGB") {
		t.Fatalf("report %+v", r)
	}
	if s := r.Summary(); !strings.Contains(s, "4 hidden, 1 non-image, 1 outside class folders") {
		t.Errorf("summary %q", s)
	}
	px := func(i, c, x, y int) float64 { return float64(d.Sample(i)[c*12+y*4+x]) }
	for y := 0; y < 3; y++ {
		for x := 0; x < 4; x++ {
			for c := 0; c < 3; c++ {
				// Grey PNGs become three equal channels of v/255, exactly.
				if got, want := px(1, c, x, y), float64(float32(greyA(x, y))/255); got != want {
					t.Fatalf("a.png (%d,%d) channel %d = %v, want %v", x, y, c, got, want)
				}
				if got := px(0, c, x, y); got != float64(float32(200)/255) {
					t.Fatalf("z.png = %v", got)
				}
				// GIF palette, BMP and lossless WebP: exact.
				pr, pg, pb, _ := gifColours[(x+y)%4].RGBA()
				if got, want := px(3, c, x, y), float64(float32([]uint32{pr, pg, pb}[c]>>8)/255); math.Abs(got-want) > 1e-7 {
					t.Fatalf("c.gif (%d,%d) channel %d = %v, want %v", x, y, c, got, want)
				}
				bp := bmpPixel(x, y)
				if got, want := px(4, c, x, y), float64([]uint8{bp.R, bp.G, bp.B}[c])/255; math.Abs(got-want) > 1e-7 {
					t.Fatalf("d.bmp (%d,%d) channel %d = %v, want %v", x, y, c, got, want)
				}
				if got, want := px(5, c, x, y), float64(tinyWebPPixels[y*4+x][c])/255; math.Abs(got-want) > 1e-7 {
					t.Fatalf("e.webp (%d,%d) channel %d = %v, want %v", x, y, c, got, want)
				}
				// JPEG: the flat colour within the codec's rounding.
				if got, want := px(2, c, x, y), float64([]uint8{200, 40, 90}[c])/255; math.Abs(got-want) > 4.0/255 {
					t.Fatalf("b.jpg (%d,%d) channel %d = %v, want %v", x, y, c, got, want)
				}
			}
		}
	}

	// The same files on disk through Load: identical data set.
	dir := t.TempDir()
	writeTree(t, dir, files)
	disk, err := Load("imagefolder", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(disk.X, d.X) || !reflect.DeepEqual(disk.Files, d.Files) || !reflect.DeepEqual(disk.Report, d.Report) {
		t.Fatal("Load from disk differs from the fs.FS read")
	}

	// Grey requested: BT.601 luma of each pixel, one channel.
	g, err := ReadImageFolder(mapFS(files), "pets", ImageFolderOptions{Grey: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Shape, []int{1, 3, 4}) || g.Report.Channels != "grey (requested)" {
		t.Fatalf("grey: shape %v, report %+v", g.Shape, g.Report)
	}
	for p, rgb := range tinyWebPPixels {
		want := (0.299*float64(rgb[0]) + 0.587*float64(rgb[1]) + 0.114*float64(rgb[2])) / 255
		if got := float64(g.Sample(5)[p]); math.Abs(got-want) > 1e-6 {
			t.Fatalf("grey webp pixel %d = %v, want %v", p, got, want)
		}
	}
	if got := g.Sample(1)[5]; got != float32(greyA(1, 1))/255 {
		t.Fatalf("grey a.png = %v", got)
	}
}

// Every image grey (a grey PNG, grey content stored as RGB with alpha, a
// grey JPEG, a lossy grey WebP): one channel without asking.
func TestImageFolderAutoGreyAndAlpha(t *testing.T) {
	rgbaGrey := pngRGBA(t, 8, 8, func(x, y int) color.NRGBA {
		v := uint8(30 * x)
		return color.NRGBA{v, v, v, uint8(255 - 30*y)} // varying alpha must not show
	})
	opaque := pngRGBA(t, 8, 8, func(x, y int) color.NRGBA { v := uint8(30 * x); return color.NRGBA{v, v, v, 255} })
	files := map[string][]byte{
		"a/1.png":  rgbaGrey,
		"a/2.png":  opaque,
		"b/3.jpg":  jpegFlat(t, 8, 8, color.RGBA{77, 77, 77, 255}),
		"b/4.webp": readTestdata(t, "flat-lossy.webp"),
	}
	d, err := ReadImageFolder(mapFS(files), "g", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{1, 8, 8}) || d.Report.Channels != "grey (every image is grey)" {
		t.Fatalf("shape %v report %+v", d.Shape, d.Report)
	}
	if !reflect.DeepEqual(d.Sample(0), d.Sample(1)) {
		t.Fatal("alpha changed the values")
	}
	for _, v := range d.Sample(3) {
		if math.Abs(float64(v)-90.0/255) > 3.0/255 {
			t.Fatalf("lossy webp grey = %v, want ≈ %v", v, 90.0/255)
		}
	}
}

// Resampling: mixed sizes to Size×Size with Catmull-Rom; native size must
// agree otherwise.
func TestImageFolderSizes(t *testing.T) {
	files := map[string][]byte{
		"a/1.png": pngGrey(t, 10, 6, func(x, y int) uint8 { return uint8(20*x + y) }),
		"a/2.png": pngGrey(t, 3, 3, func(x, y int) uint8 { return 90 }),
		"b/3.png": pngGrey(t, 5, 5, func(x, y int) uint8 { return uint8(255 * ((x + y) % 2)) }),
	}
	if _, err := ReadImageFolder(mapFS(files), "mixed", ImageFolderOptions{}); err == nil ||
		!strings.Contains(err.Error(), "mixed/a/1.png is 10×6 but mixed/a/2.png is 3×3") || !strings.Contains(err.Error(), "data.size") {
		t.Fatalf("mixed native sizes: %v", err)
	}
	d, err := ReadImageFolder(mapFS(files), "mixed", ImageFolderOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{1, 4, 4}) {
		t.Fatalf("shape %v", d.Shape)
	}
	// A flat image stays flat; values stay in [0, 1] despite the lobes; the
	// first image equals resizeKernel applied to its pixels.
	for _, v := range d.Sample(1) {
		if math.Abs(float64(v)-90.0/255) > 1e-6 {
			t.Fatalf("flat image resampled to %v", d.Sample(1))
		}
	}
	for _, v := range d.Sample(2) {
		if v < 0 || v > 1 {
			t.Fatalf("checkerboard resampled outside [0, 1]: %v", d.Sample(2))
		}
	}
	src := make([]float32, 60)
	for y := 0; y < 6; y++ {
		for x := 0; x < 10; x++ {
			src[y*10+x] = float32(20*x+y) / 255
		}
	}
	want := make([]float32, 16)
	resizeKernel(draw.CatmullRom, want, src, 1, 6, 10, 4, 4)
	if !reflect.DeepEqual(d.Sample(0), want) {
		t.Fatalf("resampled %v, want %v", d.Sample(0), want)
	}
}

// TestResizeKernelMatchesXImageDraw: our float resampler equals
// golang.org/x/image/draw's CatmullRom.Scale (which rounds to 16 bits) on
// random grey images, shrinking and enlarging.
func TestResizeKernelMatchesXImageDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ w, h, ow, oh int }{{28, 28, 8, 8}, {17, 9, 5, 13}, {3, 4, 11, 7}, {105, 105, 28, 28}, {6, 6, 6, 3}} {
		img := image.NewGray(image.Rect(0, 0, c.w, c.h))
		src := make([]float32, c.w*c.h)
		for i := range img.Pix {
			img.Pix[i] = uint8(r.IntN(256))
			src[i] = float32(img.Pix[i]) / 255
		}
		ref := image.NewGray16(image.Rect(0, 0, c.ow, c.oh))
		draw.CatmullRom.Scale(ref, ref.Bounds(), img, img.Bounds(), draw.Src, nil)
		got := make([]float32, c.ow*c.oh)
		resizeKernel(draw.CatmullRom, got, src, 1, c.h, c.w, c.oh, c.ow)
		for y := 0; y < c.oh; y++ {
			for x := 0; x < c.ow; x++ {
				want := float64(ref.Gray16At(x, y).Y) / 0xffff
				if d := math.Abs(float64(got[y*c.ow+x]) - want); d > 1.0/0xffff {
					t.Fatalf("%dx%d → %dx%d pixel (%d,%d): %v, x/image/draw %v", c.w, c.h, c.ow, c.oh, x, y, got[y*c.ow+x], want)
				}
			}
		}
	}
}

// A split folder: train/ then test/, classes the union, Test marks, one
// part on request.
func TestImageFolderSplit(t *testing.T) {
	p := func(v uint8) []byte { return pngGrey(t, 2, 2, func(x, y int) uint8 { return v }) }
	files := map[string][]byte{
		"train/ant/1.png": p(1), "train/ant/2.png": p(2), "train/bee/1.png": p(3),
		"test/ant/9.png": p(4), "test/cow/1.png": p(5),
		"README.md": []byte("split"), ".git/config": []byte("x"),
	}
	d, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Classes, []string{"ant", "bee", "cow"}) || !reflect.DeepEqual(d.Labels, []int{0, 0, 1, 0, 2}) ||
		!reflect.DeepEqual(d.Test, []bool{false, false, false, true, true}) ||
		!reflect.DeepEqual(d.Files, []string{"train/ant/1.png", "train/ant/2.png", "train/bee/1.png", "test/ant/9.png", "test/cow/1.png"}) {
		t.Fatalf("classes %v labels %v test %v files %v", d.Classes, d.Labels, d.Test, d.Files)
	}
	if !reflect.DeepEqual(d.Report.TrainOnly, []string{"bee"}) || !reflect.DeepEqual(d.Report.TestOnly, []string{"cow"}) || d.Report.Loose != 1 || d.Report.Hidden != 1 {
		t.Fatalf("report %+v", d.Report)
	}
	tr, te := d.Split()
	if !reflect.DeepEqual(tr, []int{0, 1, 2}) || !reflect.DeepEqual(te, []int{3, 4}) {
		t.Fatalf("Split() = %v %v", tr, te)
	}
	if sub := d.Subset([]int{4, 0}); !reflect.DeepEqual(sub.Test, []bool{true, false}) {
		t.Fatalf("Subset lost the marks: %v", sub.Test)
	}
	only, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{Part: "test"})
	if err != nil || !reflect.DeepEqual(only.Classes, []string{"ant", "cow"}) || only.Len() != 2 || only.Test[0] != true {
		t.Fatalf("test part: %v %+v", err, only)
	}
	delete(files, "test/ant/9.png")
	delete(files, "test/cow/1.png")
	files["test2/x/1.png"] = p(9)
	plain, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{})
	if err != nil || plain.Test != nil || !reflect.DeepEqual(plain.Classes, []string{"test2", "train"}) {
		t.Fatalf("not a split folder: %v %+v", err, plain)
	}
	if _, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{Part: "test"}); err == nil || !strings.Contains(err.Error(), "not a split folder") {
		t.Fatalf("part of a plain folder: %v", err)
	}
}

func TestImageFolderBadInput(t *testing.T) {
	good := func() map[string][]byte { return folderFixture(t) }
	cases := []struct {
		name    string
		edit    func(m map[string][]byte)
		kind    error
		mention string
	}{
		{"truncated png", func(m map[string][]byte) { m["cat/a.png"] = m["cat/a.png"][:40] }, ErrCorrupt, "pets/cat/a.png"},
		{"text named .jpg", func(m map[string][]byte) { m["dog/x.jpg"] = []byte("hello") }, ErrCorrupt, "pets/dog/x.jpg"},
		{"bad webp", func(m map[string][]byte) { m["dog/e.webp"] = m["dog/e.webp"][:50] }, ErrCorrupt, "pets/dog/e.webp"},
		{"class of text only", func(m map[string][]byte) { m["emu/list.txt"] = []byte("none yet") }, ErrCorrupt, `"emu" holds no image`},
		{"empty class", func(m map[string][]byte) { m["emu/.keep"] = nil }, ErrCorrupt, "pets/emu: empty class folder"},
		{"no class folders", func(m map[string][]byte) {
			for k := range m {
				if strings.Contains(k, "/") {
					delete(m, k)
				}
			}
		}, ErrNotFound, "no class folders"},
	}
	for _, c := range cases {
		m := good()
		c.edit(m)
		d, err := ReadImageFolder(mapFS(m), "pets", ImageFolderOptions{})
		if err == nil || d != nil || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.mention) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (want %v naming %q)", c.name, err, c.kind, c.mention)
		}
	}
	if _, err := ReadImageFolder(mapFS(good()), "pets", ImageFolderOptions{Size: -1}); err == nil {
		t.Error("negative size accepted")
	}
	if _, err := Load("imagefolder", filepath.Join(t.TempDir(), "nothere"), Options{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nothere") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := Load("imagefolder", "", Options{}); err == nil || !strings.Contains(err.Error(), "no data folder") {
		t.Errorf("no folder: %v", err)
	}
}

// The PNG encoder of the grey fixtures writes 8-bit grey; make sure a
// 16-bit PNG reads at full precision.
func TestImageFolderSixteenBit(t *testing.T) {
	img := image.NewGray16(image.Rect(0, 0, 2, 1))
	img.SetGray16(0, 0, color.Gray16{Y: 1000})
	img.SetGray16(1, 0, color.Gray16{Y: 65535})
	var b bytes.Buffer
	png.Encode(&b, img)
	d, err := ReadImageFolder(mapFS(map[string][]byte{"a/x.png": b.Bytes()}), "h", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Shape[0] != 1 || math.Abs(float64(d.X[0])-1000.0/65535) > 1e-7 || d.X[1] != 1 {
		t.Fatalf("16-bit grey: shape %v values %v", d.Shape, d.X)
	}
}

// TestLossyWebPMatchesLibwebp: a lossy WebP decodes to exactly what
// libwebp's dwebp -nofancy writes (limited-range BT.601, nearest chroma),
// not to the too-bright colours of Go's full-range YCbCr reading
// (golang/go#40173).
func TestLossyWebPMatchesLibwebp(t *testing.T) {
	ppm := readTestdata(t, "colour-lossy-nofancy.ppm")
	const header = "P6\n16 12\n255\n"
	if !bytes.HasPrefix(ppm, []byte(header)) || len(ppm) != len(header)+16*12*3 {
		t.Fatalf("unexpected reference file (%d bytes)", len(ppm))
	}
	ref := ppm[len(header):]
	img, release, err := decodeImage(readTestdata(t, "colour-lossy.webp"), MaxImagePixels)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	planes, h, w := rgbPlanes(img)
	if h != 12 || w != 16 {
		t.Fatalf("%d×%d", w, h)
	}
	for p := 0; p < h*w; p++ {
		for c := 0; c < 3; c++ {
			if got, want := planes[c*h*w+p], float32(ref[3*p+c])/255; got != want {
				t.Fatalf("pixel %d channel %d = %v, libwebp %v", p, c, got*255, want*255)
			}
		}
	}
}

// DecodeFolderImage gives, file by file, the samples ReadImageFolder gives.
func TestDecodeFolderImageMatchesReader(t *testing.T) {
	files := folderFixture(t)
	for _, c := range []struct {
		opts ImageFolderOptions
	}{{ImageFolderOptions{}}, {ImageFolderOptions{Grey: true}}, {ImageFolderOptions{Size: 5}}, {ImageFolderOptions{Grey: true, Size: 2}}} {
		d, err := ReadImageFolder(mapFS(files), "pets", c.opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range d.Files {
			s, err := DecodeFolderImage(files[f], d.Shape[0], d.Shape[1], d.Shape[2])
			if err != nil || !reflect.DeepEqual(s, d.Sample(i)) {
				t.Fatalf("%+v %s: %v, sample differs from the reader's", c.opts, f, err)
			}
		}
	}
	if _, err := DecodeFolderImage(files["cat/a.png"], 2, 3, 4); err == nil {
		t.Fatal("two channels accepted")
	}
	if _, err := DecodeFolderImage([]byte("text"), 1, 3, 4); err == nil {
		t.Fatal("text decoded")
	}
}

// Top-level split folders: train/ and test/ in any letter case are a split
// folder; any other set of split names (val/, a lone train/, …) is refused
// with one line naming the folder, never read as classes named after the
// splits.
func TestImageFolderSplitLayouts(t *testing.T) {
	p := func(v uint8) []byte { return pngGrey(t, 2, 2, func(x, y int) uint8 { return v }) }
	t.Run("Train and Test", func(t *testing.T) {
		files := map[string][]byte{
			"Train/cat/1.png": p(10), "Train/dog/1.png": p(20),
			"Test/cat/2.png": p(30), "Test/dog/2.png": p(40),
		}
		d, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d.Classes, []string{"cat", "dog"}) || !reflect.DeepEqual(d.Labels, []int{0, 1, 0, 1}) ||
			!reflect.DeepEqual(d.Test, []bool{false, false, true, true}) ||
			!reflect.DeepEqual(d.Files, []string{"Train/cat/1.png", "Train/dog/1.png", "Test/cat/2.png", "Test/dog/2.png"}) ||
			d.X[0] != 10.0/255 || d.X[3*4] != 40.0/255 {
			t.Fatalf("classes %v labels %v test %v files %v", d.Classes, d.Labels, d.Test, d.Files)
		}
		te, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{Part: "test"})
		if err != nil || !reflect.DeepEqual(te.Files, []string{"Test/cat/2.png", "Test/dog/2.png"}) || !reflect.DeepEqual(te.Test, []bool{true, true}) {
			t.Fatalf("Part test: %v %+v", err, te)
		}
	})
	t.Run("TRAIN and test", func(t *testing.T) {
		files := map[string][]byte{"TRAIN/cat/1.png": p(10), "test/cat/2.png": p(30)}
		d, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{})
		if err != nil || !reflect.DeepEqual(d.Classes, []string{"cat"}) || !reflect.DeepEqual(d.Files, []string{"TRAIN/cat/1.png", "test/cat/2.png"}) {
			t.Fatalf("%v %+v", err, d)
		}
	})
	for _, c := range []struct {
		name    string
		parts   []string
		mention []string
	}{
		{"train val test", []string{"train", "val", "test"}, []string{"s: ", "test, train, val", "s/train", "val/"}},
		{"Train Validation", []string{"Train", "Validation"}, []string{"s: ", "Train, Validation", "s/Train"}},
		{"train alone", []string{"train"}, []string{"s: ", "s/train"}},
		{"valid test", []string{"test", "valid"}, []string{"s: ", "test, valid"}},
		{"train twice", []string{"Train", "test", "train"}, []string{"s: ", "Train, test, train"}},
	} {
		files := map[string][]byte{}
		for _, part := range c.parts {
			files[part+"/cat/1.png"] = p(10)
			files[part+"/dog/1.png"] = p(200)
		}
		for _, part := range []string{"", "train", "test"} {
			d, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{Part: part})
			if err == nil {
				t.Errorf("%s, part %q: read as classes %q (files %q)", c.name, part, d.Classes, d.Files)
				continue
			}
			msg := err.Error()
			if d != nil || !errors.Is(err, ErrCorrupt) || strings.Contains(msg, "\n") || !strings.Contains(msg, "train/ and test/") {
				t.Errorf("%s, part %q: %v", c.name, part, err)
			}
			for _, m := range c.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("%s, part %q: %q does not mention %q", c.name, part, msg, m)
				}
			}
		}
	}
	// A class folder that merely shares a split's name among real classes
	// stays a class.
	d, err := ReadImageFolder(mapFS(map[string][]byte{"test/1.png": p(1), "zebra/1.png": p(2)}), "s", ImageFolderOptions{})
	if err != nil || !reflect.DeepEqual(d.Classes, []string{"test", "zebra"}) {
		t.Fatalf("classes test, zebra: %v %+v", err, d)
	}
}

// In a split folder every class folder of every part must hold an image:
// test/cat/ with only a text file is the error that reading test/ alone
// gives, not a class silently without test samples.
func TestImageFolderSplitClassWithoutImage(t *testing.T) {
	p := func(v uint8) []byte { return pngGrey(t, 2, 2, func(x, y int) uint8 { return v }) }
	files := map[string][]byte{
		"train/cat/1.png": p(10), "train/dog/1.png": p(20), "test/dog/2.png": p(30),
		"test/cat/notes.txt": []byte("hello"),
	}
	for _, part := range []string{"", "test"} {
		d, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{Part: part})
		if err == nil || d != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `s/test: class folder "cat" holds no image`) {
			t.Errorf("part %q: %v", part, err)
		}
	}
	d, err := ReadImageFolder(mapFS(files), "s", ImageFolderOptions{Part: "train"})
	if err != nil || d.Len() != 2 || d.Report.NotImage != 0 {
		t.Fatalf("train part: %v %+v", err, d)
	}
	// Without the folder the class is train-only, as documented.
	delete(files, "test/cat/notes.txt")
	d, err = ReadImageFolder(mapFS(files), "s", ImageFolderOptions{})
	if err != nil || !reflect.DeepEqual(d.Report.TrainOnly, []string{"cat"}) || d.Len() != 3 {
		t.Fatalf("no test/cat/: %v %+v", err, d)
	}
}

// bigFile is a file of size bytes that is an error to read past its first
// readable bytes: a reader that sniffs only what it needs gets through, one
// that reads the file whole fails.
type bigFile struct {
	name       string
	head       []byte
	size, read int64
	readable   int64
}

func (f *bigFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *bigFile) Name() string               { return path.Base(f.name) }
func (f *bigFile) Size() int64                { return f.size }
func (f *bigFile) Mode() fs.FileMode          { return 0o644 }
func (f *bigFile) ModTime() time.Time         { return time.Time{} }
func (f *bigFile) IsDir() bool                { return false }
func (f *bigFile) Sys() any                   { return nil }
func (f *bigFile) Close() error               { return nil }
func (f *bigFile) Read(p []byte) (int, error) {
	if f.read >= f.size {
		return 0, io.EOF
	}
	if f.read >= f.readable {
		return 0, fmt.Errorf("%s read past its first %d bytes", f.name, f.readable)
	}
	n := int(min(int64(len(p)), f.readable-f.read, f.size-f.read))
	for i := range p[:n] {
		if off := f.read + int64(i); off < int64(len(f.head)) {
			p[i] = f.head[off]
		} else {
			p[i] = 0
		}
	}
	f.read += int64(n)
	return n, nil
}

// bigFS serves the files of MapFS and, in place of the names in big, files
// of MaxImageFileBytes+1 bytes made like the bigFile given.
type bigFS struct {
	fstest.MapFS
	big map[string]bigFile
}

func (b bigFS) Open(name string) (fs.File, error) {
	if f, ok := b.big[name]; ok {
		f.name, f.size = name, MaxImageFileBytes+1
		return &f, nil
	}
	return b.MapFS.Open(name)
}

// A non-image file of any size in a class folder is skipped, as a small
// one is, after reading only its first bytes; an image file over
// MaxImageFileBytes, or a non-image named as an image, stays an error.
func TestImageFolderSkipsLargeNonImage(t *testing.T) {
	files := map[string][]byte{
		"cat/1.png":    pngGrey(t, 2, 2, func(x, y int) uint8 { return 10 }),
		"dog/1.png":    pngGrey(t, 2, 2, func(x, y int) uint8 { return 200 }),
		"dog/clip.mp4": nil, "dog/notes.txt": []byte("not an image"),
	}
	mp4 := []byte("\x00\x00\x00\x18ftypmp42")
	fsys := bigFS{mapFS(files), map[string]bigFile{"dog/clip.mp4": {head: mp4, readable: 4096}}}
	d, err := ReadImageFolder(fsys, "pets", ImageFolderOptions{})
	if err != nil {
		t.Fatalf("a %d-byte non-image aborts the read: %v", MaxImageFileBytes+1, err)
	}
	if d.Len() != 2 || d.Report.NotImage != 2 || !reflect.DeepEqual(d.Files, []string{"cat/1.png", "dog/1.png"}) {
		t.Fatalf("len %d, report %+v, files %v", d.Len(), d.Report, d.Files)
	}
	for _, c := range []struct {
		name    string
		f       bigFile
		mention string
	}{
		{"dog/big.png", bigFile{head: []byte("\x89PNG\r\n\x1a\n"), readable: MaxImageFileBytes + 1}, "larger than"}, // an image too large to load
		{"dog/clip.jpg", bigFile{head: mp4, readable: 4096}, "not a PNG"},                                           // a non-image named as an image
	} {
		fsys.big = map[string]bigFile{c.name: c.f}
		fsys.MapFS[c.name] = &fstest.MapFile{Mode: 0o644} // listed; its content comes from big
		d, err := ReadImageFolder(fsys, "pets", ImageFolderOptions{})
		delete(fsys.MapFS, c.name)
		if err == nil || d != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "pets/"+c.name+": ") ||
			!strings.Contains(err.Error(), c.mention) || strings.Contains(err.Error(), "read past") {
			t.Errorf("%s: %v (want ErrCorrupt naming it, %q)", c.name, err, c.mention)
		}
	}
	// The same through Load on disk, with a sparse 70 MB file.
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"cat/1.png": files["cat/1.png"], "dog/1.png": files["dog/1.png"]})
	f, err := os.Create(filepath.Join(dir, "dog", "clip.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(70 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if d, err := Load("imagefolder", dir, Options{}); err != nil || d.Len() != 2 || d.Report.NotImage != 1 {
		t.Fatalf("Load: %v %+v", err, d)
	}
}

// A grey PNG and the same pixels stored as RGB (truecolour PNG, palette
// GIF) are grey images: one channel, and the same values v/255, in
// automatic and in grey mode, at native size and resampled.
func TestImageFolderGreyAndRGBSameValues(t *testing.T) {
	const w, h = 6, 5
	v := func(x, y int) uint8 { return uint8(37*x + 11*y*y + 3) }
	rgb := image.NewRGBA(image.Rect(0, 0, w, h))
	pal := make(color.Palette, 0, 256)
	idx := map[uint8]uint8{}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			rgb.SetRGBA(x, y, color.RGBA{v(x, y), v(x, y), v(x, y), 255})
			if _, ok := idx[v(x, y)]; !ok {
				idx[v(x, y)] = uint8(len(pal))
				pal = append(pal, color.RGBA{v(x, y), v(x, y), v(x, y), 255})
			}
		}
	}
	paletted := image.NewPaletted(rgb.Bounds(), pal)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			paletted.SetColorIndex(x, y, idx[v(x, y)])
		}
	}
	var rgbPNG, palGIF bytes.Buffer
	if err := png.Encode(&rgbPNG, rgb); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&palGIF, paletted, &gif.Options{NumColors: 256}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"a/grey.png": pngGrey(t, w, h, v), "b/rgb.png": rgbPNG.Bytes(), "c/pal.gif": palGIF.Bytes()}
	for _, opts := range []ImageFolderOptions{{}, {Grey: true}, {Size: 3}, {Size: 9, Grey: true}} {
		d, err := ReadImageFolder(mapFS(files), "g", opts)
		if err != nil {
			t.Fatal(err)
		}
		if d.Shape[0] != 1 || d.Len() != 3 {
			t.Fatalf("%+v: shape %v, %d samples", opts, d.Shape, d.Len())
		}
		if !reflect.DeepEqual(d.Sample(0), d.Sample(1)) || !reflect.DeepEqual(d.Sample(0), d.Sample(2)) {
			t.Fatalf("%+v: grey PNG %v\nRGB PNG %v\nGIF %v", opts, d.Sample(0), d.Sample(1), d.Sample(2))
		}
		if opts.Size == 0 {
			for i, got := range d.Sample(0) {
				if want := float32(v(i%w, i/w)) / 255; got != want {
					t.Fatalf("%+v: pixel %d = %v, want %v", opts, i, got, want)
				}
			}
		}
	}
}

// Converting a grey image for an image folder allocates one float32 plane
// (4 bytes a pixel), not three RGB planes and then the grey one (16).
func TestConvertFolderImageGreyMemory(t *testing.T) {
	const side = 1000
	grey := image.NewGray(image.Rect(0, 0, side, side))
	rgb := image.NewNRGBA(grey.Bounds())
	for i := range grey.Pix {
		grey.Pix[i] = uint8(i % 251)
		copy(rgb.Pix[4*i:], []byte{grey.Pix[i], grey.Pix[i], grey.Pix[i], 255})
	}
	for _, c := range []struct {
		name string
		img  image.Image
	}{{"Gray", grey}, {"NRGBA with R = G = B", rgb}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, isGrey := convertFolderImage(c.img, false, 28, 28)
		runtime.ReadMemStats(&after)
		if !isGrey || len(s) != 28*28 {
			t.Fatalf("%s: grey %v, %d values", c.name, isGrey, len(s))
		}
		if perPixel := float64(after.TotalAlloc-before.TotalAlloc) / (side * side); perPixel > 5 {
			t.Errorf("%s: converting allocates %.1f bytes a pixel, want ≤ 5 (one float32 plane)", c.name, perPixel)
		}
	}
}

// A GIF whose first frame covers part of its logical screen is valid: the
// frame is placed on a screen-sized canvas, zero (transparent black)
// elsewhere, as in a folder of images of the screen's size.
func TestDecodeGIFFrameInsideScreen(t *testing.T) {
	pal := color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{255, 255, 255, 255}, color.RGBA{200, 50, 10, 255}}
	frame := image.NewPaletted(image.Rect(1, 2, 3, 4), pal) // 2×2 at (1, 2)
	frame.SetColorIndex(1, 2, 1)
	frame.SetColorIndex(2, 2, 2)
	frame.SetColorIndex(1, 3, 1)
	frame.SetColorIndex(2, 3, 1)
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{ColorModel: pal, Width: 4, Height: 5}}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"a/small-frame.gif": b.Bytes(), "b/x.png": pngGrey(t, 4, 5, func(x, y int) uint8 { return 9 })}
	d, err := ReadImageFolder(mapFS(files), "g", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Shape, []int{3, 5, 4}) {
		t.Fatalf("shape %v", d.Shape)
	}
	want := make([]float32, 3*20) // R, G, B planes of 5 rows of 4
	set := func(x, y int, c color.RGBA) {
		for ch, v := range []uint8{c.R, c.G, c.B} {
			want[ch*20+y*4+x] = float32(v) / 255
		}
	}
	set(1, 2, color.RGBA{255, 255, 255, 255})
	set(2, 2, color.RGBA{200, 50, 10, 255})
	set(1, 3, color.RGBA{255, 255, 255, 255})
	set(2, 3, color.RGBA{255, 255, 255, 255})
	if got := d.Sample(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("GIF sample %v\nwant %v", got, want)
	}
	if s, err := DecodeFolderImage(b.Bytes(), 3, 5, 4); err != nil || !reflect.DeepEqual(s, want) {
		t.Fatalf("DecodeFolderImage: %v %v", err, s)
	}
}

// Within a class, files come in depth-first walk order — a folder's
// entries by name in byte order, a sub-folder's files where its name falls
// — which is not plain path order (a/b.png before a-1.png, B.png first).
// The order feeds seeded sampling, so it is pinned here.
func TestImageFolderFileOrder(t *testing.T) {
	p := pngGrey(t, 2, 2, func(x, y int) uint8 { return 5 })
	files := map[string][]byte{"c/a/b.png": p, "c/a-1.png": p, "c/a.png": p, "c/B.png": p, "c/a/z/y.png": p, "c/a/c.png": p, "d/x.png": p}
	d, err := ReadImageFolder(mapFS(files), "o", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c/B.png", "c/a/b.png", "c/a/c.png", "c/a/z/y.png", "c/a-1.png", "c/a.png", "d/x.png"}
	if !reflect.DeepEqual(d.Files, want) {
		t.Fatalf("files %q, want %q", d.Files, want)
	}
}

// A part (data.split) of a folder that is not split is a setting the data
// cannot honour — ErrConfig naming the folder and the setting, not
// ErrNotFound (the table skipped it as "data not available") nor
// ErrCorrupt (the files are fine).
func TestImageFolderPartOfPlainFolderIsConfig(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ant/1.png", "ant/2.png", "bee/1.png", "bee/2.png"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), pngGrey(t, 2, 2, func(x, y int) uint8 { return uint8(x + y) }), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load("imagefolder", dir, Options{}); err != nil {
		t.Fatalf("the folder itself: %v", err)
	}
	for _, part := range []string{"train", "test"} {
		_, err := Load("imagefolder", dir, Options{Split: part})
		if !errors.Is(err, ErrConfig) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("split %s of a plain folder: %v (ErrConfig %v, ErrNotFound %v)", part, err, errors.Is(err, ErrConfig), errors.Is(err, ErrNotFound))
		}
		if msg := err.Error(); !strings.Contains(msg, dir+" is not a split folder") || !strings.Contains(msg, "data.split = "+part) || strings.Contains(msg, "\n") {
			t.Fatalf("split %s of a plain folder: %q, want one line naming %s and data.split", part, msg, dir)
		}
	}
}

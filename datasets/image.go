package datasets

// Shared image machinery for the folder-of-images readers (Omniglot,
// COVID-CT, miniImageNet, image folders): content-sniffed decoding,
// conversion to float32 planes in [0, 1], area-averaging resize and a
// deterministic parallel loop.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif"  // registered for image.Decode: image folders
	_ "image/jpeg" // registered for image.Decode: COVID-CT and miniImageNet hold JPEG data
	_ "image/png"  // registered for image.Decode: Omniglot and COVID-CT hold PNG data
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/drknn/drknn/internal/par"
	_ "golang.org/x/image/bmp"  // registered for image.Decode: image folders
	_ "golang.org/x/image/webp" // registered for image.Decode: image folders
	"golang.org/x/sync/semaphore"
)

// MaxImagePixels bounds width×height of any image the readers decode. The
// header is checked before the pixels are allocated, so a corrupt or hostile
// file that declares a huge size is rejected instead of exhausting memory.
// The largest real image (COVID-CT) is 1671 pixels on a side.
const MaxImagePixels = 1 << 25

// errNotImage marks data that no registered decoder recognises.
var errNotImage = errors.New("not a PNG or JPEG (nor GIF, BMP, WebP) image")

// errTIFF is the answer for TIFF data, which no reader takes: the
// x/image/tiff decoder — registered in every program that links gonum/plot's
// vgimg, as drknn's commands do, and absent from a program that does not —
// allocates gigabytes for a crafted file of a few hundred bytes (2 GiB in
// DecodeConfig, before any size can be checked). Refusing it by its
// signature, registered or not, keeps the formats the library and the
// commands read the same.
var errTIFF = fmt.Errorf("%w: a TIFF file, which is not read (convert it to PNG)", errNotImage)

// isTIFF reports whether data starts with a TIFF signature.
func isTIFF(data []byte) bool {
	return bytes.HasPrefix(data, []byte("II*\x00")) || bytes.HasPrefix(data, []byte("MM\x00*"))
}

// DecodeConfig is image.DecodeConfig for the formats the readers decode
// (PNG, JPEG, GIF, BMP, WebP): TIFF data answers an error wrapping
// image.ErrFormat before any decoder sees it, whether or not the program
// registered a TIFF decoder.
func DecodeConfig(r io.Reader) (image.Config, string, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(4); isTIFF(head) {
		return image.Config{}, "", fmt.Errorf("%w (%v)", image.ErrFormat, errTIFF)
	}
	return image.DecodeConfig(br)
}

// sniffLen is how many leading bytes of a file decide whether it is an
// image (isImageData): more than the longest signature of the registered
// formats (WebP's "RIFF????WEBPVP8", 15 bytes).
const sniffLen = 64

// isImageData reports whether head — the first sniffLen bytes of a file, or
// all of a shorter one — starts like one of the registered image formats:
// exactly when decodeImage on the whole file would not answer errNotImage.
func isImageData(head []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = true // a decoder recognised the format, then failed: corrupt, not "not an image"
		}
	}()
	_, _, err := DecodeConfig(bytes.NewReader(head))
	return !errors.Is(err, image.ErrFormat)
}

// decodeImage decodes PNG, JPEG, GIF, BMP or WebP data by content (never by
// file name; TIFF is refused, errTIFF), after checking the declared size against maxPixels. A decoder
// that panics on hostile input is reported as a corrupt image.
//
// The image's width × height is taken from the package's decoding budget
// (decodePixels) before its pixels are allocated; the caller holds them
// while it converts the image and gives them back with release (a no-op
// after an error; safe to call twice), so that parallel decoding never holds
// more than about MaxImagePixels pixels at once.
func decodeImage(data []byte, maxPixels int) (img image.Image, release func(), err error) {
	release = func() {}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("corrupt image: decoder failed (%v)", r)
		}
		if err != nil {
			release()
			release = func() {}
		}
	}()
	if isTIFF(data) {
		return nil, release, errTIFF
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, image.ErrFormat) {
			return nil, release, errNotImage
		}
		return nil, release, fmt.Errorf("bad image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, release, fmt.Errorf("%s image has empty size %d×%d", format, cfg.Width, cfg.Height)
	}
	if cfg.Width > maxPixels/cfg.Height {
		return nil, release, fmt.Errorf("%s image of %d×%d pixels exceeds the limit of %d pixels", format, cfg.Width, cfg.Height, maxPixels)
	}
	release = decodePixels.acquire(int64(cfg.Width) * int64(cfg.Height))
	img, _, err = image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, release, fmt.Errorf("corrupt %s image: %w", format, err)
	}
	if format == "webp" {
		switch m := img.(type) {
		case *image.YCbCr:
			img = webpRGB(m)
		case *image.NYCbCrA:
			img = webpRGB(&m.YCbCr)
		}
	}
	b := img.Bounds()
	if screen := image.Rect(0, 0, cfg.Width, cfg.Height); format == "gif" && b != screen && b.In(screen) {
		// A GIF's first frame may cover part of the logical screen (the
		// size of the header): place it on a screen-sized canvas, zero
		// (transparent black) elsewhere.
		canvas := image.NewRGBA(screen)
		draw.Draw(canvas, b, img, b.Min, draw.Src)
		img, b = canvas, screen
	}
	if b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return nil, release, fmt.Errorf("%s image decoded to %d×%d, header says %d×%d", format, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
	}
	return img, release, nil
}

// decodePixels is the decoding budget of every image reader: the pixels
// (width × height, from the headers) of the images being decoded and
// converted at once. One image takes 1–8 bytes a pixel decoded and 4–12
// more as float32 planes, so the ioOverlap×GOMAXPROCS workers of
// parallelFor, each holding a large image, could take gigabytes (16 grey
// 5700×5700 PNGs of 43 KB each took 5.6 GB); with the budget at most about
// MaxImagePixels pixels are in flight (≤ 0.6 GB), while small images still
// decode on every core.
var decodePixels = newPixelBudget(MaxImagePixels)

// pixelBudget is a weighted semaphore counting pixels.
type pixelBudget struct {
	size       int64
	sem        *semaphore.Weighted
	held, peak atomic.Int64 // pixels held now, and the most held at once (for tests)
}

func newPixelBudget(size int64) *pixelBudget {
	return &pixelBudget{size: size, sem: semaphore.NewWeighted(size)}
}

// acquire waits until n pixels are free (n is capped at the whole budget,
// so any image can be decoded, alone) and returns the function that gives
// them back; calling it again does nothing.
func (b *pixelBudget) acquire(n int64) (release func()) {
	n = min(max(n, 1), b.size)
	_ = b.sem.Acquire(context.Background(), n) // fails only when the context is done
	held := b.held.Add(n)
	for p := b.peak.Load(); held > p && !b.peak.CompareAndSwap(p, held); p = b.peak.Load() {
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.held.Add(-n)
			b.sem.Release(n)
		})
	}
}

// webpRGB converts the Y'CbCr planes of a lossy WebP image to RGB the way
// libwebp does: VP8 stores limited-range BT.601 (Y' 16–235), whereas
// x/image/webp hands back an image.YCbCr that Go's colour code reads as
// full-range JFIF, too bright and too contrasted (golang/go#40173). The
// fixed-point formulas are libwebp's (src/dsp/yuv.h); chroma is taken from
// the nearest sample (libwebp's default "fancy" upsampling interpolates, so
// colours may differ from dwebp by a few levels at chroma edges).
func webpRGB(m *image.YCbCr) *image.NRGBA {
	b := m.Bounds()
	out := image.NewNRGBA(b)
	multHi := func(v, c int) int { return (v * c) >> 8 }
	clip8 := func(v int) uint8 {
		if v&^(256<<6-1) == 0 {
			return uint8(v >> 6)
		}
		if v < 0 {
			return 0
		}
		return 255
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			yy := int(m.Y[m.YOffset(x, y)])
			ci := m.COffset(x, y)
			u, v := int(m.Cb[ci]), int(m.Cr[ci])
			o := out.PixOffset(x, y)
			out.Pix[o+0] = clip8(multHi(yy, 19077) + multHi(v, 26149) - 14234)
			out.Pix[o+1] = clip8(multHi(yy, 19077) - multHi(u, 6419) - multHi(v, 13320) + 8708)
			out.Pix[o+2] = clip8(multHi(yy, 19077) + multHi(u, 33050) - 17685)
			out.Pix[o+3] = 255
		}
	}
	return out
}

// Luma weights (ITU-R BT.601, the weights of JPEG's Y and of PIL's "L").
const (
	lumaR = 0.299
	lumaG = 0.587
	lumaB = 0.114
)

// greyPlane returns the luma of img as an h×w plane in [0, 1]. Colour images
// are reduced with the BT.601 weights; for JPEG (YCbCr) data the stored Y
// channel is used as is. Alpha is ignored: the colour channels are used as
// stored (not composited over any background), as PIL's convert("L") does,
// so transparency never reaches the values.
func greyPlane(img image.Image) (plane []float32, h, w int) {
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	plane = make([]float32, w*h)
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+w]
			for x, v := range row {
				plane[y*w+x] = float32(v) / 255
			}
		}
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				plane[y*w+x] = float32(m.Y[m.YOffset(b.Min.X+x, b.Min.Y+y)]) / 255
			}
		}
	case *image.RGBA, *image.NRGBA:
		pix, stride := rgbaPix(m)
		for y := 0; y < h; y++ {
			row := pix[y*stride : y*stride+4*w]
			for x := 0; x < w; x++ {
				p := row[4*x : 4*x+3]
				plane[y*w+x] = float32((lumaR*float64(p[0]) + lumaG*float64(p[1]) + lumaB*float64(p[2])) / 255)
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, bl := straightRGB(img.At(b.Min.X+x, b.Min.Y+y))
				plane[y*w+x] = float32((lumaR*float64(r) + lumaG*float64(g) + lumaB*float64(bl)) / 0xffff)
			}
		}
	}
	return plane, h, w
}

// rgbaPix returns the pixel bytes and stride of an *image.RGBA or
// *image.NRGBA (for an opaque RGBA and any NRGBA the first three bytes of a
// pixel are its stored colour).
func rgbaPix(img image.Image) ([]byte, int) {
	if m, ok := img.(*image.RGBA); ok {
		return m.Pix, m.Stride
	}
	m := img.(*image.NRGBA)
	return m.Pix, m.Stride
}

// straightRGB returns the 16-bit colour channels of c as stored, without
// alpha premultiplication (Go's Color.RGBA premultiplies): exact for the
// non-premultiplied types the decoders produce (NRGBA, NRGBA64, NYCbCrA),
// un-premultiplied otherwise.
func straightRGB(c color.Color) (r, g, b uint32) {
	switch v := c.(type) {
	case color.NRGBA:
		return uint32(v.R) * 0x101, uint32(v.G) * 0x101, uint32(v.B) * 0x101
	case color.NRGBA64:
		return uint32(v.R), uint32(v.G), uint32(v.B)
	case color.NYCbCrA:
		r, g, b, _ = v.YCbCr.RGBA()
		return r, g, b
	}
	r, g, b, a := c.RGBA()
	if a != 0 && a != 0xffff {
		r, g, b = r*0xffff/a, g*0xffff/a, b*0xffff/a
	}
	return r, g, b
}

// sameRGB reports whether R = G = B at every pixel of img as rgbPlanes
// reads it — exactly when its three planes would be equal — without
// building them: at once for grey image types, stopping at the first
// coloured pixel otherwise.
func sameRGB(img image.Image) bool {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch m := img.(type) {
	case *image.Gray, *image.Gray16:
		return true
	case *image.RGBA, *image.NRGBA:
		pix, stride := rgbaPix(m)
		for y := 0; y < h; y++ {
			row := pix[y*stride : y*stride+4*w]
			for x := 0; x < 4*w; x += 4 {
				if row[x] != row[x+1] || row[x] != row[x+2] {
					return false
				}
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, bl := straightRGB(img.At(b.Min.X+x, b.Min.Y+y))
				if fr := float32(r) / 0xffff; fr != float32(g)/0xffff || fr != float32(bl)/0xffff { // rgbPlanes's values
					return false
				}
			}
		}
	}
	return true
}

// rgbPlanes returns img as three h×w planes R, G, B (channel-major) in
// [0, 1]. Alpha is ignored, as in greyPlane.
func rgbPlanes(img image.Image) (planes []float32, h, w int) {
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	n := w * h
	planes = make([]float32, 3*n)
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				v := float32(m.Pix[y*m.Stride+x]) / 255
				planes[y*w+x], planes[n+y*w+x], planes[2*n+y*w+x] = v, v, v
			}
		}
	case *image.RGBA, *image.NRGBA:
		pix, stride := rgbaPix(m)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				p := pix[y*stride+4*x:]
				planes[y*w+x] = float32(p[0]) / 255
				planes[n+y*w+x] = float32(p[1]) / 255
				planes[2*n+y*w+x] = float32(p[2]) / 255
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, bl := straightRGB(img.At(b.Min.X+x, b.Min.Y+y))
				planes[y*w+x] = float32(r) / 0xffff
				planes[n+y*w+x] = float32(g) / 0xffff
				planes[2*n+y*w+x] = float32(bl) / 0xffff
			}
		}
	}
	return planes, h, w
}

// axisWeights describes, for one axis of a resize, which source pixels
// contribute to each output pixel and with what weight (area averaging:
// newAreaWeights; a resampling kernel: newKernelWeights).
type axisWeights struct {
	start []int       // first source index for output j
	w     [][]float64 // weights of source start[j], start[j]+1, …; they sum to 1
}

// newAreaWeights computes exact area-averaging weights from n source pixels
// to m output pixels: output j covers the source interval
// [j·n/m, (j+1)·n/m), and source pixel i contributes the length of its
// overlap with that interval, divided by n/m. Works for both shrinking and
// enlarging; for m == n it is the identity.
func newAreaWeights(n, m int) axisWeights {
	aw := axisWeights{start: make([]int, m), w: make([][]float64, m)}
	scale := float64(n) / float64(m)
	for j := 0; j < m; j++ {
		// Integer arithmetic for the ends avoids rounding drift: the
		// interval is [j·n, (j+1)·n) in units of 1/m source pixels.
		lo, hi := j*n, (j+1)*n
		i0, i1 := lo/m, (hi+m-1)/m // source pixels i0 … i1-1 overlap
		aw.start[j] = i0
		ws := make([]float64, i1-i0)
		for i := i0; i < i1; i++ {
			a, b := max(lo, i*m), min(hi, (i+1)*m)
			ws[i-i0] = float64(b-a) / float64(m) / scale
		}
		aw.w[j] = ws
	}
	return aw
}

// resizeArea resizes c planes of h×w (channel-major) to oh×ow by area
// averaging, writing into dst (length c·oh·ow). Accumulates in float64.
func resizeArea(dst, src []float32, c, h, w, oh, ow int) {
	if h == oh && w == ow {
		copy(dst, src[:c*h*w])
		return
	}
	resample(dst, src, c, h, w, oh, ow, newAreaWeights(w, ow), newAreaWeights(h, oh), false)
}

// resample resizes c planes of h×w (channel-major) to oh×ow with the
// weights wx (columns) and wy (rows), horizontally then vertically in
// float64, writing into dst (length c·oh·ow); clamp limits the results to
// [0, 1].
func resample(dst, src []float32, c, h, w, oh, ow int, wx, wy axisWeights, clamp bool) {
	tmp := make([]float64, h*ow) // horizontally resized plane
	for ch := 0; ch < c; ch++ {
		s := src[ch*h*w : (ch+1)*h*w]
		for y := 0; y < h; y++ {
			row := s[y*w : (y+1)*w]
			for j := 0; j < ow; j++ {
				acc := 0.0
				for k, wt := range wx.w[j] {
					acc += wt * float64(row[wx.start[j]+k])
				}
				tmp[y*ow+j] = acc
			}
		}
		d := dst[ch*oh*ow : (ch+1)*oh*ow]
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				acc := 0.0
				for k, wt := range wy.w[i] {
					acc += wt * tmp[(wy.start[i]+k)*ow+j]
				}
				if clamp {
					acc = min(max(acc, 0), 1)
				}
				d[i*ow+j] = float32(acc)
			}
		}
	}
}

// ioOverlap is how many goroutines per core parallelFor runs: the work
// mixes file reads (latency-bound, so overlapping them pays) with decoding
// (CPU-bound, where extra goroutines cost little).
const ioOverlap = 4

// parallelFor runs fn(i) for i = 0…n-1 on up to ioOverlap×GOMAXPROCS
// goroutines (par.For). Each call must write only to its own slot of the
// output, so the result does not depend on scheduling. On failure it
// returns the error of the lowest index that failed, after the workers
// have stopped.
func parallelFor(n int, fn func(i int) error) error {
	return par.For(n, ioOverlap*runtime.GOMAXPROCS(0), fn)
}

// toGrey decodes data and returns its luma resized to size×size (or at
// native size when size == 0, in which case h and w are the image's).
func toGrey(data []byte, size int) (out []float32, h, w int, err error) {
	img, release, err := decodeImage(data, MaxImagePixels)
	if err != nil {
		return nil, 0, 0, err
	}
	defer release()
	plane, h, w := greyPlane(img)
	if size == 0 {
		return plane, h, w, nil
	}
	out = make([]float32, size*size)
	resizeArea(out, plane, 1, h, w, size, size)
	return out, size, size, nil
}

// toRGB decodes data and returns its R, G, B planes resized to size×size.
func toRGB(data []byte, size int) ([]float32, error) { return toRGBShape(data, size, size) }

// toRGBShape decodes data and returns its R, G, B planes resized to
// height×width by area averaging (toRGB, and DecodeReaderImage for
// miniImageNet models).
func toRGBShape(data []byte, height, width int) ([]float32, error) {
	img, release, err := decodeImage(data, MaxImagePixels)
	if err != nil {
		return nil, err
	}
	defer release()
	planes, h, w := rgbPlanes(img)
	out := make([]float32, 3*height*width)
	resizeArea(out, planes, 3, h, w, height, width)
	return out, nil
}

// MaxImageFileBytes bounds the size of one image file (or zip entry) the
// readers load into memory.
const MaxImageFileBytes = 64 << 20

// imageItem is one image to decode: where it comes from (for Files and error
// messages), its label, and how to get its bytes.
type imageItem struct {
	name  string
	label int
	read  func() ([]byte, error)
}

// readAllLimited reads r to the end, refusing more than MaxImageFileBytes.
func readAllLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxImageFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxImageFileBytes {
		return nil, fmt.Errorf("file larger than %d bytes", MaxImageFileBytes)
	}
	return data, nil
}

// fileItem returns an imageItem that reads the file at path.
func fileItem(path, name string, label int) imageItem {
	return imageItem{name: name, label: label, read: func() ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readAllLimited(f)
	}}
}

// skipName reports whether a directory entry is bookkeeping that the readers
// ignore: hidden files (".DS_Store", "._x.png") and macOS "__MACOSX" folders.
// "." and ".." are not skipped: callers treat them as bad paths.
func skipName(name string) bool {
	if name == "." || name == ".." {
		return false
	}
	return strings.HasPrefix(name, ".") || name == "__MACOSX"
}

// listDir returns the names of the entries of dir, sorted, without the
// entries skipName ignores. wantDirs selects folders (true) or files
// (false); an entry of the other kind is an error, so is an empty result.
func listDir(dir string, wantDirs bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, classify(err)
	}
	var names []string
	for _, e := range entries {
		if skipName(e.Name()) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, classify(err)
			}
			isDir = fi.IsDir()
		}
		switch {
		case wantDirs && !isDir:
			return nil, corruptf("%s: unexpected file (expected only folders here)", filepath.Join(dir, e.Name()))
		case !wantDirs && isDir:
			return nil, corruptf("%s: unexpected folder (expected only image files here)", filepath.Join(dir, e.Name()))
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		kind := "image files"
		if wantDirs {
			kind = "folders"
		}
		return nil, corruptf("%s: empty folder (no %s)", dir, kind)
	}
	sort.Strings(names)
	return names, nil
}

// decodeItems decodes every item in parallel with convert and assembles a
// Dataset in item order. convert turns file bytes into one sample of
// prod(shape) values, or fails; a failure is reported as "ROOT/NAME: reason"
// for the first failing item in order, and no partial Dataset is returned.
// Files holds the item names (relative to root).
func decodeItems(name, root string, shape []int, classes []string, items []imageItem,
	convert func(data []byte) ([]float32, error)) (*Dataset, error) {
	d := &Dataset{Name: name, Shape: shape, Classes: classes,
		Labels: make([]int, len(items)), Files: make([]string, len(items))}
	s := d.SampleSize()
	d.X = make([]float32, len(items)*s)
	err := parallelFor(len(items), func(i int) error {
		it := items[i]
		data, err := it.read()
		if err != nil {
			return classify(fmt.Errorf("%s: %w", filepath.Join(root, it.name), err))
		}
		v, err := convert(data)
		if err == nil && len(v) != s {
			err = fmt.Errorf("%d values, want %d", len(v), s)
		}
		if err != nil {
			return corruptf("%s: %w", filepath.Join(root, it.name), err)
		}
		copy(d.X[i*s:], v)
		d.Labels[i] = it.label
		d.Files[i] = it.name
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, corruptf("%w", err)
	}
	return d, nil
}

// decodeSample checks the shape of a sample that DecodeImage or
// DecodeFolderImage is to make and decodes data (decodeImage: the caller
// calls release when done with the image).
func decodeSample(data []byte, channels, height, width int) (img image.Image, release func(), err error) {
	if channels != 1 && channels != 3 || height < 1 || width < 1 {
		return nil, func() {}, fmt.Errorf("cannot make images of shape [%d %d %d] (want 1 or 3 channels)", channels, height, width)
	}
	return decodeImage(data, MaxImagePixels)
}

// DecodeImage turns the bytes of one PNG or JPEG file (recognised by
// content) into a sample of channels×height×width values in [0, 1], with
// exactly the preprocessing of the image readers: BT.601 luma for one
// channel or R, G, B planes for three, stretched to height×width by exact
// area averaging. Tools that classify new images use it so that a file
// gives the same sample as through the matching reader.
func DecodeImage(data []byte, channels, height, width int) ([]float32, error) {
	img, release, err := decodeSample(data, channels, height, width)
	if err != nil {
		return nil, err
	}
	defer release()
	var planes []float32
	var h, w int
	if channels == 1 {
		planes, h, w = greyPlane(img)
	} else {
		planes, h, w = rgbPlanes(img)
	}
	out := make([]float32, channels*height*width)
	resizeArea(out, planes, channels, h, w, height, width)
	return out, nil
}

// DecodeReaderImage turns the bytes of one image file (recognised by
// content) into a sample of channels×height×width values exactly as the
// reader of the data set named dataset (a name Load accepts) prepares its
// own image files, so that a tool classifying new images gives a file the
// very sample (bit for bit) that reader would give it:
//
//   - miniimagenet: R, G, B planes stretched to height×width by area
//     averaging (ReadMiniImageNet), then, for one channel (data.grey),
//     the BT.601 luma of those stretched planes (Dataset.Grey, as Load and
//     ReadMiniImageNetTransfer apply it) — not the luma of the
//     full-resolution image, nor a JPEG's Y plane;
//   - omniglot: the luma at full resolution (JPEG: its Y plane), inverted
//     (1 − v) when invert — before stretching, as ReadOmniglot inverts —,
//     then stretched by area averaging;
//   - imagefolder and npy: DecodeFolderImage (their readers never invert:
//     invert is an error);
//   - cifar10: DecodeImage's R, G, B planes, then, for one channel
//     (data.grey), ReadCIFAR10's float32 luma of the bytes (an image of
//     another size is stretched first, and its luma is that of the
//     stretched values); 1 − v when invert;
//   - any other name (covid-ct, whose reader is DecodeImage's one-channel
//     preparation, and the readers of non-image files: mnist,
//     synthetic-images): DecodeImage, then 1 − v when invert.
func DecodeReaderImage(data []byte, dataset string, channels, height, width int, invert bool) ([]float32, error) {
	if channels != 1 && channels != 3 || height < 1 || width < 1 {
		return nil, fmt.Errorf("cannot make images of shape [%d %d %d] (want 1 or 3 channels)", channels, height, width)
	}
	var out []float32
	var err error
	switch dataset {
	case "imagefolder", "npy":
		if invert {
			return nil, fmt.Errorf("the %s reader never inverts images", dataset)
		}
		return DecodeFolderImage(data, channels, height, width)
	case "omniglot":
		if channels != 1 {
			return nil, fmt.Errorf("omniglot images have one channel, not %d", channels)
		}
		return omniglotImage(data, height, width, invert, false)
	case "miniimagenet":
		if out, err = toRGBShape(data, height, width); err != nil {
			return nil, err
		}
		if channels == 1 {
			rgb := &Dataset{Name: "miniimagenet", Shape: []int{3, height, width}, Classes: []string{""}, Labels: []int{0}, X: out}
			g, err := rgb.Grey()
			if err != nil {
				return nil, err
			}
			out = g.X
		}
	case "cifar10":
		if out, err = DecodeImage(data, 3, height, width); err != nil {
			return nil, err
		}
		if channels == 1 {
			// The reader's luma of the bytes: v·255 gives back the byte
			// exactly for v = byte/255 (an image of the reader's 32×32).
			plane := height * width
			for p := range plane {
				out[p] = cifarLuma(out[p]*255, out[plane+p]*255, out[2*plane+p]*255)
			}
			out = out[:plane:plane]
		}
	default:
		if out, err = DecodeImage(data, channels, height, width); err != nil {
			return nil, err
		}
	}
	if invert {
		for i, v := range out {
			out[i] = 1 - v
		}
	}
	return out, nil
}

// omniglotImage is ReadOmniglot's preparation of one drawing: luma at full
// resolution, 1 − v when invert, area-averaged to height×width — or, when
// native, the drawing as it is, which must then be height×width.
func omniglotImage(data []byte, height, width int, invert, native bool) ([]float32, error) {
	img, release, err := decodeImage(data, MaxImagePixels)
	if err != nil {
		return nil, err
	}
	defer release()
	plane, ih, iw := greyPlane(img)
	if invert {
		for i, v := range plane {
			plane[i] = 1 - v
		}
	}
	if native {
		if ih != height || iw != width {
			return nil, fmt.Errorf("drawing is %d×%d, want %d×%d (set a Size to resize)", iw, ih, width, height)
		}
		return plane, nil
	}
	out := make([]float32, height*width)
	resizeArea(out, plane, 1, ih, iw, height, width)
	return out, nil
}

package predict

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
)

// colourImages writes random-colour images of w×h pixels (smooth enough
// that area averaging and luma do not commute exactly, as in real photos)
// to dir, as JPEG and PNG, and returns their names.
func colourImages(t *testing.T, dir string, n, w, h int) []string {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	var names []string
	for i := 0; i < n; i++ {
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				img.SetNRGBA(x, y, color.NRGBA{uint8(rng.Intn(256)), uint8(rng.Intn(256)), uint8(rng.Intn(256)), 255})
			}
		}
		var b bytes.Buffer
		name := fmt.Sprintf("img%02d.png", i)
		if i%2 == 0 {
			must(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}))
			name = fmt.Sprintf("img%02d.jpg", i)
		} else {
			must(t, png.Encode(&b, img))
		}
		must(t, os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644))
		names = append(names, name)
	}
	return names
}

// preparedBy returns the samples PredictFiles (and FitFolder) prepare
// from files for a model whose recorded reader is reader, taking inputs of
// shape, inverted as invert says.
func preparedBy(t *testing.T, reader string, shape []int, files []string, invert *bool) [][]float32 {
	t.Helper()
	m := &Model{Settings: Settings{Dataset: reader, Input: &Input{Kind: InputImages, Reader: reader, Shape: shape}}}
	samples, err := m.imageSamples(context.Background(), files, invert)
	must(t, err)
	out := make([][]float32, len(samples))
	for i, s := range samples {
		must(t, s.err)
		out[i] = s.x
	}
	return out
}

// sameBits fails unless got and want hold the same float32 values, bit
// for bit.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, the reader's %d", what, len(got), len(want))
	}
	diff := 0
	first := -1
	for j := range got {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			if first < 0 {
				first = j
			}
			diff++
		}
	}
	if diff > 0 {
		t.Fatalf("%s: %d of %d values differ from the reader's (value %d: %v, reader %v)", what, diff, len(got), first, got[first], want[first])
	}
}

// New images are prepared bit for bit as the training reader prepared its
// own files: miniImageNet colour JPEGs and PNGs, RGB and data.grey (RGB
// stretched, then luma: not the luma — a JPEG's Y plane — stretched), and
// Omniglot drawings (inverted before stretching, as the reader does, and
// with -invert=false as RawPolarity).
func TestImagesPreparedAsReader(t *testing.T) {
	const size = 20
	mini := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(mini, "images"), 0o755))
	names := colourImages(t, filepath.Join(mini, "images"), 8, 40, 40)
	var csvb strings.Builder
	csvb.WriteString("filename,label\n")
	for i, name := range names {
		fmt.Fprintf(&csvb, "%s,n0%d\n", name, i%2)
	}
	must(t, os.WriteFile(filepath.Join(mini, "test.csv"), []byte(csvb.String()), 0o644))
	for _, grey := range []bool{false, true} {
		d, err := datasets.Load("miniimagenet", mini, datasets.Options{Split: "test", Size: size, Grey: grey})
		must(t, err)
		var files []string
		for _, f := range d.Files {
			files = append(files, filepath.Join(mini, f))
		}
		got := preparedBy(t, "miniimagenet", d.Shape, files, nil)
		for i := range files {
			sameBits(t, fmt.Sprintf("miniimagenet grey=%v %s", grey, d.Files[i]), got[i], d.Sample(i))
		}
	}

	// Omniglot: grey drawings of 21×21 stretched to 6×6, default
	// (inverted) and raw polarity.
	omni := t.TempDir()
	rng := rand.New(rand.NewSource(9))
	for c := 0; c < 2; c++ {
		dir := filepath.Join(omni, "images_background", "Latin", fmt.Sprintf("character%02d", c+1))
		must(t, os.MkdirAll(dir, 0o755))
		for i := 0; i < 3; i++ {
			img := image.NewGray(image.Rect(0, 0, 21, 21))
			for p := range img.Pix {
				img.Pix[p] = uint8(rng.Intn(256))
			}
			var b bytes.Buffer
			must(t, png.Encode(&b, img))
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d_%02d.png", c, i)), b.Bytes(), 0o644))
		}
	}
	for _, raw := range []bool{false, true} {
		d, err := datasets.ReadOmniglot(omni, datasets.OmniglotOptions{Sets: []string{"images_background"}, Size: 6, RawPolarity: raw})
		must(t, err)
		var files []string
		for _, f := range d.Files {
			files = append(files, filepath.Join(omni, f))
		}
		var invert *bool
		if raw {
			no := false
			invert = &no
		}
		got := preparedBy(t, "omniglot", d.Shape, files, invert)
		for i := range files {
			sameBits(t, fmt.Sprintf("omniglot raw=%v %s", raw, d.Files[i]), got[i], d.Sample(i))
		}
	}
}

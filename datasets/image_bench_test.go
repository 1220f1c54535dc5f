package datasets

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/drknn/drknn/internal/datadir"
)

// BenchmarkDecodeOmniglotDrawing: one real 105×105 1-bit PNG from memory,
// decoded, inverted and area-averaged to 28×28 (the per-file CPU cost of
// ReadOmniglot without the file system).
func BenchmarkDecodeOmniglotDrawing(b *testing.B) {
	dir, err := datadir.Require("omniglot", "images_background", "Latin", "character01")
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "0683_01.png"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, _, _, err := toGrey(data, 28); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadCOVIDCT reads all 746 real COVID-CT images at 64×64 (run
// with -benchtime 1x or 3x: one operation is the whole data set).
func BenchmarkReadCOVIDCT(b *testing.B) {
	dir, err := datadir.Require("covid-ct")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := ReadCOVIDCT(dir, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadOmniglotEvaluation reads the 13,180 real evaluation
// drawings at 28×28 (one operation is the whole set).
func BenchmarkReadOmniglotEvaluation(b *testing.B) {
	dir, err := datadir.Require("omniglot")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := ReadOmniglot(dir, OmniglotOptions{Sets: []string{OmniglotEvaluation}, Size: 28}); err != nil {
			b.Fatal(err)
		}
	}
}

// mnistFolder is the image folder BenchmarkReadImageFolderMNIST reads: the
// 10,000 MNIST t10k digits as 28×28 grey PNGs in DIR/<digit>/<index>.png,
// written once per test binary into a temporary folder (removed by
// TestMain).
var mnistFolder struct {
	once sync.Once
	dir  string
	err  error
}

func mnistPNGFolder(b *testing.B) string {
	mnistFolder.once.Do(func() {
		src, err := datadir.Require("mnist")
		if err != nil {
			mnistFolder.err = err
			return
		}
		d, err := ReadMNIST(src)
		if err != nil {
			mnistFolder.err = err
			return
		}
		dir, err := os.MkdirTemp("", "drknn-mnist-png-")
		if err != nil {
			mnistFolder.err = err
			return
		}
		mnistFolder.dir = dir
		mnistFolder.err = parallelFor(d.Len(), func(i int) error {
			img := image.NewGray(image.Rect(0, 0, 28, 28))
			for p, v := range d.Sample(i) {
				img.Pix[p] = uint8(math.Round(float64(v) * 255))
			}
			var buf bytes.Buffer
			if err := png.Encode(&buf, img); err != nil {
				return err
			}
			p := filepath.Join(dir, d.Classes[d.Labels[i]], fmt.Sprintf("%05d.png", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(p, buf.Bytes(), 0o644)
		})
	})
	if mnistFolder.err != nil {
		b.Fatal(mnistFolder.err)
	}
	return mnistFolder.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if mnistFolder.dir != "" {
		os.RemoveAll(mnistFolder.dir)
	}
	os.Exit(code)
}

// BenchmarkReadImageFolderMNIST reads a folder of 10,000 small PNGs (the
// MNIST t10k digits, 28×28 grey; one operation is the whole folder) with
// Load("imagefolder", …, Size 28); compare BenchmarkReadMNISTT10k, the IDX
// reader on the same 10,000 images. It reports the CPU time per operation
// and the cores it kept busy (CPU time / wall time). Run:
//
//	go test -run '^$' -bench 'ReadImageFolderMNIST|ReadMNISTT10k' -count 5 ./datasets
func BenchmarkReadImageFolderMNIST(b *testing.B) {
	dir := mnistPNGFolder(b)
	cpu0, wall0 := cpuTime(), time.Now()
	for b.Loop() {
		d, err := Load("imagefolder", dir, Options{Size: 28})
		if err != nil {
			b.Fatal(err)
		}
		if d.Len() != 10000 || d.Shape[0] != 1 {
			b.Fatalf("%d images of shape %v", d.Len(), d.Shape)
		}
	}
	reportCPU(b, cpu0, wall0)
}

package datasets

import (
	"os"
	"path/filepath"
	"testing"

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

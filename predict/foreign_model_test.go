package predict

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/model"
)

// TestForeignModelBin: an export without a sha256 map whose model.bin
// comes from another model (4 inputs where manifest.json records 5) is an
// inconsistent export, said in one line naming manifest.json and model.bin
// — not an input that does not fit the model.
func TestForeignModelBin(t *testing.T) {
	mk := func(in int) *fixture {
		return makeExport(t, model.Config{Kind: model.MLP, InShape: []int{in}, Hidden: 4, Dim: 3, DType: model.Float32}, "npy", 12, 2, 4)
	}
	f5, f4 := mk(5), mk(4)
	delete(f5.Manifest, "sha256")
	f5.writeManifest(t)
	b, err := os.ReadFile(filepath.Join(f4.Dir, "model.bin"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(f5.Dir, "model.bin"), b, 0o644))
	p := filepath.Join(t.TempDir(), "q.npy")
	must(t, os.WriteFile(p, npyBytes(t, make([]float64, 4*5), 4, 5), 0o644))
	e, err := Load(f5.Dir)
	if err == nil {
		_, err = e.PredictFiles(Inputs{NPY: p}, Options{})
	}
	if err == nil || errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "manifest.json") || !strings.Contains(err.Error(), "model.bin") ||
		!strings.Contains(err.Error(), "inconsistent") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("foreign model.bin: %v; want one line saying the export is inconsistent, naming manifest.json and model.bin", err)
	}
}

package predict

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/npy"
)

// An embeddings .npy of no rows is refused as the other empty inputs are
// (an ErrInput error naming the file), not answered with no predictions.
func TestEmptyEmbeddingsRefused(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 12, 2, 4)
	e, err := Load(f.Dir)
	must(t, err)
	path := filepath.Join(t.TempDir(), "q0.npy")
	must(t, npy.WriteFloat64(path, nil, 0, f.D))
	preds, err := e.PredictFiles(Inputs{Embeddings: path}, Options{})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), path+" holds no rows") || preds != nil {
		t.Fatalf("PredictFiles on 0 embeddings: %d predictions, error %v", len(preds), err)
	}
}

// A .npy of samples with no rows, and one of a dtype the reader does not
// take, are ErrInput errors in the reader's words (datasets.ReadNPYSamples:
// "PATH holds no rows", the dtype named) — no second reading of the file
// to word them.
func TestBadNPYSamplesRefused(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 12, 2, 4)
	e, err := Load(f.Dir)
	must(t, err)
	dir := t.TempDir()
	empty := filepath.Join(dir, "x0.npy")
	must(t, npy.WriteFloat64(empty, nil, 0, 64))
	complexNPY := filepath.Join(dir, "xc.npy")
	dict := "{'descr': '<c16', 'fortran_order': False, 'shape': (1, 64), }\n"
	must(t, os.WriteFile(complexNPY, append(append([]byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(dict)), 0}, dict...), make([]byte, 16*64)...), 0o644))
	for path, want := range map[string]string{
		empty:      empty + " holds no rows (shape [0 64])",
		complexNPY: complexNPY + `: unsupported dtype "<c16" (complex128): want float64, float32, or a signed or unsigned integer`,
	} {
		preds, err := e.PredictFiles(Inputs{NPY: path}, Options{})
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), want) || preds != nil {
			t.Errorf("PredictFiles on %s: %d predictions, error %v; want ErrInput containing %q", path, len(preds), err, want)
		}
	}
}

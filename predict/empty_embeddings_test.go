package predict

import (
	"errors"
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

package predict

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/drknn/drknn/internal/npy"
)

// PredictFiles builds the classifier once: the bytes it allocates to
// classify one embedding are about one copy of the training embeddings
// (the classifier's own, eval's Fit), not two.
func TestPredictFilesBuildsClassifierOnce(t *testing.T) {
	const n, d = 20000, 50
	emb := make([]float64, n*d)
	labels := make([]int, n)
	p := make([]float64, 2*n)
	for i := range labels {
		labels[i] = i % 2
		p[labels[i]*n+i] = 2.0 / n
		for j := range d {
			emb[i*d+j] = float64(labels[i]) + float64(j%7)/10
		}
	}
	m, err := NewModel(nil, emb, n, d, labels, p, nil, Settings{K: 3})
	must(t, err)
	q := filepath.Join(t.TempDir(), "q.npy")
	must(t, npy.WriteFloat64(q, emb[:d], 1, d))
	copyBytes := uint64(8 * n * d)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		preds, err := m.PredictFiles(Inputs{Embeddings: q}, Options{})
		runtime.ReadMemStats(&after)
		must(t, err)
		if len(preds) != 1 || preds[0].Class != 0 {
			t.Fatalf("predictions %+v, want the training point's class 0", preds)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got < copyBytes || got > copyBytes*3/2 {
			t.Fatalf("PredictFiles allocated %d bytes to classify one embedding; one copy of the training embeddings is %d", got, copyBytes)
		}
	}
}

package predict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/model"
)

// Queries checks the query files against the SHA-256 the manifest records:
// a query_embeddings.npy or query_labels.npy of the right shape copied
// from another export is refused, naming the file.
func TestQueriesVerified(t *testing.T) {
	a := makeExport(t, cnnConfig, "mnist", 12, 2, 6)
	b := makeExport(t, model.Config{Kind: model.CNN, InShape: []int{1, 8, 8}, Channels: 3, Dim: 6, DType: model.Float64}, "mnist", 12, 3, 6)
	for _, name := range []string{"query_embeddings.npy", "query_labels.npy"} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join(a.Dir, name))
			must(t, err)
			defer func() { must(t, os.WriteFile(filepath.Join(a.Dir, name), orig, 0o644)) }()
			data, err := os.ReadFile(filepath.Join(b.Dir, name))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(a.Dir, name), data, 0o644))
			e, err := Load(a.Dir)
			must(t, err)
			_, _, _, err = e.Queries()
			if err == nil || !strings.Contains(err.Error(), name+" does not belong to this export") {
				t.Fatalf("Queries with %s of another export: %v", name, err)
			}
		})
	}
	e, err := Load(a.Dir)
	must(t, err)
	if _, nq, _, err := e.Queries(); err != nil || nq != 6 {
		t.Fatalf("the export's own queries: %d, %v", nq, err)
	}
}

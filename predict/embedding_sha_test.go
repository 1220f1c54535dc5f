package predict

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/model"
)

// writeEmbedding writes an embedding export of an untrained network made
// with seed to a new folder.
func writeEmbedding(t *testing.T, seed int64) string {
	t.Helper()
	net, err := model.New(cnnConfig, seed)
	must(t, err)
	e, err := NewEmbedding(net, EmbeddingSettings{K: 3, Theta: []float64{0.1}, Metric: "euclidean", Epsilon: 0.01, Tol: 1e-3, Dataset: "mnist"})
	must(t, err)
	dir := t.TempDir()
	must(t, WriteEmbedding(dir, e, EmbeddingManifest{}))
	return dir
}

// LoadEmbedding checks model.bin against the SHA-256 embedding.json
// records: the weights of another run (same network, so the configuration
// check passes) and a damaged file are refused in one line naming the
// file; an export whose manifest has no sha256 (written before it was
// recorded) still loads.
func TestLoadEmbeddingVerified(t *testing.T) {
	a, b := writeEmbedding(t, 1), writeEmbedding(t, 2)
	weights := filepath.Join(a, "model.bin")
	own, err := os.ReadFile(weights)
	must(t, err)
	sum := sha256.Sum256(own)
	_, err = LoadEmbedding(a)
	must(t, err)
	mpath := filepath.Join(a, EmbeddingFile)
	raw, err := os.ReadFile(mpath)
	must(t, err)
	var man map[string]any
	must(t, json.Unmarshal(raw, &man))
	if got, _ := man["sha256"].(map[string]any); got["model"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("embedding.json records sha256 %v, model.bin's SHA-256 is %x", man["sha256"], sum)
	}
	other, err := os.ReadFile(filepath.Join(b, "model.bin"))
	must(t, err)
	damaged := append([]byte(nil), own...)
	damaged[len(damaged)/2] ^= 1
	for name, data := range map[string][]byte{"another run's": other, "damaged": damaged} {
		must(t, os.WriteFile(weights, data, 0o644))
		_, err := LoadEmbedding(a)
		if err == nil || !strings.Contains(err.Error(), "embedding export "+a+": model.bin does not belong to this export") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s model.bin: %v", name, err)
		}
	}
	// An older export: no sha256 in embedding.json, nothing to check.
	delete(man, "sha256")
	raw, err = json.Marshal(man)
	must(t, err)
	must(t, os.WriteFile(mpath, raw, 0o644))
	for name, data := range map[string][]byte{"its own": own, "another run's": other} {
		must(t, os.WriteFile(weights, data, 0o644))
		if _, err := LoadEmbedding(a); err != nil {
			t.Errorf("an export without sha256, %s model.bin: %v", name, err)
		}
	}
}

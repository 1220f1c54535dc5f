package predict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadHints: -model given a run folder, an episodes run or the other
// kind of export says what to give instead (it used to end at "open
// …/manifest.json: no such file or directory").
func TestLoadHints(t *testing.T) {
	root := t.TempDir()
	touch := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fit, eps, emb := filepath.Join(root, "fit"), filepath.Join(root, "eps"), filepath.Join(root, "tr", "export")
	touch(filepath.Join(fit, "export", "manifest.json"))
	touch(filepath.Join(eps, "repeats", "01", "export", "manifest.json"))
	touch(filepath.Join(emb, EmbeddingFile))
	for _, c := range []struct {
		load func(string) error
		dir  string
		want string
	}{
		{func(d string) error { _, err := Load(d); return err }, fit, "its model is " + filepath.Join(fit, "export")},
		{func(d string) error { _, err := Load(d); return err }, eps, filepath.Join(eps, "repeats", "01", "export")},
		{func(d string) error { _, err := Load(d); return err }, emb, "-support"},
		{func(d string) error { _, err := LoadEmbedding(d); return err }, filepath.Join(fit, "export"), "leave out -support"},
	} {
		if err := c.load(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", c.dir, err, c.want)
		}
	}
}

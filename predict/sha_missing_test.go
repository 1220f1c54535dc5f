package predict

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A manifest whose sha256 map lacks the key of a file the export needs is
// refused when that file is read — by Load (the arrays), Net (model.bin)
// or Queries (the query files) — in one line naming the file and the key:
// WriteExport records every file it writes, so a missing key is not an
// older export but a check switched off. A manifest without any sha256
// map (an export written before it was recorded) still loads, whole.
// embedding.json follows the same rule for model.bin.
func TestMissingChecksumRefused(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 8, 2, 5)
	orig := maps.Clone(f.Manifest)
	sums, ok := f.Manifest["sha256"].(map[string]any)
	if !ok || len(sums) != 6 {
		t.Fatalf("the export records sha256 %v, want its 6 files", f.Manifest["sha256"])
	}
	// read reads every file of the export, as drknn-predict would.
	read := func() error {
		e, err := Load(f.Dir)
		if err != nil {
			return err
		}
		if _, err := e.Net(); err != nil {
			return err
		}
		_, _, _, err = e.Queries()
		return err
	}
	for key := range sums {
		t.Run(key, func(t *testing.T) {
			without := maps.Clone(sums)
			delete(without, key)
			f.Manifest["sha256"] = without
			f.writeManifest(t)
			defer func() { f.Manifest = maps.Clone(orig); f.writeManifest(t) }()
			err := read()
			file := files[key]
			if err == nil || !strings.Contains(err.Error(), "no SHA-256 for "+file) || !strings.Contains(err.Error(), `"`+key+`"`) ||
				strings.Contains(err.Error(), "\n") {
				t.Fatalf("sha256 without %q: %v", key, err)
			}
		})
	}
	must(t, read())
	// An older export: no sha256 map at all, nothing to check.
	delete(f.Manifest, "sha256")
	f.writeManifest(t)
	must(t, read())

	// embedding.json: a sha256 map without "model" is refused, no map loads.
	dir := writeEmbedding(t, 1)
	mpath := filepath.Join(dir, EmbeddingFile)
	raw, err := os.ReadFile(mpath)
	must(t, err)
	var man map[string]any
	must(t, json.Unmarshal(raw, &man))
	man["sha256"] = map[string]any{}
	raw, err = json.Marshal(man)
	must(t, err)
	must(t, os.WriteFile(mpath, raw, 0o644))
	if _, err := LoadEmbedding(dir); err == nil || !strings.Contains(err.Error(), "no SHA-256 for model.bin") || !strings.Contains(err.Error(), `"model"`) {
		t.Fatalf("embedding.json's sha256 without model: %v", err)
	}
	delete(man, "sha256")
	raw, err = json.Marshal(man)
	must(t, err)
	must(t, os.WriteFile(mpath, raw, 0o644))
	if _, err := LoadEmbedding(dir); err != nil {
		t.Fatalf("embedding.json without sha256: %v", err)
	}
}

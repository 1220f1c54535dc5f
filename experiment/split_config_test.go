package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/fixtures"
)

// data.split on an image folder that is not split is a configuration
// error naming the folder and the setting: Run returns an ErrConfig, and
// the table stops on it (it skipped the cell as "data not available").
func TestSplitOfPlainImageFolderIsConfigError(t *testing.T) {
	root := t.TempDir()
	if _, _, err := fixtures.ImageFolder(root, 4, 2, 1); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(root, "train") // class folders only
	src := "dataset: imagefolder\ndata_dir: " + plain + "\ndata: {split: test}\nrepeats: 1\nqueries: 4\nmodel: {channels: 2, hidden: 4, dim: 4}\ntrain: {steps: 1}\neval: {k: 3, methods: [embedding_knn]}\n"
	isConfig := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrConfig) || errors.Is(err, datasets.ErrNotFound) || !strings.Contains(err.Error(), plain+" is not a split folder") ||
			!strings.Contains(err.Error(), "data.split") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: %v, want an ErrConfig naming %s and data.split", what, err, plain)
		}
	}
	cfg := mustParseConfig(t, "own.yaml", src)
	_, err := Run(t.Context(), cfg, Options{})
	isConfig("Run", err)

	configs := t.TempDir()
	if err := os.WriteFile(filepath.Join(configs, "mnist.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cells, err := RunTable(t.Context(), TableOptions{OutDir: t.TempDir(), ConfigDir: configs, Only: []string{"mnist-2w5s"}})
	if err == nil {
		t.Fatalf("the table ran: cells %+v", cells)
	}
	isConfig("RunTable", err)
}

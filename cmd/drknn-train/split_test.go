package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/fixtures"
)

// data.split on an image folder that is not split is a configuration
// error: exit 2, one line naming the folder and the setting (it was a
// "data set not found" failure, exit 1).
func TestSplitOfPlainImageFolder(t *testing.T) {
	root := t.TempDir()
	if _, _, err := fixtures.ImageFolder(root, 4, 2, 1); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(root, "train")
	cfg := filepath.Join(t.TempDir(), "own.yaml")
	src := "dataset: imagefolder\ndata_dir: " + plain + "\nprotocol: fit\ndata: {split: train}\nmodel: {channels: 2, dim: 4}\ntrain: {steps: 1}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, so, se := runCmd(t.Context(), "-config", cfg, "-out", filepath.Join(t.TempDir(), "run"), "-quiet")
	if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, plain+" is not a split folder") || !strings.Contains(se, "data.split") {
		t.Fatalf("exit %d stdout %q stderr %q; want exit 2 and one line naming %s and data.split", code, so, se, plain)
	}
}

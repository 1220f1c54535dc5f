package experiment

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// TestTableDataInsideOut: a table whose data_dir lies inside its -out
// folder (a cell's folder, which a run afresh removes whole), directly or
// through a symbolic link, or whose -out lies inside the data folder, is
// refused before any work (ErrConfig, one line naming both), and the data
// is left byte for byte.
func TestTableDataInsideOut(t *testing.T) {
	src, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(src, "lung-cancer.data"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "t")
	data := filepath.Join(out, "cells", "lung-cancer-3w5s", "mydata")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "lung-cancer.data")
	if err := os.WriteFile(file, want, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "datalink")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	outLink := filepath.Join(root, "outlink")
	if err := os.Symlink(out, outLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, data string }{
		{out, data},
		{out, link},
		{outLink, data},
		{filepath.Join(link, "tab"), link}, // -out inside the data folder
	} {
		_, err := RunTable(t.Context(), TableOptions{OutDir: c.out, Only: []string{"lung-cancer-3w5s"}, Quick: true,
			Sets: []string{"data_dir=" + c.data, "repeats=1", "queries=10", "eval.methods=[embedding_knn]"}})
		if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.data) {
			t.Errorf("-out %s, data_dir %s: %v; want a one-line ErrConfig naming the data", c.out, c.data, err)
		}
		if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("-out %s, data_dir %s: the data file changed (%v)", c.out, c.data, err)
		}
	}
}

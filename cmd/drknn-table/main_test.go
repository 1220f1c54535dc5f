package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
)

// TestQuickLungCancer runs the quick table on the Lung Cancer cells (the
// real UCI file, a second of work) and checks the table and the progress
// lines.
func TestQuickLungCancer(t *testing.T) {
	out := t.TempDir()
	var so, se bytes.Buffer
	err := run(t.Context(), []string{"-quick", "-only", "lung-cancer", "-out", out, "-configs", filepath.Join("..", "..", "configs")}, &so, &se)
	if code := cli.Report(&se, "drknn-table", err, experiment.ErrConfig); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	if strings.TrimSpace(so.String()) != filepath.Join(out, "table.md") {
		t.Fatalf("stdout %q", so.String())
	}
	lines := strings.Split(strings.TrimSpace(se.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "lung-cancer-3w5s     drknn ") || !strings.Contains(lines[1], "(paper 0.704)") {
		t.Fatalf("progress lines %q", lines)
	}
	for _, f := range []string{"table.md", "table.csv", "cells/lung-cancer-3w8s/results.json", "cells/lung-cancer-3w8s/train.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

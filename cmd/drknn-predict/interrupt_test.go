package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/internal/npy"
)

// TestInterruptKeepsOutput: a run whose context is cancelled (Ctrl-C,
// SIGTERM: cli.Main) stops with exit status 130 and one line, writes
// nothing to stdout and leaves the previous -out file as it was, byte for
// byte, with no temporary beside it. It used to finish, exit 0 and
// replace the file.
func TestInterruptKeepsOutput(t *testing.T) {
	e := newExport(t, cnn, "mnist", 10)
	dir := t.TempDir()
	q := filepath.Join(dir, "q.npy")
	check(t, npy.WriteFloat64(q, make([]float64, 3*e.d), 3, e.d))
	x := filepath.Join(dir, "x.npy")
	check(t, npy.WriteFloat64(x, make([]float64, 2*36), 2, 36))
	out := filepath.Join(dir, "p.csv")
	check(t, os.WriteFile(out, []byte("prev\n"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, in := range [][]string{{"-embeddings", q}, {"-npy", x}, {"-embeddings", q, "-out", out}, {"-npy", x, "-out", out}} {
		var so, se bytes.Buffer
		code := cli.Report(&se, "drknn-predict", run(ctx, append([]string{"-model", e.dir}, in...), &so, &se))
		if code != 130 || so.Len() != 0 || strings.Count(se.String(), "\n") != 1 || !strings.Contains(se.String(), "interrupted") {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want 130, nothing on stdout, one line", in, code, so.Len(), se.String())
		}
		if b, _ := os.ReadFile(out); string(b) != "prev\n" {
			t.Fatalf("%q: the previous -out was replaced: %.40q", in, b)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 3 {
			t.Fatalf("%q: %d files in the folder, want 3 (a temporary left?)", in, len(ents))
		}
	}
}

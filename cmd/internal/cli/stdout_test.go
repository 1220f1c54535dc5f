package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
)

// FullWriter fails every write as a full disk does (`> /dev/full`).
type fullWriter struct{ n int }

func (w *fullWriter) Write(p []byte) (int, error) { w.n++; return 0, syscall.ENOSPC }

// TestExecReportsFailedStdout: a command whose prints to standard output
// fail, though it returns nil, exits 1 with one line saying so; later writes
// are not attempted; a command's own error wins over the write error.
func TestExecReportsFailedStdout(t *testing.T) {
	printer := func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		for range 3 {
			io.WriteString(stdout, "line\n")
		}
		return nil
	}
	var se bytes.Buffer
	w := &fullWriter{}
	if code := Exec(t.Context(), "tool", printer, nil, w, &se); code != 1 || strings.Count(se.String(), "\n") != 1 ||
		!strings.HasPrefix(se.String(), "tool: writing standard output: ") || !strings.Contains(se.String(), "no space left on device") {
		t.Fatalf("exit %d, stderr %q", code, se.String())
	}
	if w.n != 1 {
		t.Errorf("%d writes to a failed stdout, want 1", w.n)
	}
	se.Reset()
	bad := func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		io.WriteString(stdout, "x")
		return Usagef("bad flag")
	}
	if code := Exec(t.Context(), "tool", bad, nil, &fullWriter{}, &se); code != 2 || se.String() != "tool: bad flag\n" {
		t.Fatalf("exit %d, stderr %q", code, se.String())
	}
	se.Reset()
	var so bytes.Buffer
	if code := Exec(t.Context(), "tool", printer, nil, &so, &se); code != 0 || se.Len() != 0 || so.String() != "line\nline\nline\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, so.String(), se.String())
	}
}

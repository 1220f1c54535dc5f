package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := WriteBytes(p, []byte("first")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "first" {
		t.Fatalf("file = %q after a failed write, want the old content", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left behind: %v", ents)
	}
	if err := WriteBytes(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Fatal("no error writing into a missing folder")
	}
}

// WriteTemp leaves a complete temporary file beside path (path itself
// untouched) on success and nothing on failure.
func TestWriteTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npy")
	if _, err := WriteTemp(path, func(w io.Writer) error { return errors.New("fill failed") }); err == nil {
		t.Fatal("a failed fill gave no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed WriteTemp left %d files", len(ents))
	}
	tmp, err := WriteTemp(path, func(w io.Writer) error { _, err := w.Write([]byte("abc")); return err })
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(tmp); err != nil || string(b) != "abc" || filepath.Dir(tmp) != dir {
		t.Fatalf("temporary file %s: %q, %v", tmp, b, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("WriteTemp created %s itself (%v)", path, err)
	}
}

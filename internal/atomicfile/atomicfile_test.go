package atomicfile

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestWriteRefusesNonRegular: a target that exists and is not a regular
// file (a folder, a named pipe, a socket, a device) is refused — by Write
// before anything is written, by Rename after WriteTemp (which removes the
// temporary) — one line naming the path, ErrNotRegular, and is left as it
// was: the rename used to replace a device node with a file.
func TestWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	targets := []string{folder, fifo, sock}
	// a private copy of /dev/full (1, 7): needs root, skipped otherwise
	full := filepath.Join(dir, "full")
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err == nil {
		targets = append(targets, full)
	} else {
		t.Logf("no device node (%v): the device case is not run", err)
	}
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	targets = append(targets, link)
	for _, p := range targets {
		before, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		for name, write := range map[string]func() error{
			"Write": func() error { return WriteBytes(p, []byte("data")) },
			"WriteTemp+Rename": func() error {
				tmp, err := WriteTemp(p, func(w io.Writer) error { _, err := w.Write([]byte("data")); return err })
				if err != nil {
					return err
				}
				return Rename(tmp, p)
			},
			"Check": func() error { return Check(p) },
		} {
			err := write()
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %s: %v; want one line naming it, ErrNotRegular", name, p, err)
			}
			after, err := os.Lstat(p)
			if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Fatalf("%s %s: the target changed (%v, mode %v → %v)", name, p, err, before.Mode(), after.Mode())
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(targets) {
		t.Fatalf("temporary files left behind: %v", ents)
	}
}

// TestWriteThroughLink: a symbolic link to a regular file is written
// through — the link stays, its target gets the new content (the rename
// is beside the target, in its folder) — and a dangling link is replaced
// by the file.
func TestWriteThroughLink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(sub, "real.csv")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out.csv")
	if err := os.Symlink(filepath.Join("sub", "real.csv"), link); err != nil {
		t.Fatal(err)
	}
	if err := Check(link); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced (%v)", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
		t.Fatalf("target: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(sub); len(ents) != 1 {
		t.Fatalf("temporary files left in the target's folder: %v", ents)
	}
	dangling := filepath.Join(dir, "dangling.csv")
	if err := os.Symlink(filepath.Join(dir, "nowhere", "x.csv"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(dangling, []byte("d")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("a dangling link: %v, %v", fi, err)
	}
}

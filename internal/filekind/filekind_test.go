package filekind

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOf names real files of each kind by their Lstat mode.
func TestOf(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "f")
	if err := os.WriteFile(reg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no fifos here:", err)
	}
	link := filepath.Join(dir, "l")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for path, want := range map[string]string{
		reg: "a regular file", dir: "a folder", fifo: "a named pipe", link: "a symbolic link",
		sock: "a socket", "/dev/null": "a character device",
	} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(fi.Mode()); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

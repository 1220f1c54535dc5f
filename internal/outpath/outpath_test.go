package outpath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drknn/drknn/internal/atomicfile"
)

// TestFolderRefusesSpecialFiles: an output that is a named pipe (or a
// link to one) is refused before any work, naming it — a command's final
// rename used to replace it with a regular file — and is left as it was.
func TestFolderRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link} {
		err := Folder(p)
		if !errors.Is(err, atomicfile.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe changed: %v", err)
	}
	if err := Folder(filepath.Join(dir, "new.csv")); err != nil {
		t.Fatal(err)
	}
}

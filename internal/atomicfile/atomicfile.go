// Package atomicfile writes files so that readers never see a partial file:
// the data goes to a temporary file in the same folder, is synced, and is
// renamed over the target only when complete.
//
// Only a regular file is ever replaced: a target that exists and is
// anything else (a folder, a device, a named pipe, a socket) is refused
// before anything is written (ErrNotRegular). A symbolic link to a regular
// file is written through — the link stays and its target gets the new
// content, renamed into place in the target's folder — and a dangling
// link is replaced by the file.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/drknn/drknn/internal/filekind"
)

// ErrNotRegular is wrapped by the refusal of a target that exists and is
// not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Check reports whether path may be written: it does not exist, is a
// regular file, or is a symbolic link to one (or a dangling link). Any
// other existing target is an error wrapping ErrNotRegular, one line
// naming path and what it is. Commands call it before any work; Write and
// WriteTemp call it again before writing.
func Check(path string) error {
	_, err := target(path)
	return err
}

// target is the file the data of a write to path is renamed over: path,
// or the file a symbolic link at path leads to (a dangling link: path).
func target(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	real := path
	if fi.Mode()&fs.ModeSymlink != 0 {
		r, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil // a dangling link: replaced by the file
		}
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if fi, err = os.Stat(r); err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		real = r
	}
	if !fi.Mode().IsRegular() {
		return "", notRegular{path, filekind.Of(fi.Mode())}
	}
	return real, nil
}

// notRegular is the refusal of a target that is not a regular file.
type notRegular struct{ path, kind string }

func (e notRegular) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: writing would replace it; choose a file name", e.path, e.kind)
}

func (e notRegular) Is(target error) bool { return target == ErrNotRegular }

// Write calls fill with a temporary file in path's folder and, if fill and
// the sync succeed, renames it to path (through a symbolic link: to its
// target, see the package comment). A target that is not a regular file
// is refused before anything is written (Check). On any error the
// temporary file is removed and path is left as it was.
func Write(path string, fill func(w io.Writer) error) error {
	real, err := target(path)
	if err != nil {
		return err // before anything is written
	}
	tmp, err := writeTemp(path, real, fill)
	if err != nil {
		return err
	}
	return Rename(tmp, path)
}

// Rename puts the temporary file tmp of WriteTemp(path, …) in place: it
// renames it over path, or over the regular file a symbolic link at path
// leads to. A target that is not a regular file (Check) is refused and tmp
// removed, as it is when the rename fails.
func Rename(tmp, path string) error {
	real, err := target(path)
	if err == nil {
		if err = os.Rename(tmp, real); err != nil {
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// WriteTemp is Write without the rename: it returns the name of the
// complete, synced temporary file (mode 0644) beside path (beside the
// target of a symbolic link at path), for a caller that renames several
// files into place with Rename only when all are written. Rename refuses a
// target that is not a regular file; a caller checks its outputs with
// Check before any work. On any error nothing is left behind.
func WriteTemp(path string, fill func(w io.Writer) error) (tmp string, err error) {
	real, err := target(path)
	if err != nil {
		real = path // refused by Rename
	}
	return writeTemp(path, real, fill)
}

func writeTemp(path, real string, fill func(w io.Writer) error) (tmp string, err error) {
	dir, base := filepath.Split(real)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name()) // not tmp: a failed return sets it to ""
		}
	}()
	if err = fill(f); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

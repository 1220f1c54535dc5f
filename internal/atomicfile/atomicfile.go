// Package atomicfile writes files so that readers never see a partial file:
// the data goes to a temporary file in the same folder, is synced, and is
// renamed over the target only when complete.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write calls fill with a temporary file in path's folder and, if fill and
// the sync succeed, renames it to path. On any error the temporary file is
// removed and path is left as it was.
func Write(path string, fill func(w io.Writer) error) error {
	tmp, err := WriteTemp(path, fill)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteTemp is Write without the rename: it returns the name of the
// complete, synced temporary file (mode 0644) beside path, for a caller
// that renames several files into place only when all are written. On any
// error nothing is left behind.
func WriteTemp(path string, fill func(w io.Writer) error) (tmp string, err error) {
	dir, base := filepath.Split(path)
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

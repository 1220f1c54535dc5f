// Package outpath checks, before a command does any work, that its output
// file can be written: its folder exists, and writing it destroys none of
// the files the command reads. The errors are plain, one line naming the
// paths; callers mark them as their bad-input kind.
package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/drknn/drknn/internal/atomicfile"
)

// Folder checks that the folder path is to be written in exists and is a
// folder, and that path is not itself a folder, nor anything else that is
// not a regular file (atomicfile.Check: a device, a named pipe, a socket):
// otherwise the write fails only at the end, naming its hidden temporary
// file, or replaces the device. The messages are
// "PATH: the folder DIR does not exist", "PATH: DIR is not a folder" and
// "PATH is a folder; want a file name".
func Folder(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: the folder %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a folder", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder; want a file name", path)
	}
	// a device, named pipe or socket: the rename would replace it
	return atomicfile.Check(path)
}

// Named is a path as the user gave it, with the flag that gave it
// ("-csv", "-model"), for messages.
type Named struct{ Flag, Path string }

func (n Named) String() string {
	if n.Flag == "" {
		return n.Path
	}
	return n.Flag + " " + n.Path
}

// NotInput refuses an output that is one of the input files — compared
// with os.SameFile, so also through a symbolic or hard link — or that lies
// inside one of the folders protected (a model's export folder: every file
// there is read, and a new one beside them does not belong). An input that
// cannot be stat'ed is skipped (its reader reports it). The error is one
// line naming both paths.
func NotInput(out Named, inputs, protected []Named) error {
	if fi, err := os.Stat(out.Path); err == nil && !fi.IsDir() {
		for _, in := range inputs {
			if ii, err := os.Stat(in.Path); err == nil && os.SameFile(fi, ii) {
				return fmt.Errorf("%s is also the input %s: writing it would replace that input; choose another name", out, in)
			}
		}
	}
	if len(protected) == 0 {
		return nil
	}
	// The output's folder, its links resolved: inside a protected folder
	// when that folder, or a folder above it, is the protected one.
	dir, err := filepath.Abs(filepath.Dir(out.Path))
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for _, p := range protected {
		pi, err := os.Stat(p.Path)
		if err != nil || !pi.IsDir() {
			continue
		}
		real, err := filepath.Abs(p.Path)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = r
		}
		for d := dir; ; d = filepath.Dir(d) {
			di, err := os.Stat(d)
			if d == real || (err == nil && os.SameFile(di, pi)) {
				return fmt.Errorf("%s is inside %s: writing there would change that folder; choose a name outside it", out, p)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil
}

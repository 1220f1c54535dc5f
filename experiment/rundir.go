package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// runEntries are the files and folders a run writes in its folder (every
// protocol): what -force replaces.
var runEntries = []string{"results.json", "train.log", "repeats", "export", "checkpoint.bin", "history.json", "train"}

// ErrRunDirInUse is wrapped by PrepareRunDir's refusal of a folder that
// already holds files.
var ErrRunDirInUse = errors.New("run folder in use")

// PrepareRunDir checks that dir may receive a new run. A missing or empty
// folder is fine; a folder holding anything is refused (wrapping
// ErrRunDirInUse, one line naming the folder) unless resume (continue the
// run in it; a finished run, one with results.json, is refused all the
// same) or force (the run outputs of runEntries are removed first; other
// files are left alone).
func PrepareRunDir(dir string, resume, force bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	if force {
		for _, name := range runEntries {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("run folder: %w", err)
			}
		}
		return nil
	}
	if resume {
		if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
			return fmt.Errorf("%w: %s already holds a finished run (results.json); replace it with -force or choose another -out", ErrRunDirInUse, dir)
		}
		return nil
	}
	return fmt.Errorf("%w: %s is not empty (%d entries, e.g. %s); continue its run with -resume, replace it with -force, or choose another -out",
		ErrRunDirInUse, dir, len(ents), ents[0].Name())
}

// isTemp reports whether a file name is a temporary of an atomic write
// (internal/atomicfile's ".NAME.tmp-…", model's ".NAME.tmp…").
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

// RemoveTemps deletes the temporaries that atomic writes killed before
// their rename (SIGKILL, power loss) left anywhere under dir, and returns
// how many it removed. A run calls it on start: nothing else writes there.
func RemoveTemps(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.Type().IsRegular() && isTemp(e.Name()) {
			if err := os.Remove(p); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("run folder: removing stale temporaries: %w", err)
	}
	return n, nil
}

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// CheckOut checks an output folder before a command writes into it: a
// folder that holds anything is refused (a usage error naming the way out)
// unless resume (continue the run in it) or force (write over it) is set.
// A missing or empty folder is fine.
func CheckOut(dir string, resume, force bool) error {
	if resume && force {
		return Usagef("-resume and -force exclude each other: -resume continues the run in %s, -force starts it again", dir)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return Usage(fmt.Errorf("output folder: %w", err))
	case len(entries) > 0 && !resume && !force:
		return Usagef("%s is not empty (%s…): give -resume to continue the run in it, -force to write over it, or another -out", dir, entries[0].Name())
	}
	return nil
}

// FreshDir names a folder that does not exist yet: parent/name-YYYYMMDD-HHMMSS
// at now (UTC), with -2, -3 … appended when that is taken. It creates
// nothing.
func FreshDir(parent, name string, now time.Time) string {
	base := filepath.Join(parent, name+"-"+now.UTC().Format("20060102-150405"))
	dir := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return dir
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

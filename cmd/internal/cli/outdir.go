package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// FreshDir names a folder that does not exist yet: parent/name-YYYYMMDD-HHMMSS
// at now (UTC), with -2, -3 … appended when that is taken. It creates
// nothing. (Whether an existing output folder may be used is
// experiment.PrepareRunDir's rule.)
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

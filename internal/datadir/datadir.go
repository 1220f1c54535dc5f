// Package datadir locates the real data sets that tests, benchmarks and
// examples read. The folder is $DRKNN_DATA when set, otherwise
// ../shared/data beside the module root (the layout CI and developers use).
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvVar names the environment variable that overrides the data folder.
const EnvVar = "DRKNN_DATA"

// Dir returns the data folder: $DRKNN_DATA if set, else ../shared/data
// relative to the nearest ancestor of the working directory that holds
// go.mod, else (outside a module: an installed command run elsewhere)
// ../shared/data relative to the working directory — as an absolute path,
// so that a message about it names the folder that was looked at. It does
// not check that the folder exists; see Require.
func Dir() string {
	if d := os.Getenv(EnvVar); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "data")
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared", "data")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(filepath.Dir(wd), "shared", "data")
		}
	}
}

// Require returns Dir() joined with elem after checking that the path
// exists. Tests call it and fail (never skip) when the data is missing, so a
// CI machine without ../shared/data fails loudly.
func Require(elem ...string) (string, error) {
	p := filepath.Join(append([]string{Dir()}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("data not found at %s (set %s to the folder holding the real data sets)", p, EnvVar)
		}
		return "", fmt.Errorf("data folder %s: %w", p, err)
	}
	return p, nil
}

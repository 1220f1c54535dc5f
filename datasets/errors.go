package datasets

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/drknn/drknn/internal/errkind"
)

// Sentinel errors that every reader and Load attach to their errors (with
// internal/errkind, after a message naming the file or folder), so callers
// can tell with errors.Is what went wrong and act on it: a table runner
// skips a data set that is not there but stops on one that is there and
// broken.
var (
	// ErrNotFound: the data set, or a file it needs, is not where the
	// reader looked (missing folder, missing file, a file listed in an
	// index that does not exist).
	ErrNotFound = errors.New("data set not found")
	// ErrCorrupt: the files are there but unreadable or invalid: a wrong
	// magic number, a truncated file, a bad row, an undecodable image, a
	// layout the reader does not accept, an I/O error while reading.
	ErrCorrupt = errors.New("data set file corrupt or unreadable")
	// ErrConfig: a reader setting the data cannot honour — the data is
	// there and readable, the setting is wrong (ImageFolderOptions.Part,
	// data.split, on a folder that is not split). It is experiment.ErrConfig
	// (the same error value): such a mistake is a configuration error, never
	// a data set to skip as absent or one that is broken.
	ErrConfig = errors.New("invalid configuration")
)

// classify marks err with ErrNotFound when it says a file does not exist,
// and with ErrCorrupt otherwise — unless it already carries one of them or
// ErrConfig. nil stays nil.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrConfig) {
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errkind.Mark(ErrNotFound, err)
	}
	return errkind.Mark(ErrCorrupt, err)
}

// notFoundf returns an ErrNotFound error with the formatted message.
func notFoundf(format string, a ...any) error {
	return errkind.Mark(ErrNotFound, fmt.Errorf(format, a...))
}

// corruptf returns an ErrCorrupt error with the formatted message (which
// may wrap a cause with %w).
func corruptf(format string, a ...any) error {
	return errkind.Mark(ErrCorrupt, fmt.Errorf(format, a...))
}

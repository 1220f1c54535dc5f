// Package filekind names the type of a file that is not a regular file
// ("a folder", "a character device", "a named pipe"), for the messages of
// the readers and writers that refuse one.
package filekind

import "io/fs"

// Of names what a file of mode m is when it is not a regular file; "a
// regular file" when it is.
func Of(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

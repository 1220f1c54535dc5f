// Package errkind marks an error with a sentinel that errors.Is finds,
// without changing its message: how a package says "this is bad input" or
// "this is a configuration error" while the message still names the file,
// the key or the value.
package errkind

import "errors"

type marked struct{ kind, err error }

func (e marked) Error() string   { return e.err.Error() }
func (e marked) Unwrap() []error { return []error{e.kind, e.err} }

// Mark returns err marked with kind: errors.Is(Mark(kind, err), kind)
// holds, the message is err's, and errors.Is and errors.As still reach
// everything err wraps. nil stays nil; an err that already is kind is
// returned as it is.
func Mark(kind, err error) error {
	if err == nil || errors.Is(err, kind) {
		return err
	}
	return marked{kind, err}
}

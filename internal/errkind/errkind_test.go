package errkind

import (
	"errors"
	"io/fs"
	"testing"
)

func TestMark(t *testing.T) {
	kind := errors.New("bad input")
	inner := &fs.PathError{Op: "open", Path: "x.yaml", Err: fs.ErrNotExist}
	err := Mark(kind, inner)
	var pe *fs.PathError
	if !errors.Is(err, kind) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || err.Error() != inner.Error() {
		t.Fatalf("Mark: %v (is kind %v, is ErrNotExist %v)", err, errors.Is(err, kind), errors.Is(err, fs.ErrNotExist))
	}
	if Mark(kind, err) != err || Mark(kind, nil) != nil {
		t.Fatal("Mark re-marked a marked error or marked nil")
	}
	if errors.Is(Mark(errors.New("other"), inner), kind) {
		t.Fatal("a mark of another kind is kind")
	}
}

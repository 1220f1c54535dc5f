package numpytest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skipf instead of
// stopping the test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
}

// TestMissingNumPy: an interpreter that cannot import NumPy skips the
// cross-check, and fails it when RequireEnv is set.
func TestMissingNumPy(t *testing.T) {
	missing := t.TempDir() + "/no-python"
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	python(r, missing)
	if r.fatal != "" || !strings.Contains(r.skip, "no-python") {
		t.Errorf("without %s: fatal %q, skip %q; want a skip naming the interpreter", RequireEnv, r.fatal, r.skip)
	}
	t.Setenv(RequireEnv, "1")
	r = &recorder{TB: t}
	python(r, missing)
	if r.skip != "" || !strings.Contains(r.fatal, "no-python") || !strings.Contains(r.fatal, RequireEnv) {
		t.Errorf("with %s=1: fatal %q, skip %q; want a failure naming the interpreter and %s", RequireEnv, r.fatal, r.skip, RequireEnv)
	}
}

// TestSystemNumPy: where the system Python has NumPy (Debian's
// python3-numpy), Python returns it and does not skip.
func TestSystemNumPy(t *testing.T) {
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	got := python(r, Interpreter)
	if r.skip != "" {
		t.Skip(r.skip)
	}
	if got != Interpreter || r.fatal != "" {
		t.Errorf("python = %q, fatal %q", got, r.fatal)
	}
}

// Package numpytest finds the system Python with NumPy for the tests that
// cross-check drknn's files against NumPy's own reading and writing.
//
// Without NumPy those tests skip, unless the environment variable named by
// RequireEnv is set (as .ci/run sets it): then a missing NumPy fails the
// test, so that CI cannot pass with its cross-checks silently skipped.
package numpytest

import (
	"os"
	"os/exec"
	"testing"
)

// Interpreter is the Python the cross-checks run: the system's, where
// Debian's python3-numpy installs NumPy.
const Interpreter = "/usr/bin/python3"

// RequireEnv names the environment variable that turns a missing NumPy
// from a skip into a failure.
const RequireEnv = "DRKNN_REQUIRE_NUMPY"

// Python returns Interpreter when it imports NumPy. Otherwise it skips t,
// or fails it when RequireEnv is set to a non-empty value.
func Python(t testing.TB) string {
	t.Helper()
	return python(t, Interpreter)
}

func python(t testing.TB, interp string) string {
	t.Helper()
	if err := exec.Command(interp, "-c", "import numpy").Run(); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("NumPy cross-check: %s -c 'import numpy' failed: %v (%s is set; install python3-numpy)", interp, err, RequireEnv)
		} else {
			t.Skipf("NumPy cross-check skipped: %s -c 'import numpy' failed: %v", interp, err)
		}
	}
	return interp
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The reviewer's cases through the command: an input reached through a
// symbolic link is not overwritten, a missing -grad-out folder and an
// output that is a folder are bad input (exit 2, one line, nothing
// written), and subnormal radii are solved as ϑ = 0 (objective M).
func TestOutputsAndTinyTheta(t *testing.T) {
	dir := t.TempDir()
	const n, m = 12, 3
	x, y := problem1D(t, 3, n, m)
	cpath := writeF(t, filepath.Join(dir, "C.npy"), costs1D(x), n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	gpath := writeF(t, filepath.Join(dir, "G.npy"), make([]float64, m*n), m, n)
	if err := os.Symlink(".", filepath.Join(dir, "here")); err != nil {
		t.Fatal(err)
	}
	clink := filepath.Join(dir, "Clink.npy")
	if err := os.Symlink("C.npy", clink); err != nil {
		t.Fatal(err)
	}
	cbytes, _ := os.ReadFile(cpath)
	outPath := filepath.Join(dir, "out.npy")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-cost", cpath, "-out", filepath.Join(dir, "here", "C.npy")}, "-out " + filepath.Join(dir, "here", "C.npy") + " is also the input -cost"},
		{[]string{"-cost", clink, "-out", cpath}, "is also the input -cost " + clink},
		{[]string{"-cost", cpath, "-out", outPath, "-grad-p", gpath, "-grad-out", "/missing/g.npy"}, "-grad-out /missing/g.npy: folder /missing does not exist"},
		{[]string{"-cost", cpath, "-out", filepath.Join(dir, "here")}, "is a folder"},
	} {
		args := append(c.args, "-labels", ypath, "-theta", "0.3")
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
		if b, _ := os.ReadFile(cpath); !bytes.Equal(b, cbytes) {
			t.Fatalf("%v: C.npy overwritten", c.args)
		}
		if _, err := os.Stat(outPath); !os.IsNotExist(err) {
			t.Fatalf("%v: out.npy written", c.args)
		}
	}
	for _, theta := range []string{"1e-320", "1e-310", "5e-324", "0"} {
		for _, extra := range [][]string{nil, {"-block", "6"}, {"-grad-p", gpath, "-grad-out", filepath.Join(dir, "d.npy")}} {
			args := append([]string{"-cost", cpath, "-labels", ypath, "-theta", theta, "-out", outPath}, extra...)
			code, stdout, stderr := runCmd(t, args...)
			var s out
			if code != 0 || json.Unmarshal([]byte(stdout), &s) != nil || s.Objective != m || s.LowerBound != m {
				t.Errorf("-theta %s %v: exit %d, %s%s; want 0 and objective = lower bound = M = %d", theta, extra, code, stdout, stderr, m)
			}
		}
	}
}

type fullWriter struct{}

func (fullWriter) Write(p []byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutFailsKeepsOutputs: when the summary cannot be written to
// standard output (`> /dev/full`) the run exits 1 with one line and the
// previous P.npy and -grad-out file are left as they were, byte for byte,
// with no temporary file beside them — the outputs are renamed into place
// only after the summary is out.
func TestStdoutFailsKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	const n, m = 12, 3
	x, y := problem1D(t, 3, n, m)
	cpath := writeF(t, filepath.Join(dir, "C.npy"), costs1D(x), n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	gpath := writeF(t, filepath.Join(dir, "G.npy"), make([]float64, m*n), m, n)
	outPath, gout := filepath.Join(dir, "P.npy"), filepath.Join(dir, "D.npy")
	for _, p := range []string{outPath, gout} {
		if err := os.WriteFile(p, []byte("previous "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadDir(dir)
	var se bytes.Buffer
	err := run(context.Background(), []string{"-cost", cpath, "-labels", ypath, "-theta", "0.3", "-out", outPath,
		"-grad-p", gpath, "-grad-out", gout}, fullWriter{}, &se, nil)
	if code := report(err, &se); code != 1 || strings.Count(se.String(), "\n") != 1 || !strings.Contains(se.String(), "no space left on device") {
		t.Fatalf("exit %d, stderr %q; want 1 and one line", code, se.String())
	}
	for _, p := range []string{outPath, gout} {
		if b, _ := os.ReadFile(p); string(b) != "previous "+p {
			t.Errorf("%s changed: %.40q", p, b)
		}
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("%d files in the folder after the run, %d before", len(after), len(before))
	}
}

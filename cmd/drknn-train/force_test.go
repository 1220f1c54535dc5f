package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/fixtures"
)

// snapshot is every file under dir by its path relative to dir (fixtures.Tree).
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := fixtures.Tree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// TestForceKeepsRunUntilReplaced: -force over a finished run whose new run
// fails (exit 1: every repeat diverges) leaves the earlier run in place,
// byte for byte, and says so; a new run that succeeds replaces it with
// nothing of the earlier one left; an interrupted one keeps its
// checkpoints for -resume and the earlier run aside until it finishes.
func TestForceKeepsRunUntilReplaced(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"-config", synthetic, "-set", "train.steps=2", "-set", "repeats=1", "-set", "queries=20", "-set", "eval.methods=[drknn]", "-out", out, "-quiet"}
	if code, _, se := runCmd(t.Context(), args...); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	notes := filepath.Join(out, "notes.txt") // not a run output: never touched
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := snapshot(t, out)
	code, _, se := runCmd(t.Context(), append(args, "-force", "-set", "train.lr=1e300")...)
	if code != 1 || strings.Count(se, "\n") != 1 || !strings.Contains(se, "diverged") || !strings.Contains(se, "restored") {
		t.Fatalf("-force, a failing run: exit %d %q", code, se)
	}
	if got := snapshot(t, out); !sameFiles(got, good) {
		t.Fatalf("a failed -force run changed the earlier run: %d files before, %d after", len(good), len(got))
	}

	// Interrupted (here before its first step): the run's state stays for
	// -resume, the earlier run is kept aside until that finishes.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if code, _, se := runCmd(ctx, append(args, "-force")...); code != 130 || !strings.Contains(se, "-resume") {
		t.Fatalf("-force, interrupted: exit %d %q", code, se)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); !os.IsNotExist(err) {
		t.Fatalf("results.json of the replaced run beside the interrupted one: %v", err)
	}
	if code, _, se := runCmd(t.Context(), append(args, "-resume")...); code != 0 {
		t.Fatalf("-resume after an interrupted -force: exit %d %q", code, se)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left in the run folder after the run finished: %s", e.Name())
		}
	}

	// A new run that succeeds replaces the earlier one.
	if code, _, se := runCmd(t.Context(), append(args, "-force", "-set", "seed=7")...); code != 0 {
		t.Fatalf("-force: exit %d %q", code, se)
	}
	after := snapshot(t, out)
	if bytes.Equal(after["results.json"], good["results.json"]) || string(after["notes.txt"]) != "mine" {
		t.Fatalf("-force did not replace the run, or touched notes.txt")
	}
	for p := range after {
		if strings.HasPrefix(p, ".") {
			t.Errorf("left in the run folder: %s", p)
		}
	}
}

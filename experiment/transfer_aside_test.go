package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreResultsLast: a restore of a cell's earlier run that stops
// part-way puts results.json back only after the rest, so that a
// results.json beside a set-aside is never the earlier run's (-force and
// -resume take the set-aside beside one for older, and delete it).
func TestRestoreResultsLast(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"results.json", "train.log", "zz-stuck"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("earlier "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ReplaceRunDir(dir)
	if err != nil || r.Aside() == "" {
		t.Fatalf("%v %+v", err, r)
	}
	// zz-stuck was not set aside (not a run output); a rename onto it,
	// a folder that is not empty, fails: the restore stops there.
	os.Rename(filepath.Join(dir, "zz-stuck"), filepath.Join(r.Aside(), "zz-stuck"))
	if err := os.MkdirAll(filepath.Join(dir, "zz-stuck", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = r.Settle(errors.New("new run failed"))
	if err == nil || !strings.Contains(err.Error(), "restoring the earlier run") {
		t.Fatalf("want a failed restore: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
		t.Fatal("results.json put back before the rest of the earlier run")
	}
	if _, err := os.Stat(filepath.Join(r.Aside(), "results.json")); err != nil {
		t.Fatalf("results.json lost: %v", err)
	}
}

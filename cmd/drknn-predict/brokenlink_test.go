package main

import (
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImagesBrokenLink: a broken symbolic link named as an image in an
// -images folder fails alone, as a corrupt image does: a line on stderr
// naming it, a row without a prediction, the other image classified, exit
// status 1. It was dropped without a word (exit 0, one row).
func TestImagesBrokenLink(t *testing.T) {
	e := newExport(t, cnn, "mnist", 10)
	dir := filepath.Join(t.TempDir(), "qd")
	check(t, os.MkdirAll(dir, 0o755))
	writePNG(t, filepath.Join(dir, "q0.png"), image.NewGray(image.Rect(0, 0, 6, 6)))
	missing := filepath.Join(dir, "missing.png")
	check(t, os.Symlink("/nonexistent/a.png", missing))
	code, so, se := runCmd("-model", e.dir, "-images", dir)
	rows := strings.Split(strings.TrimSpace(so), "\n")
	if code != 1 || len(rows) != 3 || !strings.HasPrefix(rows[1], missing+",,") || !strings.HasPrefix(rows[2], filepath.Join(dir, "q0.png")+",") {
		t.Fatalf("exit %d, stdout %q; want 1, a header, an empty row for missing.png and one prediction", code, so)
	}
	lines := strings.Split(strings.TrimSpace(se), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], missing) || !strings.Contains(lines[0], "broken symbolic link") || !strings.Contains(lines[0], "/nonexistent/a.png") {
		t.Fatalf("stderr %q; want a line naming missing.png, a broken symbolic link to /nonexistent/a.png, then the summary", se)
	}
}

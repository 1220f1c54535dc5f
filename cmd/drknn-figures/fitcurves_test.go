package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCurvesOfFitRun: a fit run keeps its one model's training in
// RUN/history.json (no repeats/, no train/): curves draws it (it was
// refused, "no repeats/*/history.json … or train/*/history.json").
func TestCurvesOfFitRun(t *testing.T) {
	run := t.TempDir()
	writeHistory(t, filepath.Join(run, "history.json"), []float64{0.6, 0.5, 0.4, 0.35}, 1e-4)
	out := filepath.Join(t.TempDir(), "curves.png")
	code, so, se := runCmd("curves", "-run", run, "-out", out, "-width", "800", "-height", "300")
	if code != 0 || se != "" || !strings.Contains(so, "1 model of a fit run (fit)") {
		t.Fatalf("fit run: exit %d stdout %q stderr %q", code, so, se)
	}
	checkPNG(t, out, 800, 300, 20)
}

package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/fixtures"
)

// TestFitOneSampleClassNamed: protocol fit without a test part needs two
// samples of every class for cross-validation; a class with one is named
// (its label as the reader gave it) with the data file or folder and, for
// a csv table, the label column — as the episodes protocol's message does.
func TestFitOneSampleClassNamed(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "lonely.csv")
	var b strings.Builder
	b.WriteString("f1,f2,kind\n")
	for i := range 6 {
		b.WriteString([]string{"1,2,a\n", "3,4,b\n"}[i%2])
	}
	b.WriteString("5,6,solo\n")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: ran, want an error", what)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: several lines: %q", what, msg)
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", what, msg, w)
			}
		}
	}
	_, err := Run(t.Context(), fitConfig(t, "csv", csv, "data.label=kind", "model.kind=mlp"), Options{})
	check("csv data.label", err, `"solo"`, csv, `label column "kind"`, "1 training sample", "at least 2")
	_, err = Run(t.Context(), fitConfig(t, "csv", csv, "model.kind=mlp"), Options{})
	check("csv last column", err, `"solo"`, csv, "label column: the last", "data.label")

	// An image folder (not split) with a one-image class.
	root := t.TempDir()
	if _, _, err := fixtures.ImageFolder(root, 3, 1, 2); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(root, "train")
	classes, err := os.ReadDir(plain)
	if err != nil || len(classes) < 3 {
		t.Fatalf("fixture: %v %v", classes, err)
	}
	lonely := classes[len(classes)-1].Name()
	imgs, _ := os.ReadDir(filepath.Join(plain, lonely))
	for _, f := range imgs[1:] {
		os.Remove(filepath.Join(plain, lonely, f.Name()))
	}
	_, err = Run(t.Context(), fitConfig(t, "imagefolder", plain), Options{})
	check("imagefolder", err, `"`+lonely+`"`, plain, "1 training sample")
}

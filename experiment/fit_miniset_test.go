package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitMinisetSplitNamesSettings: when no mini-set of the size protocol
// fit would draw can be split among the classes (3000 classes of 2 rows:
// train.miniset_size 0 means all 6000 points), the error names
// train.miniset_size, the classes and the points, and says what to set.
func TestFitMinisetSplitNamesSettings(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "manycls.csv")
	var b strings.Builder
	b.WriteString("f1,f2,label\n")
	for c := range 3000 {
		for r := range 2 {
			fmt.Fprintf(&b, "%d,%d,c%d\n", c, r, c)
		}
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), fitConfig(t, "csv", csv, "model.kind=mlp", "train.steps=1", "train.minisets=1"), Options{})
	if err == nil {
		t.Fatal("ran, want an error naming train.miniset_size")
	}
	msg := err.Error()
	for _, w := range []string{"train.miniset_size", "3000 classes", "6000 training points", "-set train.miniset_size="} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q does not say %q", msg, w)
		}
	}
	if strings.Contains(msg, "\n") || !errors.Is(err, ErrConfig) {
		t.Errorf("%q: want one line, an ErrConfig (exit 2)", msg)
	}
}

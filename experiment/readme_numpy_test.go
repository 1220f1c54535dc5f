package experiment

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/numpytest"
)

// readmeSnippet returns the README's NumPy reproduction of an export's
// Dr.k-NN vote (the python block that loads lfd_weights.npy), with its
// export folder replaced by dir.
func readmeSnippet(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```python\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if !strings.Contains(block[1], "lfd_weights.npy") {
			continue
		}
		re := regexp.MustCompile(`(?m)^d = ".*"$`)
		if !re.MatchString(block[1]) {
			t.Fatal(`README: the NumPy snippet has no line d = "…"`)
		}
		return re.ReplaceAllLiteralString(block[1], "d = "+strconv.Quote(dir+string(filepath.Separator)))
	}
	t.Fatal("README: no python block reads lfd_weights.npy")
	return ""
}

// The README's NumPy snippet reproduces results.json's Dr.k-NN accuracy
// from an export alone — also where the LFD saturates (ϑ = 1 × the median
// cost: every row of lfd_weights.npy equal, every vote tied), where the
// classifier's tie rule decides every query and a plain argmax (class 0)
// does not reproduce it.
func TestReadmeNumPySnippet(t *testing.T) {
	py := numpytest.Python(t)
	for _, theta := range []string{"0.1", "1"} {
		dir := t.TempDir()
		cfg := synthConfig(t, "train.theta=["+theta+"]", "eval.methods=[drknn]", "train.steps=5")
		if _, err := Run(t.Context(), cfg, Options{OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		want := readResults(t, dir).Methods["drknn"].PerRepeat
		for r := range want {
			ex := filepath.Join(dir, "repeats", []string{"01", "02"}[r], "export")
			out, err := exec.Command(py, "-c", readmeSnippet(t, ex)).CombinedOutput()
			if err != nil {
				t.Fatalf("ϑ = %s, repeat %d: the README snippet failed: %v\n%s", theta, r+1, err, out)
			}
			got, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil || got != want[r] {
				t.Fatalf("ϑ = %s, repeat %d: the README snippet prints %q, results.json has %v", theta, r+1, out, want[r])
			}
		}
	}
}

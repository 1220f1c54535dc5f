package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/eval"
)

// TestCellsNotRun: a cell that failed as a whole (Failed) and one skipped
// for its absent data (Skipped) are listed, in the order of the cells,
// under table.md's and transfer.md's "Cells not run" ("failed: …" and the
// reason) and have a CSV row whose status says so; a cell with results
// is in neither list.
func TestCellsNotRun(t *testing.T) {
	methods := map[string]MethodResult{"drknn": {Mean: 0.9, CI95: 0.01, PerRepeat: []float64{0.89, 0.91}}}
	cells := []CellOutcome{
		{Column: eval.Column{Dataset: "lung-cancer", M: 3, K: 5}, Name: "lung-cancer-3w5s", Results: &Results{Repeats: 2, Methods: methods}},
		{Column: eval.Column{Dataset: "mnist", M: 2, K: 5}, Name: "mnist-2w5s", Failed: "repeat 1: broke"},
		{Column: eval.Column{Dataset: "covid-ct", M: 2, K: 5}, Name: "covid-ct-2w5s", Skipped: "data not available: absent"},
	}
	tcells := []TransferOutcome{
		{Cell: TransferCell{Dataset: "omniglot", Ways: 5, Shots: 1}, Skipped: "data not available: absent"},
		{Cell: TransferCell{Dataset: "mnist", Ways: 5, Shots: 1}, Failed: "drknn: diverged"},
		{Cell: TransferCell{Dataset: "mnist", Ways: 5, Shots: 5}, Results: &Results{Repeats: 2, Methods: methods, Transfer: &TransferInfo{}}},
	}
	out := t.TempDir()
	opts := TableOptions{OutDir: out, Quick: true}
	if err := writeTable(opts, cells, 0); err != nil {
		t.Fatal(err)
	}
	if err := writeTransferTable(opts, tcells, 0); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]string{
		"table.md":     {"\n## Cells not run\n\n- mnist-2w5s: failed: repeat 1: broke\n- covid-ct-2w5s: data not available: absent\n"},
		"transfer.md":  {"\n## Cells not run\n\n- omniglot-5w1s: data not available: absent\n- mnist-5w1s: failed: drknn: diverged\n"},
		"table.csv":    {"\nmnist,2,5,,,,,,failed: repeat 1: broke,,,,\ncovid-ct,2,5,,,,,,skipped: data not available: absent,,,,\n"},
		"transfer.csv": {"\nomniglot,5,1,,,,,,,skipped: data not available: absent\nmnist,5,1,,,,,,,failed: drknn: diverged\n"},
	} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s has no %q:\n%s", file, w, b)
			}
		}
		if strings.Contains(string(b), "lung-cancer-3w5s: ") || strings.Contains(string(b), "mnist-5w5s: ") {
			t.Errorf("%s lists a cell with results as not run:\n%s", file, b)
		}
	}
}

package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// TestTableCellFailureRecorded: a cell that fails as a whole (its only
// repeat fails) no longer stops the table with no table.md: it is
// recorded (Failed, "failed" in table.md and table.csv), the next cell
// runs, and Failures lists it and the next cell's method failure, each
// naming the cell (and the repeat and method).
func TestTableCellFailureRecorded(t *testing.T) {
	data, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	starts := 0
	failHook = func(r int, m string) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case m == "":
			starts++
			if starts == 1 { // the first cell's only repeat
				return errors.New("repeat\nbroke")
			}
		case m == "embedding_knn":
			return errors.New("singular matrix")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	out := t.TempDir()
	cells, err := RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer"}, Quick: true,
		Sets: []string{"data_dir=" + data, "queries=10", "eval.methods=[drknn,embedding_knn]"}})
	if err != nil {
		t.Fatalf("a failed cell stopped the table: %v", err)
	}
	if len(cells) != 2 || cells[0].Results != nil || cells[0].Failed != "repeat 1: repeat; broke" || cells[1].Results == nil || cells[1].Failed != "" {
		t.Fatalf("cells %+v", cells)
	}
	var failures []string
	for _, c := range cells {
		failures = append(failures, c.Failures()...)
	}
	want := []string{"cell lung-cancer-3w5s: repeat 1: repeat; broke", "cell lung-cancer-3w8s: repeat 1: embedding_knn: singular matrix"}
	if !slices.Equal(failures, want) {
		t.Fatalf("failures %q, want %q", failures, want)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(md), "| lung-cancer-3w5s | failed |") || !strings.Contains(string(md), "- lung-cancer-3w5s: failed: repeat 1: repeat; broke") ||
		!strings.Contains(string(md), "| lung-cancer-3w8s | 0.") {
		t.Fatalf("table.md: %v\n%s", err, md)
	}
	csv, err := os.ReadFile(filepath.Join(out, "table.csv"))
	if err != nil || !strings.Contains(string(csv), "lung-cancer,3,5,,,,,,failed: repeat 1: repeat; broke,") ||
		!strings.Contains(string(csv), "lung-cancer,3,8,embedding_knn,,,") || !strings.Contains(string(csv), "failed on 1 of 1 repeats: repeat 1: singular matrix") {
		t.Fatalf("table.csv: %v\n%s", err, csv)
	}
}

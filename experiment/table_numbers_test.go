package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/eval"
)

// repeatsResult is a method's result from its per-repeat accuracies, NaN
// for a repeat it failed on, summarised as a run does.
func repeatsResult(t *testing.T, acc ...float64) MethodResult {
	t.Helper()
	r := MethodResult{Mean: math.NaN(), CI95: math.NaN(), PerRepeat: acc}
	if done := r.Completed(); len(done) > 0 {
		s, err := eval.Summarize(done)
		if err != nil {
			t.Fatal(err)
		}
		r.Mean, r.CI95 = s.Mean, s.HalfWidth
	}
	for i, a := range acc {
		if math.IsNaN(a) {
			r.Failed = append(r.Failed, i+1)
			if r.Error == "" {
				r.Error = fmt.Sprintf("repeat %d: failed", i+1)
			}
		}
	}
	return r
}

// tableLine writes the table of outs and returns the first line of
// table.md's section (its heading) that starts with prefix.
func tableLine(t *testing.T, outs []CellOutcome, section, prefix string) string {
	t.Helper()
	dir := t.TempDir()
	if err := writeTable(TableOptions{OutDir: dir}, outs, 0); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, l := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(l, "## ") {
			in = l == section
		}
		if in && strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("table.md's %s has no line starting %q:\n%s", section, prefix, md)
	return ""
}

// Issue 13.1's bar "truncated ≥ drknn − 0.01" holds at exactly −0.01:
// 0.79 − 0.80 is −0.010000000000000009 in float64, and one query fewer
// (−0.011) misses it.
func TestTruncationBarAtExactTolerance(t *testing.T) {
	col := eval.Column{Dataset: "mnist", M: 2, K: 5}
	for _, tc := range []struct {
		trunc float64
		want  string
	}{
		{0.79, "yes"},
		{0.789, "**no**"},
		{0.80, "yes"},
	} {
		res := &Results{Repeats: 2, Methods: map[string]MethodResult{
			eval.MethodDrKNN:          repeatsResult(t, 0.80, 0.80),
			eval.MethodDrKNNTruncated: repeatsResult(t, tc.trunc, tc.trunc),
		}}
		line := tableLine(t, []CellOutcome{{Column: col, Name: "mnist-2w5s", Results: res}}, "## Paired differences", "| mnist-2w5s | ")
		if !strings.HasSuffix(line, " "+tc.want+" |") {
			t.Errorf("truncated %v against drknn 0.80: %q, want the bar's verdict %s", tc.trunc, line, tc.want)
		}
	}
}

// A repeat that failed as a whole records no queries: "queries per repeat"
// is over the repeats that ran, not "0–1000".
func TestQueriesNoteSkipsFailedRepeats(t *testing.T) {
	q := make([]int, 1000)
	for _, tc := range []struct {
		name string
		eps  []EpisodeRecord
		want string
	}{
		{"one failed", []EpisodeRecord{{QueryIndex: q}, {Error: "training diverged"}}, "1000"},
		{"short and failed", []EpisodeRecord{{Error: "x"}, {QueryIndex: q[:80], Short: true}, {QueryIndex: q[:90], Short: true}}, "80–90 (all that remain)"},
		{"all failed", []EpisodeRecord{{Error: "x"}, {Error: "y"}}, "–"},
	} {
		if got := queriesNote(&Results{Repeats: len(tc.eps), Episodes: tc.eps}); got != tc.want {
			t.Errorf("%s: queries per repeat %q, want %q", tc.name, got, tc.want)
		}
	}
}

// transfer.md's "Dr.k-NN ≥ anchor" compares drknn with proto_net on the
// tasks both completed, marks a comparison over fewer than every task, and
// is "–" when either failed on every task — not **no** for a NaN mean, nor
// a verdict from means over different tasks.
func TestTransferAnchorVerdictPaired(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name          string
		drknn, anchor []float64
		want          string
	}{
		{"both complete, above", []float64{0.9, 0.9}, []float64{0.8, 0.9}, "yes"},
		{"both complete, level", []float64{0.8, 0.8}, []float64{0.8, 0.8}, "yes"},
		{"both complete, below", []float64{0.7, 0.9}, []float64{0.8, 0.9}, "**no**"},
		{"anchor failed everywhere", []float64{0.89, 0.91}, []float64{nan, nan}, "–"},
		{"drknn failed everywhere", []float64{nan, nan}, []float64{0.89, 0.91}, "–"},
		// Over all completed tasks drknn's mean (0.767) beats the anchor's
		// (0.6), but on the one task both completed it is below.
		{"anchor failed on two", []float64{0.5, 0.9, 0.9}, []float64{0.6, nan, nan}, "**no** [1 of 3 tasks]"},
		{"drknn failed on one", []float64{nan, 0.9, 0.9}, []float64{0.95, 0.8, 0.9}, "yes [2 of 3 tasks]"},
	} {
		res := &Results{Repeats: len(tc.drknn), Methods: map[string]MethodResult{
			eval.MethodDrKNN:    repeatsResult(t, tc.drknn...),
			eval.MethodProtoNet: repeatsResult(t, tc.anchor...),
		}, Transfer: &TransferInfo{}}
		dir := t.TempDir()
		outs := []TransferOutcome{{Cell: TransferCell{"omniglot", 5, 1}, Results: res}}
		if err := writeTransferTable(TableOptions{OutDir: dir}, outs, 0); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, "transfer.md"))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, l := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(l, "| omniglot-5w1s |") {
				cols := strings.Split(l, " | ")
				got = cols[2+len(TransferMethods())]
			}
		}
		if got != tc.want {
			t.Errorf("%s: Dr.k-NN ≥ anchor %q, want %q", tc.name, got, tc.want)
		}
	}
}

// When drknn fails on every repeat of a cell, "Dr.k-NN against the paper"
// says so instead of printing "NaN | 0.959 | +NaN".
func TestTablePaperSectionDrKNNFailedEverywhere(t *testing.T) {
	nan := math.NaN()
	q := make([]int, 1000)
	res := &Results{Repeats: 2, Methods: map[string]MethodResult{
		eval.MethodDrKNN:        repeatsResult(t, nan, nan),
		eval.MethodEmbeddingKNN: repeatsResult(t, 0.7, 0.7),
	}, Episodes: []EpisodeRecord{{QueryIndex: q}, {QueryIndex: q}}}
	col := eval.Column{Dataset: "mnist", M: 2, K: 10}
	got := tableLine(t, []CellOutcome{{Column: col, Name: "mnist-2w10s", Results: res}}, "## Dr.k-NN against the paper", "| mnist-2w10s | ")
	if want := "| mnist-2w10s | failed | 0.959 | – | 0 of 2 | 1000 |"; got != want {
		t.Errorf("Dr.k-NN against the paper: %q, want %q", got, want)
	}
}

// The run's per-method log line never prints NaN: one repeat has no
// interval ("± n/a"), and a method that failed on every repeat has no mean.
func TestRunLogMeanWithoutNaN(t *testing.T) {
	failHook = func(_ int, m string) error {
		if m == eval.MethodEmbeddingKNN {
			return errors.New("broken")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	cfg := synthConfig(t, "model.kind=identity", "train.steps=0", "repeats=1", "eval.methods=[drknn,embedding_knn]")
	var lines []string
	if _, err := Run(t.Context(), cfg, Options{Observer: func(e Event) {
		if m, ok := e.(Message); ok {
			lines = append(lines, m.Text)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	var drknn, ek string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "drknn "):
			drknn = l
		case strings.HasPrefix(l, "embedding_knn "):
			ek = l
		}
		if strings.Contains(l, "NaN") {
			t.Errorf("log line %q", l)
		}
	}
	if !strings.HasSuffix(drknn, " ± n/a") {
		t.Errorf("drknn's line %q, want a mean ± n/a (one repeat)", drknn)
	}
	if want := "embedding_knn      – (failed in 1 of 1 repeats: repeat 1: broken)"; ek != want {
		t.Errorf("embedding_knn's line %q, want %q", ek, want)
	}
	for _, tc := range []struct {
		mean, ci float64
		want     string
	}{
		{0.81234, 0.01234, "0.8123 ± 0.0123"},
		{0.81234, math.NaN(), "0.8123 ± n/a"},
		{math.NaN(), math.NaN(), "–"},
	} {
		if got := meanCIText(tc.mean, tc.ci); got != tc.want {
			t.Errorf("meanCIText(%v, %v) = %q, want %q", tc.mean, tc.ci, got, tc.want)
		}
	}
}

package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/eval"
)

// TestEpisodeScoresByHand: two tight clusters far apart, 2 shots, k = 3 on
// the raw rows (model.kind identity). Every query's 3 nearest support
// points are the 2 of its own class and 1 of the other, so embedding_knn's
// probabilities are (2/3, 1/3) with the true class on top: log-loss
// log 1.5 and ECE |1 − 2/3| = 1/3 on every repeat, accuracy 1. results.json
// records them per repeat with their summaries.
func TestEpisodeScoresByHand(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	rows = append(rows, "x,y,label")
	for i := 0; i < 6; i++ {
		dx, dy := 0.01*float64(i), 0.02*float64(i%3)
		rows = append(rows, fmt.Sprintf("%g,%g,a", dx, dy), fmt.Sprintf("%g,%g,b", 10+dx, 10+dy))
	}
	path := filepath.Join(dir, "pts.csv")
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "dataset: csv\ndata_dir: " + path + "\nways: 2\nshots: 2\nqueries: 8\nrepeats: 3\n" +
		"model: {kind: identity}\neval: {k: 3, methods: [drknn, embedding_knn]}\n"
	cfg := mustParseConfig(t, "pts.yaml", src)
	out := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	knn := res.Methods[eval.MethodEmbeddingKNN]
	if knn.LogLoss == nil || knn.ECE == nil || len(knn.LogLoss.PerRepeat) != 3 || len(knn.ECE.PerRepeat) != 3 {
		t.Fatalf("embedding_knn scores %+v", knn)
	}
	for r := 0; r < 3; r++ {
		if knn.PerRepeat[r] != 1 || math.Abs(knn.LogLoss.PerRepeat[r]-math.Log(1.5)) > 1e-12 || math.Abs(knn.ECE.PerRepeat[r]-1.0/3) > 1e-12 {
			t.Fatalf("repeat %d: accuracy %v, log-loss %v (want %v), ECE %v (want 1/3)", r+1, knn.PerRepeat[r], knn.LogLoss.PerRepeat[r], math.Log(1.5), knn.ECE.PerRepeat[r])
		}
	}
	if math.Abs(knn.LogLoss.Mean-math.Log(1.5)) > 1e-12 || math.Abs(knn.LogLoss.CI95) > 1e-12 || math.Abs(knn.ECE.Mean-1.0/3) > 1e-12 {
		t.Fatalf("summaries: log-loss %+v, ECE %+v", *knn.LogLoss, *knn.ECE)
	}
	if d := res.Methods[eval.MethodDrKNN]; d.LogLoss == nil || d.ECE == nil || len(d.LogLoss.PerRepeat) != 3 {
		t.Fatalf("drknn has no per-repeat scores: %+v", d)
	}
	// results.json carries them.
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Methods map[string]struct {
			LogLoss Metric `json:"log_loss"`
			ECE     Metric `json:"ece"`
		} `json:"methods"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Methods[eval.MethodEmbeddingKNN]; len(got.LogLoss.PerRepeat) != 3 || got.ECE.PerRepeat[2] != knn.ECE.PerRepeat[2] {
		t.Fatalf("results.json embedding_knn scores %+v", got)
	}
}

// TestPairedDiffByHand: per-repeat accuracies 0.9/0.8/0.7 against
// 0.8/0.8/0.9 differ by +0.1, 0, −0.2: mean −1/30, sample deviation
// √(0.07/3) = 0.152753, half-width t(0.975, 2) · 0.152753/√3 with
// t = 4.302653: 0.379458; one win, one tie, one loss.
func TestPairedDiffByHand(t *testing.T) {
	r := &Results{Methods: map[string]MethodResult{
		"a": {PerRepeat: []float64{0.9, 0.8, 0.7}},
		"b": {PerRepeat: []float64{0.8, 0.8, 0.9}},
	}}
	p, ok, err := PairedDiff(r, "a", "b")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if math.Abs(p.Diff.Mean+1.0/30) > 1e-12 || math.Abs(p.Diff.HalfWidth-0.379458) > 1e-6 || p.Wins != 1 || p.Ties != 1 || p.Losses != 1 {
		t.Fatalf("paired %+v", p)
	}
	if _, ok, _ := PairedDiff(r, "a", "missing"); ok {
		t.Fatal("a missing method compared")
	}
}

// TestTablePairedAndScores: the table's paired section and CSV, and the
// log-loss section, from two hand-made cells.
func TestTablePairedAndScores(t *testing.T) {
	cell := func(name string, trunc []float64) CellOutcome {
		m := func(acc []float64) MethodResult {
			s, _ := eval.Summarize(acc)
			ll, _ := newMetric([]float64{0.5, 0.7})
			ece, _ := newMetric([]float64{0.1, 0.3})
			return MethodResult{Mean: s.Mean, CI95: s.HalfWidth, PerRepeat: acc, LogLoss: ll, ECE: ece}
		}
		return CellOutcome{Column: eval.Column{Dataset: "mnist", M: 2, K: 5}, Name: name, Results: &Results{Repeats: 2, Methods: map[string]MethodResult{
			eval.MethodDrKNN:          m([]float64{0.9, 0.8}),
			eval.MethodEmbeddingKNN:   m([]float64{0.85, 0.8}),
			eval.MethodDrKNNTruncated: m(trunc),
		}}}
	}
	out := t.TempDir()
	outs := []CellOutcome{cell("mnist-2w5s", []float64{0.9, 0.79}), cell("mnist-2w10s", []float64{0.8, 0.8})}
	outs[1].Column.K = 10
	if err := writeTable(TableOptions{OutDir: out}, outs, 0); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "table.md"))
	// drknn − embedding_knn: +0.05, 0 → +0.025 ± 12.706·0.035355/√2 = 0.318.
	for _, want := range []string{
		"| mnist-2w5s | +0.025 ± 0.318 | 1/1/0 | -0.005 ± 0.064 | 0/1/1 | yes |",
		"| mnist-2w10s | +0.025 ± 0.318 | 1/1/0 | -0.050 ± 0.635 | 0/1/1 | **no** |",
		"| drknn | 0.600 / 0.200 | 0.600 / 0.200 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Fatalf("table.md lacks %q:\n%s", want, md)
		}
	}
	pc, _ := os.ReadFile(filepath.Join(out, "table-paired.csv"))
	if !strings.Contains(string(pc), "mnist,2,5,drknn,embedding_knn,0.0250,0.3177,1,1,0,2\n") {
		t.Fatalf("table-paired.csv:\n%s", pc)
	}
	tc, _ := os.ReadFile(filepath.Join(out, "table.csv"))
	if !strings.Contains(string(tc), "mnist,2,5,drknn,0.8500,0.6353,0.838,2,ok,0.6000,1.2706,0.2000,1.2706\n") {
		t.Fatalf("table.csv:\n%s", tc)
	}
}

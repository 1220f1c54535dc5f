package experiment

import (
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/oneline"
)

// machineWords are what Gorgonia's tape machine wraps around an op's
// error (the failing instruction's dump): no log line or recorded error
// may hold them.
var machineWords = []string{"PC ", "Failed to execute", "Failed to carry", "CPU6", "false false", "\t"}

func checkNoMachineWords(t *testing.T, what, text string) {
	t.Helper()
	for _, w := range machineWords {
		if strings.Contains(text, w) {
			t.Errorf("%s holds the machine's %q:\n%s", what, w, text)
		}
	}
}

// A training that diverges (train.lr 1e300: the first update takes the
// weights past the float range) fails its repeat with one line: the step,
// what was not finite, and the hint — not the tape machine's dump of the
// risk op's instruction ("repeat 1 failed: train: step 2: PC 7. Failed to
// execute instruction WorstCaseRisk(n=10,d=64)\t[CPU6]\tCPU7\tfalse…").
func TestDivergedTrainingLogsOneLine(t *testing.T) {
	cfg := synthConfig(t, "repeats=1", "train.steps=3", "queries=10", "eval.methods=[drknn]", "train.lr=1e300")
	var lines []string
	_, err := Run(t.Context(), cfg, Options{OutDir: t.TempDir(), Observer: func(e Event) {
		if m, ok := e.(Message); ok {
			lines = append(lines, m.Text)
		}
	}})
	if err == nil {
		t.Fatal("a training at lr 1e300 did not fail")
	}
	log := strings.Join(lines, "\n")
	checkNoMachineWords(t, "the log", log)
	checkNoMachineWords(t, "the error", oneline.Err(err))
	want := "repeat 1 failed: training diverged at step 2 of 3: non-finite risk (the embeddings hold NaN or ±Inf); " +
		"lower train.lr (now 1e+300) or check the data for NaN/Inf"
	if !strings.Contains(log, want) {
		t.Fatalf("the log has no line %q:\n%s", want, log)
	}
}

// A network baseline whose own training breaks down (metaoptnet at lr
// 1e12: its few-shot loss turns NaN inside the graph) is recorded failed
// with its op's error, without the machine's dump, in the log, the
// episode record and results.json's errors.
func TestBaselineFailureWithoutMachineDump(t *testing.T) {
	cfg := synthConfig(t, "repeats=1", "train.steps=2", "queries=10", "eval.methods=[drknn,metaoptnet]", "train.lr=1e12")
	var lines []string
	res, err := Run(t.Context(), cfg, Options{OutDir: t.TempDir(), Observer: func(e Event) {
		if m, ok := e.(Message); ok {
			lines = append(lines, m.Text)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) == 0 {
		t.Fatal("metaoptnet did not fail at lr 1e12: the fixture no longer breaks it down")
	}
	checkNoMachineWords(t, "the log", strings.Join(lines, "\n"))
	checkNoMachineWords(t, "results.json's errors", strings.Join(res.Errors, "\n"))
	checkNoMachineWords(t, "the episode's method errors", res.Episodes[0].MethodErrors["metaoptnet"])
	checkNoMachineWords(t, "metaoptnet's error", res.Methods["metaoptnet"].Error)
	if !strings.Contains(res.Errors[0], "few-shot episode loss is NaN") {
		t.Fatalf("the op's error is gone: %q", res.Errors[0])
	}
}

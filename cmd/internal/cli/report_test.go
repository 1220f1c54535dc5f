package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
)

// A method that failed on every repeat has no mean: the cell's line says
// "failed", never "NaN"; one the run did not evaluate is "–".
func TestReporterCellLineFailedMethod(t *testing.T) {
	failed := experiment.MethodResult{Mean: math.NaN(), CI95: math.NaN(), PerRepeat: []float64{math.NaN(), math.NaN()}, Failed: []int{1, 2}, Error: "repeat 1: broke"}
	ok := experiment.MethodResult{Mean: 0.9, CI95: 0.01, PerRepeat: []float64{0.89, 0.91}}
	var term bytes.Buffer
	r := &Reporter{Term: &term}
	r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: "mnist-2w10s", Column: eval.Column{Dataset: "mnist", M: 2, K: 10},
		Results: &experiment.Results{Repeats: 2, Methods: map[string]experiment.MethodResult{"drknn": failed}}}})
	r.Observe(experiment.TransferCellDone{Outcome: experiment.TransferOutcome{Cell: experiment.TransferCell{Dataset: "omniglot", Ways: 5, Shots: 1},
		Results: &experiment.Results{Repeats: 2, Methods: map[string]experiment.MethodResult{"drknn": ok, "proto_net": failed}}}})
	r.Observe(experiment.TransferCellDone{Outcome: experiment.TransferOutcome{Cell: experiment.TransferCell{Dataset: "omniglot", Ways: 5, Shots: 5},
		Results: &experiment.Results{Repeats: 2, Methods: map[string]experiment.MethodResult{"drknn": failed}}}})
	out := term.String()
	for _, want := range []string{"mnist-2w10s          drknn failed (paper 0.959)", "omniglot-5w1s        drknn 0.900, proto_net failed ",
		"omniglot-5w5s        drknn failed, proto_net – "} {
		if !strings.Contains(out, want) {
			t.Errorf("no line with %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("NaN printed:\n%s", out)
	}
}

// A cell the paper's Table 1 does not have (a data set of -configs, or
// a column it leaves empty) prints no paper value; it printed "(paper
// 0.000)", as if the paper had reported an accuracy of 0.
func TestReporterCellLineWithoutPaperValue(t *testing.T) {
	ok := experiment.MethodResult{Mean: 0.9, CI95: 0.01, PerRepeat: []float64{0.89, 0.91}}
	var term bytes.Buffer
	r := &Reporter{Term: &term}
	for _, c := range []eval.Column{{Dataset: "mine", M: 2, K: 5}, {Dataset: "mnist", M: 2, K: 5}} {
		r.Observe(experiment.CellDone{Cell: experiment.CellOutcome{Name: c.Dataset + "-2w5s", Column: c,
			Results: &experiment.Results{Repeats: 2, Methods: map[string]experiment.MethodResult{"drknn": ok}}}})
	}
	out := term.String()
	if !strings.Contains(out, "mine-2w5s            drknn 0.900  ") || strings.Contains(out, "paper 0.000") ||
		!strings.Contains(out, "mnist-2w5s           drknn 0.900 (paper 0.838)") {
		t.Errorf("cell lines:\n%s", out)
	}
}

// A table's message between cells (a cell whose results.json is damaged
// and runs again) has no cell log to go to: it is printed on the
// terminal, once; a run's message goes to its log only.
func TestReporterTableMessage(t *testing.T) {
	var term bytes.Buffer
	r := &Reporter{Term: &term}
	r.Observe(experiment.TableStarted{Dir: t.TempDir()})
	r.Observe(experiment.Message{Text: "cell x: damaged results: x/results.json: unexpected end of JSON input; running the cell again"})
	if n := strings.Count(term.String(), "running the cell again"); n != 1 {
		t.Fatalf("printed %d times:\n%s", n, term.String())
	}
}

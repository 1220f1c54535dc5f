package experiment

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drknn/drknn/train"
)

// TestTransferCSVFailedMethod: a method that failed on every task (here the
// anchor, whose training failed and left no training record) is written
// with an empty mean and CI and a status naming the failure, never as NaN
// with status ok, and the missing training record does not stop the file.
func TestTransferCSVFailedMethod(t *testing.T) {
	nan := math.NaN()
	res := &Results{
		Repeats: 2,
		Methods: map[string]MethodResult{
			"drknn":     {Mean: 0.9, CI95: 0.01, PerRepeat: []float64{0.89, 0.91}},
			"proto_net": {Mean: nan, CI95: nan, PerRepeat: []float64{nan, nan}, Error: "task 1: training failed", Failed: []int{1, 2}},
		},
		Transfer: &TransferInfo{Training: map[string]*TrainingRecord{
			train.ObjectiveDrKNN: {Objective: train.ObjectiveDrKNN, Steps: 10, Seconds: 3, CPUSeconds: 5},
		}},
	}
	dir := t.TempDir()
	outs := []TransferOutcome{{Cell: TransferCell{"omniglot", 5, 1}, Results: res}}
	if err := writeTransferTable(TableOptions{OutDir: dir}, outs, time.Second); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "transfer.csv"))
	if err != nil {
		t.Fatal(err)
	}
	csv := string(b)
	if strings.Contains(csv, "NaN") {
		t.Errorf("transfer.csv has NaN:\n%s", csv)
	}
	if !strings.Contains(csv, "omniglot,5,1,proto_net,,,2,,,failed on 2 of 2 tasks: task 1: training failed") {
		t.Errorf("failed anchor row missing:\n%s", csv)
	}
	if !strings.Contains(csv, "omniglot,5,1,drknn,0.9000,0.0100,2,3.0,5.0,ok") {
		t.Errorf("drknn row missing:\n%s", csv)
	}
}

package experiment

import (
	"testing"

	"github.com/drknn/drknn/datasets"
)

// The "channel" statistics come from the training samples alone: the
// query rows are mapped with the training mean and deviation.
func TestStandardizeUsesTrainingStatisticsOnly(t *testing.T) {
	trainSet := &datasets.Dataset{Shape: []int{2}, X: []float32{1, 10, 3, 30}, Labels: []int{0, 1}}
	querySet := &datasets.Dataset{Shape: []int{2}, X: []float32{2, 40, 100, 0}, Labels: []int{0, 1}}
	rec, err := standardize("channel", trainSet, querySet)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Mode != "channel" || len(rec.Mean) != 2 || rec.Mean[0] != 2 || rec.Mean[1] != 20 || rec.SD[0] != 1 || rec.SD[1] != 10 {
		t.Fatalf("record %+v, want mode channel, mean [2 20], sd [1 10]", rec)
	}
	// Training means 2, 20 and deviations 1, 10.
	want := []float32{0, 2, 98, -2}
	for i, w := range want {
		if querySet.X[i] != w {
			t.Fatalf("queries %v, want %v", querySet.X, want)
		}
	}
	if trainSet.X[0] != -1 || trainSet.X[3] != 1 {
		t.Fatalf("training rows %v, want [-1 -1 1 1]", trainSet.X)
	}
	q := &datasets.Dataset{Shape: []int{2}, X: []float32{2, 4}, Labels: []int{0}}
	tr := &datasets.Dataset{Shape: []int{2}, X: []float32{0, 0}, Labels: []int{0}}
	if rec, err := standardize("sample", tr, q); err != nil || q.X[0] != -1 || q.X[1] != 1 || rec.Mode != "sample" || rec.Mean != nil {
		t.Fatalf("sample: %v %+v %v", q.X, rec, err)
	}
	if rec, err := standardize("none", tr, q); err != nil || rec != nil || q.X[0] != -1 {
		t.Fatalf("none: %+v %v %v", rec, q.X, err)
	}
	if _, err := standardize("global", tr, q); err == nil {
		t.Fatal("accepted an unknown mode")
	}
}

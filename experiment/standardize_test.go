package experiment

import (
	"math"
	"testing"

	"github.com/drknn/drknn/datasets"
)

// The "channel" statistics come from the training samples alone: the
// query rows are mapped with the training mean and deviation.
func TestStandardizeUsesTrainingStatisticsOnly(t *testing.T) {
	trainSet := &datasets.Dataset{Shape: []int{2}, X: []float32{1, 10, 3, 30}, Labels: []int{0, 1}}
	querySet := &datasets.Dataset{Shape: []int{2}, X: []float32{2, 40, 100, 0}, Labels: []int{0, 1}}
	rec, err := standardize("channel", trainSet, querySet, trainSet.Labels, 2)
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
	if rec, err := standardize("sample", tr, q, tr.Labels, 1); err != nil || q.X[0] != -1 || q.X[1] != 1 || rec.Mode != "sample" || rec.Mean != nil {
		t.Fatalf("sample: %v %+v %v", q.X, rec, err)
	}
	if rec, err := standardize("none", tr, q, tr.Labels, 1); err != nil || rec != nil || q.X[0] != -1 {
		t.Fatalf("none: %+v %v %v", rec, q.X, err)
	}
	if _, err := standardize("global", tr, q, tr.Labels, 1); err == nil {
		t.Fatal("accepted an unknown mode")
	}
}

// "relevance" weighs each feature by √η² over the training rows and
// their labels, hand-worked: feature 0 separates the classes exactly
// (η² = 1), feature 1 has equal class means (0), feature 2 has between-class
// sum of squares 4 of a total 8 (η² = 1/2), feature 3 is constant (0). The
// queries get the training weights.
func TestStandardizeRelevanceHandWorked(t *testing.T) {
	trainSet := &datasets.Dataset{Shape: []int{4}, X: []float32{
		0, 1, 0, 5,
		0, 3, 2, 5,
		1, 1, 2, 5,
		1, 3, 4, 5}, Labels: []int{0, 0, 1, 1}}
	querySet := &datasets.Dataset{Shape: []int{4}, X: []float32{2, 2, 2, 2}, Labels: []int{0}}
	rec, err := standardize("relevance", trainSet, querySet, trainSet.Labels, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0, math.Sqrt(0.5), 0}
	if rec.Mode != "relevance" || len(rec.Weight) != 4 {
		t.Fatalf("record %+v, want mode relevance and 4 weights", rec)
	}
	for j, w := range want {
		if math.Abs(rec.Weight[j]-w) > 1e-12 {
			t.Fatalf("weights %v, want %v", rec.Weight, want)
		}
		if q := float64(querySet.X[j]); math.Abs(q-2*w) > 1e-6 {
			t.Fatalf("query %v, want 2 × %v", querySet.X, want)
		}
	}
	if trainSet.X[8] != 1 || trainSet.X[9] != 0 || trainSet.X[11] != 0 || math.Abs(float64(trainSet.X[10])-2*math.Sqrt(0.5)) > 1e-6 {
		t.Fatalf("training row 2 %v, want [1 0 1.414 0]", trainSet.X[8:12])
	}
	bad := &datasets.Dataset{Shape: []int{1}, X: []float32{0, 1}, Labels: []int{0, 2}}
	if _, err := standardize("relevance", bad, querySet, bad.Labels, 2); err == nil {
		t.Fatal("accepted label 2 of 2 classes")
	}
}

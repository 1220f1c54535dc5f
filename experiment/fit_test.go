package experiment

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drknn/drknn/internal/fixtures"
	"github.com/drknn/drknn/predict"
)

// fitConfig is a small protocol fit config for your own data at data_dir.
func fitConfig(t *testing.T, dataset, dir string, sets ...string) Config {
	t.Helper()
	src := "dataset: " + dataset + "\ndata_dir: " + dir + "\nprotocol: fit\nseed: 3\n" +
		"model: {channels: 4, hidden: 16, dim: 16}\ntrain: {steps: 15, minisets: 4, lr: 0.02}\neval: {k: 3}\n"
	return mustParseConfig(t, "fit.yaml", src, sets...)
}

// fixtureCSV writes fixtures.CSV's table (12 rows per class, seed 6;
// label column "kind", some cells missing) to a temporary t.csv and
// returns its path.
func fixtureCSV(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.csv")
	if _, _, err := fixtures.CSV(path, 12, 6); err != nil {
		t.Fatal(err)
	}
	return path
}

// Protocol fit on a split image folder trains on train/ only, scores
// test/ (accuracy above chance, log-loss and ECE), and exports a model
// that predict.Load reads back with the same test accuracy.
func TestFitOnSplitImageFolder(t *testing.T) {
	data, out := t.TempDir(), t.TempDir()
	if _, _, err := fixtures.ImageFolder(data, 8, 5, 4); err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), fitConfig(t, "imagefolder", data), Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fit
	if f == nil || res.Protocol != ProtocolFit || f.Train != 24 || f.Test != 15 || f.Evaluation != "test" || res.Config.Ways != 3 {
		t.Fatalf("fit summary %+v (protocol %q, ways %d)", f, res.Protocol, res.Config.Ways)
	}
	s := f.Scores["drknn"]
	if s.Accuracy < 0.6 || !(s.LogLoss > 0) || !(s.ECE >= 0 && s.ECE <= 1) {
		t.Fatalf("test scores %+v", s)
	}
	if res.Methods["drknn"].Mean != s.Accuracy || len(res.Methods) != 2 {
		t.Fatalf("methods %+v", res.Methods)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil || !strings.Contains(string(b), `"protocol": "fit"`) {
		t.Fatalf("results.json: %v", err)
	}
	e, err := predict.Load(filepath.Join(out, "export"))
	if err != nil {
		t.Fatal(err)
	}
	if e.N != 24 || strings.Join(e.Classes(), ",") != strings.Join(fixtures.Classes, ",") || e.Settings.Input == nil || e.Settings.Input.Kind != predict.InputImages {
		t.Fatalf("export: n %d classes %v input %+v", e.N, e.Classes(), e.Settings.Input)
	}
	q, nq, yq, err := e.Queries()
	if err != nil || nq != 15 {
		t.Fatalf("queries: %v %d", err, nq)
	}
	preds, err := e.Classify(q, nq, nil, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for i, p := range preds {
		if p.Class == yq[i] {
			correct++
		}
	}
	if acc := float64(correct) / float64(nq); acc != s.Accuracy {
		t.Fatalf("exported model's test accuracy %v, the run's %v", acc, s.Accuracy)
	}
}

// Without a test part, protocol fit estimates accuracy by stratified
// k-fold cross-validation, the same whatever the worker count; on a CSV
// with text labels in a middle column and missing cells (mean fill from
// each fold's training rows) the MLP is chosen and the export records the
// feature columns and the fill of the final model.
func TestFitCrossValidatesCSV(t *testing.T) {
	path := fixtureCSV(t)
	var res [2]*Results
	for i, w := range []string{"workers=1", "workers=3"} {
		out := t.TempDir()
		r, err := Run(t.Context(), fitConfig(t, "csv", path, "data.label=kind", "data.missing=mean", "train.cv_folds=3", w), Options{OutDir: out})
		if err != nil {
			t.Fatal(err)
		}
		res[i] = r
		if i == 0 {
			var man struct {
				Input   predict.Input
				Episode struct{ Impute predict.Impute }
			}
			b, _ := os.ReadFile(filepath.Join(out, "export", "manifest.json"))
			if err := json.Unmarshal(b, &man); err != nil || strings.Join(man.Input.Features, ",") != "length,width,depth,mass" || len(man.Episode.Impute.Values) != 4 {
				t.Fatalf("manifest input %+v impute %+v (%v)", man.Input, man.Episode.Impute, err)
			}
		}
	}
	f := res[0].Fit
	if f.Evaluation != "cv" || f.Folds != 3 || f.Train != 36 || res[0].Config.Model.Kind != "mlp" || len(f.FoldAccuracy["drknn"]) != 3 {
		t.Fatalf("fit summary %+v", f)
	}
	if f.Scores["drknn"].Accuracy < 0.6 {
		t.Fatalf("cross-validated accuracy %+v", f.Scores)
	}
	a, b := res[0].Fit.Scores, res[1].Fit.Scores
	for m := range a {
		if a[m] != b[m] {
			t.Fatalf("%s: %+v with 1 worker, %+v with 3", m, a[m], b[m])
		}
	}
}

// A method that fails on the test part of protocol fit is recorded (no
// scores, results.json error) while the others and the export complete.
func TestFitMethodFailureRecorded(t *testing.T) {
	failHook = func(_ int, m string) error {
		if m == "embedding_knn" {
			return errors.New("broken")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	data, out := t.TempDir(), t.TempDir()
	if _, _, err := fixtures.ImageFolder(data, 8, 5, 4); err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), fitConfig(t, "imagefolder", data, "eval.methods=[drknn,embedding_knn]"), Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Fit.Scores["embedding_knn"]; ok || res.Fit.MethodErrors["embedding_knn"] != "broken" || res.Fit.Scores["drknn"].Accuracy == 0 {
		t.Fatalf("fit summary: %+v", res.Fit)
	}
	if ek := res.Methods["embedding_knn"]; ek.Error != "broken" || !math.IsNaN(ek.Mean) || len(res.Errors) != 1 {
		t.Fatalf("methods %+v, errors %q", res.Methods, res.Errors)
	}
	if _, err := predict.Load(filepath.Join(out, "export")); err != nil {
		t.Fatal(err)
	}
}

// TestFitCVMethodFailureRecorded: a method failing on one cross-validation
// fold is recorded (its error naming the fold, NaN for that fold, the mean
// over the folds it completed, no pooled score, the run's errors) while
// the other methods, results.json and the export complete.
func TestFitCVMethodFailureRecorded(t *testing.T) {
	var calls atomic.Int32
	failHook = func(_ int, m string) error {
		if m == "embedding_knn" && calls.Add(1) == 1 {
			return errors.New("broken")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	path, out := fixtureCSV(t), t.TempDir()
	var units []UnitDone
	res, err := Run(t.Context(), fitConfig(t, "csv", path, "data.label=kind", "data.missing=mean", "train.cv_folds=3",
		"eval.methods=[drknn,embedding_knn]"), Options{OutDir: out, Observer: func(e Event) {
		if u, ok := e.(UnitDone); ok {
			units = append(units, u)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The progress line's evaluation units are settled (it used to stop at
	// "eval 0/2" after cross-validation).
	if len(units) != 2 || units[0].Err != "" || !strings.HasSuffix(units[1].Err, "broken") {
		t.Fatalf("evaluation units %+v", units)
	}
	f := res.Fit
	if _, ok := f.Scores["embedding_knn"]; ok || !strings.HasSuffix(f.MethodErrors["embedding_knn"], "of 3: broken") || f.Scores["drknn"].Accuracy == 0 {
		t.Fatalf("fit summary: %+v", f)
	}
	ek := res.Methods["embedding_knn"]
	if len(ek.Failed) != 1 || len(ek.Completed()) != 2 || math.IsNaN(ek.Mean) || len(res.Errors) != 1 {
		t.Fatalf("embedding_knn %+v, errors %q", ek, res.Errors)
	}
	if dk := res.Methods["drknn"]; dk.Error != "" || len(dk.Completed()) != 3 {
		t.Fatalf("drknn %+v", dk)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := predict.Load(filepath.Join(out, "export")); err != nil {
		t.Fatal(err)
	}
}

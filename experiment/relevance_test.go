package experiment

import (
	"path/filepath"
	"testing"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/predict"
)

// TestLungRelevanceExportReproducesAccuracy runs the shipped Lung Cancer
// config (data.standardize: relevance) on the real file and checks that
// each repeat's export, given the raw query rows, reweights them with the
// recorded relevance weights and classifies them exactly as the run did:
// Dr.k-NN's accuracy from the export equals results.json's. The weights
// must be a real reweighting (some below 1, none outside [0, 1]).
func TestLungRelevanceExportReproducesAccuracy(t *testing.T) {
	dir, err := datadir.Require()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig("../configs/lung-cancer.yaml", []string{"repeats=2", "data_dir=" + filepath.Join(dir, "lung-cancer")})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Data.Standardize != "relevance" {
		t.Fatalf("lung-cancer.yaml standardises with %q, want relevance", cfg.Data.Standardize)
	}
	out := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	size := d.SampleSize()
	for r := range cfg.Repeats {
		e, err := predict.Load(filepath.Join(out, "repeats", []string{"01", "02"}[r], "export"))
		if err != nil {
			t.Fatal(err)
		}
		st := e.Settings.Standardize
		if st == nil || st.Mode != "relevance" || len(st.Weight) != size {
			t.Fatalf("repeat %d: export standardisation %+v, want relevance with %d weights", r+1, st, size)
		}
		below := 0
		for j, w := range st.Weight {
			if !(w >= 0 && w <= 1) {
				t.Fatalf("repeat %d: weight %d = %v", r+1, j, w)
			}
			if w < 0.99 {
				below++
			}
		}
		if below == 0 {
			t.Fatalf("repeat %d: every weight is 1: no reweighting", r+1)
		}
		ep := res.Episodes[r]
		x := make([]float32, 0, len(ep.QueryIndex)*size)
		for _, i := range ep.QueryIndex {
			x = append(x, d.X[i*size:(i+1)*size]...)
		}
		q, err := e.Embed(x, len(ep.QueryIndex))
		if err != nil {
			t.Fatal(err)
		}
		preds, err := e.Classify(q, len(ep.QueryIndex), nil, predict.Options{Method: eval.MethodDrKNN})
		if err != nil {
			t.Fatal(err)
		}
		right := 0
		for j, p := range preds {
			if ep.Classes[p.Class] == d.Labels[ep.QueryIndex[j]] { // local class → data set class
				right++
			}
		}
		if acc, want := float64(right)/float64(len(preds)), res.Methods[eval.MethodDrKNN].PerRepeat[r]; acc != want {
			t.Fatalf("repeat %d: Dr.k-NN from the export on the raw rows %v, the run %v", r+1, acc, want)
		}
	}
}

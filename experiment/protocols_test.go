package experiment

import (
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/npy"
)

// data.label_noise flips support labels only: the episode (its training
// and query samples, the query labels) is the one drawn without noise,
// exactly round(rate·n) training labels change, each to another class, the
// record keeps the truth, and the same seed gives the same flips. Through
// Run the exported training labels are the noisy ones and the exported
// query labels the true ones.
func TestLabelNoiseSupportOnlySeeded(t *testing.T) {
	clean := synthConfig(t, "repeats=3", "ways=3", "shots=10")
	noisy := synthConfig(t, "repeats=3", "ways=3", "shots=10", "data.label_noise=0.3")
	d, err := LoadData(clean)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		a, err := NewEpisode(clean, d, r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewEpisode(noisy, d, r)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.TrainIndex, b.TrainIndex) || !slices.Equal(a.QueryIndex, b.QueryIndex) ||
			!slices.Equal(a.QueryLabels, b.QueryLabels) || !reflect.DeepEqual(a.Train.X, b.Train.X) {
			t.Fatalf("repeat %d: label noise changed the episode's samples or query labels", r)
		}
		if a.LabelNoise != nil || b.LabelNoise == nil || !slices.Equal(b.LabelNoise.TrueLabels, a.TrainLabels) {
			t.Fatalf("repeat %d: noise record %+v, want the clean labels as the truth", r, b.LabelNoise)
		}
		changed := 0
		for i := range a.TrainLabels {
			if a.TrainLabels[i] != b.TrainLabels[i] {
				changed++
				if !slices.Contains(b.LabelNoise.Flipped, i) || b.TrainLabels[i] < 0 || b.TrainLabels[i] >= 3 {
					t.Fatalf("repeat %d: label %d changed to %d but not recorded", r, i, b.TrainLabels[i])
				}
			}
		}
		if changed != 9 || len(b.LabelNoise.Flipped) != 9 { // round(0.3 · 30)
			t.Fatalf("repeat %d: %d labels changed, %d recorded; want 9", r, changed, len(b.LabelNoise.Flipped))
		}
		c, _ := NewEpisode(noisy, d, r)
		if !slices.Equal(c.TrainLabels, b.TrainLabels) {
			t.Fatalf("repeat %d: the same seed flipped other labels", r)
		}
	}

	cfg := synthConfig(t, "repeats=1", "train.steps=2", "queries=30", "data.label_noise=0.3", "eval.methods=[drknn,embedding_knn]")
	dir := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Episodes[0]
	if rec.LabelNoise == nil || len(rec.LabelNoise.Flipped) != 3 {
		t.Fatalf("results.json label noise %+v, want 3 flips of 10", rec.LabelNoise)
	}
	ex := filepath.Join(dir, "repeats", "01", "export")
	yt, err := npy.ReadInt64(filepath.Join(ex, "train_labels.npy"))
	if err != nil {
		t.Fatal(err)
	}
	yq, err := npy.ReadInt64(filepath.Join(ex, "query_labels.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := NewEpisode(synthConfig(t, "queries=30"), mustLoad(t, cfg), 0)
	for i, v := range yt {
		if want := rec.LabelNoise.TrueLabels[i]; slices.Contains(rec.LabelNoise.Flipped, i) == (int(v) == want) {
			t.Fatalf("exported training label %d = %d, truth %d, flipped %v", i, v, want, rec.LabelNoise.Flipped)
		}
	}
	if !slices.Equal(ints(yq), ep.QueryLabels) {
		t.Fatal("exported query labels are not the true ones")
	}
}

func mustLoad(t *testing.T, cfg Config) *datasets.Dataset {
	t.Helper()
	d, err := LoadData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// protocol paper-lung: the training rows are the episode's, the queries
// are `queries` draws with replacement from all 32 rows of the 3 classes —
// training rows among them — with labels that match the rows, the same for
// the same seed.
func TestPaperLungQueries(t *testing.T) {
	cfg := Default()
	cfg.Dataset, cfg.Ways, cfg.Shots, cfg.Queries = "lung-cancer", 3, 8, 1000
	cfg.Model.Kind, cfg.Train.Steps = "identity", 0
	honest := cfg
	cfg.Protocol = ProtocolPaperLung
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d := mustLoad(t, cfg)
	for r := range 2 {
		h, err := NewEpisode(honest, d, r)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewEpisode(cfg, d, r)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h.TrainIndex, p.TrainIndex) || !slices.Equal(h.TrainLabels, p.TrainLabels) {
			t.Fatal("paper-lung changed the training rows")
		}
		if len(h.QueryIndex) != 8 || len(p.QueryIndex) != 1000 || p.Short || p.Query.Len() != 1000 {
			t.Fatalf("queries: honest %d, paper-lung %d (short %v); want 8 and 1000", len(h.QueryIndex), len(p.QueryIndex), p.Short)
		}
		seen := map[int]bool{}
		train := 0
		for j, i := range p.QueryIndex {
			if d.Labels[i] != p.Classes[p.QueryLabels[j]] {
				t.Fatalf("query %d: row %d of class %d labelled %d", j, i, d.Labels[i], p.QueryLabels[j])
			}
			seen[i] = true
			if slices.Contains(p.TrainIndex, i) {
				train++
			}
		}
		if len(seen) != 32 || train < 600 { // 24 of 32 rows are training rows: ≈ 750 of 1,000 draws
			t.Fatalf("%d distinct rows queried (want all 32), %d draws of training rows", len(seen), train)
		}
		again, _ := NewEpisode(cfg, d, r)
		if !slices.Equal(again.QueryIndex, p.QueryIndex) {
			t.Fatal("the same seed drew other queries")
		}
	}
	if _, err := LoadConfig("../configs/synthetic.yaml", []string{"protocol=paper-lung"}); err == nil || !strings.Contains(err.Error(), "protocol") {
		t.Fatalf("paper-lung on synthetic images: %v, want an error naming protocol", err)
	}
}

// eval.theta_loo: drknn_loo is Dr.k-NN at the chosen radius. A one-value
// grid equal to train.theta gives exactly drknn; the grid [0] gives the
// vote with P̂ (mass 1/n_m on class m), recomputed here from the export.
func TestDrKNNLOO(t *testing.T) {
	base := []string{"repeats=2", "train.steps=3", "queries=40", "eval.methods=[drknn,drknn_loo,embedding_knn]"}
	res, err := Run(t.Context(), synthConfig(t, append(base, "eval.theta_loo=[0.1]")...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Methods[MethodDrKNNLOO].PerRepeat, res.Methods[eval.MethodDrKNN].PerRepeat) {
		t.Fatalf("drknn_loo at ϑ = train.theta %v, drknn %v", res.Methods[MethodDrKNNLOO].PerRepeat, res.Methods[eval.MethodDrKNN].PerRepeat)
	}
	dir := t.TempDir()
	res, err = Run(t.Context(), synthConfig(t, append(base, "eval.theta_loo=[0]")...), Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for r, rec := range res.Episodes {
		if rec.ThetaLOO == nil || rec.ThetaLOO.Theta != 0 || rec.ThetaLOO.Counted != 10 || len(rec.ThetaLOO.Correct) != 1 {
			t.Fatalf("repeat %d: record %+v", r+1, rec.ThetaLOO)
		}
		ex := filepath.Join(dir, "repeats", []string{"01", "02"}[r], "export")
		et, n, dim, _ := npy.ReadMatrix(filepath.Join(ex, "train_embeddings.npy"), true)
		eq, nq, _, _ := npy.ReadMatrix(filepath.Join(ex, "query_embeddings.npy"), true)
		yt, _ := npy.ReadInt64(filepath.Join(ex, "train_labels.npy"))
		yq, _ := npy.ReadInt64(filepath.Join(ex, "query_labels.npy"))
		hat := make([]float64, 2*n)
		for i, l := range yt {
			hat[int(l)*n+i] = 1.0 / 5
		}
		acc, _, err := eval.Evaluate(&eval.DrKNN{K: 5, P: hat}, et, n, dim, ints(yt), 2, eq, nq, ints(yq))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Methods[MethodDrKNNLOO].PerRepeat[r]; got != acc {
			t.Fatalf("repeat %d: drknn_loo at ϑ = 0 %v, the P̂ vote %v", r+1, got, acc)
		}
	}
	for _, c := range []struct{ set, want string }{
		{"eval.methods=[drknn_loo]", "eval.theta_loo"},
		{"eval.theta_loo=[-1]", "eval.theta_loo"},
	} {
		_, err := LoadConfig("../configs/synthetic.yaml", []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.set, err, c.want)
		}
	}
	// Without theta_loo the default method list leaves drknn_loo out.
	plain := synthConfig(t)
	if slices.Contains(plain.methods(), MethodDrKNNLOO) {
		t.Fatal("drknn_loo in the default methods without eval.theta_loo")
	}
}

// model.kind identity: no training, the exported embeddings are the raw
// rows, embedding + k-NN is k-NN on the raw attributes, and train.steps
// changes nothing.
func TestIdentityEmbedding(t *testing.T) {
	cfg := Default()
	cfg.Dataset, cfg.Ways, cfg.Shots, cfg.Queries, cfg.Repeats = "lung-cancer", 3, 5, 1000, 2
	cfg.Model.Kind, cfg.Train.Steps = "identity", 0
	cfg.Eval.Methods = []string{"drknn", "embedding_knn", "proto_net", "metaoptnet"}
	dir := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	d := mustLoad(t, cfg)
	for r, rec := range res.Episodes {
		ex := filepath.Join(dir, "repeats", []string{"01", "02"}[r], "export")
		et, n, dim, err := npy.ReadMatrix(filepath.Join(ex, "train_embeddings.npy"), true)
		if err != nil || n != 15 || dim != 56 {
			t.Fatalf("embeddings %d×%d, %v; want 15×56", n, dim, err)
		}
		for j, i := range rec.TrainIndex {
			for f, v := range d.Sample(i) {
				if et[j*dim+f] != float64(v) {
					t.Fatalf("training row %d attribute %d: embedding %v, raw %v", j, f, et[j*dim+f], v)
				}
			}
		}
		tr, qu := d.Subset(rec.TrainIndex), d.Subset(rec.QueryIndex)
		ep, _ := NewEpisode(cfg, d, r)
		acc, _, err := eval.Evaluate(&eval.KNN{K: 5}, tr.Float64(), n, dim, ep.TrainLabels, 3, qu.Float64(), qu.Len(), ep.QueryLabels)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Methods[eval.MethodEmbeddingKNN].PerRepeat[r]; got != acc || math.IsNaN(res.Methods["proto_net"].PerRepeat[r]) {
			t.Fatalf("repeat %d: embedding_knn %v, raw 5-NN %v", r+1, got, acc)
		}
	}
	// train.steps (e.g. the table's quick mode) changes nothing: there is
	// nothing to train, for Dr.k-NN or the network baselines' bodies.
	cfg.Train.Steps = 5
	again, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cfg.Eval.Methods {
		if !slices.Equal(again.Methods[m].PerRepeat, res.Methods[m].PerRepeat) {
			t.Fatalf("%s with train.steps = 5: %v, with 0: %v", m, again.Methods[m].PerRepeat, res.Methods[m].PerRepeat)
		}
	}
}

// data.features histogram: covid-ct only, 64 values per image.
func TestHistogramFeaturesConfig(t *testing.T) {
	cfg := Default()
	cfg.Dataset, cfg.Data.Features, cfg.Model.Kind, cfg.Train.Steps = "covid-ct", "histogram", "identity", 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig("../configs/synthetic.yaml", []string{"data.features=histogram"}); err == nil || !strings.Contains(err.Error(), "data.features") {
		t.Fatalf("histogram features on synthetic images: %v", err)
	}
	bad := cfg
	bad.Data.Features = "hog"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "data.features") {
		t.Fatalf("unknown features: %v", err)
	}
}

package main

import (
	"encoding/csv"
	"fmt"
	"image"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/fixtures"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
)

// readCSV parses drknn-predict's CSV: the header, then each input's
// predicted class and probabilities by input.
func readCSV(t *testing.T, out string) (header []string, pred map[string]string, proba map[string][]float64) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	check(t, err)
	pred, proba = map[string]string{}, map[string][]float64{}
	for _, r := range recs[1:] {
		pred[r[0]] = r[1]
		for _, v := range r[2:] {
			p, err := strconv.ParseFloat(v, 64)
			check(t, err)
			proba[r[0]] = append(proba[r[0]], p)
		}
	}
	return recs[0], pred, proba
}

// mnistEmbedding writes the embedding export of an untrained Conv-4 for
// 16×16 grey images of a built-in data set (mnist: no inversion by
// default) and returns its folder.
func mnistEmbedding(t *testing.T) string {
	t.Helper()
	net, err := model.New(model.Config{Kind: model.Conv4, InShape: []int{1, 16, 16}, Channels: 4, DType: model.Float64}.WithDefaults(), 3)
	check(t, err)
	e, err := predict.NewEmbedding(net, predict.EmbeddingSettings{K: 3, Theta: []float64{0.1}, ThetaRelative: true, Metric: "euclidean",
		Epsilon: 0.01, Tol: 1e-3, Dataset: "mnist", Input: &predict.Input{Kind: predict.InputImages, Reader: "mnist", Shape: []int{1, 16, 16}}})
	check(t, err)
	dir := t.TempDir()
	check(t, predict.WriteEmbedding(dir, e, predict.EmbeddingManifest{}))
	return dir
}

// invertTree writes a copy of every PNG under src to dst with inverted
// grey levels (255 − v: white background).
func invertTree(t *testing.T, src, dst string) {
	t.Helper()
	check(t, filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		f, err := os.Open(p)
		check(t, err)
		img, _, err := image.Decode(f)
		f.Close()
		check(t, err)
		g := img.(*image.Gray)
		inv := image.NewGray(g.Bounds())
		for i, v := range g.Pix {
			inv.Pix[i] = 255 - v
		}
		b, err := fixtures.Encode(inv, false)
		check(t, err)
		check(t, os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755))
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// -invert prepares the support images as it prepares the queries: white-
// background copies of a task with -invert=true are classified as the
// originals without it (same classes, probabilities within float32
// rounding of the inversion). The old code inverted the queries only.
// A support set fitted with one polarity refuses queries of the other
// (Go API).
func TestSupportInvertedLikeQueries(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	export, task, inv := mnistEmbedding(t), t.TempDir(), t.TempDir()
	writeBlocks(t, filepath.Join(task, "support"), []int{0, 1, 2}, 3, rng)
	writeBlocks(t, filepath.Join(task, "query"), []int{0, 1, 2}, 6, rng)
	invertTree(t, task, inv)
	code, so, se := runCmd("-model", export, "-support", filepath.Join(task, "support"), "-images", filepath.Join(task, "query"))
	if code != 0 || se != "" {
		t.Fatalf("originals: exit %d stderr %q", code, se)
	}
	_, pred, proba := readCSV(t, so)
	code, so, se = runCmd("-model", export, "-support", filepath.Join(inv, "support"), "-images", filepath.Join(inv, "query"), "-invert=true")
	if code != 0 || se != "" {
		t.Fatalf("inverted: exit %d stderr %q", code, se)
	}
	_, ipred, iproba := readCSV(t, so)
	if len(ipred) != 18 || len(pred) != 18 {
		t.Fatalf("%d and %d rows, want 18", len(pred), len(ipred))
	}
	for in, c := range pred {
		iin := strings.Replace(in, task, inv, 1)
		if ipred[iin] != c {
			t.Errorf("%s: %s from the originals, %s from the inverted copies with -invert=true", in, c, ipred[iin])
		}
		for m, p := range proba[in] {
			if math.Abs(p-iproba[iin][m]) > 1e-4 {
				t.Errorf("%s: probability %d %v, inverted copies %v", in, m, p, iproba[iin][m])
			}
		}
	}
	e, err := predict.LoadEmbedding(export)
	check(t, err)
	yes, no := true, false
	m, err := e.FitFolder(filepath.Join(inv, "support"), predict.SupportOptions{Invert: &yes})
	check(t, err)
	if _, err := m.PredictFiles(predict.Inputs{Images: []string{filepath.Join(inv, "query")}, Invert: &no}, predict.Options{}); err == nil ||
		!strings.Contains(err.Error(), "support images were prepared with -invert=true") {
		t.Fatalf("queries of the other polarity: %v", err)
	}
	preds, err := m.PredictFiles(predict.Inputs{Images: []string{filepath.Join(inv, "query")}}, predict.Options{})
	check(t, err)
	for _, p := range preds {
		if p.Name != pred[strings.Replace(p.Input, inv, task, 1)] {
			t.Fatalf("Go API, queries without Invert after a support set with it: %s is %s", p.Input, p.Name)
		}
	}
}

// -support lists a class folder's files by the image-folder reader's rule,
// as -images does: a notes.txt, hidden files and a non-image file without
// extension are skipped, images in a nested folder belong to the class;
// the result is the clean folder's. A class folder holding no image is
// refused in one line naming it.
func TestSupportSkipsNonImagesAsReader(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	export, clean, queries := mnistEmbedding(t), t.TempDir(), t.TempDir()
	writeBlocks(t, clean, []int{0, 1}, 3, rng)
	writeBlocks(t, queries, []int{0, 1}, 4, rng)
	messy := t.TempDir()
	check(t, os.CopyFS(messy, os.DirFS(clean)))
	// a nested folder: its image moves there, in the reader's order
	check(t, os.MkdirAll(filepath.Join(messy, "place1", "more"), 0o755))
	check(t, os.Rename(filepath.Join(messy, "place1", "02.png"), filepath.Join(messy, "place1", "more", "02.png")))
	check(t, os.Rename(filepath.Join(clean, "place1", "02.png"), filepath.Join(clean, "place1", "zz.png")))
	for name, data := range map[string]string{
		"place0/notes.txt": "taken on a Tuesday", "place1/README": "no extension, not an image",
		"place0/.DS_Store": "x", "place1/._01.png": "AppleDouble", "loose.txt": "beside the class folders",
	} {
		check(t, os.WriteFile(filepath.Join(messy, name), []byte(data), 0o644))
	}
	args := func(support string) []string {
		return []string{"-model", export, "-support", support, "-images", queries}
	}
	code, want, se := runCmd(args(clean)...)
	if code != 0 || se != "" {
		t.Fatalf("clean support: exit %d stderr %q", code, se)
	}
	code, got, se := runCmd(args(messy)...)
	if code != 0 || se != "" {
		t.Fatalf("support with non-image files: exit %d stderr %q", code, se)
	}
	if got != want {
		t.Fatalf("support with non-image files:\n%s\nclean:\n%s", got, want)
	}
	// A class folder whose files are all skipped holds no image.
	check(t, os.RemoveAll(filepath.Join(messy, "place0")))
	check(t, os.MkdirAll(filepath.Join(messy, "place0"), 0o755))
	check(t, os.WriteFile(filepath.Join(messy, "place0", "notes.txt"), []byte("x"), 0o644))
	code, so, se := runCmd(args(messy)...)
	if code != 2 || so != "" || !strings.Contains(se, filepath.Join(messy, "place0")+" holds no image files") || strings.Count(se, "\n") != 1 {
		t.Fatalf("class folder without images: exit %d stdout %q stderr %q", code, so, se)
	}
}

// With -classes set to a transfer run's drawn class order (results.json
// episodes[t].class_names), drknn-predict on the task's own support and
// query images gives the run's embedding_knn predictions query for query
// (recomputed here as the run computes them: eval's k-NN on the exported
// network's embeddings, labels in drawn order) and its accuracy; without
// it the folders are sorted and majority ties go elsewhere on some
// queries. Wrong -classes lists are refused in one line.
func TestSupportClassOrderReproducesRun(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	data, run := t.TempDir(), t.TempDir()
	writeBlocks(t, data, []int{0, 1, 2, 3, 4, 5}, 10, rng) // place3…5 novel
	cfg, err := experiment.ParseConfig("transfer.yaml", []byte(`
protocol: transfer
dataset: imagefolder
data_dir: `+data+`
ways: 3
shots: 3
queries: 4
repeats: 6
seed: 2
data: {base_classes: [place0, place1, place2], val_fraction: 0.25}
model: {kind: conv4, channels: 4, dim: 0, dtype: float32}
train: {steps: 4, lr: 0.005, minisets: 2, theta: [0.5]}
transfer: {ways: 3, shots: 3, queries: 4, validate_every: 2, val_tasks: 2, val_ways: 2, theta: [0.1]}
eval: {k: 3, methods: [drknn, embedding_knn]}
`), nil)
	check(t, err)
	res, err := experiment.Run(t.Context(), cfg, experiment.Options{OutDir: run})
	check(t, err)
	d, err := experiment.LoadTransferData(cfg)
	check(t, err)
	export := filepath.Join(run, "export")
	e, err := predict.LoadEmbedding(export)
	check(t, err)
	s := cfg.EvalSettings()
	s.K = min(s.K, cfg.Shots)
	moved := 0
	for r, ep := range res.Episodes {
		// The task's files, named so that the reader's order is the run's.
		task := t.TempDir()
		copyTo := func(part string, idx []int) (names []string, labels []int) {
			for _, i := range idx {
				c := slices.Index(ep.Classes, d.Labels[i])
				name := filepath.Join(task, part, ep.ClassNames[c], fmt.Sprintf("%04d.png", i))
				b, err := os.ReadFile(filepath.Join(data, d.Files[i]))
				check(t, err)
				check(t, os.MkdirAll(filepath.Dir(name), 0o755))
				check(t, os.WriteFile(name, b, 0o644))
				names, labels = append(names, name), append(labels, c)
			}
			return names, labels
		}
		_, ys := copyTo("support", ep.TrainIndex)
		qnames, yq := copyTo("query", ep.QueryIndex)
		// The run's predictions.
		embed := func(idx []int) []float64 {
			x, err := e.Net().Embed(d.Subset(idx).X, len(idx))
			check(t, err)
			return x
		}
		c, err := eval.New(eval.MethodEmbeddingKNN, s, nil)
		check(t, err)
		check(t, c.Fit(embed(ep.TrainIndex), len(ep.TrainIndex), e.Net().Dim(), ys, len(ep.Classes)))
		runPred, err := c.Predict(embed(ep.QueryIndex), len(ep.QueryIndex))
		check(t, err)
		correct := 0
		for j, p := range runPred {
			if p == yq[j] {
				correct++
			}
		}
		if acc := float64(correct) / float64(len(yq)); acc != res.Methods[eval.MethodEmbeddingKNN].PerRepeat[r] {
			t.Fatalf("task %d: recomputed embedding_knn accuracy %v, the run's %v", r, acc, res.Methods[eval.MethodEmbeddingKNN].PerRepeat[r])
		}
		args := []string{"-model", export, "-support", filepath.Join(task, "support"), "-images", filepath.Join(task, "query"), "-method", "embedding_knn"}
		code, so, se := runCmd(append(args, "-classes", strings.Join(ep.ClassNames, ","))...)
		if code != 0 || se != "" {
			t.Fatalf("task %d -classes: exit %d stderr %q", r, code, se)
		}
		header, pred, _ := readCSV(t, so)
		if !slices.Equal(header[2:], ep.ClassNames) {
			t.Fatalf("task %d: columns %v, drawn order %v", r, header[2:], ep.ClassNames)
		}
		for j, q := range qnames {
			if pred[q] != ep.ClassNames[runPred[j]] {
				t.Errorf("task %d query %s: drknn-predict -classes %s, the run %s", r, q, pred[q], ep.ClassNames[runPred[j]])
			}
		}
		_, so, _ = runCmd(args...)
		_, sorted, _ := readCSV(t, so)
		for j, q := range qnames {
			if sorted[q] != ep.ClassNames[runPred[j]] {
				moved++
			}
		}
		if r == 0 {
			sup := filepath.Join(task, "support")
			for _, bad := range []string{ep.ClassNames[0] + "," + ep.ClassNames[1], strings.Join(append(ep.ClassNames, "place9"), ","),
				strings.Join(append(ep.ClassNames[:2:2], ep.ClassNames[0]), ",")} {
				code, so, se := runCmd("-model", export, "-support", sup, "-images", filepath.Join(task, "query"), "-classes", bad)
				if code != 2 || so != "" || !strings.Contains(se, "class order") || strings.Count(se, "\n") != 1 {
					t.Errorf("-classes %s: exit %d stdout %q stderr %q", bad, code, so, se)
				}
			}
		}
	}
	if moved == 0 {
		t.Fatalf("sorted class folders give the run's predictions on every query: the tasks have no order-dependent tie, the test proves nothing")
	}
	t.Logf("%d queries predicted otherwise with the folders sorted", moved)
}

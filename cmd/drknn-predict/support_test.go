package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/fixtures"
	"github.com/drknn/drknn/predict"
)

// blockImage is a 16×16 grey image of class c: a bright 5×5 block at one
// of six places (moved by up to ±1 pixel) over a dark noisy background.
func blockImage(c int, rng *rand.Rand) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	x0, y0 := 1+5*(c%3)+rng.Intn(3)-1, 2+7*(c/3)+rng.Intn(3)-1
	for y := 0; y < 16; y++ {
		for x := 0; x < 16; x++ {
			v := 20 + rng.Intn(40)
			if x >= x0 && x < x0+5 && y >= y0 && y < y0+5 {
				v = 190 + rng.Intn(60)
			}
			img.SetGray(x, y, color.Gray{Y: uint8(max(v, 0))})
		}
	}
	return img
}

// writeBlocks writes n PNG images of each class c in classes to
// dir/<name c>/ and returns the files in natural order with their classes.
func writeBlocks(t *testing.T, dir string, classes []int, n int, rng *rand.Rand) (files []string, labels []int) {
	t.Helper()
	for _, c := range classes {
		folder := filepath.Join(dir, fmt.Sprintf("place%d", c))
		check(t, os.MkdirAll(folder, 0o755))
		for i := 0; i < n; i++ {
			b, err := fixtures.Encode(blockImage(c, rng), false)
			check(t, err)
			path := filepath.Join(folder, fmt.Sprintf("%02d.png", i))
			check(t, os.WriteFile(path, b, 0o644))
			files, labels = append(files, path), append(labels, c)
		}
	}
	return files, labels
}

// End to end, the transfer road: a Conv-4 embedding is trained on four
// base classes of an image folder (protocol transfer; its two other
// classes are novel), then drknn-predict -model RUN/export -support DIR
// classifies new images of the two classes that training never saw, from
// a support folder of three new images each. The CSV
// names the support folder's classes, every row's probabilities sum to 1,
// the predictions beat chance (1/2) by far, and they are the Go API's
// (LoadEmbedding, FitFolder, PredictFiles) row for row.
func TestSupportFolderNewClasses(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	data, run, support, queries := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeBlocks(t, data, []int{0, 1, 2, 3, 4, 5}, 12, rng) // place4, place5: novel
	cfg, err := experiment.ParseConfig("transfer.yaml", []byte(`
protocol: transfer
dataset: imagefolder
data_dir: `+data+`
ways: 2
shots: 2
queries: 4
repeats: 4
seed: 5
data: {base_classes: [place0, place1, place2, place3], val_fraction: 0.25}
model: {kind: conv4, channels: 8, dim: 0, dtype: float32}
train: {steps: 15, lr: 0.005, minisets: 2, theta: [0.5]}
transfer: {ways: 3, shots: 3, queries: 2, validate_every: 5, val_tasks: 4, val_ways: 2, theta: [0.1]}
eval: {k: 3, methods: [drknn, nearest_centroid]}
`), nil)
	check(t, err)
	if _, err := experiment.Run(t.Context(), cfg, experiment.Options{OutDir: run}); err != nil {
		t.Fatal(err)
	}
	writeBlocks(t, support, []int{4, 5}, 3, rng)
	files, labels := writeBlocks(t, queries, []int{4, 5}, 10, rng)
	export := filepath.Join(run, "export")

	code, so, se := runCmd("-model", export, "-support", support, "-images", queries)
	if code != 0 || se != "" {
		t.Fatalf("exit %d stderr %q", code, se)
	}
	recs, err := csv.NewReader(strings.NewReader(so)).ReadAll()
	check(t, err)
	if strings.Join(recs[0], ",") != "input,predicted,place4,place5" || len(recs) != len(files)+1 {
		t.Fatalf("header %q, %d rows for %d images", recs[0], len(recs)-1, len(files))
	}
	correct := 0
	for i, r := range recs[1:] {
		if r[0] != files[i] {
			t.Fatalf("row %d is %q, want %s", i, r[0], files[i])
		}
		sum := 0.0
		for _, v := range r[2:] {
			p, err := strconv.ParseFloat(v, 64)
			check(t, err)
			if p < 0 || p > 1 {
				t.Fatalf("row %q: probability %v", r, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("row %q: probabilities sum to %v", r, sum)
		}
		if r[1] == fmt.Sprintf("place%d", labels[i]) {
			correct++
		}
	}
	if acc := float64(correct) / float64(len(files)); acc < 0.8 {
		t.Fatalf("accuracy %.2f on two new classes from 3 supports each (chance 0.5):\n%s", acc, so)
	}

	// The Go API gives the same rows.
	e, err := predict.LoadEmbedding(export)
	check(t, err)
	m, err := e.FitFolder(support, predict.SupportOptions{})
	check(t, err)
	if !slices.Equal(m.Classes(), []string{"place4", "place5"}) {
		t.Fatalf("classes %v", m.Classes())
	}
	preds, err := m.PredictFiles(predict.Inputs{Images: []string{queries}}, predict.Options{})
	check(t, err)
	var buf bytes.Buffer
	check(t, predict.Write(&buf, preds, m.Classes(), predict.CSV))
	if buf.String() != so {
		t.Fatalf("drknn-predict -support wrote\n%s\nthe Go API\n%s", so, buf.String())
	}

	// A support folder with one class is refused (exit 2, one line).
	check(t, os.RemoveAll(filepath.Join(support, "place5")))
	if code, so, se := runCmd("-model", export, "-support", support, "-images", queries); code != 2 || so != "" || !strings.Contains(se, "at least 2") {
		t.Fatalf("one-class support: exit %d stdout %q stderr %q", code, so, se)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/fixtures"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/predict"
)

type export struct {
	dir    string
	net    *model.Net
	emb    []float64
	labels []int
	p      []float64
	n, d   int
}

const ways = 2

// newExport writes an export folder for a network of cfg with n training
// embeddings of random inputs and their real LFD weights.
func newExport(t *testing.T, cfg model.Config, dataset string, n int) *export {
	t.Helper()
	dir := t.TempDir()
	net, err := model.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(4))
	in := net.Config().InSize()
	x := make([]float32, n*in)
	labels := make([]int, n)
	y64 := make([]int64, n)
	for i := 0; i < n; i++ {
		labels[i], y64[i] = i%ways, int64(i%ways)
		for j := 0; j < in; j++ {
			x[i*in+j] = float32(0.5*float64(labels[i])*float64(j%2) + 0.3*rng.Float64())
		}
	}
	emb, err := net.Embed(x, n)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dim()
	med, err := eval.MedianDistance(emb, n, d)
	if err != nil {
		t.Fatal(err)
	}
	res, err := optlayer.Solve(&optlayer.Problem{N: n, Features: emb, Dim: d, Labels: labels,
		Theta: []float64{0.1 * med}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := predict.NewModel(net, emb, n, d, labels, res.P, []string{"zero", "one"}, predict.Settings{K: 3, Tau: 0.9, Dataset: dataset})
	check(t, err)
	rec, err := predict.Record(map[string]any{"Dataset": dataset, "Eval": map[string]any{"K": 3, "Tau": 0.9}})
	check(t, err)
	check(t, predict.WriteExport(dir, m, predict.Manifest{Config: rec}, nil, 0, nil))
	return &export{dir: dir, net: net, emb: emb, labels: labels, p: res.P, n: n, d: d}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func runCmd(args ...string) (int, string, string) {
	var so, se bytes.Buffer
	code := cli.Report(&se, "drknn-predict", run(context.Background(), args, &so, &se))
	return code, so.String(), se.String()
}

// want classifies embeddings with eval directly.
func (e *export) want(t *testing.T, method string, k int, q []float64, nq int) ([]int, []float64) {
	t.Helper()
	c, err := eval.New(method, eval.Settings{K: k, Tau: 0.9}, e.p)
	check(t, err)
	check(t, c.Fit(e.emb, e.n, e.d, e.labels, ways))
	pred, err := c.Predict(q, nq)
	check(t, err)
	votes, err := c.Votes(q, nq)
	check(t, err)
	return pred, votes
}

func decodeJSON(t *testing.T, s string) []predict.Prediction {
	t.Helper()
	var out []predict.Prediction
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%v: %q", err, s)
	}
	return out
}

var cnn = model.Config{Kind: model.CNN, InShape: []int{1, 6, 6}, Channels: 2, Dim: 4, DType: model.Float64}

func TestEmbeddings(t *testing.T) {
	e := newExport(t, cnn, "mnist", 10)
	rng := rand.New(rand.NewSource(9))
	const nq = 30
	q := make([]float64, nq*e.d)
	for i := range q {
		q[i] = e.emb[rng.Intn(len(e.emb))] + 0.3*rng.NormFloat64()
	}
	qpath := filepath.Join(t.TempDir(), "q.npy")
	check(t, npy.WriteFloat64(qpath, q, nq, e.d))
	for _, method := range []string{"drknn", "drknn_truncated", "embedding_knn"} {
		for _, k := range []int{0, 1, 4} {
			args := []string{"-export", e.dir, "-embeddings", qpath, "-format", "json", "-method", method}
			kk := 3
			if k > 0 {
				args = append(args, "-k", fmt.Sprint(k))
				kk = k
			}
			code, so, se := runCmd(args...)
			if code != 0 {
				t.Fatal(se)
			}
			got := decodeJSON(t, so)
			pred, votes := e.want(t, method, kk, q, nq)
			if len(got) != nq {
				t.Fatalf("%d predictions", len(got))
			}
			for i, p := range got {
				if p.Class != pred[i] || p.Name != []string{"zero", "one"}[pred[i]] {
					t.Fatalf("%s k=%d query %d: %+v, eval %d", method, kk, i, p, pred[i])
				}
				for m := range p.Votes {
					if p.Votes[m] != votes[i*ways+m] {
						t.Fatalf("%s query %d votes %v, eval %v", method, i, p.Votes, votes[i*ways:(i+1)*ways])
					}
				}
			}
		}
	}
	// The same answers in CSV and text, and into a file.
	out := filepath.Join(t.TempDir(), "pred.csv")
	if code, so, se := runCmd("-export", e.dir, "-embeddings", qpath, "-format", "csv", "-out", out); code != 0 || so != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, so, se)
	}
	b, err := os.ReadFile(out)
	check(t, err)
	pred, _ := e.want(t, "drknn", 3, q, nq)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != nq+1 || lines[0] != "input,predicted,zero,one" {
		t.Fatalf("csv head %q, %d lines", lines[0], len(lines))
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		p0, err0 := strconv.ParseFloat(f[2], 64)
		p1, err1 := strconv.ParseFloat(f[3], 64)
		if f[0] != fmt.Sprintf("%s:%d", qpath, i) || f[1] != []string{"zero", "one"}[pred[i]] || err0 != nil || err1 != nil || math.Abs(p0+p1-1) > 1e-12 {
			t.Fatalf("csv line %q, want class %d and probabilities summing to 1", l, pred[i])
		}
	}
	code, so, _ := runCmd("-model", e.dir, "-embeddings", qpath, "-format", "text")
	if code != 0 || len(strings.Split(strings.TrimSpace(so), "\n")) != nq+1 {
		t.Fatalf("text output %q", so)
	}
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var b bytes.Buffer
	check(t, png.Encode(&b, img))
	check(t, os.WriteFile(path, b.Bytes(), 0o644))
}

func TestImages(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(2))
	var files []string
	for i := 0; i < 5; i++ {
		var img image.Image
		if i%2 == 0 {
			g := image.NewGray(image.Rect(0, 0, 12+i, 9))
			for j := range g.Pix {
				g.Pix[j] = uint8(rng.Intn(256))
			}
			img = g
		} else {
			c := image.NewRGBA(image.Rect(0, 0, 6, 6))
			for y := 0; y < 6; y++ {
				for x := 0; x < 6; x++ {
					c.Set(x, y, color.RGBA{uint8(rng.Intn(256)), uint8(rng.Intn(256)), uint8(rng.Intn(256)), 255})
				}
			}
			img = c
		}
		p := filepath.Join(dir, fmt.Sprintf("img%d.png", i))
		writePNG(t, p, img)
		files = append(files, p)
	}
	for _, tc := range []struct {
		cfg     model.Config
		dataset string
		invert  []string
		inv     bool
	}{
		{cnn, "mnist", nil, false},
		{cnn, "omniglot", nil, true},
		{cnn, "omniglot", []string{"-invert=false"}, false},
		{model.Config{Kind: model.CNN, InShape: []int{3, 5, 7}, Channels: 2, Dim: 4, DType: model.Float32}, "cifar10", nil, false},
	} {
		e := newExport(t, tc.cfg, tc.dataset, 8)
		c := tc.cfg.InShape
		s := predict.ImageSettings{Channels: c[0], Height: c[1], Width: c[2], Invert: tc.inv}
		var x []float32
		for _, f := range files {
			data, err := os.ReadFile(f)
			check(t, err)
			v, err := predict.Image(data, s)
			check(t, err)
			x = append(x, v...)
		}
		q, err := e.net.Embed(x, len(files))
		check(t, err)
		pred, votes := e.want(t, "drknn", 3, q, len(files))
		// Flags after the file names are still flags.
		args := append([]string{"-export", e.dir, "-images"}, files...)
		args = append(append(args, "-format", "json"), tc.invert...)
		code, so, se := runCmd(args...)
		if code != 0 {
			t.Fatal(se)
		}
		got := decodeJSON(t, so)
		for i, p := range got {
			if p.Input != files[i] || p.Class != pred[i] || p.Votes[0] != votes[2*i] || p.Votes[1] != votes[2*i+1] {
				t.Fatalf("%s %v: %+v, want class %d votes %v", tc.dataset, c, p, pred[i], votes[2*i:2*i+2])
			}
		}
	}
}

func TestFeatures(t *testing.T) {
	mlp := model.Config{Kind: model.MLP, InShape: []int{4}, Hidden: 5, Dim: 3, DType: model.Float64}
	e := newExport(t, mlp, "lung-cancer", 8)
	rows := "f1,f2,f3,f4\n0,0.333,1,0.667\n1,1,0,0\n"
	p := filepath.Join(t.TempDir(), "rows.csv")
	check(t, os.WriteFile(p, []byte(rows), 0o644))
	code, so, se := runCmd("-export", e.dir, "-features", p, "-format", "json")
	if code != 0 {
		t.Fatal(se)
	}
	x := []float32{0, 0.333, 1, 0.667, 1, 1, 0, 0}
	q, err := e.net.Embed(x, 2)
	check(t, err)
	pred, _ := e.want(t, "drknn", 3, q, 2)
	got := decodeJSON(t, so)
	if len(got) != 2 || got[0].Class != pred[0] || got[1].Class != pred[1] || got[1].Input != p+":3" {
		t.Fatalf("%+v, want %v", got, pred)
	}
}

func TestBadInput(t *testing.T) {
	e := newExport(t, cnn, "mnist", 6)
	mlpCfg := model.Config{Kind: model.MLP, InShape: []int{4}, Hidden: 5, Dim: 3, DType: model.Float64}
	m := newExport(t, mlpCfg, "lung-cancer", 6)
	dir := t.TempDir()
	qbad := filepath.Join(dir, "qbad.npy")
	check(t, npy.WriteFloat64(qbad, make([]float64, 2*(e.d+1)), 2, e.d+1))
	qok := filepath.Join(dir, "q.npy")
	check(t, npy.WriteFloat64(qok, make([]float64, 2*e.d), 2, e.d))
	img := filepath.Join(dir, "a.png")
	writePNG(t, img, image.NewGray(image.Rect(0, 0, 4, 4)))
	rows := filepath.Join(dir, "rows.csv")
	check(t, os.WriteFile(rows, []byte("1,2,3\n"), 0o644))
	cases := map[string][]string{
		"no export":          {"-embeddings", qok},
		"no input":           {"-model", e.dir},
		"two inputs":         {"-model", e.dir, "-embeddings", qok, "-images", img},
		"embeddings width":   {"-model", e.dir, "-embeddings", qbad},
		"embeddings missing": {"-model", e.dir, "-embeddings", filepath.Join(dir, "none.npy")},
		"images into MLP":    {"-model", m.dir, "-images", img},
		"csv into CNN":       {"-model", e.dir, "-csv", rows},
		"npy wrong size":     {"-model", e.dir, "-npy", qbad},
		"empty folder":       {"-model", e.dir, "-images", t.TempDir()},
		"bad method":         {"-model", e.dir, "-embeddings", qok, "-method", "pca_knn"},
		"k too big":          {"-model", e.dir, "-embeddings", qok, "-k", "99"},
		"k zero":             {"-model", e.dir, "-embeddings", qok, "-k", "0"},
		"k negative":         {"-model", e.dir, "-embeddings", qok, "-k", "-1"},
		"bad format":         {"-model", e.dir, "-embeddings", qok, "-format", "xml"},
		"export missing":     {"-model", filepath.Join(dir, "nothing"), "-embeddings", qok},
		"stray argument":     {"-model", e.dir, "-embeddings", qok, "extra.png"},
		"invert, no image":   {"-model", e.dir, "-embeddings", qok, "-invert"},
		"unknown flag":       {"-model", e.dir, "-embeddings", qok, "-bogus"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.csv")
			code, so, se := runCmd(append(args, "-out", out)...)
			if code != 2 || so != "" {
				t.Fatalf("exit %d stdout %q stderr %q", code, so, se)
			}
			if strings.Count(se, "\n") != 1 || !strings.HasPrefix(se, "drknn-predict: ") {
				t.Fatalf("stderr %q, want one line", se)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatal("output written on error")
			}
		})
	}
}

// One unreadable input does not stop the batch: it is named on stderr and
// gets a row with an empty prediction, the others are classified, the exit
// status is 1. A tiny image is classified with a warning.
func TestBadFileDoesNotAbortBatch(t *testing.T) {
	e := newExport(t, cnn, "mnist", 6)
	m := newExport(t, model.Config{Kind: model.MLP, InShape: []int{4}, Hidden: 5, Dim: 3, DType: model.Float64}, "lung-cancer", 6)
	dir := t.TempDir()
	good := filepath.Join(dir, "a.png")
	writePNG(t, good, image.NewGray(image.Rect(0, 0, 6, 6)))
	tiny := filepath.Join(dir, "b.png")
	writePNG(t, tiny, image.NewGray(image.Rect(0, 0, 1, 1)))
	bad := filepath.Join(dir, "c.png")
	check(t, os.WriteFile(bad, []byte("hello"), 0o644))
	missing := filepath.Join(dir, "none.png")
	code, so, se := runCmd("-model", e.dir, "-images", good, bad, tiny, missing)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, se)
	}
	recs, err := csv.NewReader(strings.NewReader(so)).ReadAll()
	check(t, err)
	if len(recs) != 5 || recs[1][0] != good || recs[1][1] == "" || recs[2][0] != bad || recs[2][1] != "" || recs[2][2] != "" ||
		recs[3][0] != tiny || recs[3][1] == "" || recs[4][0] != missing || recs[4][1] != "" {
		t.Fatalf("rows %q", recs)
	}
	for _, want := range []string{"drknn-predict: " + bad + ":", "drknn-predict: " + missing + ":", "warning: " + tiny + " is 1×1, the model takes 6×6", "2 of 4 inputs could not be classified"} {
		if !strings.Contains(se, want) {
			t.Errorf("stderr %q lacks %q", se, want)
		}
	}
	// A CSV row with text in a number column fails alone.
	rows := filepath.Join(dir, "rows.csv")
	check(t, os.WriteFile(rows, []byte("0,0.3,1,0.6\n1,x,0,0\n1,1,0,0\n"), 0o644))
	code, so, se = runCmd("-model", m.dir, "-csv", rows)
	recs, err = csv.NewReader(strings.NewReader(so)).ReadAll()
	check(t, err)
	if code != 1 || len(recs) != 4 || recs[2][1] != "" || recs[1][1] == "" || recs[3][1] == "" || !strings.Contains(se, rows+" line 2") {
		t.Fatalf("exit %d rows %q stderr %q", code, recs, se)
	}
}

// End to end: protocol fit on an image folder (train/ and test/, PNG and
// JPEG), then drknn-predict on its test/ folder plus a corrupt file: the
// header names the classes, every good row's probabilities sum to 1, the
// predictions beat chance (1/3) by far, the corrupt file has its row with
// an empty prediction, and the exit status is 1.
func TestFitThenPredictImageFolder(t *testing.T) {
	data, run := t.TempDir(), t.TempDir()
	files, labels, err := fixtures.ImageFolder(data, 10, 6, 8)
	check(t, err)
	cfg, err := experiment.ParseConfig("fit.yaml", []byte("dataset: imagefolder\ndata_dir: "+data+"\nprotocol: fit\n"+
		"model: {channels: 4, dim: 16}\ntrain: {steps: 20, minisets: 4, lr: 0.02}\neval: {k: 3}\n"), nil)
	check(t, err)
	res, err := experiment.Run(t.Context(), cfg, experiment.Options{OutDir: run})
	check(t, err)
	bad := filepath.Join(data, "test", "vbar", "zz-broken.png")
	check(t, fixtures.Corrupt(bad))
	out := filepath.Join(t.TempDir(), "pred.csv")
	code, so, se := runCmd("-model", filepath.Join(run, "export"), "-images", filepath.Join(data, "test"), "-out", out)
	if code != 1 || so != "" || !strings.Contains(se, "zz-broken.png") || !strings.Contains(se, "1 of 19 inputs") {
		t.Fatalf("exit %d stdout %q stderr %q", code, so, se)
	}
	b, err := os.ReadFile(out)
	check(t, err)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	check(t, err)
	if strings.Join(recs[0], ",") != "input,predicted,"+strings.Join(fixtures.Classes, ",") || len(recs) != len(files)+2 {
		t.Fatalf("header %q, %d rows", recs[0], len(recs))
	}
	want := map[string]string{}
	for i, f := range files {
		want[f] = fixtures.Classes[labels[i]]
	}
	correct := 0
	for _, r := range recs[1:] {
		if r[0] == bad {
			if r[1] != "" || r[2] != "" {
				t.Fatalf("corrupt file's row %q", r)
			}
			continue
		}
		sum := 0.0
		for _, v := range r[2:] {
			p, err := strconv.ParseFloat(v, 64)
			check(t, err)
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("row %q: probabilities sum to %v", r, sum)
		}
		if w, ok := want[r[0]]; !ok {
			t.Fatalf("unexpected input %q", r[0])
		} else if r[1] == w {
			correct++
		}
	}
	acc := float64(correct) / float64(len(files))
	if acc < 0.7 || acc != res.Fit.Scores["drknn"].Accuracy {
		t.Fatalf("accuracy %.3f on test/ through drknn-predict, %.3f in the run", acc, res.Fit.Scores["drknn"].Accuracy)
	}
}

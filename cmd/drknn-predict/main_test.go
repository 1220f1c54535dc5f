package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/eval"
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
	res, err := optlayer.Solve(&optlayer.Problem{N: n, Features: emb, Dim: d, Labels: labels,
		Theta: []float64{0.1 * eval.MedianDistance(emb, n, d)}}, nil)
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
	if len(lines) != nq+1 || lines[0] != "input,class,name,vote_zero,vote_one" {
		t.Fatalf("csv head %q, %d lines", lines[0], len(lines))
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[0] != fmt.Sprint(i) || f[1] != fmt.Sprint(pred[i]) {
			t.Fatalf("csv line %q, want class %d", l, pred[i])
		}
	}
	code, so, _ := runCmd("-export", e.dir, "-embeddings", qpath)
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
	if len(got) != 2 || got[0].Class != pred[0] || got[1].Class != pred[1] || got[1].Input != p+":2" {
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
	txt := filepath.Join(dir, "notimage.png")
	check(t, os.WriteFile(txt, []byte("hello"), 0o644))
	rows := filepath.Join(dir, "rows.csv")
	check(t, os.WriteFile(rows, []byte("1,2,3\n"), 0o644))
	out := filepath.Join(dir, "out.txt")
	cases := map[string][]string{
		"no export":            {"-embeddings", qok},
		"no input":             {"-export", e.dir},
		"two inputs":           {"-export", e.dir, "-embeddings", qok, "-images", img},
		"embeddings width":     {"-export", e.dir, "-embeddings", qbad, "-out", out},
		"embeddings missing":   {"-export", e.dir, "-embeddings", filepath.Join(dir, "none.npy"), "-out", out},
		"not an image":         {"-export", e.dir, "-images", txt, "-out", out},
		"image missing":        {"-export", e.dir, "-images", filepath.Join(dir, "none.png"), "-out", out},
		"images into MLP":      {"-export", m.dir, "-images", img, "-out", out},
		"features into CNN":    {"-export", e.dir, "-features", rows, "-out", out},
		"features wrong count": {"-export", m.dir, "-features", rows, "-out", out},
		"bad method":           {"-export", e.dir, "-embeddings", qok, "-method", "pca_knn", "-out", out},
		"k too big":            {"-export", e.dir, "-embeddings", qok, "-k", "99", "-out", out},
		"k negative":           {"-export", e.dir, "-embeddings", qok, "-k", "-1"},
		"bad format":           {"-export", e.dir, "-embeddings", qok, "-format", "xml"},
		"export missing":       {"-export", filepath.Join(dir, "nothing"), "-embeddings", qok},
		"stray argument":       {"-export", e.dir, "-embeddings", qok, "extra.png"},
		"invert without image": {"-export", e.dir, "-embeddings", qok, "-invert"},
		"unknown flag":         {"-export", e.dir, "-embeddings", qok, "-bogus"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, so, se := runCmd(args...)
			if code != 2 || so != "" {
				t.Fatalf("exit %d stdout %q", code, so)
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

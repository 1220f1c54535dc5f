package predict

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
)

// Fixture is a small export folder made in a test, with a real LFD solve.
type fixture struct {
	Dir      string
	Net      *model.Net
	Emb      []float64 // training embeddings
	Labels   []int
	P        []float64
	N, D, M  int
	Query    []float64
	NQ       int
	TrainX   []float32
	QueryX   []float32
	Names    []string
	Manifest map[string]any
}

// makeExport trains nothing: it embeds random inputs with a freshly
// initialised network, solves the LFD on them and writes the export folder
// with WriteExport, as package experiment does.
func makeExport(t testing.TB, cfg model.Config, dataset string, n, m, nq int) *fixture {
	t.Helper()
	dir := t.TempDir()
	net, err := model.New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(11))
	in := net.Config().InSize()
	f := &fixture{Dir: dir, Net: net, N: n, M: m, NQ: nq, D: net.Dim()}
	f.TrainX = make([]float32, n*in)
	f.Labels = make([]int, n)
	for i := 0; i < n; i++ {
		f.Labels[i] = i % m
		for j := 0; j < in; j++ {
			// Class-dependent inputs so that the classes separate somewhat.
			f.TrainX[i*in+j] = float32(math.Max(0, math.Min(1, 0.3*float64(f.Labels[i]*(j%3))/float64(m)+0.2*rng.Float64())))
		}
	}
	f.QueryX = make([]float32, nq*in)
	for i := 0; i < nq; i++ {
		for j := 0; j < in; j++ {
			f.QueryX[i*in+j] = float32(math.Max(0, math.Min(1, 0.3*float64((i%m)*(j%3))/float64(m)+0.25*rng.Float64())))
		}
	}
	if f.Emb, err = net.Embed(f.TrainX, n); err != nil {
		t.Fatal(err)
	}
	if f.Query, err = net.Embed(f.QueryX, nq); err != nil {
		t.Fatal(err)
	}
	med, err := eval.MedianDistance(f.Emb, n, f.D)
	if err != nil {
		t.Fatal(err)
	}
	res, err := optlayer.Solve(&optlayer.Problem{N: n, Features: f.Emb, Dim: f.D, Labels: f.Labels,
		Theta: []float64{0.2 * med}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.P = res.P
	for c := 0; c < m; c++ {
		f.Names = append(f.Names, fmt.Sprintf("class-%c", 'A'+c))
	}
	yq := make([]int, nq)
	for i := range yq {
		yq[i] = i % m
	}
	model, err := NewModel(net, f.Emb, n, f.D, f.Labels, f.P, f.Names, Settings{K: 3, Tau: 0.5, Dataset: dataset})
	must(t, err)
	cfgRec, err := Record(map[string]any{"Dataset": dataset, "Eval": map[string]any{"K": 3, "Tau": 0.5, "Bandwidth": 0}})
	must(t, err)
	must(t, WriteExport(dir, model, Manifest{Config: cfgRec, Theta: []float64{0.2}, Metric: "euclidean"}, f.Query, nq, yq))
	// The manifest as written, for tests that break it.
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	must(t, err)
	must(t, json.Unmarshal(b, &f.Manifest))
	return f
}

func (f *fixture) writeManifest(t testing.TB) {
	b, err := json.Marshal(f.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(f.Dir, "manifest.json"), b, 0o644))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var cnnConfig = model.Config{Kind: model.CNN, InShape: []int{1, 8, 8}, Channels: 3, Dim: 6, DType: model.Float64}

func TestClassifyMatchesEval(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 12, 3, 40)
	e, err := Load(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if e.N != 12 || e.D != 6 || e.M != 3 || e.Manifest.Config.Eval.Tau != 0.5 {
		t.Fatalf("loaded N=%d D=%d M=%d tau=%v", e.N, e.D, e.M, e.Manifest.Config.Eval.Tau)
	}
	for _, method := range Methods() {
		for _, k := range []int{0, 1, 5} {
			wantK := k
			if k == 0 {
				wantK = 3 // the manifest's
			}
			c, err := eval.New(method, eval.Settings{K: wantK, Tau: 0.5}, f.P)
			must(t, err)
			must(t, c.Fit(f.Emb, f.N, f.D, f.Labels, f.M))
			wantPred, err := c.Predict(f.Query, f.NQ)
			must(t, err)
			wantVotes, err := c.Votes(f.Query, f.NQ)
			must(t, err)
			got, err := e.Classify(f.Query, f.NQ, nil, Options{Method: method, K: k})
			must(t, err)
			distinct := map[int]bool{}
			for i, p := range got {
				if p.Class != wantPred[i] || p.Name != f.Names[p.Class] || p.Input != fmt.Sprint(i) {
					t.Fatalf("%s k=%d query %d: %+v, eval predicts %d", method, k, i, p, wantPred[i])
				}
				for m, v := range p.Votes {
					if v != wantVotes[i*f.M+m] {
						t.Fatalf("%s k=%d query %d vote %d = %v, eval %v", method, k, i, m, v, wantVotes[i*f.M+m])
					}
				}
				distinct[p.Class] = true
			}
			if method == eval.MethodDrKNN && k == 1 && len(distinct) < 2 {
				t.Fatalf("every query predicted as one class: the fixture is too easy to be a test")
			}
		}
	}
}

func TestQueries(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 6, 3, 7)
	e, err := Load(f.Dir)
	must(t, err)
	q, nq, y, err := e.Queries()
	must(t, err)
	if nq != 7 || len(q) != 7*f.D || y[4] != 1 || q[5] != f.Query[5] {
		t.Fatalf("nq=%d y=%v", nq, y)
	}
	// Without recorded SHA-256s (an older export: no sha256 map) the
	// arrays' own checks still hold.
	e.Manifest.SHA256 = nil
	must(t, npy.WriteInt64(filepath.Join(f.Dir, "query_labels.npy"), []int64{0, 1}))
	if _, _, _, err := e.Queries(); err == nil || !strings.Contains(err.Error(), "2 labels for 7 query embeddings") {
		t.Fatalf("2 labels for 7 queries: %v", err)
	}
	must(t, npy.WriteInt64(filepath.Join(f.Dir, "query_labels.npy"), []int64{0, 1, 2, 3, 0, 1, 2}))
	if _, _, _, err := e.Queries(); err == nil || !strings.Contains(err.Error(), "label[3] = 3 outside") {
		t.Fatalf("label 3 of M = 3: %v", err)
	}
}

func TestLoadRejectsInconsistentExports(t *testing.T) {
	cases := map[string]func(f *fixture){
		"labels too few": func(f *fixture) {
			must(t, npy.WriteInt64(filepath.Join(f.Dir, "train_labels.npy"), []int64{0, 1}))
		},
		"label out of range": func(f *fixture) {
			y := make([]int64, f.N)
			y[3] = 9
			must(t, npy.WriteInt64(filepath.Join(f.Dir, "train_labels.npy"), y))
		},
		"P wrong width": func(f *fixture) {
			must(t, npy.WriteFloat64(filepath.Join(f.Dir, "lfd_weights.npy"), make([]float64, f.M*(f.N-1)), f.M, f.N-1))
		},
		"P NaN": func(f *fixture) {
			p := append([]float64(nil), f.P...)
			p[0] = math.NaN()
			must(t, npy.WriteFloat64(filepath.Join(f.Dir, "lfd_weights.npy"), p, f.M, f.N))
		},
		"ways disagree": func(f *fixture) { f.Manifest["ways"] = 4; f.writeManifest(t) },
		"names disagree": func(f *fixture) {
			f.Manifest["class_names"] = []string{"a"}
			f.writeManifest(t)
		},
		"format unknown": func(f *fixture) { f.Manifest["format"] = 2; f.writeManifest(t) },
		"manifest corrupt": func(f *fixture) {
			must(t, os.WriteFile(filepath.Join(f.Dir, "manifest.json"), []byte("{"), 0o644))
		},
		"manifest missing":   func(f *fixture) { must(t, os.Remove(filepath.Join(f.Dir, "manifest.json"))) },
		"embeddings missing": func(f *fixture) { must(t, os.Remove(filepath.Join(f.Dir, "train_embeddings.npy"))) },
	}
	for name, breakIt := range cases {
		// With the files' SHA-256 recorded a changed array fails its
		// check; without (exports written before they were recorded) the
		// consistency checks must catch it.
		for _, hashes := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/sha256 %v", name, hashes), func(t *testing.T) {
				f := makeExport(t, cnnConfig, "mnist", 6, 2, 1)
				if !hashes {
					delete(f.Manifest, "sha256")
					f.writeManifest(t)
				}
				breakIt(f)
				if _, err := Load(f.Dir); err == nil {
					t.Fatal("Load accepted a broken export")
				}
			})
		}
	}
	// A model.bin of another repeat (same shape, other weights) is refused
	// by its SHA-256 when the network is first needed.
	t.Run("model of another repeat", func(t *testing.T) {
		f := makeExport(t, cnnConfig, "mnist", 6, 2, 1)
		net, err := model.New(cnnConfig, 99)
		must(t, err)
		must(t, net.Save(filepath.Join(f.Dir, "model.bin")))
		e, err := Load(f.Dir)
		must(t, err)
		if _, err := e.Net(); err == nil || !strings.Contains(err.Error(), "model.bin does not belong to this export") {
			t.Fatalf("err = %v", err)
		}
		if _, err := e.PredictFiles(Inputs{NPY: writeSamples(t, f.QueryX, f.NQ, cnnConfig.WithDefaults().InShape)}, Options{}); err == nil {
			t.Fatal("predicted with another repeat's network")
		}
	})
	t.Run("model of another width", func(t *testing.T) {
		f := makeExport(t, cnnConfig, "mnist", 6, 2, 1)
		delete(f.Manifest, "sha256") // an export without recorded hashes: the width check
		f.writeManifest(t)
		other := cnnConfig
		other.Dim = 4
		net, err := model.New(other, 1)
		must(t, err)
		must(t, net.Save(filepath.Join(f.Dir, "model.bin")))
		e, err := Load(f.Dir)
		must(t, err)
		if _, err := e.Net(); err == nil || !strings.Contains(err.Error(), "width 4") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestClassifyBadInput(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 6, 2, 2)
	e, err := Load(f.Dir)
	must(t, err)
	q := append([]float64(nil), f.Query...)
	if _, err := e.Classify(q[:5], 1, nil, Options{}); !errors.Is(err, ErrInput) {
		t.Fatalf("short embedding: %v", err)
	}
	q[3] = math.Inf(1)
	if _, err := e.Classify(q, 2, nil, Options{}); !errors.Is(err, ErrInput) {
		t.Fatalf("Inf: %v", err)
	}
	for _, o := range []Options{{Method: "pca_knn"}, {Method: "nope"}, {K: 7}, {K: -1}} {
		if _, err := e.Classify(f.Query, 2, nil, o); err == nil {
			t.Fatalf("%+v accepted", o)
		}
	}
}

// imageFiles returns encoded test images of several kinds and sizes.
func imageFiles(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewSource(5))
	out := map[string][]byte{}
	enc := func(name string, img image.Image, asJPEG bool) {
		var b bytes.Buffer
		if asJPEG {
			must(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}))
		} else {
			must(t, png.Encode(&b, img))
		}
		out[name] = b.Bytes()
	}
	g := image.NewGray(image.Rect(0, 0, 13, 9))
	rgba := image.NewRGBA(image.Rect(0, 0, 20, 17))
	nrgba := image.NewNRGBA(image.Rect(0, 0, 7, 11))
	g16 := image.NewGray16(image.Rect(0, 0, 8, 8))
	for i := range g.Pix {
		g.Pix[i] = uint8(rng.Intn(256))
	}
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(rng.Intn(256))
		if i%4 == 3 {
			rgba.Pix[i] = 255
		}
	}
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(rng.Intn(256))
	}
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			g16.SetGray16(x, y, color.Gray16{Y: uint16(rng.Intn(65536))})
		}
	}
	enc("a-grey.png", g, false)
	enc("b-rgba.png", rgba, false)
	enc("c-nrgba.png", nrgba, false)
	enc("d-grey16.png", g16, false)
	enc("e-colour.jpg", rgba, true)
	enc("f-grey.jpg", g, true)
	return out
}

// TestImageMatchesReaders checks that Image gives the samples the data set
// readers give for the same files: grey via datasets.ReadCOVIDCT, RGB via
// datasets.ReadMiniImageNet.
func TestImageMatchesReaders(t *testing.T) {
	files := imageFiles(t)
	const size = 8
	covid := t.TempDir()
	for _, sub := range []string{"CT_COVID", "CT_NonCOVID"} {
		must(t, os.MkdirAll(filepath.Join(covid, sub), 0o755))
		for name, data := range files {
			must(t, os.WriteFile(filepath.Join(covid, sub, name), data, 0o644))
		}
	}
	d, err := datasets.ReadCOVIDCT(covid, size)
	must(t, err)
	mini := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(mini, "images"), 0o755))
	var csvb strings.Builder
	csvb.WriteString("filename,label\n")
	for name, data := range files {
		must(t, os.WriteFile(filepath.Join(mini, "images", name), data, 0o644))
		fmt.Fprintf(&csvb, "%s,n01\n", name)
	}
	must(t, os.WriteFile(filepath.Join(mini, "test.csv"), []byte(csvb.String()), 0o644))
	dm, err := datasets.ReadMiniImageNet(mini, "test", size)
	must(t, err)

	for _, tc := range []struct {
		d      *datasets.Dataset
		prefix string
		c      int
	}{{d, "CT_COVID/", 1}, {dm, "images/", 3}} {
		seen := 0
		for i, fname := range tc.d.Files {
			name := strings.TrimPrefix(fname, tc.prefix)
			if name == fname {
				continue
			}
			seen++
			got, err := Image(files[name], ImageSettings{Channels: tc.c, Height: size, Width: size})
			must(t, err)
			want := tc.d.Sample(i)
			if len(got) != len(want) {
				t.Fatalf("%s: %d values, reader %d", fname, len(got), len(want))
			}
			for j := range got {
				if math.Abs(float64(got[j]-want[j])) > 2e-6 {
					t.Fatalf("%s value %d: %v, reader %v", fname, j, got[j], want[j])
				}
			}
			inv, err := Image(files[name], ImageSettings{Channels: tc.c, Height: size, Width: size, Invert: true})
			must(t, err)
			for j := range inv {
				if math.Abs(float64(inv[j]+got[j]-1)) > 1e-6 {
					t.Fatalf("inverted %v + %v ≠ 1", inv[j], got[j])
				}
			}
		}
		if seen != len(files) {
			t.Fatalf("compared %d of %d files", seen, len(files))
		}
	}
}

func TestImageBadInput(t *testing.T) {
	files := imageFiles(t)
	s := ImageSettings{Channels: 1, Height: 8, Width: 8}
	for name, data := range map[string][]byte{
		"empty": nil, "text": []byte("hello"), "truncated png": files["a-grey.png"][:40],
		"truncated jpeg": files["e-colour.jpg"][:200],
	} {
		if _, err := Image(data, s); err == nil {
			t.Fatalf("%s accepted", name)
		}
	}
	for _, bad := range []ImageSettings{{Channels: 2, Height: 8, Width: 8}, {Channels: 1, Height: 0, Width: 8}} {
		if _, err := Image(files["a-grey.png"], bad); !errors.Is(err, ErrInput) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if _, err := imageSettingsFor(model.Config{Kind: model.MLP, InShape: []int{56}}.WithDefaults(), ""); !errors.Is(err, ErrInput) {
		t.Fatalf("MLP: %v", err)
	}
	if _, err := imageSettingsFor(model.Config{Kind: model.CNN, InShape: []int{4, 8, 8}}.WithDefaults(), ""); !errors.Is(err, ErrInput) {
		t.Fatalf("4 channels: %v", err)
	}
	s2, err := imageSettingsFor(cnnConfig.WithDefaults(), "omniglot")
	if err != nil || !s2.Invert || s2.Height != 8 {
		t.Fatalf("omniglot settings %+v %v", s2, err)
	}
}

// featureModel is a model on 3 feature rows without a network (CSV
// parsing needs only its input description), with named columns when
// names is set and a mean fill when fill is set.
func featureModel(t testing.TB, names []string, fill []float64) *Model {
	m, err := NewModel(nil, []float64{0, 1}, 2, 1, []int{0, 1}, []float64{1, 0, 0, 1}, []string{"a", "b"},
		Settings{K: 1, Input: &Input{Kind: InputFeatures, Reader: "csv", Shape: []int{3}, Features: names}})
	if err != nil {
		t.Fatal(err)
	}
	if fill != nil {
		m.Settings.Impute = &Impute{Mode: "mean", Values: fill}
	}
	return m
}

func TestCSVSamplesPositional(t *testing.T) {
	m := featureModel(t, nil, nil)
	in := "\na,b,c\n0.1, 0.2,0.3\n\n1,0,0.5\r\n1,x,3\n1,2\n1,NA,3\n1,2,+Inf\n1,2,1e300\n"
	got, err := m.readCSVSamples(strings.NewReader(in), "rows.csv", 3, nil)
	must(t, err)
	if len(got) != 7 || got[0].name != "rows.csv:3" || got[1].name != "rows.csv:5" {
		t.Fatalf("%d rows, names %q %q", len(got), got[0].name, got[1].name)
	}
	want := []float32{0.1, 0.2, 0.3, 1, 0, 0.5}
	if got[0].err != nil || got[1].err != nil || !slices.Equal(append(got[0].x, got[1].x...), want) {
		t.Fatalf("rows %v %v (%v %v), want %v", got[0].x, got[1].x, got[0].err, got[1].err, want)
	}
	for i, msg := range map[int]string{2: `rows.csv line 6: field 2: "x" is not a finite number`, 3: "rows.csv line 7: 2 values, the model takes 3 features",
		4: "rows.csv line 8: missing value in field 2 (the model was trained without data.missing", 5: "+Inf", 6: "1e300"} {
		if got[i].err == nil || !strings.Contains(got[i].err.Error(), msg) {
			t.Errorf("row %d: %v, want %q", i, got[i].err, msg)
		}
	}
	for name, bad := range map[string]string{"empty": "", "only head": "a,b,c\n", "bad quote": "1,\"2,3\n"} {
		if _, err := m.readCSVSamples(strings.NewReader(bad), "rows.csv", 3, nil); err == nil || !strings.Contains(err.Error(), "rows.csv") || !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A model trained on a CSV finds its columns by header name, in any order
// and among other columns, and fills missing cells with its recorded fill.
func TestCSVSamplesByName(t *testing.T) {
	m := featureModel(t, []string{"h", "w", "d"}, []float64{7, 8, 9})
	in := "\ufeffid, d ,label,h,w\n1,3,x,1,2\n2,,y,4,?\n3,6,z,abc,5\n4,6\n"
	got, err := m.readCSVSamples(strings.NewReader(in), "t.csv", 3, []string{"h", "w", "d"})
	must(t, err)
	if len(got) != 4 || !slices.Equal(got[0].x, []float32{1, 2, 3}) || !slices.Equal(got[1].x, []float32{4, 8, 9}) {
		t.Fatalf("rows %+v", got)
	}
	if got[2].err == nil || !strings.Contains(got[2].err.Error(), `t.csv line 4: column "h": "abc"`) {
		t.Fatalf("bad cell: %v", got[2].err)
	}
	if got[3].err == nil || !strings.Contains(got[3].err.Error(), `no value for column "h"`) {
		t.Fatalf("short row: %v", got[3].err)
	}
	for head, want := range map[string]string{"h,w\n1,2\n": `no column "d"`, "h,w,d,h\n1,2,3,4\n": `column "h" appears twice`} {
		if _, err := m.readCSVSamples(strings.NewReader(head), "t.csv", 3, []string{"h", "w", "d"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", head, err, want)
		}
	}
}

func TestWriteFormats(t *testing.T) {
	preds := []Prediction{{Input: "a.png", Class: 1, Name: "cat, big", Votes: []float64{0.25, 0.75}, Proba: []float64{0.25, 0.75}},
		{Input: "b.png", Class: -1, Error: "b.png: not an image"},
		{Input: "c.png", Class: 0, Name: "dog", Votes: []float64{0.6, 0.2}, Proba: []float64{0.75, 0.25}}}
	names := []string{"dog", "cat, big"}
	var b bytes.Buffer
	must(t, Write(&b, preds, names, CSV))
	recs, err := csv.NewReader(&b).ReadAll()
	must(t, err)
	want := [][]string{{"input", "predicted", "dog", "cat, big"}, {"a.png", "cat, big", "0.25", "0.75"}, {"b.png", "", "", ""}, {"c.png", "dog", "0.75", "0.25"}}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("csv %q, want %q", recs, want)
	}
	b.Reset()
	must(t, Write(&b, preds, names, JSON))
	var back []Prediction
	must(t, json.Unmarshal(b.Bytes(), &back))
	if len(back) != 3 || back[2].Votes[0] != 0.6 || back[2].Proba[0] != 0.75 || back[0].Name != "cat, big" || back[1].Error == "" || back[1].Class != -1 {
		t.Fatalf("json %+v", back)
	}
	b.Reset()
	must(t, Write(&b, preds, names, Text))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "0.2500 0.7500") || !strings.Contains(lines[2], "error: b.png: not an image") || !strings.HasPrefix(lines[3], "c.png") {
		t.Fatalf("text %q", b.String())
	}
	if err := Write(&b, preds, names, "xml"); err == nil {
		t.Fatal("xml accepted")
	}
}

// FuzzCSVSamples: any bytes give rows that are either numbers (finite, the
// model's width) or an error, never a panic.
func FuzzCSVSamples(f *testing.F) {
	for _, s := range []string{"1,2,3\n", "a,b,c\n0.1,0.2,0.3\n", "# c\n\n1,2\n", "1,\"2\",3\n", "1e400,0,0\n", "h,w,d\n1,,3\n", "\ufeffd,h,w\nNA,1,2\n", "#h,w,,d,x,x\n1,2,0,3,4,5\n", "h,w,d,w\n1,2,3,4\n"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, named bool) {
		var names []string
		if named {
			names = []string{"h", "w", "d"}
		}
		m := featureModel(t, names, []float64{1, 2, 3})
		rows, err := m.readCSVSamples(strings.NewReader(s), "f.csv", 3, names)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.err != nil {
				continue
			}
			if len(r.x) != 3 {
				t.Fatalf("%d values", len(r.x))
			}
			for _, v := range r.x {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("non-finite %v", v)
				}
			}
		}
	})
}

func FuzzImage(f *testing.F) {
	for _, data := range imageFiles(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A header mutated to a large legal size is decoded for real: a
		// 50-byte GIF declaring 8196×3587 pixels (under
		// datasets.MaxImagePixels) took 6 s here, near the fuzzing engine's
		// hang limit (datasets' FuzzDecodeReaderImage failed CI so). Fuzz
		// images up to 2¹⁶ pixels, as datasets' fuzz targets do; the
		// refusal above the limit is datasets' TestDecodeRejects.
		if cfg, _, err := datasets.DecodeConfig(bytes.NewReader(data)); err == nil && int64(cfg.Width)*int64(cfg.Height) > 1<<16 {
			return
		}
		for _, c := range []int{1, 3} {
			x, err := Image(data, ImageSettings{Channels: c, Height: 5, Width: 6})
			if err != nil {
				continue
			}
			if len(x) != c*30 {
				t.Fatalf("%d values", len(x))
			}
			for _, v := range x {
				if !(v >= -1e-6 && v <= 1+1e-6) {
					t.Fatalf("value %v outside [0, 1]", v)
				}
			}
		}
	})
}

// TestEmbedStandardizes checks that Embed applies the export's recorded
// input standardisation (data.standardize) before the network — channel
// statistics hand-applied here, and per-sample — without touching the
// caller's slice, and that Load rejects records that do not fit the model.
func TestEmbedStandardizes(t *testing.T) {
	f := makeExport(t, model.Config{Kind: model.CNN, InShape: []int{2, 6, 6}, Channels: 3, Dim: 5, DType: model.Float64}, "cifar10", 8, 2, 4)
	in := f.Net.Config().InSize()
	mean, sd := []float64{0.25, 0.5}, []float64{0.5, 2}
	manual := make([]float32, len(f.QueryX))
	for i := range manual {
		ch := (i % in) / 36
		manual[i] = float32((float64(f.QueryX[i]) - mean[ch]) / sd[ch])
	}
	want, err := f.Net.Embed(manual, f.NQ)
	if err != nil {
		t.Fatal(err)
	}
	f.Manifest["episode"] = map[string]any{"standardize": map[string]any{"mode": "channel", "mean": mean, "sd": sd}}
	f.writeManifest(t)
	e, err := Load(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	x := append([]float32(nil), f.QueryX...)
	got, err := e.Embed(x, f.NQ)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("channel: embedding[%d] = %v, want %v (standardised by hand)", i, got[i], want[i])
		}
	}
	for i := range x {
		if x[i] != f.QueryX[i] {
			t.Fatalf("Embed modified its input at %d", i)
		}
	}
	// per sample
	manual = append(manual[:0], f.QueryX...)
	if err := datasets.StandardizeSamples(manual, f.NQ, in); err != nil {
		t.Fatal(err)
	}
	if want, err = f.Net.Embed(manual, f.NQ); err != nil {
		t.Fatal(err)
	}
	f.Manifest["episode"] = map[string]any{"standardize": map[string]any{"mode": "sample"}}
	f.writeManifest(t)
	if e, err = Load(f.Dir); err != nil {
		t.Fatal(err)
	}
	if got, err = e.Embed(f.QueryX, f.NQ); err != nil {
		t.Fatal(err)
	}
	plain, err := f.Net.Embed(f.QueryX, f.NQ)
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample: embedding[%d] = %v, want %v", i, got[i], want[i])
		}
		same = same && got[i] == plain[i]
	}
	if same {
		t.Fatal("sample standardisation changed nothing")
	}
	// relevance: value j times Weight[j]
	w := make([]float64, in)
	for j := range w {
		w[j] = float64(j%5) / 4
	}
	manual = append(manual[:0], f.QueryX...)
	for i := range manual {
		manual[i] = float32(float64(manual[i]) * w[i%in])
	}
	if want, err = f.Net.Embed(manual, f.NQ); err != nil {
		t.Fatal(err)
	}
	f.Manifest["episode"] = map[string]any{"standardize": map[string]any{"mode": "relevance", "weight": w}}
	f.writeManifest(t)
	if e, err = Load(f.Dir); err != nil {
		t.Fatal(err)
	}
	if got, err = e.Embed(f.QueryX, f.NQ); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("relevance: embedding[%d] = %v, want %v (weighted by hand)", i, got[i], want[i])
		}
	}
	for _, c := range []struct {
		rec  map[string]any
		want string
	}{
		{map[string]any{"mode": "global"}, `mode "global"`},
		{map[string]any{"mode": "relevance", "weight": w[1:]}, "71 relevance weights for samples of 72 values"},
		{map[string]any{"mode": "relevance", "weight": append([]float64{1.5}, w[1:]...)}, "relevance weight 0 is 1.5"},
		{map[string]any{"mode": "channel", "mean": []float64{0}, "sd": []float64{1}}, "1 means and 1 deviations for 2 channels"},
		{map[string]any{"mode": "channel", "mean": []float64{0, 0}, "sd": []float64{1, 0}}, "channel 1 has mean 0 and deviation 0"},
	} {
		f.Manifest["episode"] = map[string]any{"standardize": c.rec}
		f.writeManifest(t)
		if _, err := Load(f.Dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.rec, err, c.want)
		}
	}
}

// FuzzParseManifest checks that manifest.json decoding never panics, and
// that an accepted manifest has format 1 and a standardisation record that
// fits the model's input shape.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"model":{"Kind":"cnn","InShape":[2,6,6]},"episode":{"standardize":{"mode":"channel","mean":[0,1],"sd":[1,2]}}}`))
	f.Add([]byte(`{"format":1,"episode":{"standardize":{"mode":"sample"}}}`))
	f.Add([]byte(`{"format":1,"model":{"Kind":"mlp","InShape":[3]},"episode":{"standardize":{"mode":"relevance","weight":[0,0.5,1]}}}`))
	f.Add([]byte(`{"format":1,"episode":{"standardize":{"mode":"channel","mean":[0],"sd":[-1]}},"model":{"InShape":[1]}}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":1,"files":{"model":"../x"},"class_names":["a"],"ways":1}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err != nil {
			return
		}
		if m.Format != 1 {
			t.Fatalf("accepted format %d", m.Format)
		}
		if st := m.Episode.Standardize; st != nil && st.Mode == "channel" {
			if len(m.Model.InShape) == 0 || len(st.Mean) != m.Model.InShape[0] || len(st.SD) != len(st.Mean) {
				t.Fatalf("accepted channel statistics %v/%v for shape %v", st.Mean, st.SD, m.Model.InShape)
			}
			for _, d := range st.SD {
				if !(d > 0) {
					t.Fatalf("accepted deviation %v", d)
				}
			}
		}
	})
}

// TestModelInMemoryMatchesExport: a Model built in memory classifies like
// the same model written with WriteExport and read back with Load; an
// export without queries has no query files; NewModel checks its parts.
func TestModelInMemoryMatchesExport(t *testing.T) {
	f := makeExport(t, cnnConfig, "mnist", 9, 3, 12)
	mem, err := NewModel(f.Net, f.Emb, f.N, f.D, f.Labels, f.P, f.Names, Settings{K: 3, Tau: 0.5, Dataset: "mnist"})
	must(t, err)
	e, err := Load(f.Dir)
	must(t, err)
	if !reflect.DeepEqual(mem.Classes(), e.Classes()) || !reflect.DeepEqual(mem.Settings, e.Settings) {
		t.Fatalf("classes %v / %v, settings %+v / %+v", mem.Classes(), e.Classes(), mem.Settings, e.Settings)
	}
	for _, method := range Methods() {
		a, err := mem.Classify(f.Query, f.NQ, nil, Options{Method: method})
		must(t, err)
		b, err := e.Classify(f.Query, f.NQ, nil, Options{Method: method})
		must(t, err)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: in memory %+v, loaded %+v", method, a, b)
		}
	}
	for _, method := range Methods() {
		p, err := mem.Proba(f.Query, f.NQ, Options{Method: method})
		must(t, err)
		preds, err := mem.Classify(f.Query, f.NQ, nil, Options{Method: method})
		must(t, err)
		for i, pr := range preds {
			row, sum := p[i*f.M:(i+1)*f.M], 0.0
			for _, v := range row {
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 || row[pr.Class] < slices.Max(row)-1e-9 { // ties go by the tie rule
				t.Fatalf("%s query %d: probabilities %v (sum %v), predicted class %d", method, i, row, sum, pr.Class)
			}
		}
	}
	if _, err := mem.Proba(f.Query[:3], 1, Options{}); !errors.Is(err, ErrInput) {
		t.Fatalf("Proba of a short embedding: %v", err)
	}
	qa, err := mem.Embed(f.QueryX, f.NQ)
	must(t, err)
	qb, err := e.Embed(f.QueryX, f.NQ)
	must(t, err)
	if !reflect.DeepEqual(qa, qb) {
		t.Fatal("embeddings differ between the in-memory and the loaded model")
	}

	dir := t.TempDir()
	must(t, WriteExport(dir, mem, Manifest{}, nil, 0, nil))
	e2, err := Load(dir)
	must(t, err)
	if _, err := os.Stat(filepath.Join(dir, "query_embeddings.npy")); !os.IsNotExist(err) || e2.Manifest.Files["query_labels"] != "" {
		t.Fatalf("an export without queries has query files: %v %v", err, e2.Manifest.Files)
	}
	if _, _, _, err := e2.Queries(); err == nil {
		t.Fatal("Queries of an export without queries succeeded")
	}

	for name, build := range map[string]func() (*Model, error){
		"labels": func() (*Model, error) { return NewModel(nil, f.Emb, f.N, f.D, f.Labels[1:], f.P, nil, Settings{}) },
		"label range": func() (*Model, error) {
			return NewModel(nil, f.Emb, f.N, f.D, append([]int{7}, f.Labels[1:]...), f.P, nil, Settings{})
		},
		"P size": func() (*Model, error) { return NewModel(nil, f.Emb, f.N, f.D, f.Labels, f.P[1:], nil, Settings{}) },
		"names": func() (*Model, error) {
			return NewModel(nil, f.Emb, f.N, f.D, f.Labels, f.P, []string{"a"}, Settings{})
		},
		"width": func() (*Model, error) {
			return NewModel(f.Net, f.Emb[:f.N*(f.D-1)], f.N, f.D-1, f.Labels, f.P, nil, Settings{})
		},
		"NaN": func() (*Model, error) {
			return NewModel(nil, append([]float64{math.NaN()}, f.Emb[1:]...), f.N, f.D, f.Labels, f.P, nil, Settings{})
		},
	} {
		if _, err := build(); err == nil {
			t.Errorf("NewModel accepted bad %s", name)
		}
	}
	if m, err := NewModel(nil, f.Emb, f.N, f.D, f.Labels, f.P, nil, Settings{K: 3}); err != nil || m.Classes()[2] != "2" {
		t.Fatalf("default class names: %v %v", m, err)
	} else if _, err := m.Embed(f.QueryX, f.NQ); err == nil {
		t.Fatal("a model without a network embedded images")
	}
}

// writeSamples writes n samples of the given shape as an n×… float64 .npy
// and returns its path.
func writeSamples(t testing.TB, x []float32, n int, shape []int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.npy")
	v := make([]float64, len(x))
	for i, f := range x {
		v[i] = float64(f)
	}
	must(t, npy.WriteFloat64(p, v, n, len(x)/n))
	return p
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/optlayer"
)

func runCmd(args ...string) (int, string, string) {
	var so, se bytes.Buffer
	code := cli.Report(&se, "drknn-figures", run(context.Background(), args, &so, &se), badInput...)
	return code, so.String(), se.String()
}

// checkPNG decodes path and checks its size and that it is not blank.
func checkPNG(t *testing.T, path string, w, h, minColours int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: %d×%d, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	if n := distinct(img); n <= minColours {
		t.Fatalf("%s: %d colours", path, n)
	}
}

func distinct(img image.Image) int {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	return len(seen)
}

// writeExport writes an export folder of 2-D embeddings (a 3-class
// Gaussian set) with its LFD and queries; no model is needed to draw.
func writeExport(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tr, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: 6, Seed: 1, Noise: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	q, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: 30, Seed: 2, Noise: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	x, qx := tr.Float64(), q.Float64()
	res, err := optlayer.Solve(&optlayer.Problem{N: tr.Len(), Features: x, Dim: 2, Labels: tr.Labels, Theta: []float64{0.3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	i64 := func(y []int) []int64 {
		out := make([]int64, len(y))
		for i, v := range y {
			out[i] = int64(v)
		}
		return out
	}
	for _, err := range []error{
		npy.WriteFloat64(filepath.Join(dir, "train_embeddings.npy"), x, tr.Len(), 2),
		npy.WriteInt64(filepath.Join(dir, "train_labels.npy"), i64(tr.Labels)),
		npy.WriteFloat64(filepath.Join(dir, "lfd_weights.npy"), res.P, 3, tr.Len()),
		npy.WriteFloat64(filepath.Join(dir, "query_embeddings.npy"), qx, q.Len(), 2),
		npy.WriteInt64(filepath.Join(dir, "query_labels.npy"), i64(q.Labels)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(map[string]any{"format": 1, "k": 5, "ways": 3, "class_names": []string{"a", "b", "c"},
		"config": map[string]any{"Eval": map[string]any{"K": 5, "Tau": 0.9}}})
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLFD(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fig3.png")
	code, so, se := runCmd("lfd", "-out", out, "-per-class", "8", "-width", "800", "-height", "220")
	if code != 0 {
		t.Fatal(se)
	}
	if !strings.Contains(so, "LFD of 24 points") {
		t.Fatalf("stdout %q", so)
	}
	checkPNG(t, out, 800, 220, 100)
}

func TestSweepAndRegionsFromExport(t *testing.T) {
	exp := writeExport(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.png")
	code, so, se := runCmd("sweep", "-export", exp, "-out", out, "-width", "700", "-height", "300")
	if code != 0 {
		t.Fatal(se)
	}
	if !strings.Contains(so, "k=1 ") || !strings.Contains(so, "k=8 ") {
		t.Fatalf("stdout %q", so)
	}
	checkPNG(t, out, 700, 300, 20)
	out = filepath.Join(dir, "regions.png")
	if code, _, se := runCmd("regions", "-export", exp, "-out", out, "-width", "900", "-height", "260"); code != 0 {
		t.Fatal(se)
	}
	checkPNG(t, out, 900, 260, 100)
}

// TestRegionsTrainsAPlane: regions -config trains through the experiment
// pipeline, so the Dr.k-NN accuracy it prints is drknn-train's for the same
// config at d = 2.
func TestRegionsTrainsAPlane(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fig5.png")
	config := filepath.Join("..", "..", "configs", "synthetic.yaml")
	sets := []string{"train.steps=3", "queries=60", "model.channels=4", "train.augment.shift=1"}
	args := []string{"regions", "-config", config, "-out", out, "-width", "900", "-height", "260"}
	for _, s := range sets {
		args = append(args, "-set", s)
	}
	code, so, se := runCmd(args...)
	if code != 0 {
		t.Fatal(se)
	}
	if !strings.Contains(so, "3 steps") || !strings.Contains(so, "nca_knn") {
		t.Fatalf("stdout %q", so)
	}
	checkPNG(t, out, 900, 260, 100)
	cfg, err := experiment.LoadConfig(config, append(sets, "model.dim=2", "repeats=1", "eval.methods=[drknn]"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := experiment.Run(t.Context(), cfg, experiment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("drknn %.3f,", res.Methods["drknn"].PerRepeat[0]); !strings.Contains(so, want) {
		t.Fatalf("stdout %q, want drknn-train's accuracy %q", so, want)
	}
}

func TestCurves(t *testing.T) {
	run := t.TempDir()
	rd := filepath.Join(run, "repeats", "01")
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	h := `[{"step":1,"risk":0.6,"mean_rel_gap":4e-4,"max_rel_gap":5e-4,"iterations":100,"not_optimal":0},
	       {"step":2,"risk":0.4,"mean_rel_gap":2e-4,"max_rel_gap":5e-4,"iterations":90,"not_optimal":0}]`
	if err := os.WriteFile(filepath.Join(rd, "history.json"), []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "curves.png")
	if code, _, se := runCmd("curves", "-run", run, "-out", out); code != 0 {
		t.Fatal(se)
	}
	checkPNG(t, out, 1100, 420, 20)
}

func TestBadInput(t *testing.T) {
	exp := writeExport(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.png")
	badRun := t.TempDir()
	os.MkdirAll(filepath.Join(badRun, "repeats", "01"), 0o755)
	os.WriteFile(filepath.Join(badRun, "repeats", "01", "history.json"), []byte("[{"), 0o644)
	cases := map[string][]string{
		"nothing":            {},
		"unknown command":    {"draw"},
		"no out":             {"lfd"},
		"tiny":               {"lfd", "-out", out, "-width", "10"},
		"negative theta":     {"lfd", "-out", out, "-theta", "-1"},
		"k too big":          {"lfd", "-out", out, "-per-class", "2", "-k", "7"},
		"bad noise":          {"lfd", "-out", out, "-noise", "0"},
		"extra arg":          {"lfd", "-out", out, "x"},
		"regions neither":    {"regions", "-out", out},
		"regions both":       {"regions", "-out", out, "-config", "x.yaml", "-export", exp},
		"regions bad config": {"regions", "-out", out, "-config", filepath.Join(dir, "none.yaml")},
		"regions bad key":    {"regions", "-out", out, "-config", filepath.Join("..", "..", "configs", "synthetic.yaml"), "-set", "nope=1"},
		"sweep no export":    {"sweep", "-out", out},
		"sweep missing":      {"sweep", "-out", out, "-export", filepath.Join(dir, "none")},
		"curves no run":      {"curves", "-out", out},
		"curves empty run":   {"curves", "-out", out, "-run", dir},
		"curves corrupt":     {"curves", "-out", out, "-run", badRun},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, so, se := runCmd(args...)
			if code != 2 || so != "" {
				t.Fatalf("exit %d stdout %q stderr %q", code, so, se)
			}
			if strings.Count(se, "\n") != 1 || !strings.HasPrefix(se, "drknn-figures: ") {
				t.Fatalf("stderr %q", se)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatal("output written")
			}
		})
	}
}

// TestOutFormats: -out x.svg writes SVG (it used to write PNG bytes), and
// an unknown extension is one usage line before any work.
func TestOutFormats(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "fig3.svg")
	if code, _, se := runCmd("lfd", "-out", svg, "-queries", "5"); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !(bytes.HasPrefix(b, []byte("<?xml")) || bytes.HasPrefix(b, []byte("<svg"))) || !bytes.Contains(b, []byte("<svg")) {
		t.Fatalf("%s: %q %v", svg, b[:min(len(b), 20)], err)
	}
	code, _, se := runCmd("lfd", "-out", filepath.Join(dir, "fig3.jpg"))
	if code != 2 || strings.Count(se, "\n") != 1 || !strings.Contains(se, "unknown extension .jpg; want .png, .svg, .pdf or .eps") {
		t.Fatalf("exit %d, stderr %q", code, se)
	}
}

// TestOutFolderCheckedFirst: an -out in a folder that does not exist is
// refused before any work by every sub-command — exit 2, one line naming
// the folder, no progress — where it did all the work and then failed with
// exit 1 naming the hidden temporary file of the write. An -out under a
// file is refused the same way.
func TestOutFolderCheckedFirst(t *testing.T) {
	exp := writeExport(t)
	run := t.TempDir()
	rd := filepath.Join(run, "repeats", "01")
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	h := `[{"step":1,"risk":0.6,"mean_rel_gap":4e-4,"max_rel_gap":5e-4},{"step":2,"risk":0.4,"mean_rel_gap":2e-4,"max_rel_gap":5e-4}]`
	if err := os.WriteFile(filepath.Join(rd, "history.json"), []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing-dir")
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join("..", "..", "configs", "synthetic.yaml")
	for name, args := range map[string][]string{
		"lfd":            {"lfd"},
		"regions config": {"regions", "-config", config, "-set", "train.steps=3", "-set", "queries=20"},
		"regions export": {"regions", "-export", exp},
		"sweep":          {"sweep", "-export", exp},
		"curves":         {"curves", "-run", run},
	} {
		for _, c := range []struct{ dir, want string }{{missing, "the folder " + missing + " does not exist"}, {file, file + " is not a folder"}} {
			out := filepath.Join(c.dir, "f.png")
			code, so, se := runCmd(append(args, "-out", out)...)
			if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, c.want) || strings.Contains(se, ".tmp") {
				t.Errorf("%s -out %s: exit %d stdout %q stderr %q; want exit 2 and one line: %s", name, out, code, so, se, c.want)
			}
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the missing folder was made: %v", err)
	}
}

// writeHistory writes a history.json of steps 1…len(risks) at path.
func writeHistory(t *testing.T, path string, risks []float64, gap float64) {
	t.Helper()
	var steps []map[string]float64
	for i, r := range risks {
		steps = append(steps, map[string]float64{"step": float64(i + 1), "risk": r, "mean_rel_gap": gap, "max_rel_gap": 2 * gap})
	}
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCurvesPartsAndTransfer: one bad history.json among a run's repeats
// no longer fails the figure — the others are drawn, the bad file is named
// in one line on stderr and the exit status is 3 — and a transfer run's
// trainings (train/<objective>/history.json; it has no repeats/) are
// drawn, one line per objective.
func TestCurvesPartsAndTransfer(t *testing.T) {
	run := t.TempDir()
	writeHistory(t, filepath.Join(run, "repeats", "01", "history.json"), []float64{0.6, 0.5, 0.4}, 1e-4)
	writeHistory(t, filepath.Join(run, "repeats", "03", "history.json"), []float64{0.7, 0.45, 0.3}, 2e-4)
	bad := filepath.Join(run, "repeats", "02", "history.json")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "curves.png")
	code, so, se := runCmd("curves", "-run", run, "-out", out, "-width", "800", "-height", "300")
	if code != 3 || !strings.Contains(so, "2 of 3 repeats (01, 03)") || strings.Count(se, "\n") != 1 || !strings.Contains(se, bad) ||
		strings.Contains(se, filepath.Join("repeats", "01")) {
		t.Fatalf("one bad history: exit %d stdout %q stderr %q", code, so, se)
	}
	checkPNG(t, out, 800, 300, 20)

	tr := t.TempDir()
	writeHistory(t, filepath.Join(tr, "train", "drknn", "history.json"), []float64{3.2, 2.9, 2.5, 2.4}, 3e-4)
	writeHistory(t, filepath.Join(tr, "train", "proto", "history.json"), []float64{1.6, 1.1, 0.9, 0.8}, 0)
	out = filepath.Join(t.TempDir(), "transfer.png")
	code, so, se = runCmd("curves", "-run", tr, "-out", out, "-width", "800", "-height", "300")
	if code != 0 || se != "" || !strings.Contains(so, "2 objectives of a transfer run (drknn, proto)") {
		t.Fatalf("transfer run: exit %d stdout %q stderr %q", code, so, se)
	}
	checkPNG(t, out, 800, 300, 20)
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
)

// An input that holds nothing to classify — a 0-row embeddings .npy, a
// 0-row .npy of samples, a CSV with a header and no rows, a folder without
// images — is bad input on every road: exit status 2, nothing on standard
// output, no -out file, one line on standard error naming the file.
func TestEmptyInputEveryRoad(t *testing.T) {
	e := newExport(t, cnn, "mnist", 6)
	m := newExport(t, model.Config{Kind: model.MLP, InShape: []int{4}, Hidden: 5, Dim: 3, DType: model.Float64}, "lung-cancer", 6)
	dir := t.TempDir()
	emb := filepath.Join(dir, "q0.npy")
	check(t, npy.WriteFloat64(emb, nil, 0, e.d))
	samples := filepath.Join(dir, "x0.npy")
	check(t, npy.WriteFloat64(samples, nil, 0, 36))
	rows := filepath.Join(dir, "rows.csv")
	check(t, os.WriteFile(rows, []byte("a,b,c,d\n"), 0o644))
	folder := filepath.Join(dir, "no-images")
	check(t, os.Mkdir(folder, 0o755))
	check(t, os.WriteFile(filepath.Join(folder, "notes.txt"), []byte("not an image"), 0o644))
	cases := []struct {
		name, file string
		args       []string
	}{
		{"embeddings", emb, []string{"-model", e.dir, "-embeddings", emb}},
		{"npy", samples, []string{"-model", e.dir, "-npy", samples}},
		{"csv", rows, []string{"-model", m.dir, "-csv", rows}},
		{"images", folder, []string{"-model", e.dir, "-images", folder}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.csv")
			code, so, se := runCmd(append(c.args, "-out", out)...)
			if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.HasPrefix(se, "drknn-predict: ") || !strings.Contains(se, c.file) ||
				// every road in the same words (-npy said the reader's "shape [0 36], want n×… with n ≥ 1 samples")
				(c.name != "images" && !strings.Contains(se, c.file+" holds no rows")) {
				t.Fatalf("exit %d stdout %q stderr %q; want exit 2 and one line naming %s", code, so, se, c.file)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("-out written for an empty input (%v)", err)
			}
		})
	}
}

package main

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/npy"
)

// TestOutNeverAnInput: an -out that is one of the inputs (also through a
// symbolic or a hard link), a file of the model's export or anywhere in
// its folder, or in a folder that does not exist is refused before any
// work, exit status 2, in one line naming both paths; no file changes.
// (Before, -csv nr.csv -out nr.csv replaced the input with predictions,
// -out RUN/export/manifest.json destroyed the model, and -out nodir/p.csv
// did all the work and then failed naming a hidden temporary file.)
func TestOutNeverAnInput(t *testing.T) {
	e := newExport(t, cnn, "mnist", 10)
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	q := at("q.npy")
	check(t, npy.WriteFloat64(q, make([]float64, 2*e.d), 2, e.d))
	check(t, npy.WriteFloat64(at("x.npy"), make([]float64, 2*36), 2, 36))
	check(t, os.WriteFile(at("rows.csv"), []byte("a,b\n1,2\n"), 0o644))
	check(t, os.MkdirAll(at("imgs/sub"), 0o755))
	writePNG(t, at("imgs/sub/a.png"), image.NewGray(image.Rect(0, 0, 6, 6)))
	writePNG(t, at("one.png"), image.NewGray(image.Rect(0, 0, 6, 6)))
	check(t, os.MkdirAll(at("support/cat"), 0o755))
	writePNG(t, at("support/cat/c.png"), image.NewGray(image.Rect(0, 0, 6, 6)))
	check(t, os.Symlink(q, at("qlink.npy")))
	check(t, os.Link(q, at("qhard.npy")))
	check(t, os.Link(filepath.Join(e.dir, "model.bin"), at("modelhard.bin")))
	check(t, os.Symlink(e.dir, at("exportlink")))
	check(t, os.Symlink(at("imgs"), at("imgslink")))
	// Every file there is, with its content, to see that none changed.
	snapshot := func() map[string][]byte {
		s := map[string][]byte{}
		for _, root := range []string{dir, e.dir} {
			check(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					s[p], err = os.ReadFile(p)
				}
				return err
			}))
		}
		return s
	}
	before := snapshot()
	model := []string{"-model", e.dir}
	for _, c := range []struct {
		args []string
		want []string // in the one line
	}{
		{[]string{"-embeddings", q, "-out", q}, []string{"-out " + q, "-embeddings " + q}},
		{[]string{"-embeddings", q, "-out", at("qlink.npy")}, []string{"-out " + at("qlink.npy"), "-embeddings " + q}},
		{[]string{"-embeddings", q, "-out", at("qhard.npy")}, []string{"-out " + at("qhard.npy"), "-embeddings " + q}},
		{[]string{"-csv", at("rows.csv"), "-out", at("rows.csv")}, []string{"-out " + at("rows.csv"), "-csv " + at("rows.csv")}},
		{[]string{"-npy", at("x.npy"), "-out", at("x.npy")}, []string{"-out " + at("x.npy"), "-npy " + at("x.npy")}},
		{[]string{"-images", at("one.png"), "-out", at("one.png")}, []string{"-out " + at("one.png"), "-images " + at("one.png")}},
		{[]string{"-images", at("one.png"), at("imgs"), "-out", at("imgs/sub/a.png")}, []string{"-out " + at("imgs/sub/a.png"), "-images " + at("imgs/sub/a.png")}},
		{[]string{"-images", at("imgslink"), "-out", at("imgs/sub/a.png")}, []string{"-out " + at("imgs/sub/a.png"), "-images " + at("imgslink/sub/a.png")}},
		{[]string{"-embeddings", q, "-out", filepath.Join(e.dir, "manifest.json")}, []string{"-out " + filepath.Join(e.dir, "manifest.json"), "-model " + filepath.Join(e.dir, "manifest.json")}},
		{[]string{"-embeddings", q, "-out", filepath.Join(e.dir, "new.csv")}, []string{"-out " + filepath.Join(e.dir, "new.csv"), "inside -model " + e.dir}},
		{[]string{"-embeddings", q, "-out", at("exportlink/p.csv")}, []string{"-out " + at("exportlink/p.csv"), "inside -model " + e.dir}},
		{[]string{"-embeddings", q, "-out", at("modelhard.bin")}, []string{"-out " + at("modelhard.bin"), "-model " + filepath.Join(e.dir, "model.bin")}},
		{[]string{"-embeddings", q, "-out", at("nodir/p.csv")}, []string{at("nodir/p.csv") + ": the folder " + at("nodir") + " does not exist"}},
		{[]string{"-embeddings", q, "-out", at("rows.csv/p.csv")}, []string{at("rows.csv") + " is not a folder"}},
		{[]string{"-embeddings", q, "-out", at("imgs")}, []string{at("imgs") + " is a folder"}},
		{[]string{"-support", at("support"), "-images", at("one.png"), "-out", at("support/cat/c.png")}, []string{"-out " + at("support/cat/c.png"), "-support " + at("support/cat/c.png")}},
	} {
		code, so, se := runCmd(append(model, c.args...)...)
		line := strings.TrimSpace(se)
		ok := code == 2 && so == "" && !strings.Contains(line, "\n")
		for _, w := range c.want {
			ok = ok && strings.Contains(line, w)
		}
		if !ok {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, so, se, c.want)
		}
	}
	after := snapshot()
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for p, b := range before {
		if !bytes.Equal(after[p], b) {
			t.Errorf("%s changed", p)
		}
	}
	// An output beside the inputs is written.
	if code, _, se := runCmd(append(model, "-embeddings", q, "-out", at("pred.csv"))...); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
}

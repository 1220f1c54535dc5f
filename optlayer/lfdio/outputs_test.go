package lfdio

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/optlayer"
)

// An output that is an input or the other output through a symbolic link
// (to the file or to its folder) or a hard link is refused before anything
// is read, and every file is left as it was. (filepath.Abs alone let
// -out here/c.npy, here → ., overwrite -cost c.npy.)
func TestOutputIsInputThroughLinks(t *testing.T) {
	dir, cost, labels := fixture(t)
	gradP := filepath.Join(dir, "g.npy")
	if err := npy.WriteFloat64(gradP, make([]float64, 3*12), 3, 12); err != nil {
		t.Fatal(err)
	}
	here := filepath.Join(dir, "here")
	must(t, os.Symlink(".", here))
	clink := filepath.Join(dir, "clink.npy")
	must(t, os.Symlink("c.npy", clink))
	chard := filepath.Join(dir, "chard.npy")
	must(t, os.Link(cost, chard))
	ylink := filepath.Join(dir, "ylink.npy")
	must(t, os.Symlink(labels, ylink))
	before := snapshot(t, dir)
	base := Request{CostPath: cost, LabelsPath: labels, Theta: []float64{0.05}, Epsilon: optlayer.DefaultEpsilon,
		Tol: optlayer.DefaultTol, OutPath: filepath.Join(dir, "p.npy")}
	for _, c := range []struct {
		name string
		edit func(r *Request)
		want string
	}{
		{"out in a linked folder", func(r *Request) { r.OutPath = filepath.Join(here, "c.npy") }, "-cost"},
		{"cost through a link", func(r *Request) { r.CostPath, r.OutPath = clink, cost }, "-cost"},
		{"out a link to cost", func(r *Request) { r.OutPath = clink }, "-cost"},
		{"cost a hard link", func(r *Request) { r.CostPath, r.OutPath = chard, cost }, "-cost"},
		{"labels through a link", func(r *Request) { r.LabelsPath, r.OutPath = ylink, labels }, "-labels"},
		{"grad-out is grad-p", func(r *Request) {
			r.GradPPath, r.GradOutPath = gradP, filepath.Join(here, "g.npy")
		}, "-grad-p"},
		{"grad-out is cost", func(r *Request) { r.GradPPath, r.GradOutPath = gradP, filepath.Join(here, "chard.npy") }, "-cost"},
		{"two new outputs, one name", func(r *Request) {
			r.GradPPath, r.OutPath, r.GradOutPath = gradP, filepath.Join(dir, "new.npy"), filepath.Join(here, "new.npy")
		}, "-grad-out"},
	} {
		r := base
		c.edit(&r)
		_, err := Run(context.Background(), r)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one ErrInput line naming %s", c.name, err, c.want)
		}
		if after := snapshot(t, dir); !equalSnap(before, after) {
			t.Fatalf("%s: files changed: %v → %v", c.name, keys(before), keys(after))
		}
	}
}

// A missing output folder, a folder given as the output, and a file used as
// a folder are input errors, found before the labels are even read (the
// labels path here is missing: its error would come first otherwise).
func TestOutputFoldersCheckedFirst(t *testing.T) {
	dir, cost, labels := fixture(t)
	gradP := filepath.Join(dir, "g.npy")
	if err := npy.WriteFloat64(gradP, make([]float64, 3*12), 3, 12); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		out, gradOut, want string
	}{
		{filepath.Join(missing, "p.npy"), "", "-out " + filepath.Join(missing, "p.npy") + ": folder " + missing + " does not exist"},
		{filepath.Join(dir, "p.npy"), filepath.Join(missing, "d.npy"), "-grad-out " + filepath.Join(missing, "d.npy") + ": folder"},
		{dir, "", "-out " + dir + " is a folder"},
		{filepath.Join(dir, "p.npy"), dir, "-grad-out " + dir + " is a folder"},
		{filepath.Join(cost, "p.npy"), "", "is not a folder"},
	} {
		for _, lab := range []string{labels, filepath.Join(dir, "nolabels.npy")} {
			r := Request{CostPath: cost, LabelsPath: lab, Theta: []float64{0.05}, Epsilon: optlayer.DefaultEpsilon,
				Tol: optlayer.DefaultTol, OutPath: c.out, GradOutPath: c.gradOut}
			if c.gradOut != "" {
				r.GradPPath = gradP
			}
			_, err := Run(context.Background(), r)
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("-out %q -grad-out %q: %v, want ErrInput with %q", c.out, c.gradOut, err, c.want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p.npy")); !os.IsNotExist(err) {
		t.Fatal("-out written by a failed run")
	}
}

// Both outputs are renamed into place only when both are complete; a
// failure writing either leaves neither (P.npy was written before a failed
// -grad-out).
func TestNothingWrittenUnlessAll(t *testing.T) {
	dir, cost, labels := fixture(t)
	gradP := filepath.Join(dir, "g.npy")
	if err := npy.WriteFloat64(gradP, make([]float64, 3*12), 3, 12); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "p.npy")
	r := Request{CostPath: cost, LabelsPath: labels, Theta: []float64{0.05}, Epsilon: optlayer.DefaultEpsilon,
		Tol: optlayer.DefaultTol, OutPath: out, GradPPath: gradP, GradOutPath: filepath.Join(dir, "missing", "d.npy")}
	if _, err := Run(context.Background(), r); err == nil {
		t.Fatal("no error writing -grad-out into a missing folder")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("-out written though -grad-out failed")
	}

	// writeOutputs itself: the second's temporary file cannot be created
	// (its folder is gone), then its rename fails (its name is a folder
	// with a file in it): the first output stays as it was, or is removed
	// again after its rename, and no temporary file is left
	wdir := t.TempDir()
	first := filepath.Join(wdir, "p.npy")
	must(t, os.WriteFile(first, []byte("old"), 0o644))
	outs := []output{{"-out", first, []float64{1, 2}, []int{1, 2}}, {"-grad-out", filepath.Join(wdir, "gone", "d.npy"), []float64{3}, []int{1, 1}}}
	if err := writeOutputs(outs, noReport); err == nil || !strings.Contains(err.Error(), "-grad-out") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(first); string(b) != "old" {
		t.Fatalf("-out = %q after a failed write, want the old content", b)
	}
	busy := filepath.Join(wdir, "d.npy")
	must(t, os.MkdirAll(filepath.Join(busy, "x"), 0o755))
	outs[1].path = busy
	err := writeOutputs(outs, noReport)
	if err == nil || !strings.Contains(err.Error(), "removed again") {
		t.Fatalf("err = %v, want the first output removed again", err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatal("-out left without its -grad-out")
	}
	ents, _ := os.ReadDir(wdir)
	if len(ents) != 1 || ents[0].Name() != "d.npy" {
		t.Fatalf("left in the folder: %v", ents)
	}
	// and on success both are there, as numpy reads them
	outs[1].path = filepath.Join(wdir, "e.npy")
	must(t, writeOutputs(outs, noReport))
	for _, o := range outs {
		got, rows, cols, err := npy.ReadMatrix(o.path, true)
		if err != nil || rows != o.shape[0] || cols != o.shape[1] || !bytes.Equal(f64bytes(got), f64bytes(o.data)) {
			t.Fatalf("%s: %v %d×%d %v", o.flag, err, rows, cols, got)
		}
	}
}

// A subnormal radius is solved (as ϑ = 0) through Run: P = P̂, objective M,
// with and without the gradient and in blocks.
func TestRunSubnormalTheta(t *testing.T) {
	dir, cost, labels := fixture(t)
	gradP := filepath.Join(dir, "g.npy")
	g := make([]float64, 3*12)
	for k := range g {
		g[k] = math.Sin(float64(k))
	}
	if err := npy.WriteFloat64(gradP, g, 3, 12); err != nil {
		t.Fatal(err)
	}
	for _, theta := range []float64{1e-320, 1e-310, 5e-324} {
		for _, block := range []int{0, 6} {
			for _, grad := range []bool{false, true} {
				r := Request{CostPath: cost, LabelsPath: labels, Theta: []float64{theta}, Epsilon: optlayer.DefaultEpsilon,
					Tol: optlayer.DefaultTol, OutPath: filepath.Join(dir, "p.npy"), Block: block}
				if grad {
					r.GradPPath, r.GradOutPath = gradP, filepath.Join(dir, "d.npy")
				}
				sum, err := Run(context.Background(), r)
				if err != nil {
					t.Fatalf("ϑ %g block %d grad %v: %v", theta, block, grad, err)
				}
				if sum.Objective != 3 || sum.LowerBound != 3 {
					t.Fatalf("ϑ %g block %d grad %v: %+v, want objective = bound = M = 3", theta, block, grad, sum)
				}
				p, _, _, err := npy.ReadMatrix(r.OutPath, true)
				must(t, err)
				for m := range 3 {
					for i := range 12 {
						want := 0.0
						if i%3 == m {
							want = 0.25
						}
						if math.Abs(p[m*12+i]-want) > 1e-15 {
							t.Fatalf("ϑ %g: P[%d][%d] = %v, want %v", theta, m, i, p[m*12+i], want)
						}
					}
				}
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func f64bytes(xs []float64) []byte {
	var b bytes.Buffer
	npy.EncodeFloat64(&b, xs, len(xs))
	return b.Bytes()
}

// snapshot maps every entry of dir to its content (links to their target).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	s := map[string]string{}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if l, err := os.Readlink(p); err == nil {
			s[e.Name()] = "→" + l
			continue
		}
		b, _ := os.ReadFile(p)
		s[e.Name()] = string(b)
	}
	return s
}

func equalSnap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func noReport() error { return nil }

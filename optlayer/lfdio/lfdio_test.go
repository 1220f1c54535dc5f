package lfdio

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/optlayer"
)

// fixture writes 12 points on a line in 3 classes (costs |xᵢ − xⱼ|).
func fixture(t *testing.T) (dir, cost, labels string) {
	t.Helper()
	dir = t.TempDir()
	const n = 12
	c := make([]float64, n*n)
	y := make([]int64, n)
	for i := 0; i < n; i++ {
		y[i] = int64(i % 3)
		for j := 0; j < n; j++ {
			c[i*n+j] = math.Abs(float64(i-j)) * 0.1
		}
	}
	cost, labels = filepath.Join(dir, "c.npy"), filepath.Join(dir, "y.npy")
	if err := npy.WriteFloat64(cost, c, n, n); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteInt64(labels, y); err != nil {
		t.Fatal(err)
	}
	return dir, cost, labels
}

func TestRun(t *testing.T) {
	dir, cost, labels := fixture(t)
	out := filepath.Join(dir, "p.npy")
	req := Request{CostPath: cost, LabelsPath: labels, Theta: []float64{0.05}, Epsilon: optlayer.DefaultEpsilon,
		Tol: optlayer.DefaultTol, OutPath: out}
	sum, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != "optimal" || sum.RelGap > req.Tol || sum.LowerBound > sum.Objective {
		t.Fatalf("summary %+v", sum)
	}
	p, rows, cols, err := npy.ReadMatrix(out, true)
	if err != nil || rows != 3 || cols != 12 {
		t.Fatalf("P: %v, %d×%d", err, rows, cols)
	}
	var obj float64
	for i := 0; i < cols; i++ {
		obj += math.Max(p[i], math.Max(p[cols+i], p[2*cols+i]))
	}
	if math.Abs(obj-sum.Objective) > 1e-12 {
		t.Fatalf("Σ max P = %v, summary objective %v", obj, sum.Objective)
	}

	// Errors callers can tell apart, and nothing written on any of them.
	os.Remove(out)
	bad := req
	bad.LabelsPath = filepath.Join(dir, "missing.npy")
	if _, err := Run(context.Background(), bad); !errors.Is(err, ErrInput) {
		t.Errorf("missing labels: %v, want ErrInput", err)
	}
	bad = req
	bad.Theta = []float64{0.1, 0.2}
	if _, err := Run(context.Background(), bad); !errors.Is(err, ErrInput) {
		t.Errorf("two radii for three classes: %v, want ErrInput", err)
	}
	bad = req
	bad.MaxIter = 1
	if _, err := Run(context.Background(), bad); !errors.Is(err, ErrUncertified) || errors.Is(err, ErrInput) {
		t.Errorf("MaxIter 1: %v, want ErrUncertified", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("output written by a failed run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, req); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func FuzzParseTheta(f *testing.F) {
	for _, s := range []string{"0.1", "0.1,0.2", " 1e-3 , 2", "", ",", "NaN", "-1", "1e999", "0x1p-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseTheta(s)
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("%q: error %v does not wrap ErrInput", s, err)
			}
			return
		}
		if len(th) == 0 {
			t.Fatalf("%q: no values and no error", s)
		}
		for _, v := range th {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%q: accepted %v", s, v)
			}
		}
	})
}

func TestRepeat(t *testing.T) {
	dir, cost, labels := fixture(t)
	req := Request{CostPath: cost, LabelsPath: labels, Theta: []float64{0.05}, Epsilon: optlayer.DefaultEpsilon,
		Tol: optlayer.DefaultTol, OutPath: filepath.Join(dir, "p.npy")}
	one, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Repeat = 4
	four, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if four.Objective != one.Objective || four.LowerBound != one.LowerBound || four.Repeats != 4 ||
		!(four.SecondsMin > 0 && four.SecondsMin <= four.SecondsMedian) || one.Repeats != 0 {
		t.Fatalf("once %+v, four times %+v", one, four)
	}
	req.Repeat = -1
	if _, err := Run(context.Background(), req); !errors.Is(err, ErrInput) {
		t.Fatalf("Repeat −1: %v, want ErrInput", err)
	}
}

// TestFeaturesLPOnly: without a gradient Run computes the costs itself and
// drops the features; the answer is the one Solve gives from the features,
// bit for bit, and features whose costs overflow are bad input.
func TestFeaturesLPOnly(t *testing.T) {
	dir := t.TempDir()
	const n, dim = 30, 5
	x := make([]float64, n*dim)
	y := make([]int64, n)
	labels := make([]int, n)
	for i := range y {
		y[i], labels[i] = int64(i%3), i%3
		for k := 0; k < dim; k++ {
			x[i*dim+k] = math.Sin(float64(7*i+k)) + float64(i%3)
		}
	}
	feat, lab, out := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy"), filepath.Join(dir, "p.npy")
	if err := npy.WriteFloat64(feat, x, n, dim); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteInt64(lab, y); err != nil {
		t.Fatal(err)
	}
	req := Request{FeaturesPath: feat, LabelsPath: lab, Theta: []float64{0.3}, Epsilon: optlayer.DefaultEpsilon,
		Tol: optlayer.DefaultTol, OutPath: out}
	sum, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := optlayer.Solve(&optlayer.Problem{N: n, Features: x, Dim: dim, Labels: labels, Theta: []float64{0.3}},
		&optlayer.Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Objective != want.Objective || sum.LowerBound != want.LowerBound || sum.Iterations != want.Iterations {
		t.Fatalf("Run %+v, Solve objective %v lower bound %v iterations %d", sum, want.Objective, want.LowerBound, want.Iterations)
	}
	p, _, _, err := npy.ReadMatrix(out, true)
	if err != nil {
		t.Fatal(err)
	}
	for k := range p {
		if math.Float64bits(p[k]) != math.Float64bits(want.P[k]) {
			t.Fatalf("P[%d] = %v, Solve's %v", k, p[k], want.P[k])
		}
	}
	x[3*dim] = 1e200
	x[4*dim] = -1e200
	if err := npy.WriteFloat64(feat, x, n, dim); err != nil {
		t.Fatal(err)
	}
	os.Remove(out)
	if _, err := Run(context.Background(), req); !errors.Is(err, ErrInput) {
		t.Fatalf("overflowing costs: %v, want ErrInput", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("output written by a failed run")
	}
}

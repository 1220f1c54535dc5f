package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/internal/numpytest"
	"github.com/drknn/drknn/optlayer"
)

// problem1D is n points on a line in M classes: W1 on a line is the L1
// distance between the cumulative distribution functions, so the budget of
// a solution can be checked without an LP solver.
func problem1D(t *testing.T, seed int64, n, m int) (x []float64, labels []int64) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	x = make([]float64, n)
	labels = make([]int64, n)
	for i := range x {
		labels[i] = int64(i % m)
		x[i] = float64(labels[i]) + 0.8*rng.NormFloat64()
	}
	return x, labels
}

func costs1D(x []float64) []float64 {
	n := len(x)
	c := make([]float64, n*n)
	for i := range x {
		for j := range x {
			c[i*n+j] = math.Abs(x[i] - x[j])
		}
	}
	return c
}

// w1Line is the Wasserstein-1 distance between two distributions p and q
// on the points x of a line.
func w1Line(x, p, q []float64) float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	var fp, fq, w float64
	for k := 0; k+1 < len(idx); k++ {
		fp += p[idx[k]]
		fq += q[idx[k]]
		w += math.Abs(fp-fq) * (x[idx[k+1]] - x[idx[k]])
	}
	return w
}

// mustBlocks is optlayer.Blocks, the command's partition.
func mustBlocks(t *testing.T, p *optlayer.Problem, size int, seed int64) [][]int {
	t.Helper()
	b, err := optlayer.Blocks(p, size, seed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sumMax is Σ_i max_m P_m(i) of an M×n P.
func sumMax(p []float64, m, n int) float64 {
	var obj float64
	for i := 0; i < n; i++ {
		best := 0.0
		for k := 0; k < m; k++ {
			best = math.Max(best, p[k*n+i])
		}
		obj += best
	}
	return obj
}

type out struct {
	Objective  float64 `json:"objective"`
	LowerBound float64 `json:"lower_bound"`
	Gap        float64 `json:"gap"`
	RelGap     float64 `json:"rel_gap"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	Status     string  `json:"status"`
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCmdHook(t, nil, args...)
}

// runCmdHook is runCmd with run's size hook.
func runCmdHook(t *testing.T, onSize func(n, repeat int), args ...string) (int, string, string) {
	t.Helper()
	var so, se bytes.Buffer
	code := report(run(context.Background(), args, &so, &se, onSize), &se)
	return code, so.String(), se.String()
}

func writeF(t *testing.T, path string, data []float64, shape ...int) string {
	t.Helper()
	if err := npy.WriteFloat64(path, data, shape...); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeI(t *testing.T, path string, data []int64) string {
	t.Helper()
	if err := npy.WriteInt64(path, data); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCostEndToEnd(t *testing.T) {
	dir := t.TempDir()
	const n, m = 24, 3
	x, y := problem1D(t, 1, n, m)
	theta := []float64{0.1, 0.2, 0.15}
	cpath := writeF(t, filepath.Join(dir, "c.npy"), costs1D(x), n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	ppath := filepath.Join(dir, "p.npy")
	code, so, se := runCmd(t, "-cost", cpath, "-labels", ypath, "-theta", "0.1,0.2,0.15", "-out", ppath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	var o out
	if err := json.Unmarshal([]byte(so), &o); err != nil {
		t.Fatalf("stdout %q: %v", so, err)
	}
	p, r, c, err := npy.ReadMatrix(ppath, true)
	if err != nil {
		t.Fatal(err)
	}
	if r != m || c != n {
		t.Fatalf("P is %d×%d, want %d×%d", r, c, m, n)
	}
	// Feasibility: each P_m is a distribution within W1 ≤ ϑ_m of P̂_m.
	obj := sumMax(p, m, n)
	for k := 0; k < m; k++ {
		row := p[k*n : (k+1)*n]
		hat := make([]float64, n)
		var sum float64
		cnt := 0
		for i, v := range row {
			if v < 0 {
				t.Fatalf("P[%d,%d] = %v < 0", k, i, v)
			}
			sum += v
			if int(y[i]) == k {
				cnt++
			}
		}
		for i := range hat {
			if int(y[i]) == k {
				hat[i] = 1 / float64(cnt)
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("row %d of P sums to %v", k, sum)
		}
		if w := w1Line(x, hat, row); w > theta[k]*(1+1e-9) {
			t.Fatalf("class %d: W1(P̂, P) = %v > ϑ = %v", k, w, theta[k])
		}
	}
	if math.Abs(obj-o.Objective) > 1e-9*obj {
		t.Fatalf("printed objective %v, Σ max P of the file %v", o.Objective, obj)
	}
	if o.LowerBound > o.Objective || math.Abs(o.Gap-(o.Objective-o.LowerBound)) > 1e-12 {
		t.Fatalf("bounds %+v inconsistent", o)
	}
	if o.Status != "optimal" || o.RelGap > optlayer.DefaultTol {
		t.Fatalf("status %q rel_gap %v", o.Status, o.RelGap)
	}
	// The LP value lies in [1, M] and θ > 0 lets classes overlap here.
	if o.LowerBound < 1-1e-9 || o.Objective > m+1e-9 || o.Objective > m-0.05 {
		t.Fatalf("objective %v / lower bound %v outside the expected range", o.Objective, o.LowerBound)
	}
	// The same P as the library's answer (without -grad-p the command
	// needs only the certified LP answer: LPOnly).
	yi := make([]int, n)
	for i, v := range y {
		yi[i] = int(v)
	}
	res, err := optlayer.Solve(&optlayer.Problem{N: n, Cost: costs1D(x), Labels: yi, Theta: theta}, &optlayer.Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		if p[i] != res.P[i] {
			t.Fatalf("P[%d] = %v, library %v", i, p[i], res.P[i])
		}
	}
	if res.Objective != o.Objective || res.Iterations != o.Iterations {
		t.Fatalf("printed %+v, library objective %v iterations %d", o, res.Objective, res.Iterations)
	}
}

// TestBlocks solves in blocks (-block) from features: P is feasible for
// the whole problem (W1 on the line), the printed bounds hold for the whole
// problem's value, and P is the library's SolveBlocks answer.
func TestBlocks(t *testing.T) {
	dir := t.TempDir()
	const n, m = 60, 3
	x, y := problem1D(t, 4, n, m)
	theta := []float64{0.15, 0.3, 0.2}
	xpath := writeF(t, filepath.Join(dir, "x.npy"), x, n, 1)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	ppath := filepath.Join(dir, "p.npy")
	code, so, se := runCmd(t, "-features", xpath, "-labels", ypath, "-theta", "0.15,0.3,0.2", "-block", "20", "-seed", "3", "-out", ppath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	var o struct {
		out
		Blocks      int     `json:"blocks"`
		BlockRelGap float64 `json:"block_rel_gap"`
	}
	if err := json.Unmarshal([]byte(so), &o); err != nil {
		t.Fatalf("stdout %q: %v", so, err)
	}
	if o.Blocks != 3 || o.Status != "optimal" || o.BlockRelGap > optlayer.DefaultTol {
		t.Fatalf("blocks %d, status %q, block_rel_gap %v", o.Blocks, o.Status, o.BlockRelGap)
	}
	p, _, _, err := npy.ReadMatrix(ppath, true)
	if err != nil {
		t.Fatal(err)
	}
	obj := sumMax(p, m, n)
	for k := 0; k < m; k++ {
		row := p[k*n : (k+1)*n]
		hat := make([]float64, n)
		for i := range hat {
			if int(y[i]) == k {
				hat[i] = 1 / float64(n/m)
			}
		}
		if w := w1Line(x, hat, row); w > theta[k]*(1+1e-9) {
			t.Fatalf("class %d: W1(P̂, P) = %v > ϑ = %v", k, w, theta[k])
		}
	}
	if math.Abs(obj-o.Objective) > 1e-9*obj {
		t.Fatalf("printed objective %v, Σ max P of the file %v", o.Objective, obj)
	}
	yi := make([]int, n)
	for i, v := range y {
		yi[i] = int(v)
	}
	whole, err := optlayer.Solve(&optlayer.Problem{N: n, Cost: costs1D(x), Labels: yi, Theta: theta}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// LB ≤ v ≤ objective for the whole problem's value v
	if o.LowerBound > whole.Objective || o.Objective < whole.LowerBound || o.Gap != o.Objective-o.LowerBound {
		t.Fatalf("blocks: bound %v, objective %v; whole problem: [%v, %v]", o.LowerBound, o.Objective, whole.LowerBound, whole.Objective)
	}
	br, err := optlayer.SolveBlocks(&optlayer.Problem{N: n, Features: x, Dim: 1, Labels: yi, Theta: theta},
		mustBlocks(t, &optlayer.Problem{N: n, Features: x, Dim: 1, Labels: yi, Theta: theta}, 20, 3), &optlayer.Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		if p[i] != br.P[i] {
			t.Fatalf("P[%d] = %v, library %v", i, p[i], br.P[i])
		}
	}
	t.Logf("whole problem %.6f, blocks %.6f (certified bound %.6f)", whole.Objective, o.Objective, o.LowerBound)
	// -block-bound=false: the same P, the trivial bound
	code, so, se = runCmd(t, "-features", xpath, "-labels", ypath, "-theta", "0.15,0.3,0.2", "-block", "20", "-seed", "3", "-block-bound=false", "-out", ppath)
	if code != 0 {
		t.Fatalf("-block-bound=false: exit %d: %s", code, se)
	}
	var o2 out
	if err := json.Unmarshal([]byte(so), &o2); err != nil {
		t.Fatal(err)
	}
	p2, _, _, err := npy.ReadMatrix(ppath, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p2, p) || o2.Objective != o.Objective || o2.LowerBound != 1 || o.LowerBound <= 1 {
		t.Fatalf("-block-bound=false: objective %v, bound %v; with it %v, %v", o2.Objective, o2.LowerBound, o.Objective, o.LowerBound)
	}
	// -grad-p: the blocked map's gradient, ∂L/∂X (n×1), the library's
	g := make([]float64, m*n)
	for k := range g {
		g[k] = math.Sin(float64(k))
	}
	gpath := writeF(t, filepath.Join(dir, "g.npy"), g, m, n)
	dpath := filepath.Join(dir, "d.npy")
	code, _, se = runCmd(t, "-features", xpath, "-labels", ypath, "-theta", "0.15,0.3,0.2", "-block", "20", "-seed", "3", "-out", ppath, "-grad-p", gpath, "-grad-out", dpath)
	if code != 0 {
		t.Fatalf("-grad-p: exit %d: %s", code, se)
	}
	d, rows, cols, err := npy.ReadMatrix(dpath, true)
	if err != nil || rows != n || cols != 1 {
		t.Fatalf("gradient %d×%d, %v; want %d×1", rows, cols, err, n)
	}
	br, err = optlayer.SolveBlocks(&optlayer.Problem{N: n, Features: x, Dim: 1, Labels: yi, Theta: theta},
		mustBlocks(t, &optlayer.Problem{N: n, Features: x, Dim: 1, Labels: yi, Theta: theta}, 20, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := br.FeatureVJP(g)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "blocked ∂L/∂X", d, want, 0)
	if slices.Max(d) <= 0 && slices.Min(d) >= 0 {
		t.Fatal("the blocked gradient is 0 everywhere")
	}
}

func TestGradients(t *testing.T) {
	dir := t.TempDir()
	const n, m, d = 12, 2, 3
	rng := rand.New(rand.NewSource(3))
	xf := make([]float64, n*d)
	for i := range xf {
		xf[i] = rng.NormFloat64()
	}
	y := make([]int64, n)
	yi := make([]int, n)
	for i := range y {
		y[i], yi[i] = int64(i%m), i%m
	}
	g := make([]float64, m*n)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	xpath := writeF(t, filepath.Join(dir, "x.npy"), xf, n, d)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	gpath := writeF(t, filepath.Join(dir, "g.npy"), g, m, n)
	settings := &optlayer.Settings{Epsilon: 1e-2, Tol: 1e-4}

	for _, metric := range []string{"euclidean", "sqeuclidean"} {
		t.Run(metric, func(t *testing.T) {
			mt := optlayer.Euclidean
			if metric == "sqeuclidean" {
				mt = optlayer.SqEuclidean
			}
			c, err := optlayer.Costs(xf, n, d, mt)
			if err != nil {
				t.Fatal(err)
			}
			cpath := writeF(t, filepath.Join(dir, metric+"-c.npy"), c, n, n)
			// Gradient w.r.t. the costs.
			ppath, dpath := filepath.Join(dir, metric+"-p.npy"), filepath.Join(dir, metric+"-dc.npy")
			code, _, se := runCmd(t, "-cost", cpath, "-labels", ypath, "-theta", "0.3", "-eps", "1e-2", "-tol", "1e-4",
				"-out", ppath, "-grad-p", gpath, "-grad-out", dpath)
			if code != 0 {
				t.Fatal(se)
			}
			res, err := optlayer.Solve(&optlayer.Problem{N: n, Cost: c, Labels: yi, Theta: []float64{0.3}}, settings)
			if err != nil {
				t.Fatal(err)
			}
			want, err := res.VJP(g)
			if err != nil {
				t.Fatal(err)
			}
			got, r, cc, err := npy.ReadMatrix(dpath, true)
			if err != nil || r != n || cc != n {
				t.Fatalf("%v %d×%d", err, r, cc)
			}
			assertClose(t, "∂L/∂C", got, want, 1e-12)
			nonzero := false
			for _, v := range got {
				nonzero = nonzero || v != 0
			}
			if !nonzero {
				t.Fatal("∂L/∂C is identically zero")
			}

			// Gradient w.r.t. the features.
			dxpath := filepath.Join(dir, metric+"-dx.npy")
			code, _, se = runCmd(t, "-features", xpath, "-metric", metric, "-labels", ypath, "-theta", "0.3",
				"-eps", "1e-2", "-tol", "1e-4", "-out", filepath.Join(dir, metric+"-p2.npy"), "-grad-p", gpath, "-grad-out", dxpath)
			if code != 0 {
				t.Fatal(se)
			}
			resF, err := optlayer.Solve(&optlayer.Problem{N: n, Features: xf, Dim: d, Metric: mt, Labels: yi, Theta: []float64{0.3}}, settings)
			if err != nil {
				t.Fatal(err)
			}
			gc, err := resF.VJP(g)
			if err != nil {
				t.Fatal(err)
			}
			wantX, err := resF.FeatureGrad(gc)
			if err != nil {
				t.Fatal(err)
			}
			chain, err := optlayer.CostGrad(xf, n, d, mt, gc)
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, "FeatureGrad vs CostGrad", wantX, chain, 1e-12)
			gotX, r, cc, err := npy.ReadMatrix(dxpath, true)
			if err != nil || r != n || cc != d {
				t.Fatalf("%v %d×%d", err, r, cc)
			}
			assertClose(t, "∂L/∂X", gotX, wantX, 1e-12)
		})
	}
}

func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	const n, m = 6, 2
	x, y := problem1D(t, 2, n, m)
	c := costs1D(x)
	cpath := writeF(t, filepath.Join(dir, "c.npy"), c, n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	xpath := writeF(t, filepath.Join(dir, "x.npy"), x, n, 1)
	gpath := writeF(t, filepath.Join(dir, "g.npy"), make([]float64, m*n), m, n)
	gbad := writeF(t, filepath.Join(dir, "gbad.npy"), make([]float64, n*n), n, n)
	cnan := append([]float64(nil), c...)
	cnan[1] = math.NaN()
	cnanPath := writeF(t, filepath.Join(dir, "cnan.npy"), cnan, n, n)
	cinf := append([]float64(nil), c...)
	cinf[2] = math.Inf(1)
	cinfPath := writeF(t, filepath.Join(dir, "cinf.npy"), cinf, n, n)
	cneg := append([]float64(nil), c...)
	cneg[1] = -1
	cnegPath := writeF(t, filepath.Join(dir, "cneg.npy"), cneg, n, n)
	cdiag := append([]float64(nil), c...)
	cdiag[0] = 1
	cdiagPath := writeF(t, filepath.Join(dir, "cdiag.npy"), cdiag, n, n)
	csmall := writeF(t, filepath.Join(dir, "csmall.npy"), make([]float64, 25), 5, 5)
	crect := writeF(t, filepath.Join(dir, "crect.npy"), make([]float64, 2*n*n), n, 2*n)
	cvec := writeF(t, filepath.Join(dir, "cvec.npy"), c, n*n)
	ybig := writeI(t, filepath.Join(dir, "ybig.npy"), []int64{0, 1, 0, 1, 0, 7})
	yneg := writeI(t, filepath.Join(dir, "yneg.npy"), []int64{0, 1, 0, 1, 0, -1})
	ygap := writeI(t, filepath.Join(dir, "ygap.npy"), []int64{0, 2, 0, 2, 0, 2})
	yshort := writeI(t, filepath.Join(dir, "yshort.npy"), []int64{0, 1, 0})
	xnan := append([]float64(nil), x...)
	xnan[3] = math.NaN()
	xnanPath := writeF(t, filepath.Join(dir, "xnan.npy"), xnan, n, 1)
	xshort := writeF(t, filepath.Join(dir, "xshort.npy"), x[:4], 4, 1)
	trunc := filepath.Join(dir, "trunc.npy")
	data, _ := os.ReadFile(cpath)
	os.WriteFile(trunc, data[:len(data)-8], 0o644)
	garbage := filepath.Join(dir, "garbage.npy")
	os.WriteFile(garbage, []byte("this is not numpy"), 0o644)
	missing := filepath.Join(dir, "missing.npy")

	out := filepath.Join(dir, "out.npy")
	gout := filepath.Join(dir, "gout.npy")
	base := func(extra ...string) []string {
		return append([]string{"-labels", ypath, "-theta", "0.1", "-out", out}, extra...)
	}
	cases := map[string][]string{
		"no args":                   {},
		"neither cost nor feats":    base(),
		"both cost and features":    base("-cost", cpath, "-features", xpath),
		"no labels":                 {"-cost", cpath, "-theta", "0.1", "-out", out},
		"no out":                    {"-cost", cpath, "-labels", ypath, "-theta", "0.1"},
		"no theta":                  {"-cost", cpath, "-labels", ypath, "-out", out},
		"negative theta":            base("-cost", cpath, "-theta", "-0.1"),
		"negative theta in list":    base("-cost", cpath, "-theta", "0.1,-0.2"),
		"nan theta":                 base("-cost", cpath, "-theta", "NaN"),
		"theta not a number":        base("-cost", cpath, "-theta", "abc"),
		"wrong theta count":         base("-cost", cpath, "-theta", "0.1,0.2,0.3"),
		"grad-out without grad-p":   base("-cost", cpath, "-grad-out", gout),
		"grad-p without grad-out":   base("-cost", cpath, "-grad-p", gpath),
		"grad-p wrong shape":        base("-cost", cpath, "-grad-p", gbad, "-grad-out", gout),
		"grad-p missing":            base("-cost", cpath, "-grad-p", missing, "-grad-out", gout),
		"cost NaN":                  base("-cost", cnanPath),
		"cost Inf":                  base("-cost", cinfPath),
		"cost negative":             base("-cost", cnegPath),
		"cost diagonal":             base("-cost", cdiagPath),
		"cost too small":            base("-cost", csmall),
		"cost not square":           base("-cost", crect),
		"cost rank 1":               base("-cost", cvec),
		"cost truncated":            base("-cost", trunc),
		"cost garbage":              base("-cost", garbage),
		"cost missing":              base("-cost", missing),
		"labels too big":            {"-cost", cpath, "-labels", ybig, "-theta", "0.1", "-out", out},
		"labels negative":           {"-cost", cpath, "-labels", yneg, "-theta", "0.1", "-out", out},
		"labels skip a class":       {"-cost", cpath, "-labels", ygap, "-theta", "0.1", "-out", out},
		"labels short":              {"-cost", cpath, "-labels", yshort, "-theta", "0.1", "-out", out},
		"labels are floats":         {"-cost", cpath, "-labels", cpath, "-theta", "0.1", "-out", out},
		"features NaN":              base("-features", xnanPath),
		"features wrong rows":       base("-features", xshort),
		"metric unknown":            base("-features", xpath, "-metric", "manhattan"),
		"metric with cost":          base("-cost", cpath, "-metric", "euclidean"),
		"bad eps":                   base("-cost", cpath, "-eps", "0"),
		"bad tol":                   base("-cost", cpath, "-tol", "-1"),
		"unknown flag":              base("-cost", cpath, "-bogus"),
		"extra argument":            base("-cost", cpath, "extra"),
		"out is an input":           {"-cost", cpath, "-labels", ypath, "-theta", "0.1", "-out", cpath},
		"block negative":            base("-cost", cpath, "-block", "-1"),
		"block-bound without block": base("-cost", cpath, "-block-bound=false"),
		"block not a number":        base("-cost", cpath, "-block", "two"),
		"block grad-p wrong shape":  base("-cost", cpath, "-block", "3", "-grad-p", gbad, "-grad-out", gout),
		"block features NaN":        base("-features", xnanPath, "-block", "3"),
		"block cost NaN":            base("-cost", cnanPath, "-block", "3"),
		"block 1":                   base("-cost", cpath, "-block", "1"),
		"tol 1":                     base("-cost", cpath, "-tol", "1"),
		"tol 2":                     base("-cost", cpath, "-tol", "2"),
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			before, _ := os.ReadFile(cpath)
			code, so, se := runCmd(t, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, se)
			}
			if so != "" {
				t.Fatalf("stdout %q, want nothing", so)
			}
			if strings.Count(se, "\n") != 1 || !strings.HasSuffix(se, "\n") || !strings.HasPrefix(se, "drknn-lfd: ") {
				t.Fatalf("stderr %q, want one line", se)
			}
			for _, p := range []string{out, gout} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Fatalf("%s exists after a failed run", p)
				}
			}
			after, _ := os.ReadFile(cpath)
			if !bytes.Equal(before, after) {
				t.Fatal("input changed")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") || strings.Contains(e.Name(), "tmp") {
					t.Fatalf("left-over file %s", e.Name())
				}
			}
		})
	}
}

// TestSettingsAsConfig: -block and -tol take what the config takes for
// eval.lfd_block (0 or ≥ 2) and train.tol ((0, 1)); a value outside is one
// line naming the flag and the rule, exit 2.
func TestSettingsAsConfig(t *testing.T) {
	dir := t.TempDir()
	const n, m = 6, 2
	x, y := problem1D(t, 2, n, m)
	cpath := writeF(t, filepath.Join(dir, "c.npy"), costs1D(x), n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	out := filepath.Join(dir, "out.npy")
	for _, c := range []struct{ flag, value, want string }{
		{"-block", "1", "-block 1: want 0 (the whole problem) or ≥ 2 points per block"},
		{"-tol", "1", "-tol 1: want a value in (0, 1)"},
		{"-tol", "2", "-tol 2: want a value in (0, 1)"},
		{"-tol", "Inf", "-tol +Inf: want a value in (0, 1)"},
	} {
		code, _, se := runCmd(t, "-cost", cpath, "-labels", ypath, "-theta", "0.1", "-out", out, c.flag, c.value)
		if code != 2 || strings.Count(se, "\n") != 1 || !strings.Contains(se, c.want) {
			t.Errorf("%s %s: exit %d, stderr %q; want 2 and %q", c.flag, c.value, code, se, c.want)
		}
	}
	for _, ok := range [][]string{{"-block", "2"}, {"-block", "0"}, {"-tol", "0.5"}} {
		if code, _, se := runCmd(t, "-cost", cpath, "-labels", ypath, "-theta", "0.1", "-out", out, ok[0], ok[1]); code != 0 {
			t.Errorf("%s %s: exit %d, %s", ok[0], ok[1], code, se)
		}
	}
}

// TestNumPy writes the inputs with NumPy and reads P back with NumPy, when
// the system Python has NumPy.
func TestNumPy(t *testing.T) {
	py := numpytest.Python(t)
	dir := t.TempDir()
	script := `
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
x = np.concatenate([rng.normal(0, 1, (8, 2)), rng.normal(1.5, 1, (8, 2))]).astype(np.float32)
y = np.array([0]*8 + [1]*8, dtype=np.int32)
np.save(d + "/x.npy", x)
np.save(d + "/y.npy", y)
for t in ["i1", "u1", "i2", "u2", "u4", "u8"]:
    np.save(d + "/y_" + t + ".npy", y.astype(t))
c = np.sqrt(((x[:, None, :].astype(np.float64) - x[None, :, :])**2).sum(-1))
np.save(d + "/c.npy", np.asfortranarray(c))
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	for _, in := range [][]string{{"-features", filepath.Join(dir, "x.npy")}, {"-cost", filepath.Join(dir, "c.npy")}} {
		ppath := filepath.Join(dir, "p.npy")
		args := append(in, "-labels", filepath.Join(dir, "y.npy"), "-theta", "0.5", "-out", ppath)
		code, so, se := runCmd(t, args...)
		if code != 0 {
			t.Fatal(se)
		}
		var o out
		if err := json.Unmarshal([]byte(so), &o); err != nil {
			t.Fatal(err)
		}
		check := `
import sys, json, numpy as np
p = np.load(sys.argv[1])
assert p.dtype == np.float64 and p.shape == (2, 16), (p.dtype, p.shape)
assert (p >= 0).all() and np.allclose(p.sum(1), 1)
print(json.dumps(float(p.max(0).sum())))
`
		res, err := exec.Command(py, "-c", check, ppath).CombinedOutput()
		if err != nil {
			t.Fatalf("numpy check: %v\n%s", err, res)
		}
		var obj float64
		if err := json.Unmarshal(bytes.TrimSpace(res), &obj); err != nil {
			t.Fatal(err)
		}
		if math.Abs(obj-o.Objective) > 1e-12*obj {
			t.Fatalf("NumPy Σ max P = %v, printed objective %v", obj, o.Objective)
		}
		os.Remove(ppath)
		// labels of every other integer dtype NumPy writes: the same solve
		for _, ty := range []string{"i1", "u1", "i2", "u2", "u4", "u8"} {
			args[len(in)+1] = filepath.Join(dir, "y_"+ty+".npy")
			code, so2, se := runCmd(t, args...)
			if code != 0 || so2 == "" {
				t.Fatalf("%s labels: exit %d: %s", ty, code, se)
			}
			var o2 out
			if err := json.Unmarshal([]byte(so2), &o2); err != nil || o2.Objective != o.Objective {
				t.Fatalf("%s labels: objective %v, int32 labels %v (%v)", ty, o2.Objective, o.Objective, err)
			}
			os.Remove(ppath)
		}
	}
}

// An answer whose gap misses -tol (here: -max-iter 1) must not pass as a
// success: exit 3, the gap on stderr, nothing written — unless
// -allow-uncertified, which writes it and reports status iteration_limit.
func TestUncertified(t *testing.T) {
	dir := t.TempDir()
	const n, m = 24, 3
	x, y := problem1D(t, 1, n, m)
	cpath := writeF(t, filepath.Join(dir, "c.npy"), costs1D(x), n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	ppath := filepath.Join(dir, "p.npy")
	args := []string{"-cost", cpath, "-labels", ypath, "-theta", "0.1", "-max-iter", "1", "-out", ppath}
	code, so, se := runCmd(t, args...)
	if code != 3 || so != "" {
		t.Fatalf("exit %d, stdout %q; want 3 and nothing", code, so)
	}
	if !strings.HasPrefix(se, "drknn-lfd: ") || strings.Count(se, "\n") != 1 || !strings.Contains(se, "relative gap") {
		t.Fatalf("stderr %q: want one line with the gap", se)
	}
	if _, err := os.Stat(ppath); !os.IsNotExist(err) {
		t.Fatal("P written for an uncertified answer")
	}
	code, so, se = runCmd(t, append(args, "-allow-uncertified")...)
	if code != 0 {
		t.Fatalf("-allow-uncertified: exit %d: %s", code, se)
	}
	var o out
	if err := json.Unmarshal([]byte(so), &o); err != nil {
		t.Fatal(err)
	}
	if o.Status != "iteration_limit" || o.RelGap <= optlayer.DefaultTol {
		t.Fatalf("summary %+v: want status iteration_limit with rel_gap > tol", o)
	}
	if _, err := os.Stat(ppath); err != nil {
		t.Fatal(err)
	}
}

// The collector is off (with a soft memory limit) for one solve of up to
// gcOffMaxN points, at the default 100% for repeated solves and at 5% above
// gcOffMaxN points; run reports n and -repeat to the hook before reading the
// costs.
func TestGCPolicy(t *testing.T) {
	for _, c := range []struct {
		n, repeat int
		percent   int
		limit     int64
	}{{2, 0, -1, gcOffLimit}, {50, 1, -1, gcOffLimit}, {200, 0, -1, gcOffLimit}, {gcOffMaxN, 1, -1, gcOffLimit},
		{50, 2, 100, -1}, {gcOffMaxN, 400, 100, -1},
		{gcOffMaxN + 1, 0, 5, -1}, {10000, 1, 5, -1}, {10000, 5, 5, -1}} {
		if p, l := gcPolicy(c.n, c.repeat); p != c.percent || l != c.limit {
			t.Errorf("gcPolicy(%d, %d) = %d, %d; want %d, %d", c.n, c.repeat, p, l, c.percent, c.limit)
		}
	}
	dir := t.TempDir()
	const n, m = 24, 3
	x, y := problem1D(t, 1, n, m)
	cpath := writeF(t, filepath.Join(dir, "c.npy"), costs1D(x), n, n)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	var got [][2]int
	onSize := func(n, repeat int) { got = append(got, [2]int{n, repeat}) }
	if code, _, se := runCmdHook(t, onSize, "-cost", cpath, "-labels", ypath, "-theta", "0.1", "-out", filepath.Join(dir, "p.npy")); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	if len(got) != 1 || got[0] != [2]int{n, 0} {
		t.Fatalf("onSize called with %v, want [[%d 0]]", got, n)
	}
	got = nil
	if code, _, se := runCmdHook(t, onSize, "-cost", cpath, "-labels", ypath, "-theta", "0.1", "-repeat", "3", "-out", filepath.Join(dir, "p.npy")); code != 0 {
		t.Fatalf("-repeat 3: exit %d: %s", code, se)
	}
	if len(got) != 1 || got[0] != [2]int{n, 3} {
		t.Fatalf("-repeat 3: onSize called with %v, want [[%d 3]]", got, n)
	}
	// the costs are read after the hook: a missing cost file fails after it
	got = nil
	if code, _, _ := runCmdHook(t, onSize, "-cost", filepath.Join(dir, "missing.npy"), "-labels", ypath, "-theta", "0.1", "-out", filepath.Join(dir, "q.npy")); code != 2 {
		t.Fatalf("missing costs: exit %d, want 2", code)
	}
	if len(got) != 1 || got[0] != [2]int{n, 0} {
		t.Fatalf("missing costs: onSize called with %v, want [[%d 0]]", got, n)
	}
}

// Ctrl-C is caught (and cancels the run) only above gcOffMaxN points.
func TestCatchInterrupt(t *testing.T) {
	for _, n := range []int{2, 200, gcOffMaxN} {
		if catchInterrupt(n, func() { t.Errorf("n = %d: cancelled", n) }) {
			t.Fatalf("n = %d: Ctrl-C caught, want the default (the process ends)", n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer signal.Reset(os.Interrupt)
	if !catchInterrupt(gcOffMaxN+1, cancel) {
		t.Fatalf("n = %d: Ctrl-C not caught", gcOffMaxN+1)
	}
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("SIGINT did not cancel the run")
	}
}

// The helper threads are kept off the solve's core for one serial solve with
// the collector off, and only then.
func TestQuietRuntime(t *testing.T) {
	for _, c := range []struct {
		n, repeat int
		want      bool
	}{{2, 0, true}, {200, 1, true}, {optlayer.SerialMaxN, 0, true},
		{200, 2, false}, {optlayer.SerialMaxN + 1, 0, false}, {gcOffMaxN, 1, false}, {10000, 0, false}} {
		if got := quietRuntime(c.n, c.repeat); got != c.want {
			t.Errorf("quietRuntime(%d, %d) = %v, want %v", c.n, c.repeat, got, c.want)
		}
	}
}

package main

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/npy"
)

// TestGradPHuge: a -grad-p of finite but huge values (≈1e307, 1e308) used
// to exit 1 ("gradient: non-finite entry", an internal failure): their
// gradient's intermediate sums overflow. The map is linear in ∂L/∂P, so
// it is computed for the values scaled down by a power of two and scaled
// back: a gradient float64 holds is written (here exactly 2¹⁰²⁰ times the
// gradient of the unscaled values), one it cannot hold is bad input —
// exit 2, one line naming the file and its largest value, nothing written.
// NaN and ±Inf in -grad-p are bad input with their position too.
func TestGradPHuge(t *testing.T) {
	dir := t.TempDir()
	const n, m, d = 12, 2, 3
	rng := rand.New(rand.NewSource(3))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y := make([]int64, n)
	for i := range y {
		y[i] = int64(i % m)
	}
	g := make([]float64, m*n)
	big := 0.0
	for i := range g {
		g[i] = rng.NormFloat64()
		big = max(big, math.Abs(g[i]))
	}
	for i := range g {
		g[i] *= 0.75 / big // largest |g| in [0.5, 1): the scaled run solves g itself
	}
	huge := make([]float64, len(g))
	over := make([]float64, len(g)) // finite (|g| < 1), ∂L/∂C beyond float64
	at := 0
	for i, v := range g {
		huge[i] = math.Ldexp(v, 1020)
		over[i] = math.Ldexp(v, 1023)
		if math.Abs(v) > math.Abs(g[at]) {
			at = i
		}
	}
	xpath := writeF(t, filepath.Join(dir, "x.npy"), x, n, d)
	ypath := writeI(t, filepath.Join(dir, "y.npy"), y)
	gpath := writeF(t, filepath.Join(dir, "g.npy"), g, m, n)
	hpath := writeF(t, filepath.Join(dir, "huge.npy"), huge, m, n)
	opath := writeF(t, filepath.Join(dir, "over.npy"), over, m, n)
	nanG := append([]float64(nil), g...)
	nanG[n+1] = math.NaN()
	nanPath := writeF(t, filepath.Join(dir, "nan.npy"), nanG, m, n)
	infG := append([]float64(nil), g...)
	infG[2] = math.Inf(-1)
	infPath := writeF(t, filepath.Join(dir, "inf.npy"), infG, m, n)
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				s += (x[i*d+k] - x[j*d+k]) * (x[i*d+k] - x[j*d+k])
			}
			c[i*n+j] = math.Sqrt(s)
		}
	}
	cpath := writeF(t, filepath.Join(dir, "c.npy"), c, n, n)

	overflowed := 0
	for _, src := range [][]string{{"-cost", cpath}, {"-cost", cpath, "-block", "6"}, {"-features", xpath}, {"-features", xpath, "-block", "6"}} {
		name := strings.Join(src, " ")
		solve := func(gp, out string) (int, string) {
			args := append(append([]string{}, src...), "-labels", ypath, "-theta", "0.3", "-eps", "1e-3", "-tol", "1e-6",
				"-out", filepath.Join(dir, "p.npy"), "-grad-p", gp, "-grad-out", out)
			code, _, se := runCmd(t, args...)
			return code, se
		}
		want := filepath.Join(dir, "want.npy")
		if code, se := solve(gpath, want); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, se)
		}
		wantD, _, _, err := npy.ReadMatrix(want, true)
		if err != nil {
			t.Fatal(err)
		}
		mx := 0.0
		for _, v := range wantD {
			mx = max(mx, math.Abs(v))
		}
		// 2¹⁰²⁰ × g: written, 2¹⁰²⁰ × the gradient of g; 2¹⁰²³ × g: the
		// same when 2¹⁰²³ × the largest gradient fits in float64 (at
		// most 2¹⁰²⁴), bad input otherwise (-cost without -block here,
		// whose largest |∂L/∂C| is about 3.7)
		overflows := math.IsInf(math.Ldexp(mx, 1023), 0)
		for k, gp := range map[int]string{1020: hpath, 1023: opath} {
			if k == 1023 && overflows {
				overflowed++
				continue
			}
			got := filepath.Join(dir, fmt.Sprintf("got%d.npy", k))
			if code, se := solve(gp, got); code != 0 {
				t.Fatalf("%s: -grad-p of 2^%d × g: exit %d: %s", name, k, code, se)
			}
			gotD, _, _, err := npy.ReadMatrix(got, true)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wantD {
				if w := math.Ldexp(wantD[i], k); gotD[i] != w {
					t.Fatalf("%s: 2^%d × g: ∂L/∂C[%d] = %v, want 2^%d × %v = %v", name, k, i, gotD[i], k, wantD[i], w)
				}
			}
		}
		bad := map[string]string{
			nanPath: "-grad-p: npy: " + nanPath + ": non-finite value: element (1, 1) is NaN",
			infPath: "-grad-p: npy: " + infPath + ": non-finite value: element (0, 2) is -Inf",
		}
		if overflows {
			of := map[string]string{"-cost": "C", "-features": "X"}[src[0]]
			bad[opath] = fmt.Sprintf("-grad-p %s: element (%d, %d) = %g: the gradient ∂L/∂%s of values this large overflows float64", opath, at/n, at%n, over[at], of)
		}
		for gp, msg := range bad {
			out := filepath.Join(dir, "bad-"+filepath.Base(gp))
			code, se := solve(gp, out)
			if code != 2 || strings.Count(se, "\n") != 1 || !strings.Contains(se, msg) {
				t.Errorf("%s: %s: exit %d, stderr %q; want 2 and one line containing %q", name, filepath.Base(gp), code, se, msg)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s: %s: -grad-out written", name, filepath.Base(gp))
			}
		}
	}
	if overflowed == 0 {
		t.Fatal("no case whose gradient overflows float64")
	}
}

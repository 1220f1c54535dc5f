package lfdio

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/optlayer"
)

// pollCtx is a context whose Err is context.Canceled from its (after+1)th
// call on: a Ctrl-C at a known point of a run, without timing.
type pollCtx struct {
	context.Context
	after int64
	n     atomic.Int64
}

func (c *pollCtx) Err() error {
	if c.n.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

// hardFixture writes n points in 16 dimensions, M = 10 classes with
// separated means (optlayer's hard set's `separated` kind), and returns
// the features' and labels' paths and a radius of 0.7 × the median cost:
// a solve of a few hundred iterations.
func hardFixture(t *testing.T, dir string, n int) (features, labels string, theta float64) {
	t.Helper()
	const dim, M = 16, 10
	rng := rand.New(rand.NewSource(4))
	x := make([]float64, n*dim)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	y := make([]int64, n)
	mean := make([]float64, M*dim)
	for k := range mean {
		mean[k] = 1.5 * rng.NormFloat64()
	}
	for i := range y {
		y[i] = int64(i % M)
		for k := 0; k < dim; k++ {
			x[i*dim+k] += mean[int(y[i])*dim+k]
		}
	}
	var d []float64
	for i := 0; i < n; i += 7 {
		for j := i + 1; j < n; j += 5 {
			var s float64
			for k := 0; k < dim; k++ {
				s += (x[i*dim+k] - x[j*dim+k]) * (x[i*dim+k] - x[j*dim+k])
			}
			d = append(d, math.Sqrt(s))
		}
	}
	sort.Float64s(d)
	features, labels = filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy")
	if err := npy.WriteFloat64(features, x, n, dim); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteInt64(labels, y); err != nil {
		t.Fatal(err)
	}
	return features, labels, 0.7 * d[len(d)/2]
}

// A run cancelled during the solve of a large problem (Ctrl-C in
// drknn-lfd) stops there: it reports the stop, wrapping context.Canceled,
// and writes nothing (the previous output stays as it was, no temporary
// file is left).
func TestRunCancelledDuringSolve(t *testing.T) {
	if testing.Short() {
		t.Skip("a problem of 1200 points")
	}
	dir := t.TempDir()
	features, labels, theta := hardFixture(t, dir, 1200)
	out := filepath.Join(dir, "p.npy")
	old := []byte("the previous output")
	for _, block := range []int{0, 600} {
		if err := os.WriteFile(out, old, 0o644); err != nil {
			t.Fatal(err)
		}
		req := Request{FeaturesPath: features, LabelsPath: labels, Theta: []float64{theta},
			Epsilon: optlayer.DefaultEpsilon, Tol: optlayer.DefaultTol, Block: block, OutPath: out}
		// Run polls once after reading the problem, the solve before its
		// start and each of its iterations: the 12th poll is in the solve
		ctx := &pollCtx{Context: context.Background(), after: 11}
		_, err := Run(ctx, req)
		where := "solve stopped after 9 iterations"
		if block > 0 {
			where = "block " // the blocks solve side by side, polling the one ctx
		}
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "solve stopped after") {
			t.Fatalf("block %d: error %v, want the solve's stop (%q), wrapping context.Canceled", block, err, where)
		}
		if errors.Is(err, ErrInput) || errors.Is(err, ErrUncertified) {
			t.Fatalf("block %d: the stop %v reported as bad input or uncertified", block, err)
		}
		if block == 0 && ctx.n.Load() != 12 {
			t.Fatalf("block %d: ctx polled %d times, want 12 (none after the stop)", block, ctx.n.Load())
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, old) {
			t.Fatalf("block %d: the previous output is now %q (%v)", block, got, err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"p.npy", "x.npy", "y.npy"}) {
			t.Fatalf("block %d: folder holds %v, want only the inputs and the previous output", block, names)
		}
	}
}

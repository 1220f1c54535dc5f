package main

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
)

// stepContext is a context that is cancelled from inside one step: from
// the moment the function named fn (its runtime name ends so) polls Err
// for the skip+1-th time, Err reports context.Canceled and Done is
// closed. polls counts fn's polls, so a test can tell how far the step
// went: each of its chunks of work is preceded by one poll.
type stepContext struct {
	context.Context
	fn   string
	skip int

	mu        sync.Mutex
	polls     int
	cancelled bool
	done      chan struct{}
}

func newStepContext(fn string, skip int) *stepContext {
	return &stepContext{Context: context.Background(), fn: fn, skip: skip, done: make(chan struct{})}
}

func (c *stepContext) Err() error {
	var pc [1]uintptr
	runtime.Callers(2, pc[:]) // Err's caller
	f, _ := runtime.CallersFrames(pc[:]).Next()
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasSuffix(f.Function, c.fn) {
		c.polls++
		if c.polls > c.skip && !c.cancelled {
			c.cancelled = true
			close(c.done)
		}
	}
	if c.cancelled {
		return context.Canceled
	}
	return nil
}

func (c *stepContext) Done() <-chan struct{} { return c.done }

// fnPolls returns how often fn polled the context, and whether it was
// cancelled.
func (c *stepContext) fnPolls() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.polls, c.cancelled
}

// interrupted runs drknn-predict with ctx and -out set to a file holding a
// previous output: the run must exit 130 with one line, write nothing to
// stdout and leave the previous file byte for byte, with no temporary.
func interrupted(t *testing.T, ctx context.Context, args ...string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "p.csv")
	check(t, os.WriteFile(out, []byte("prev\n"), 0o644))
	var so, se bytes.Buffer
	code := cli.Report(&se, "drknn-predict", run(ctx, append(args, "-out", out), &so, &se))
	if code != 130 || so.Len() != 0 || strings.Count(se.String(), "\n") != 1 || !strings.Contains(se.String(), "interrupted") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want 130, nothing on stdout, one line", code, so.Len(), se.String())
	}
	if b, _ := os.ReadFile(out); string(b) != "prev\n" {
		t.Errorf("the previous -out was replaced: %.40q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files beside -out, want none (a temporary left?)", len(ents)-1)
	}
}

// Ctrl-C while the network embeds the inputs: the embedding stops at the
// next of its batches (the network's own, 128 samples of this CNN) — here
// after the first of four — and the run exits 130 with -out untouched. It
// used to embed all of them first.
func TestInterruptWhileEmbedding(t *testing.T) {
	e := newExport(t, cnn, "mnist", 10)
	const n = 400 // 4 batches
	if c := e.net.EmbedChunk(); c != 128 {
		t.Fatalf("the network embeds %d samples at a time; the test wants 128", c)
	}
	x := make([]float64, n*36)
	rng := rand.New(rand.NewSource(1))
	for i := range x {
		x[i] = rng.Float64()
	}
	xpath := filepath.Join(t.TempDir(), "x.npy")
	check(t, npy.WriteFloat64(xpath, x, n, 36))
	ctx := newStepContext("predict.embedContext", 1)
	interrupted(t, ctx, "-model", e.dir, "-npy", xpath)
	if polls, cancelled := ctx.fnPolls(); !cancelled || polls != 2 {
		t.Fatalf("embedding: %d polls between batches (cancelled %v); want 2: stopped before its second batch of 4", polls, cancelled)
	}
}

// Ctrl-C while the queries are voted on: the vote stops at its next chunk
// of queries (about 4M distance terms each: 4 of the 40 queries here,
// against 4096 training embeddings of width 256) — here after the first
// — and the run exits 130 with -out untouched. It used to vote on all of
// them first.
func TestInterruptWhileClassifying(t *testing.T) {
	cfg := cnn
	cfg.Dim = 256
	net, err := model.New(cfg, 3)
	check(t, err)
	const n, d, nq = 4096, 256, 40
	rng := rand.New(rand.NewSource(2))
	emb := make([]float64, n*d)
	for i := range emb {
		emb[i] = rng.NormFloat64()
	}
	labels := make([]int, n)
	p := make([]float64, ways*n) // the empirical distributions
	for i := range labels {
		labels[i] = i % ways
		p[labels[i]*n+i] = 1 / float64(n/ways)
	}
	// An explicit bandwidth: kernel smoothing's median heuristic takes
	// seconds on 4096 points.
	m, err := predict.NewModel(net, emb, n, d, labels, p, []string{"zero", "one"}, predict.Settings{K: 3, Tau: 0.9, Bandwidth: 1, Dataset: "mnist"})
	check(t, err)
	rec, err := predict.Record(map[string]any{"Dataset": "mnist", "Eval": map[string]any{"K": 3, "Tau": 0.9, "Bandwidth": 1}})
	check(t, err)
	dir := t.TempDir()
	check(t, predict.WriteExport(dir, m, predict.Manifest{Config: rec}, nil, 0, nil))
	q := make([]float64, nq*d)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	qpath := filepath.Join(t.TempDir(), "q.npy")
	check(t, npy.WriteFloat64(qpath, q, nq, d))
	for _, method := range predict.Methods() {
		t.Run(method, func(t *testing.T) {
			ctx := newStepContext("predict.(*Model).classifyContext", 1)
			interrupted(t, ctx, "-model", dir, "-embeddings", qpath, "-method", method)
			if polls, cancelled := ctx.fnPolls(); !cancelled || polls != 2 {
				t.Fatalf("voting: %d polls between chunks of queries (cancelled %v); want 2: stopped before its second chunk of 10", polls, cancelled)
			}
		})
	}
}

// Ctrl-C while -support fits the classifier: while its images are read,
// between the network's batches of them (128 of this Conv-4: 300 images
// make 3), and between its phases (after the embedding, after the costs,
// before the LFD solve). Each exits 130 with -out untouched. The fit used
// to run to its end, whatever the context said. The queries are
// embeddings, so every poll of the image reader and the embedding is the
// support set's.
func TestInterruptWhileFittingSupport(t *testing.T) {
	emb := mnistEmbedding(t)
	support := t.TempDir()
	writeBlocks(t, support, []int{0, 1}, 150, rand.New(rand.NewSource(3)))
	e, err := predict.LoadEmbedding(emb)
	check(t, err)
	if c := e.Net().EmbedChunk(); c != 128 {
		t.Fatalf("the network embeds %d samples at a time; the test wants 128", c)
	}
	d := e.Net().Dim()
	qpath := filepath.Join(t.TempDir(), "q.npy")
	check(t, npy.WriteFloat64(qpath, make([]float64, 3*d), 3, d))
	for _, c := range []struct {
		step, fn string
		skip     int
	}{
		{"reading", "predict.(*Model).imageSamples.func1", 10},
		{"embedding", "predict.embedContext", 1},
		{"after embedding", "predict.(*Embedding).FitContext", 1},
		{"before the LFD", "predict.(*Embedding).FitContext", 2},
	} {
		t.Run(c.step, func(t *testing.T) {
			ctx := newStepContext(c.fn, c.skip)
			interrupted(t, ctx, "-model", emb, "-support", support, "-embeddings", qpath)
			polls, cancelled := ctx.fnPolls()
			if !cancelled {
				t.Fatalf("%s never polled the context %d times", c.fn, c.skip+1)
			}
			if c.step == "embedding" && polls != 2 {
				t.Fatalf("embedding: %d polls between batches; want 2: stopped before its second batch of 3", polls)
			}
			if c.step == "reading" && polls >= 300 {
				t.Fatalf("reading: %d polls: every support image was read", polls)
			}
		})
	}
}

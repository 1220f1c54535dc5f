package predict

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drknn/drknn/model"
)

// pollCtx is a context whose Err is context.Canceled from its (after+1)th
// call on (never with after < 0), counting the calls.
type pollCtx struct {
	context.Context
	after int64
	n     atomic.Int64
}

func (c *pollCtx) Err() error {
	if k := c.n.Add(1); c.after >= 0 && k > c.after {
		return context.Canceled
	}
	return nil
}

// A fit cancelled while its LFD solves (Ctrl-C in drknn-predict -support)
// stops in the solve and returns context.Canceled, and no Model.
func TestFitContextStopsInLFD(t *testing.T) {
	net, err := model.New(model.Config{Kind: model.Conv4, InShape: []int{1, 16, 16}, Channels: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEmbedding(net, EmbeddingSettings{K: 3, Tau: 0.9, Theta: []float64{0.3}, ThetaRelative: true,
		Metric: "euclidean", Epsilon: 0.001, Tol: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	const n, M = 120, 6
	rng := rand.New(rand.NewSource(3))
	x := make([]float32, n*256)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % M
		for k := 0; k < 256; k++ {
			x[i*256+k] = float32(rng.NormFloat64()) + float32(labels[i]%2)*0.3
		}
	}
	// uncancelled: the polls of the whole fit; the last is the check after
	// the LFD, the ten before it the solve's last iterations
	all := &pollCtx{Context: context.Background(), after: -1}
	if _, err := e.FitContext(all, x, n, labels, nil); err != nil {
		t.Fatal(err)
	}
	polls := int(all.n.Load())
	ctx := &pollCtx{Context: context.Background(), after: int64(polls - 11)}
	m, err := e.FitContext(ctx, x, n, labels, nil)
	if m != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("fit cancelled in its LFD: a model: %v, error %v; want none and context.Canceled", m != nil, err)
	}
	if !strings.Contains(err.Error(), "LFD on the support set") || !strings.Contains(err.Error(), "solve stopped after") {
		t.Fatalf("error %q: not the LFD's stop", err)
	}
}

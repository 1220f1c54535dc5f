package predict

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/drknn/drknn/model"
)

// embedContext forms the network's own batches, so its embeddings are one
// net.Embed call's bit for bit: for an MLP and a CNN (128 samples a batch)
// and for Conv-4s whose batch is not a divisor of 128 (124 here), in both
// element types, on a number of samples of several batches and a partial
// last one.
func TestEmbedChunksBitForBit(t *testing.T) {
	for _, cfg := range []model.Config{
		{Kind: model.MLP, InShape: []int{20}, Hidden: 16, Dim: 8, DType: model.Float32},
		{Kind: model.CNN, InShape: []int{1, 6, 6}, Channels: 2, Dim: 4, DType: model.Float64},
		{Kind: model.Conv4, InShape: []int{1, 130, 130}, Channels: 4, DType: model.Float32},
		{Kind: model.Conv4, InShape: []int{1, 130, 130}, Channels: 4, DType: model.Float64},
	} {
		net, err := model.New(cfg.WithDefaults(), 1)
		must(t, err)
		chunk := net.EmbedChunk()
		if cfg.Kind == model.Conv4 && chunk != 124 {
			t.Fatalf("%s: batches of %d, the test wants 124", cfg.Kind, chunk)
		}
		n := 2*chunk + 7
		in := net.Config().InSize()
		rng := rand.New(rand.NewSource(5))
		x := make([]float32, n*in)
		for i := range x {
			x[i] = rng.Float32()
		}
		want, err := net.Embed(x, n)
		must(t, err)
		got, err := embedContext(context.Background(), net, x, n)
		must(t, err)
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", cfg.Kind, len(got), len(want))
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s %s: value %d is %v, one call gives %v", cfg.Kind, cfg.DType, i, got[i], want[i])
			}
		}
	}
}

// classifyContext votes in chunks of queries; every query's prediction,
// votes and probabilities are those of one vote over all of them, for
// every method.
func TestClassifyChunksUnchanged(t *testing.T) {
	const n, d, nq = 2048, 128, 50 // chunks of 16 queries: 4 of them
	if c := classifyCheckWork / (n * d); c != 16 {
		t.Fatalf("chunks of %d queries, the test wants 16", c)
	}
	rng := rand.New(rand.NewSource(6))
	emb := make([]float64, n*d)
	for i := range emb {
		emb[i] = rng.NormFloat64()
	}
	labels := make([]int, n)
	p := make([]float64, 3*n)
	for i := range labels {
		labels[i] = i % 3
		p[labels[i]*n+i] = 0.5 / float64(n/3+1)
		p[((labels[i]+1)%3)*n+i] = 0.5 / float64(n/3+1)
	}
	for m := range 3 {
		s := 0.0
		for _, v := range p[m*n : (m+1)*n] {
			s += v
		}
		for i := range n {
			p[m*n+i] /= s
		}
	}
	mod, err := NewModel(nil, emb, n, d, labels, p, nil, Settings{K: 5, Tau: 0.5})
	must(t, err)
	q := make([]float64, nq*d)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	for _, method := range Methods() {
		c, err := mod.Classifier(Options{Method: method})
		must(t, err)
		want, err := mod.vote(c, q, nq, nil)
		must(t, err)
		got, err := mod.classifyContext(context.Background(), c, q, nq, nil)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: chunked predictions differ from one vote", method)
		}
	}
}

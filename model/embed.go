package model

import (
	"fmt"
	"math"
)

// embedChunk is the number of samples Embed processes at a time, bounding
// its working memory.
const embedChunk = 128

// EmbedChunk is the number of samples Embed runs through the network at
// a time, from the first. Embedding consecutive slices of x whose sizes
// are whole multiples of it (the last one any size) gives Embed's
// embeddings of all of x bit for bit: the same batches are formed.
func (net *Net) EmbedChunk() int {
	if net.cfg.Kind == Conv4 {
		return conv4EmbedChunk(net.cfg)
	}
	return embedChunk
}

// Embed maps n samples x (n×InSize row-major, pixels scaled as in
// training) to their embeddings (n×Dim row-major). It runs the same
// kernels as the graph built by Apply, without Gorgonia; a Conv4 net runs
// in inference mode (batch normalisation with the running statistics), so
// each sample's embedding does not depend on the others.
func (net *Net) Embed(x []float32, n int) ([]float64, error) {
	if err := net.checkBatch(len(x), n); err != nil {
		return nil, err
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("model: Embed: input %d (sample %d) is %v", i, i/net.cfg.InSize(), v)
		}
	}
	out := make([]float64, n*net.Dim())
	switch {
	case net.cfg.Kind == Identity:
		embedIdentity(x, out)
	case net.cfg.Kind == Conv4 && net.cfg.DType == Float32:
		embedConv4[float32](net, x, n, out)
	case net.cfg.Kind == Conv4:
		embedConv4[float64](net, x, n, out)
	case net.cfg.DType == Float32:
		embedT(net, x, n, out, net.p32())
	default:
		embedT(net, x, n, out, net.p64())
	}
	return out, nil
}

// Embed64 is Embed for float64 input.
func (net *Net) Embed64(x []float64, n int) ([]float64, error) {
	if err := net.checkBatch(len(x), n); err != nil {
		return nil, err
	}
	x32 := make([]float32, len(x))
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("model: Embed64: input %d (sample %d) is %v", i, i/net.cfg.InSize(), v)
		}
		x32[i] = float32(v)
	}
	out := make([]float64, n*net.Dim())
	if net.cfg.Kind == Identity { // no arithmetic: keep the float64 input
		embedIdentity(x, out)
		return out, nil
	}
	if net.cfg.DType == Float32 {
		return net.Embed(x32, n)
	}
	if net.cfg.Kind == Conv4 {
		embedConv4[float64](net, x, n, out)
	} else {
		embedT(net, x, n, out, net.p64())
	}
	return out, nil
}

func (net *Net) checkBatch(lx, n int) error {
	in := net.cfg.InSize()
	if n < 0 || lx != n*in {
		return fmt.Errorf("model: input has %d values, want n×%d = %d for n = %d samples of shape %v", lx, in, n*in, n, net.cfg.InShape)
	}
	return nil
}

func (net *Net) p32() [][]float32 {
	p := make([][]float32, len(net.params))
	for i, q := range net.params {
		p[i] = q.F32
	}
	return p
}

func (net *Net) p64() [][]float64 {
	p := make([][]float64, len(net.params))
	for i, q := range net.params {
		p[i] = q.F64
	}
	return p
}

// embedT runs the forward pass in element type T on input of type S.
func embedT[T Float, S Float](net *Net, x []S, n int, out []float64, p [][]T) {
	cfg := net.cfg
	in, d := cfg.InSize(), cfg.Dim
	xb := make([]T, min(n, embedChunk)*in)
	var mid []T
	var arg []int32
	var g convGeom
	width := 0
	if cfg.Kind == CNN {
		g = cfg.geom()
		width = g.flat()
		arg = make([]int32, min(n, embedChunk)*width)
	} else {
		width = cfg.Hidden
	}
	mid = make([]T, min(n, embedChunk)*width)
	y := make([]T, min(n, embedChunk)*d)
	for lo := 0; lo < n; lo += embedChunk {
		m := min(embedChunk, n-lo)
		for i, v := range x[lo*in : (lo+m)*in] {
			xb[i] = T(v)
		}
		if cfg.Kind == CNN {
			convReluPoolForward(g, m, xb, p[0], p[1], mid, arg)
			linearForward(m, width, d, mid, p[2], p[3], y, false)
		} else {
			linearForward(m, in, width, xb, p[0], p[1], mid, true)
			linearForward(m, width, d, mid, p[2], p[3], y, false)
		}
		for i, v := range y[:m*d] {
			out[lo*d+i] = float64(v)
		}
	}
}

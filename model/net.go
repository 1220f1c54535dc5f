package model

import (
	"fmt"
	"math"
	"math/rand"
)

// Param is one weight tensor of a Net. Exactly one of F32 and F64 is set,
// according to the Net's DType; Gorgonia nodes built by Apply share this
// storage, so optimiser steps on the graph update the Net in place.
type Param struct {
	Name  string
	Shape []int
	F32   []float32
	F64   []float64
}

// Len is the number of elements.
func (p *Param) Len() int {
	if p.F32 != nil {
		return len(p.F32)
	}
	return len(p.F64)
}

// NonFinite reports whether p holds NaN or ±Inf (the vectorised check
// Adam makes of every gradient).
func (p *Param) NonFinite() bool {
	if p.F32 != nil {
		return anyNonFinite(p.F32)
	}
	return anyNonFinite(p.F64)
}

// At returns element i as float64.
func (p *Param) At(i int) float64 {
	if p.F32 != nil {
		return float64(p.F32[i])
	}
	return p.F64[i]
}

// Set sets element i.
func (p *Param) Set(i int, v float64) {
	if p.F32 != nil {
		p.F32[i] = float32(v)
	} else {
		p.F64[i] = v
	}
}

// Net is a feature extractor: its configuration, weights and (Conv4)
// batch-normalisation running statistics. Embed may be called from several
// goroutines at once, but not while weights change or a training-mode
// graph runs.
type Net struct {
	cfg     Config
	params  []*Param // learnable
	buffers []*Param // state that is not learned (BN running statistics)
}

// paramSpec lists the names and shapes of a configuration's weights, in
// storage order, with the fan-in/fan-out used for initialisation and
// whether a ReLU follows (He) or not (Glorot).
type paramSpec struct {
	name   string
	shape  []int
	fanIn  int
	fanOut int
	bias   bool
	heInit bool
	ones   bool // initialised to 1 (BN scale, running variance)
	buffer bool // not learnable: a Net buffer, not a Param
}

func (c Config) specs() []paramSpec {
	switch c.Kind {
	case CNN:
		g := c.geom()
		return []paramSpec{
			{name: "conv.weight", shape: []int{g.k, g.c, 3, 3}, fanIn: g.c9(), fanOut: g.k * 9, heInit: true},
			{name: "conv.bias", shape: []int{g.k}, bias: true},
			{name: "linear.weight", shape: []int{g.flat(), c.Dim}, fanIn: g.flat(), fanOut: c.Dim},
			{name: "linear.bias", shape: []int{c.Dim}, bias: true},
		}
	case MLP:
		f := c.InShape[0]
		return []paramSpec{
			{name: "fc1.weight", shape: []int{f, c.Hidden}, fanIn: f, fanOut: c.Hidden, heInit: true},
			{name: "fc1.bias", shape: []int{c.Hidden}, bias: true},
			{name: "fc2.weight", shape: []int{c.Hidden, c.Dim}, fanIn: c.Hidden, fanOut: c.Dim},
			{name: "fc2.bias", shape: []int{c.Dim}, bias: true},
		}
	case Conv4:
		var ps, bufs []paramSpec
		for i, g := range c.blocks() {
			pre := fmt.Sprintf("block%d.", i+1)
			ps = append(ps,
				paramSpec{name: pre + "conv.weight", shape: []int{g.k, g.c, 3, 3}, fanIn: g.c9(), fanOut: g.k * 9, heInit: true},
				paramSpec{name: pre + "bn.weight", shape: []int{g.k}, ones: true},
				paramSpec{name: pre + "bn.bias", shape: []int{g.k}, bias: true})
			bufs = append(bufs,
				paramSpec{name: pre + "bn.running_mean", shape: []int{g.k}, bias: true, buffer: true},
				paramSpec{name: pre + "bn.running_var", shape: []int{g.k}, ones: true, buffer: true})
		}
		if c.Dim > 0 {
			f := c.bodyWidth()
			ps = append(ps,
				paramSpec{name: "linear.weight", shape: []int{f, c.Dim}, fanIn: f, fanOut: c.Dim},
				paramSpec{name: "linear.bias", shape: []int{c.Dim}, bias: true})
		}
		return append(ps, bufs...)
	}
	return nil
}

func shapeLen(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// newZero allocates a Net with zero weights for a validated config.
func newZero(cfg Config) *Net {
	n := &Net{cfg: cfg}
	for _, s := range cfg.specs() {
		p := &Param{Name: s.name, Shape: append([]int(nil), s.shape...)}
		if cfg.DType == Float32 {
			p.F32 = make([]float32, shapeLen(s.shape))
		} else {
			p.F64 = make([]float64, shapeLen(s.shape))
		}
		if s.buffer {
			n.buffers = append(n.buffers, p)
		} else {
			n.params = append(n.params, p)
		}
	}
	return n
}

// tensors is every stored tensor in file order: the parameters, then the
// buffers.
func (n *Net) tensors() []*Param {
	return append(append([]*Param(nil), n.params...), n.buffers...)
}

// New returns a network for cfg (defaults applied) with weights drawn from
// rand.New(rand.NewSource(seed)): He-normal for layers followed by a ReLU
// (Conv4: every convolution), Glorot-uniform for the final linear map,
// zero biases; batch-normalisation scales 1 and shifts 0, running means 0
// and variances 1. The same seed and config give the same weights.
func New(cfg Config, seed int64) (*Net, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := newZero(cfg)
	rng := rand.New(rand.NewSource(seed))
	for i, s := range cfg.specs() {
		p := n.tensors()[i]
		if s.ones {
			for j := 0; j < p.Len(); j++ {
				p.Set(j, 1)
			}
			continue
		}
		if s.bias {
			continue
		}
		if s.heInit {
			std := math.Sqrt(2 / float64(s.fanIn))
			for j := 0; j < p.Len(); j++ {
				p.Set(j, rng.NormFloat64()*std)
			}
		} else {
			lim := math.Sqrt(6 / float64(s.fanIn+s.fanOut))
			for j := 0; j < p.Len(); j++ {
				p.Set(j, (2*rng.Float64()-1)*lim)
			}
		}
	}
	return n, nil
}

// Config returns the network's configuration (defaults applied).
func (n *Net) Config() Config { return n.cfg.WithDefaults() }

// Dim is the embedding width d (Conv4 without a linear layer: the width of
// the flattened body, e.g. 64 for 1×28×28 and 1600 for 3×84×84).
func (n *Net) Dim() int { return n.cfg.outDim() }

// Params returns the learnable weight tensors in storage order. They are
// the Net's own storage, not copies.
func (n *Net) Params() []*Param { return n.params }

// Buffers returns the tensors that are state but not learnable — the
// Conv4 batch-normalisation running means and variances, updated by
// every training-mode forward pass — in storage order (none for CNN and
// MLP). They are the Net's own storage; weights files and Clone include
// them; optimisers must not.
func (n *Net) Buffers() []*Param { return n.buffers }

// Param returns the weight or buffer tensor with the given name.
func (n *Net) Param(name string) (*Param, error) {
	for _, p := range n.tensors() {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("model: no parameter %q", name)
}

// CopyWeights sets n's parameters and buffers to src's, which must have the
// same configuration; on error n is unchanged.
func (n *Net) CopyWeights(src *Net) error {
	if !sameConfig(n.cfg, src.cfg) {
		return fmt.Errorf("model: CopyWeights: config %v differs from %v", src.cfg, n.cfg)
	}
	dst, from := n.tensors(), src.tensors()
	for i, p := range dst {
		copy(p.F32, from[i].F32)
		copy(p.F64, from[i].F64)
	}
	return nil
}

// NumParams is the total number of weights.
func (n *Net) NumParams() int {
	t := 0
	for _, p := range n.params {
		t += p.Len()
	}
	return t
}

// Clone returns a deep copy of the network.
func (n *Net) Clone() *Net {
	c := newZero(n.cfg)
	_ = c.CopyWeights(n)
	return c
}

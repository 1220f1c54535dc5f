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

// Net is a feature extractor: its configuration and weights. Embed may be
// called from several goroutines at once, but not while weights change.
type Net struct {
	cfg    Config
	params []*Param
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
		n.params = append(n.params, p)
	}
	return n
}

// New returns a network for cfg (defaults applied) with weights drawn from
// rand.New(rand.NewSource(seed)): He-normal for layers followed by a ReLU,
// Glorot-uniform for the final linear map, zero biases. The same seed and
// config give the same weights.
func New(cfg Config, seed int64) (*Net, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := newZero(cfg)
	rng := rand.New(rand.NewSource(seed))
	for i, s := range cfg.specs() {
		p := n.params[i]
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

// Dim is the embedding width d.
func (n *Net) Dim() int { return n.cfg.Dim }

// Params returns the weight tensors in storage order. They are the Net's
// own storage, not copies.
func (n *Net) Params() []*Param { return n.params }

// Param returns the weight tensor with the given name.
func (n *Net) Param(name string) (*Param, error) {
	for _, p := range n.params {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("model: no parameter %q", name)
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
	for i, p := range n.params {
		copy(c.params[i].F32, p.F32)
		copy(c.params[i].F64, p.F64)
	}
	return c
}

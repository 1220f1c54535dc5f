package model

import (
	"fmt"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// Graph is a Net's weights placed in one Gorgonia expression graph. Apply
// it to any number of batch inputs; all applications share the learnable
// nodes, whose values are the Net's own storage (an optimiser step on the
// nodes updates the Net).
type Graph struct {
	Net        *Net
	G          *G.ExprGraph
	Learnables G.Nodes // in Net.Params order

	// InputGrad makes later Apply calls differentiate with respect to their
	// input node too (Conv4 only; other bodies and the default leave ∂L/∂x
	// out of the graph, which saves the first layer's input gradient).
	InputGrad bool
}

// Dtype is the tensor dtype of the network's graph nodes.
func (n *Net) Dtype() tensor.Dtype {
	if n.cfg.DType == Float32 {
		return tensor.Float32
	}
	return tensor.Float64
}

// NewGraph creates the learnable nodes of n in g, named "<prefix>conv.weight"
// etc. (prefix "model." when empty).
func (n *Net) NewGraph(g *G.ExprGraph, prefix string) (*Graph, error) {
	if g == nil {
		return nil, fmt.Errorf("model: NewGraph: nil graph")
	}
	if prefix == "" {
		prefix = "model."
	}
	gr := &Graph{Net: n, G: g}
	for _, p := range n.params {
		var t *tensor.Dense
		if p.F32 != nil {
			t = newDense(p.F32, p.Shape...)
		} else {
			t = newDense(p.F64, p.Shape...)
		}
		node := G.NewTensor(g, n.Dtype(), len(p.Shape), G.WithShape(p.Shape...), G.WithName(prefix+p.Name), G.WithValue(t))
		gr.Learnables = append(gr.Learnables, node)
	}
	return gr, nil
}

// Apply adds the forward pass for the batch x to the graph in training
// mode and returns the n×Dim embedding node: it is ApplyMode(x, Train).
func (gr *Graph) Apply(x *G.Node) (*G.Node, error) { return gr.ApplyMode(x, Train) }

// ApplyMode adds the forward pass for the batch x to the graph and returns
// the n×Dim embedding node. For a CNN or Conv4, x is n×C×H×W or
// n×(C·H·W); for an MLP, n×F. x must be in the same graph and have the
// Net's dtype. mode matters for Conv4 only (batch normalisation): Train
// uses batch statistics and updates the Net's running statistics on every
// run of the forward pass; Inference uses the running statistics, as
// Net.Embed does.
func (gr *Graph) ApplyMode(x *G.Node, mode Mode) (*G.Node, error) {
	cfg := gr.Net.cfg
	if x == nil {
		return nil, fmt.Errorf("model: Apply: nil input node")
	}
	if x.Graph() != gr.G {
		return nil, fmt.Errorf("model: Apply: input %q is in another graph", x.Name())
	}
	if x.Dtype() != gr.Net.Dtype() {
		return nil, fmt.Errorf("model: Apply: input %q has dtype %v, the network %v", x.Name(), x.Dtype(), gr.Net.Dtype())
	}
	s := x.Shape()
	bad := func() error {
		return fmt.Errorf("model: Apply: input %q has shape %v, want (n, %v...) or (n, %d)", x.Name(), s, cfg.InShape, cfg.InSize())
	}
	if len(s) < 1 || s[0] < 1 {
		return nil, bad()
	}
	if mode != Train && mode != Inference {
		return nil, fmt.Errorf("model: Apply: mode %d, want Train or Inference", mode)
	}
	L := gr.Learnables
	switch cfg.Kind {
	case Identity:
		return gr.applyIdentity(x)
	case Conv4:
		dims := imageDims(cfg, s)
		if dims == 0 {
			return nil, bad()
		}
		if mode == Train && s[0]*cfg.InShape[1]*cfg.InShape[2] < 2 {
			return nil, fmt.Errorf("model: Apply: batch normalisation in training mode needs more than one value per channel (input %q has shape %v)", x.Name(), s)
		}
		return gr.applyConv4(x, dims, mode)
	case CNN:
		dims := imageDims(cfg, s)
		if dims == 0 {
			return nil, bad()
		}
		g := cfg.geom()
		h, err := G.ApplyOp(&convOp{g: g, inDims: dims, st: &convState{}}, x, L[0], L[1])
		if err != nil {
			return nil, fmt.Errorf("model: conv layer: %w", err)
		}
		y, err := G.ApplyOp(&linearOp{f: g.flat(), d: cfg.Dim, buf: &opBuf{}}, h, L[2], L[3])
		if err != nil {
			return nil, fmt.Errorf("model: linear layer: %w", err)
		}
		return y, nil
	case MLP:
		if len(s) != 2 || s[1] != cfg.InShape[0] {
			return nil, bad()
		}
		h, err := G.ApplyOp(&linearOp{f: cfg.InShape[0], d: cfg.Hidden, relu: true, buf: &opBuf{}}, x, L[0], L[1])
		if err != nil {
			return nil, fmt.Errorf("model: fc1: %w", err)
		}
		y, err := G.ApplyOp(&linearOp{f: cfg.Hidden, d: cfg.Dim, buf: &opBuf{}}, h, L[2], L[3])
		if err != nil {
			return nil, fmt.Errorf("model: fc2: %w", err)
		}
		return y, nil
	}
	return nil, fmt.Errorf("model: Apply: kind %q", cfg.Kind)
}

// imageDims is the rank of an image network's input of shape s: 2 for
// n×(C·H·W), 4 for n×C×H×W, 0 for anything else.
func imageDims(cfg Config, s tensor.Shape) int {
	switch {
	case len(s) == 2 && s[1] == cfg.InSize():
		return 2
	case len(s) == 4 && s[1] == cfg.InShape[0] && s[2] == cfg.InShape[1] && s[3] == cfg.InShape[2]:
		return 4
	}
	return 0
}

// Build is NewGraph followed by one Apply: it returns the embedding node
// of the batch x and the learnable nodes.
func (n *Net) Build(g *G.ExprGraph, x *G.Node) (*G.Node, G.Nodes, error) {
	gr, err := n.NewGraph(g, "")
	if err != nil {
		return nil, nil, err
	}
	y, err := gr.Apply(x)
	if err != nil {
		return nil, nil, err
	}
	return y, gr.Learnables, nil
}

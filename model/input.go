package model

import (
	"fmt"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// Input is a batch input node of a Net's graph: rows samples of the Net's
// InShape in its dtype, whose value the caller refills between runs with
// Set (float32 samples, converted when the Net computes in float64).
type Input struct {
	Node *G.Node
	b32  []float32
	b64  []float64
}

// NewInput adds a rows×InShape input node named name to g, holding a copy
// of x (rows×InSize values) or zeros when x is nil.
func (n *Net) NewInput(g *G.ExprGraph, name string, rows int, x []float32) (*Input, error) {
	cfg := n.Config()
	shape := append([]int{rows}, cfg.InShape...)
	if rows < 1 || x != nil && len(x) != rows*cfg.InSize() {
		return nil, fmt.Errorf("model: input %q: %d values for %d samples of size %d", name, len(x), rows, cfg.InSize())
	}
	in := &Input{}
	var v *tensor.Dense
	if n.Dtype() == tensor.Float32 {
		in.b32 = make([]float32, rows*cfg.InSize())
		v = newDense(in.b32, shape...)
	} else {
		in.b64 = make([]float64, rows*cfg.InSize())
		v = newDense(in.b64, shape...)
	}
	if x != nil {
		in.Set(x)
	}
	in.Node = G.NewTensor(g, n.Dtype(), len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	return in, nil
}

// Set copies x (as many values as the node holds) into the node's value.
func (in *Input) Set(x []float32) {
	if in.b32 != nil {
		copy(in.b32, x)
		return
	}
	for i, v := range x[:len(in.b64)] {
		in.b64[i] = float64(v)
	}
}

// NewMinimiser adds the gradient of the scalar loss with respect to learn
// (a Net's learnable nodes) to g and returns a tape machine that computes
// the loss and those gradients, and Adam with settings s over learn: run
// the machine, take an Adam step, reset the machine. Close the machine
// when done.
func NewMinimiser(g *G.ExprGraph, loss *G.Node, learn G.Nodes, s AdamSettings) (G.VM, *Adam, error) {
	grads, err := G.Grad(loss, learn...)
	if err != nil {
		return nil, nil, fmt.Errorf("gradient graph: %w", err)
	}
	if len(grads) != len(learn) {
		return nil, nil, fmt.Errorf("gradient graph: %d gradients for %d nodes", len(grads), len(learn))
	}
	// No dual values: Adam reads the gradient nodes (see Adam).
	vm := G.NewTapeMachine(g)
	adam, err := NewAdam(s, learn)
	if err != nil {
		vm.Close()
		return nil, nil, err
	}
	adam.grads = grads
	return vm, adam, nil
}

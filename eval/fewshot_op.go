package eval

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// embLossOp is a Gorgonia op from the n×d embedding of the training samples
// to a scalar loss computed in plain Go by spec.fn, which also returns the
// gradient with respect to the embedding; the backward op hands that cached
// gradient (times the upstream scalar) back to the graph. The spec's
// address is part of the hash so two fits' ops are never merged.
type embLossOp struct {
	spec *embLossSpec
}

// embLossSpec holds the loss function of the current step and the result
// of the latest forward pass.
type embLossSpec struct {
	mu   sync.Mutex
	fn   func(e []float64, n, d int) (loss float64, grad []float64, err error)
	loss float64
	grad []float64
	err  error
}

func (op *embLossOp) Arity() int { return 1 }
func (op *embLossOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(&G.TensorType{Dims: 2, Of: a}, a)
}
func (op *embLossOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("eval: few-shot loss op wants 1 input, got %d", len(in))
	}
	return tensor.ScalarShape(), nil
}
func (op *embLossOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("eval: few-shot loss op wants 1 input, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != 2 {
		return nil, fmt.Errorf("eval: few-shot loss op input %v, want an n×d matrix", v[0])
	}
	n, d := t.Shape()[0], t.Shape()[1]
	var e []float64
	switch data := t.Data().(type) {
	case []float64:
		e = append([]float64(nil), data...)
	case []float32:
		e = make([]float64, len(data))
		for i, x := range data {
			e[i] = float64(x)
		}
	default:
		return nil, fmt.Errorf("eval: few-shot loss op dtype %v", t.Dtype())
	}
	op.spec.mu.Lock()
	defer op.spec.mu.Unlock()
	if op.spec.fn == nil {
		op.spec.err = fmt.Errorf("eval: few-shot loss op has no loss function")
		return nil, op.spec.err
	}
	loss, grad, err := op.spec.fn(e, n, d)
	if err == nil && len(grad) != n*d {
		err = fmt.Errorf("eval: few-shot loss gradient has %d values for a %d×%d embedding", len(grad), n, d)
	}
	op.spec.loss, op.spec.grad, op.spec.err = loss, grad, err
	if err != nil {
		return nil, err
	}
	if t.Dtype() == tensor.Float32 {
		return G.NewF32(float32(loss)), nil
	}
	return G.NewF64(loss), nil
}
func (op *embLossOp) ReturnsPtr() bool     { return false }
func (op *embLossOp) CallsExtern() bool    { return false }
func (op *embLossOp) OverwritesInput() int { return -1 }
func (op *embLossOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.eval.fewShotLoss(%p)", op.spec)
}
func (op *embLossOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *embLossOp) String() string     { return "FewShotLoss" }
func (op *embLossOp) DiffWRT(int) []bool { return []bool{true} }
func (op *embLossOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("eval: few-shot loss op wants 1 input, got %d", len(in))
	}
	g, err := G.ApplyOp(&embLossGradOp{spec: op.spec}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{g}, nil
}

// embLossGradOp returns the cached ∂loss/∂E times the upstream scalar.
type embLossGradOp struct {
	spec *embLossSpec
}

func (op *embLossGradOp) Arity() int { return 2 }
func (op *embLossGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := &G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, a, m)
}
func (op *embLossGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("eval: few-shot loss grad op wants 2 inputs, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("eval: few-shot loss grad op input shape %v", in[0])
	}
	return s.Clone(), nil
}
func (op *embLossGradOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 2 {
		return nil, fmt.Errorf("eval: few-shot loss grad op wants 2 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("eval: few-shot loss grad op input %v", v[0])
	}
	op.spec.mu.Lock()
	defer op.spec.mu.Unlock()
	if op.spec.err != nil {
		return nil, op.spec.err
	}
	g := op.spec.grad
	if len(g) != t.Shape().TotalSize() {
		return nil, fmt.Errorf("eval: few-shot loss grad op: cached gradient has %d values for input %v", len(g), t.Shape())
	}
	var up float64
	switch s := v[1].Data().(type) {
	case float64:
		up = s
	case float32:
		up = float64(s)
	default:
		return nil, fmt.Errorf("eval: few-shot loss grad op upstream %v", v[1])
	}
	switch t.Dtype() {
	case tensor.Float64:
		out := make([]float64, len(g))
		for i, x := range g {
			out[i] = x * up
		}
		return tensor.New(tensor.WithShape(t.Shape().Clone()...), tensor.WithBacking(out)), nil
	case tensor.Float32:
		out := make([]float32, len(g))
		for i, x := range g {
			out[i] = float32(x * up)
		}
		return tensor.New(tensor.WithShape(t.Shape().Clone()...), tensor.WithBacking(out)), nil
	}
	return nil, fmt.Errorf("eval: few-shot loss grad op dtype %v", t.Dtype())
}
func (op *embLossGradOp) ReturnsPtr() bool     { return false }
func (op *embLossGradOp) CallsExtern() bool    { return false }
func (op *embLossGradOp) OverwritesInput() int { return -1 }
func (op *embLossGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.eval.fewShotLossGrad(%p)", op.spec)
}
func (op *embLossGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *embLossGradOp) String() string { return "FewShotLossGrad" }

// Package lossop is a Gorgonia op for a scalar loss that is computed in
// plain Go from an n×d matrix node (an embedding), together with its
// gradient: the forward pass calls the loss function, the backward op hands
// the cached gradient (times the upstream scalar) back to the graph. The
// few-shot baselines' episodic losses (package eval) use it; the trainer's
// worst-case risk goes through the LFD layer's own op, optlayer/gop, which
// shares this package's op plumbing (Pure, Hashcode, ScaledGrad). Each Loss
// is one op instance; its address is part of the op's hash, so two losses
// are never merged.
package lossop

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync"

	"github.com/chewxy/hm"
	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// lossOp is a Gorgonia op from the n×d embedding of the training samples
// to a scalar loss computed in plain Go by spec.fn, which also returns the
// gradient with respect to the embedding; the backward op hands that cached
// gradient (times the upstream scalar) back to the graph. The spec's
// address is part of the hash so two fits' ops are never merged.
type lossOp struct {
	Pure
	spec *Loss
}

// Pure gives a Gorgonia op the answers of an op computed in plain Go: it
// returns a new value, calls no external code and overwrites no input.
// Embed it in the op's struct.
type Pure struct{}

func (Pure) ReturnsPtr() bool     { return false }
func (Pure) CallsExtern() bool    { return false }
func (Pure) OverwritesInput() int { return -1 }

// Hashcode is the FNV-32a hash of what op writes with WriteHash, the
// Hashcode of a Gorgonia op.
func Hashcode(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// Func computes a scalar loss of the n×d row-major matrix e and its
// gradient ∂loss/∂e (n×d). e is a copy the function may keep.
type Func func(e []float64, n, d int) (loss float64, grad []float64, err error)

// Loss is one op instance: the loss function in force and the result of the
// latest forward pass.
type Loss struct {
	mu   sync.Mutex
	name string
	fn   Func
	loss float64
	grad []float64
	err  error
}

// New returns a Loss named name (used in the graph and in errors) computing fn.
func New(name string, fn Func) *Loss { return &Loss{name: name, fn: fn} }

// SetFunc replaces the loss function; the next forward pass uses it (a
// training loop sets a new one every step, with that step's episodes).
func (l *Loss) SetFunc(fn Func) {
	l.mu.Lock()
	l.fn = fn
	l.mu.Unlock()
}

// Apply adds the loss of the n×d node x (float32 or float64) to x's graph
// and returns the scalar loss node. Call it once per Loss.
func (l *Loss) Apply(x *G.Node) (*G.Node, error) {
	if x == nil || x.Shape().Dims() != 2 {
		return nil, fmt.Errorf("lossop: %s: input must be a matrix node", l.name)
	}
	n, err := G.ApplyOp(&lossOp{spec: l}, x)
	if err != nil {
		return nil, fmt.Errorf("lossop: %s: %w", l.name, err)
	}
	return n, nil
}

// Last returns the loss and error of the latest forward pass.
func (l *Loss) Last() (float64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loss, l.err
}

func (op *lossOp) Arity() int { return 1 }
func (op *lossOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(&G.TensorType{Dims: 2, Of: a}, a)
}
func (op *lossOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("lossop: %s op wants 1 input, got %d", op.spec.name, len(in))
	}
	return tensor.ScalarShape(), nil
}
func (op *lossOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("lossop: %s op wants 1 input, got %d", op.spec.name, len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != 2 {
		return nil, fmt.Errorf("lossop: %s op input %v, want an n×d matrix", op.spec.name, v[0])
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
		return nil, fmt.Errorf("lossop: %s op dtype %v", op.spec.name, t.Dtype())
	}
	op.spec.mu.Lock()
	defer op.spec.mu.Unlock()
	if op.spec.fn == nil {
		op.spec.err = fmt.Errorf("lossop: %s op has no loss function", op.spec.name)
		return nil, op.spec.err
	}
	loss, grad, err := op.spec.fn(e, n, d)
	if err == nil && len(grad) != n*d {
		err = fmt.Errorf("lossop: %s gradient has %d values for a %d×%d embedding", op.spec.name, len(grad), n, d)
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
func (op *lossOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.loss(%s,%p)", op.spec.name, op.spec)
}
func (op *lossOp) Hashcode() uint32   { return Hashcode(op) }
func (op *lossOp) String() string     { return op.spec.name }
func (op *lossOp) DiffWRT(int) []bool { return []bool{true} }
func (op *lossOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("lossop: %s op wants 1 input, got %d", op.spec.name, len(in))
	}
	g, err := G.ApplyOp(&lossGradOp{spec: op.spec}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{g}, nil
}

// lossGradOp returns the cached ∂loss/∂E times the upstream scalar.
type lossGradOp struct {
	Pure
	spec *Loss
}

func (op *lossGradOp) Arity() int { return 2 }
func (op *lossGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := &G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, a, m)
}
func (op *lossGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("lossop: %s grad op wants 2 inputs, got %d", op.spec.name, len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("lossop: %s grad op input shape %v", op.spec.name, in[0])
	}
	return s.Clone(), nil
}
func (op *lossGradOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 2 {
		return nil, fmt.Errorf("lossop: %s grad op wants 2 inputs, got %d", op.spec.name, len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("lossop: %s grad op input %v", op.spec.name, v[0])
	}
	op.spec.mu.Lock()
	defer op.spec.mu.Unlock()
	if op.spec.err != nil {
		return nil, op.spec.err
	}
	g := op.spec.grad
	if len(g) != t.Shape().TotalSize() {
		return nil, fmt.Errorf("lossop: %s grad op: cached gradient has %d values for input %v", op.spec.name, len(g), t.Shape())
	}
	out, err := ScaledGrad(g, v[1], t.Shape(), t.Dtype())
	if err != nil {
		return nil, fmt.Errorf("lossop: %s grad op: %w", op.spec.name, err)
	}
	return out, nil
}

// ScaledGrad is the backward of a scalar loss node: the cached gradient g
// (∂loss/∂input, float64) times the upstream scalar up, as a tensor of the
// input's shape and dtype (float32 values are rounded once, after the
// product).
func ScaledGrad(g []float64, up G.Value, shape tensor.Shape, dt tensor.Dtype) (*tensor.Dense, error) {
	var u float64
	switch s := up.Data().(type) {
	case float64:
		u = s
	case float32:
		u = float64(s)
	default:
		return nil, fmt.Errorf("upstream gradient %v is not a scalar", up)
	}
	switch dt {
	case tensor.Float64:
		out := make([]float64, len(g))
		for i, x := range g {
			out[i] = x * u
		}
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(out)), nil
	case tensor.Float32:
		out := make([]float32, len(g))
		for i, x := range g {
			out[i] = float32(x * u)
		}
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(out)), nil
	}
	return nil, fmt.Errorf("dtype %v, want float32 or float64", dt)
}
func (op *lossGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.lossGrad(%s,%p)", op.spec.name, op.spec)
}
func (op *lossGradOp) Hashcode() uint32 { return Hashcode(op) }
func (op *lossGradOp) String() string   { return op.spec.name + "Grad" }

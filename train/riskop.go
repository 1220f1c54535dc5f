package train

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// riskOp is the Gorgonia op of a training step: it maps the n×d embedding
// of the episode's training samples to the mean worst-case risk of the
// step's mini-sets (WorstCaseRisk), solving every mini-set's LFD in the
// forward pass and caching the exact gradient for its backward op. The
// mini-sets change every step: the trainer sets them in spec before each
// run of the machine (one op instance per graph; the spec's address is part
// of the hash so two trainers' ops are never merged).
type riskOp struct {
	spec *riskSpec
}

type riskSpec struct {
	mu       sync.Mutex
	sets     []MiniSet
	settings RiskSettings
	last     RiskResult // the latest forward: risk, gradient, solver stats
	err      error
}

func (op *riskOp) Arity() int { return 1 }
func (op *riskOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(&G.TensorType{Dims: 2, Of: a}, a)
}
func (op *riskOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("train: risk op wants 1 input, got %d", len(in))
	}
	return tensor.ScalarShape(), nil
}
func (op *riskOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("train: risk op wants 1 input, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != 2 {
		return nil, fmt.Errorf("train: risk op input %v, want an n×d matrix", v[0])
	}
	n, d := t.Shape()[0], t.Shape()[1]
	var e []float64
	switch data := t.Data().(type) {
	case []float64:
		e = data
	case []float32:
		e = make([]float64, len(data))
		for i, x := range data {
			e[i] = float64(x)
		}
	default:
		return nil, fmt.Errorf("train: risk op dtype %v", t.Dtype())
	}
	op.spec.mu.Lock()
	defer op.spec.mu.Unlock()
	res, err := WorstCaseRisk(e, n, d, op.spec.sets, op.spec.settings)
	op.spec.last, op.spec.err = res, err
	if err != nil {
		return nil, err
	}
	if t.Dtype() == tensor.Float32 {
		return G.NewF32(float32(res.Risk)), nil
	}
	return G.NewF64(res.Risk), nil
}
func (op *riskOp) ReturnsPtr() bool     { return false }
func (op *riskOp) CallsExtern() bool    { return false }
func (op *riskOp) OverwritesInput() int { return -1 }
func (op *riskOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.worstCaseRisk(%p)", op.spec)
}
func (op *riskOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *riskOp) String() string     { return "WorstCaseRisk" }
func (op *riskOp) DiffWRT(int) []bool { return []bool{true} }
func (op *riskOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("train: risk op wants 1 input, got %d", len(in))
	}
	g, err := G.ApplyOp(&riskGradOp{spec: op.spec}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{g}, nil
}

// riskGradOp returns the cached ∂risk/∂E times the upstream scalar.
type riskGradOp struct {
	spec *riskSpec
}

func (op *riskGradOp) Arity() int { return 2 }
func (op *riskGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := &G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, a, m)
}
func (op *riskGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("train: risk grad op wants 2 inputs, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("train: risk grad op input shape %v", in[0])
	}
	return s.Clone(), nil
}
func (op *riskGradOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 2 {
		return nil, fmt.Errorf("train: risk grad op wants 2 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("train: risk grad op input %v", v[0])
	}
	op.spec.mu.Lock()
	defer op.spec.mu.Unlock()
	if op.spec.err != nil {
		return nil, op.spec.err
	}
	g := op.spec.last.Grad
	if len(g) != t.Shape().TotalSize() {
		return nil, fmt.Errorf("train: risk grad op: cached gradient has %d values for input %v", len(g), t.Shape())
	}
	var up float64
	switch s := v[1].Data().(type) {
	case float64:
		up = s
	case float32:
		up = float64(s)
	default:
		return nil, fmt.Errorf("train: risk grad op upstream %v", v[1])
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
	return nil, fmt.Errorf("train: risk grad op dtype %v", t.Dtype())
}
func (op *riskGradOp) ReturnsPtr() bool     { return false }
func (op *riskGradOp) CallsExtern() bool    { return false }
func (op *riskGradOp) OverwritesInput() int { return -1 }
func (op *riskGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.worstCaseRiskGrad(%p)", op.spec)
}
func (op *riskGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *riskGradOp) String() string { return "WorstCaseRiskGrad" }

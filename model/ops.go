package model

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync"

	"github.com/chewxy/hm"
	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// This file holds the Gorgonia ops of the network: a fused
// convolution–ReLU–max-pool–flatten op and a linear (optionally ReLU) op,
// each with hand-written backward ops, so that G.Grad works on a
// TapeMachine and the hot loops are BLAS calls.

func tensorType(dims int) hm.Type {
	return &G.TensorType{Dims: dims, Of: hm.TypeVariable('a')}
}

func hashOf(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// dense returns v's data as []T after checking dtype and shape.
func dense[T Float](what string, v G.Value, shape ...int) ([]T, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("model: %s is %T, want a tensor", what, v)
	}
	if !t.Shape().Eq(tensor.Shape(shape)) {
		return nil, fmt.Errorf("model: %s has shape %v, want %v", what, t.Shape(), shape)
	}
	d, ok := t.Data().([]T)
	if !ok {
		var z T
		return nil, fmt.Errorf("model: %s has dtype %v, want %T", what, t.Dtype(), z)
	}
	return d, nil
}

// reuse returns a length-n slice backed by *p when it is a []T with
// enough capacity, else a new one stored in *p. Ops keep their output
// buffers across runs this way: a fresh 10 MB gradient per training step
// costs more in page faults and zeroing than the arithmetic on it. The
// value an op returned is therefore overwritten by the op's next run; copy
// what you keep (G.Read gives the current run's value).
func reuse[T Float](p *any, n int) []T {
	if b, ok := (*p).([]T); ok && cap(b) >= n {
		return b[:n]
	}
	b := make([]T, n)
	*p = b
	return b
}

func newDense[T Float](data []T, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

// ---- fused convolution–ReLU–max-pool ----

// convState carries the pooling arg-max from the forward op to its
// gradient ops (both run on the same machine, forward first).
type convState struct {
	mu  sync.Mutex
	n   int
	arg []int32
	out any // forward output buffer
}

type convOp struct {
	g      convGeom
	inDims int // 2 (n × c·h·w) or 4 (n × c × h × w)
	st     *convState
}

func (op *convOp) Arity() int { return 3 }
func (op *convOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.inDims), tensorType(4), tensorType(1), tensorType(2))
}
func (op *convOp) inShape(n int) []int {
	if op.inDims == 2 {
		return []int{n, op.g.c * op.g.h * op.g.w}
	}
	return []int{n, op.g.c, op.g.h, op.g.w}
}
func (op *convOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("model: conv op wants 3 inputs, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != op.inDims {
		return nil, fmt.Errorf("model: conv op input shape %v, want %d dims", in[0], op.inDims)
	}
	return tensor.Shape{s[0], op.g.flat()}, nil
}
func (op *convOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 3 {
		return nil, fmt.Errorf("model: conv op wants 3 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != op.inDims {
		return nil, fmt.Errorf("model: conv op input %v, want a %d-dim tensor", v[0], op.inDims)
	}
	n := t.Shape()[0]
	switch t.Dtype() {
	case tensor.Float32:
		return convDo[float32](op, n, v)
	case tensor.Float64:
		return convDo[float64](op, n, v)
	}
	return nil, fmt.Errorf("model: conv op dtype %v", t.Dtype())
}

func convDo[T Float](op *convOp, n int, v []G.Value) (G.Value, error) {
	g := op.g
	x, err := dense[T]("conv input", v[0], op.inShape(n)...)
	if err != nil {
		return nil, err
	}
	w, err := dense[T]("conv.weight", v[1], g.k, g.c, 3, 3)
	if err != nil {
		return nil, err
	}
	b, err := dense[T]("conv.bias", v[2], g.k)
	if err != nil {
		return nil, err
	}
	op.st.mu.Lock()
	defer op.st.mu.Unlock()
	out := reuse[T](&op.st.out, n*g.flat())
	if cap(op.st.arg) < len(out) {
		op.st.arg = make([]int32, len(out))
	}
	op.st.arg = op.st.arg[:len(out)]
	op.st.n = n
	convReluPoolForward(g, n, x, w, b, out, op.st.arg)
	return newDense(out, n, g.flat()), nil
}

func (op *convOp) ReturnsPtr() bool     { return false }
func (op *convOp) CallsExtern() bool    { return false }
func (op *convOp) OverwritesInput() int { return -1 }
func (op *convOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.convReluPool(%+v,%d)", op.g, op.inDims)
}
func (op *convOp) Hashcode() uint32 { return hashOf(op) }
func (op *convOp) String() string {
	return fmt.Sprintf("ConvReLUPool(%d→%d,pad %d)", op.g.c, op.g.k, op.g.pad)
}
func (op *convOp) DiffWRT(int) []bool { return []bool{false, true, true} }
func (op *convOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("model: conv op wants 3 inputs, got %d", len(in))
	}
	dw, err := G.ApplyOp(&convGradOp{fwd: op, wrt: 1}, in[0], out, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&convGradOp{fwd: op, wrt: 2}, in[0], out, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{nil, dw, db}, nil
}

// convGradOp computes ∂L/∂w (wrt = 1) or ∂L/∂b (wrt = 2) of a convOp from
// (x, out, ∂L/∂out).
type convGradOp struct {
	fwd *convOp
	wrt int
}

func (op *convGradOp) Arity() int { return 3 }
func (op *convGradOp) Type() hm.Type {
	r := tensorType(4)
	if op.wrt == 2 {
		r = tensorType(1)
	}
	return hm.NewFnType(tensorType(op.fwd.inDims), tensorType(2), tensorType(2), r)
}
func (op *convGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.wrt == 2 {
		return tensor.Shape{op.fwd.g.k}, nil
	}
	return tensor.Shape{op.fwd.g.k, op.fwd.g.c, 3, 3}, nil
}
func (op *convGradOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 3 {
		return nil, fmt.Errorf("model: conv grad op wants 3 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != op.fwd.inDims {
		return nil, fmt.Errorf("model: conv grad op input %v, want a %d-dim tensor", v[0], op.fwd.inDims)
	}
	n := t.Shape()[0]
	switch t.Dtype() {
	case tensor.Float32:
		return convGradDo[float32](op, n, v)
	case tensor.Float64:
		return convGradDo[float64](op, n, v)
	}
	return nil, fmt.Errorf("model: conv grad op dtype %v", t.Dtype())
}

func convGradDo[T Float](op *convGradOp, n int, v []G.Value) (G.Value, error) {
	g := op.fwd.g
	x, err := dense[T]("conv input", v[0], op.fwd.inShape(n)...)
	if err != nil {
		return nil, err
	}
	dout, err := dense[T]("conv output gradient", v[2], n, g.flat())
	if err != nil {
		return nil, err
	}
	st := op.fwd.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.n != n || len(st.arg) != n*g.flat() {
		return nil, fmt.Errorf("model: conv grad op ran before its forward op (batch %d, forward saw %d)", n, st.n)
	}
	if op.wrt == 2 {
		db := make([]T, g.k)
		convReluPoolGradW(g, n, x, dout, st.arg, nil, db)
		return newDense(db, g.k), nil
	}
	dw := make([]T, g.k*g.c9())
	convReluPoolGradW(g, n, x, dout, st.arg, dw, nil)
	return newDense(dw, g.k, g.c, 3, 3), nil
}

func (op *convGradOp) ReturnsPtr() bool     { return false }
func (op *convGradOp) CallsExtern() bool    { return false }
func (op *convGradOp) OverwritesInput() int { return -1 }
func (op *convGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.convReluPoolGrad(%+v,%d,%d,%p)", op.fwd.g, op.fwd.inDims, op.wrt, op.fwd.st)
}
func (op *convGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *convGradOp) String() string   { return fmt.Sprintf("ConvReLUPoolGrad%d", op.wrt) }

// ---- linear ----

// linearOp computes y = act(x·w + b) for x n×f, w f×d, b d.
type linearOp struct {
	f, d int
	relu bool
	buf  *opBuf
}

// opBuf is an op's reusable output buffer (see reuse).
type opBuf struct {
	mu sync.Mutex
	b  any
}

func (op *linearOp) Arity() int { return 3 }
func (op *linearOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(1), tensorType(2))
}
func (op *linearOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("model: linear op wants 3 inputs, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 || s[1] != op.f {
		return nil, fmt.Errorf("model: linear op input shape %v, want (n, %d)", in[0], op.f)
	}
	return tensor.Shape{s[0], op.d}, nil
}
func (op *linearOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 3 {
		return nil, fmt.Errorf("model: linear op wants 3 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != 2 {
		return nil, fmt.Errorf("model: linear op input %v, want a matrix", v[0])
	}
	switch t.Dtype() {
	case tensor.Float32:
		return linearDo[float32](op, t.Shape()[0], v)
	case tensor.Float64:
		return linearDo[float64](op, t.Shape()[0], v)
	}
	return nil, fmt.Errorf("model: linear op dtype %v", t.Dtype())
}

func linearDo[T Float](op *linearOp, n int, v []G.Value) (G.Value, error) {
	x, err := dense[T]("linear input", v[0], n, op.f)
	if err != nil {
		return nil, err
	}
	w, err := dense[T]("linear weight", v[1], op.f, op.d)
	if err != nil {
		return nil, err
	}
	b, err := dense[T]("linear bias", v[2], op.d)
	if err != nil {
		return nil, err
	}
	op.buf.mu.Lock()
	defer op.buf.mu.Unlock()
	y := reuse[T](&op.buf.b, n*op.d)
	linearForward(n, op.f, op.d, x, w, b, y, op.relu)
	return newDense(y, n, op.d), nil
}

func (op *linearOp) ReturnsPtr() bool     { return false }
func (op *linearOp) CallsExtern() bool    { return false }
func (op *linearOp) OverwritesInput() int { return -1 }
func (op *linearOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.linear(%d,%d,%t)", op.f, op.d, op.relu)
}
func (op *linearOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearOp) String() string {
	if op.relu {
		return fmt.Sprintf("LinearReLU(%d→%d)", op.f, op.d)
	}
	return fmt.Sprintf("Linear(%d→%d)", op.f, op.d)
}
func (op *linearOp) DiffWRT(int) []bool { return []bool{true, true, true} }
func (op *linearOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("model: linear op wants 3 inputs, got %d", len(in))
	}
	r := make(G.Nodes, 3)
	for i := range r {
		var err error
		if r[i], err = G.ApplyOp(&linearGradOp{fwd: *op, wrt: i, buf: &opBuf{}}, in[0], in[1], out, grad); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// linearGradOp computes ∂L/∂x, ∂L/∂w or ∂L/∂b (wrt = 0, 1, 2) of a
// linearOp from (x, w, y, ∂L/∂y).
type linearGradOp struct {
	fwd linearOp
	wrt int
	buf *opBuf
}

func (op *linearGradOp) Arity() int { return 4 }
func (op *linearGradOp) Type() hm.Type {
	r := tensorType(2)
	if op.wrt == 2 {
		r = tensorType(1)
	}
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(2), tensorType(2), r)
}
func (op *linearGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	switch op.wrt {
	case 0:
		s, ok := in[0].(tensor.Shape)
		if !ok || len(s) != 2 {
			return nil, fmt.Errorf("model: linear grad op input shape %v", in[0])
		}
		return tensor.Shape{s[0], op.fwd.f}, nil
	case 1:
		return tensor.Shape{op.fwd.f, op.fwd.d}, nil
	}
	return tensor.Shape{op.fwd.d}, nil
}
func (op *linearGradOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 4 {
		return nil, fmt.Errorf("model: linear grad op wants 4 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != 2 {
		return nil, fmt.Errorf("model: linear grad op input %v, want a matrix", v[0])
	}
	switch t.Dtype() {
	case tensor.Float32:
		return linearGradDo[float32](op, t.Shape()[0], v)
	case tensor.Float64:
		return linearGradDo[float64](op, t.Shape()[0], v)
	}
	return nil, fmt.Errorf("model: linear grad op dtype %v", t.Dtype())
}

func linearGradDo[T Float](op *linearGradOp, n int, v []G.Value) (G.Value, error) {
	f, d := op.fwd.f, op.fwd.d
	x, err := dense[T]("linear input", v[0], n, f)
	if err != nil {
		return nil, err
	}
	w, err := dense[T]("linear weight", v[1], f, d)
	if err != nil {
		return nil, err
	}
	y, err := dense[T]("linear output", v[2], n, d)
	if err != nil {
		return nil, err
	}
	dy, err := dense[T]("linear output gradient", v[3], n, d)
	if err != nil {
		return nil, err
	}
	dz := reluMask(y, dy, op.fwd.relu)
	op.buf.mu.Lock()
	defer op.buf.mu.Unlock()
	switch op.wrt {
	case 0:
		dx := reuse[T](&op.buf.b, n*f)
		linearGradX(n, f, d, w, dz, dx)
		return newDense(dx, n, f), nil
	case 1:
		dw := reuse[T](&op.buf.b, f*d)
		linearGradW(n, f, d, x, dz, dw)
		return newDense(dw, f, d), nil
	}
	db := reuse[T](&op.buf.b, d)
	linearGradB(n, d, dz, db)
	return newDense(db, d), nil
}

func (op *linearGradOp) ReturnsPtr() bool     { return false }
func (op *linearGradOp) CallsExtern() bool    { return false }
func (op *linearGradOp) OverwritesInput() int { return -1 }
func (op *linearGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.linearGrad(%d,%d,%t,%d)", op.fwd.f, op.fwd.d, op.fwd.relu, op.wrt)
}
func (op *linearGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *linearGradOp) String() string   { return fmt.Sprintf("LinearGrad%d", op.wrt) }

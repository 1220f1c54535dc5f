package model

import (
	"fmt"
	"hash"
	"sync"

	"github.com/chewxy/hm"
	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// Mode selects how a Conv-4 graph uses batch normalisation.
type Mode int

const (
	// Train normalises with the statistics of the batch (the backward pass
	// goes through them) and updates the Net's running mean and variance
	// every time the forward op runs (momentum BNMomentum, unbiased
	// variance), as PyTorch's BatchNorm2d does in training mode.
	Train Mode = iota
	// Inference normalises with the Net's running statistics and changes
	// nothing (Net.Embed always runs this way).
	Inference
)

func (m Mode) String() string {
	if m == Inference {
		return "inference"
	}
	return "train"
}

// blockState is shared by a block's forward op and its gradient ops.
type blockState struct {
	mu  sync.Mutex
	b32 *blockBuf[float32]
	b64 *blockBuf[float64]
}

func bufOf[T Float](st *blockState) *blockBuf[T] {
	var z T
	switch any(z).(type) {
	case float32:
		if st.b32 == nil {
			st.b32 = &blockBuf[float32]{}
		}
		return any(st.b32).(*blockBuf[T])
	default:
		if st.b64 == nil {
			st.b64 = &blockBuf[float64]{}
		}
		return any(st.b64).(*blockBuf[T])
	}
}

func dataOf[T Float](p *Param) []T {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(p.F32).([]T)
	}
	return any(p.F64).([]T)
}

// blockOp is one Conv-4 block, conv–BN–ReLU–pool, as a Gorgonia op with
// inputs (x, conv weight, BN γ, BN β).
type blockOp struct {
	g           convGeom
	idx         int // 0-based block number
	first, last bool
	inDims      int // dims of x: 2 or 4 (first block), 2 otherwise
	mode        Mode
	inputGrad   bool   // first block: differentiate with respect to x
	mean, vr    *Param // the Net's running statistics
	st          *blockState
}

func (op *blockOp) inShape(n int) []int {
	g := op.g
	if op.inDims == 4 {
		return []int{n, g.c, g.h, g.w}
	}
	return []int{n, g.c * g.h * g.w}
}

func (op *blockOp) Arity() int { return 4 }
func (op *blockOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.inDims), tensorType(4), tensorType(1), tensorType(1), tensorType(2))
}
func (op *blockOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 4 {
		return nil, fmt.Errorf("model: conv4 block op wants 4 inputs, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != op.inDims {
		return nil, fmt.Errorf("model: conv4 block op input shape %v, want %d dims", in[0], op.inDims)
	}
	return tensor.Shape{s[0], op.g.flat()}, nil
}
func (op *blockOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 4 {
		return nil, fmt.Errorf("model: conv4 block op wants 4 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != op.inDims {
		return nil, fmt.Errorf("model: conv4 block op input %v, want a %d-dim tensor", v[0], op.inDims)
	}
	n := t.Shape()[0]
	switch t.Dtype() {
	case tensor.Float32:
		return blockDo[float32](op, n, v)
	case tensor.Float64:
		return blockDo[float64](op, n, v)
	}
	return nil, fmt.Errorf("model: conv4 block op dtype %v", t.Dtype())
}

func blockDo[T Float](op *blockOp, n int, v []G.Value) (G.Value, error) {
	g := op.g
	x, err := dense[T]("conv4 block input", v[0], op.inShape(n)...)
	if err != nil {
		return nil, err
	}
	w, err := dense[T]("conv weight", v[1], g.k, g.c, 3, 3)
	if err != nil {
		return nil, err
	}
	gamma, err := dense[T]("bn weight", v[2], g.k)
	if err != nil {
		return nil, err
	}
	beta, err := dense[T]("bn bias", v[3], g.k)
	if err != nil {
		return nil, err
	}
	train := op.mode == Train
	if train && n*g.h*g.w < 2 {
		return nil, fmt.Errorf("model: conv4 block %d: batch normalisation in training mode needs more than one value per channel", op.idx+1)
	}
	op.st.mu.Lock()
	defer op.st.mu.Unlock()
	b := bufOf[T](op.st)
	rm, rv := dataOf[T](op.mean), dataOf[T](op.vr)
	var vb []float64
	if train {
		b.vb = grow(b.vb, g.k)
		vb = b.vb
	}
	blockForward(g, n, x, w, gamma, beta, op.first, op.last, train, rm, rv, vb, b)
	if train {
		m := float64(n * g.h * g.w)
		for k := range rm {
			rm[k] = T((1-BNMomentum)*float64(rm[k]) + BNMomentum*b.mean[k])
			rv[k] = T((1-BNMomentum)*float64(rv[k]) + BNMomentum*vb[k]*m/(m-1))
		}
	}
	return newDense(b.out, n, g.flat()), nil
}

func (op *blockOp) ReturnsPtr() bool     { return false }
func (op *blockOp) CallsExtern() bool    { return false }
func (op *blockOp) OverwritesInput() int { return -1 }
func (op *blockOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.conv4block(%+v,%d,%t,%t,%d,%d,%t,%p)", op.g, op.idx, op.first, op.last, op.inDims, op.mode, op.inputGrad, op.st)
}
func (op *blockOp) Hashcode() uint32 { return hashOf(op) }
func (op *blockOp) String() string {
	return fmt.Sprintf("Conv4Block%d(%d→%d,%s)", op.idx+1, op.g.c, op.g.k, op.mode)
}
func (op *blockOp) diffX() bool { return !op.first || op.inputGrad }
func (op *blockOp) DiffWRT(int) []bool {
	return []bool{op.diffX(), true, true, true}
}
func (op *blockOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 4 {
		return nil, fmt.Errorf("model: conv4 block op wants 4 inputs, got %d", len(in))
	}
	core, err := G.ApplyOp(&blockGradOp{fwd: op}, in[0], in[2], out, grad)
	if err != nil {
		return nil, err
	}
	r := G.Nodes{nil, nil, nil, nil}
	if op.diffX() {
		r[0] = core
	}
	for i := 1; i < 4; i++ {
		if r[i], err = G.ApplyOp(&blockFetchOp{fwd: op, which: i, coreDims: core.Dims()}, core); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// blockGradOp runs a block's backward pass from (x, γ, out, ∂L/∂out): it
// returns ∂L/∂x (or a 1-element placeholder when the block does not
// differentiate with respect to x) and keeps ∂L/∂w, ∂L/∂γ, ∂L/∂β for the
// block's fetch ops.
type blockGradOp struct {
	fwd *blockOp
}

func (op *blockGradOp) Arity() int { return 4 }
func (op *blockGradOp) outDims() int {
	if op.fwd.diffX() {
		return op.fwd.inDims
	}
	return 1
}
func (op *blockGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.fwd.inDims), tensorType(1), tensorType(2), tensorType(2), tensorType(op.outDims()))
}
func (op *blockGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 4 {
		return nil, fmt.Errorf("model: conv4 block grad op wants 4 inputs, got %d", len(in))
	}
	if !op.fwd.diffX() {
		return tensor.Shape{1}, nil
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != op.fwd.inDims {
		return nil, fmt.Errorf("model: conv4 block grad op input shape %v", in[0])
	}
	return s.Clone(), nil
}
func (op *blockGradOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 4 {
		return nil, fmt.Errorf("model: conv4 block grad op wants 4 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok || t.Shape().Dims() != op.fwd.inDims {
		return nil, fmt.Errorf("model: conv4 block grad op input %v, want a %d-dim tensor", v[0], op.fwd.inDims)
	}
	n := t.Shape()[0]
	switch t.Dtype() {
	case tensor.Float32:
		return blockGradDo[float32](op, n, v)
	case tensor.Float64:
		return blockGradDo[float64](op, n, v)
	}
	return nil, fmt.Errorf("model: conv4 block grad op dtype %v", t.Dtype())
}

func blockGradDo[T Float](op *blockGradOp, n int, v []G.Value) (G.Value, error) {
	f := op.fwd
	g := f.g
	x, err := dense[T]("conv4 block input", v[0], f.inShape(n)...)
	if err != nil {
		return nil, err
	}
	gamma, err := dense[T]("bn weight", v[1], g.k)
	if err != nil {
		return nil, err
	}
	dout, err := dense[T]("conv4 block output gradient", v[3], n, g.flat())
	if err != nil {
		return nil, err
	}
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	b := bufOf[T](f.st)
	if b.n != n || len(b.arg) != n*g.flat() {
		return nil, fmt.Errorf("model: conv4 block %d grad op ran before its forward op (batch %d, forward saw %d)", f.idx+1, n, b.n)
	}
	blockBackward(g, x, gamma, dout, f.first, f.last, f.diffX(), b)
	if !f.diffX() {
		b.one = grow(b.one, 1)
		return newDense(b.one, 1), nil
	}
	return newDense(b.dx, f.inShape(n)...), nil
}

func (op *blockGradOp) ReturnsPtr() bool     { return false }
func (op *blockGradOp) CallsExtern() bool    { return false }
func (op *blockGradOp) OverwritesInput() int { return -1 }
func (op *blockGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.conv4blockGrad(%+v,%d,%d,%t,%p)", op.fwd.g, op.fwd.idx, op.fwd.inDims, op.fwd.diffX(), op.fwd.st)
}
func (op *blockGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *blockGradOp) String() string   { return fmt.Sprintf("Conv4Block%dGrad", op.fwd.idx+1) }

// blockFetchOp returns the gradient of a block's conv weight (which = 1),
// BN γ (2) or BN β (3) computed by the block's grad op, whose output is
// its input (for ordering only).
type blockFetchOp struct {
	fwd      *blockOp
	which    int
	coreDims int
}

func (op *blockFetchOp) Arity() int { return 1 }
func (op *blockFetchOp) shape() tensor.Shape {
	if op.which == 1 {
		return tensor.Shape{op.fwd.g.k, op.fwd.g.c, 3, 3}
	}
	return tensor.Shape{op.fwd.g.k}
}
func (op *blockFetchOp) Type() hm.Type {
	return hm.NewFnType(tensorType(op.coreDims), tensorType(op.shape().Dims()))
}
func (op *blockFetchOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape(), nil }
func (op *blockFetchOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("model: conv4 fetch op wants 1 input, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("model: conv4 fetch op input %v", v[0])
	}
	st := op.fwd.st
	st.mu.Lock()
	defer st.mu.Unlock()
	switch t.Dtype() {
	case tensor.Float32:
		return fetchDo(op, bufOf[float32](st))
	case tensor.Float64:
		return fetchDo(op, bufOf[float64](st))
	}
	return nil, fmt.Errorf("model: conv4 fetch op dtype %v", t.Dtype())
}

func fetchDo[T Float](op *blockFetchOp, b *blockBuf[T]) (G.Value, error) {
	var d []T
	switch op.which {
	case 1:
		d = b.dw
	case 2:
		d = b.dgamma
	default:
		d = b.dbeta
	}
	if len(d) != op.shape().TotalSize() {
		return nil, fmt.Errorf("model: conv4 block %d fetch op ran before its grad op", op.fwd.idx+1)
	}
	return newDense(d, op.shape()...), nil
}

func (op *blockFetchOp) ReturnsPtr() bool     { return false }
func (op *blockFetchOp) CallsExtern() bool    { return false }
func (op *blockFetchOp) OverwritesInput() int { return -1 }
func (op *blockFetchOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.conv4blockFetch(%d,%d,%d,%p)", op.fwd.idx, op.which, op.coreDims, op.fwd.st)
}
func (op *blockFetchOp) Hashcode() uint32 { return hashOf(op) }
func (op *blockFetchOp) String() string {
	return fmt.Sprintf("Conv4Block%dGrad[%s]", op.fwd.idx+1, [...]string{"", "w", "γ", "β"}[op.which])
}

// applyConv4 adds the Conv-4 body (and the optional linear layer) for x.
func (gr *Graph) applyConv4(x *G.Node, dims int, mode Mode) (*G.Node, error) {
	cfg := gr.Net.cfg
	L := gr.Learnables
	h := x
	for i, g := range cfg.blocks() {
		op := &blockOp{g: g, idx: i, first: i == 0, last: i == Conv4Blocks-1, inDims: 2, mode: mode,
			inputGrad: gr.InputGrad, mean: gr.Net.buffers[2*i], vr: gr.Net.buffers[2*i+1], st: &blockState{}}
		if i == 0 {
			op.inDims = dims
		}
		var err error
		if h, err = G.ApplyOp(op, h, L[3*i], L[3*i+1], L[3*i+2]); err != nil {
			return nil, fmt.Errorf("model: conv4 block %d: %w", i+1, err)
		}
	}
	if cfg.Dim == 0 {
		return h, nil
	}
	y, err := G.ApplyOp(&linearOp{f: cfg.bodyWidth(), d: cfg.Dim, buf: &opBuf{}}, h, L[3*Conv4Blocks], L[3*Conv4Blocks+1])
	if err != nil {
		return nil, fmt.Errorf("model: linear layer: %w", err)
	}
	return y, nil
}

// conv4EmbedChunk bounds the samples Embed pushes through Conv-4 at a time
// (about 8 M values of the first block's convolution output).
func conv4EmbedChunk(cfg Config) int {
	g := cfg.blocks()[0]
	return max(1, min(embedChunk, (8<<20)/(g.h*g.w*g.k)))
}

// embedConv4 runs the Conv-4 body in inference mode (running statistics)
// on n samples of x and writes the embeddings to out.
func embedConv4[T Float, S Float](net *Net, x []S, n int, out []float64) {
	cfg := net.cfg
	in, d := cfg.InSize(), net.Dim()
	chunk := min(n, conv4EmbedChunk(cfg))
	xb := make([]T, chunk*in)
	bufs := make([]blockBuf[T], Conv4Blocks)
	gs := cfg.blocks()
	var y []T
	if cfg.Dim > 0 {
		y = make([]T, chunk*d)
	}
	for lo := 0; lo < n; lo += chunk {
		m := min(chunk, n-lo)
		for i, v := range x[lo*in : (lo+m)*in] {
			xb[i] = T(v)
		}
		h := xb[:m*in]
		for i, g := range gs {
			p := net.params[3*i : 3*i+3]
			blockForward(g, m, h, dataOf[T](p[0]), dataOf[T](p[1]), dataOf[T](p[2]), i == 0, i == Conv4Blocks-1, false,
				dataOf[T](net.buffers[2*i]), dataOf[T](net.buffers[2*i+1]), nil, &bufs[i])
			h = bufs[i].out
		}
		if cfg.Dim > 0 {
			p := net.params[3*Conv4Blocks:]
			linearForward(m, cfg.bodyWidth(), d, h, dataOf[T](p[0]), dataOf[T](p[1]), y, false)
			h = y
		}
		for i, v := range h[:m*d] {
			out[lo*d+i] = float64(v)
		}
	}
}

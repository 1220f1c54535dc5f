// Package gop is the Gorgonia op of the LFD layer, the one through which
// the trainer (package train) and any other graph differentiate the
// least-favourable distributions. In the forward pass it solves the LFD
// problem of each mini-set of an n×d embedding node with package optlayer
// (costs by the metric, optionally divided by their mean with
// optlayer.NormalizeCosts); in the backward pass it returns the exact
// implicit gradient (optlayer.Result.VJP) chained through the normalisation
// and the metric, so that G.Grad works on a TapeMachine and the gradient
// reaches the network's weights.
//
// The op has two outputs, one per use:
//
//   - LFD (or LFDCost on an n×n cost node): the M×n regularised P of one
//     problem on all rows, for any loss built from P in the graph;
//   - Risk: the mean worst-case risk M − Σ_i max_m PReg_m(i) over a batch of
//     mini-sets that may change before every run (Algorithm 1's loss; its
//     gradient is formed in plain Go, WorstCaseRisk, with the mini-sets
//     solved in parallel and results independent of the worker count).
//
// Labels, radii, metric, cost normalisation and every solver setting are
// parameters of the op and part of its hash.
package gop

import (
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"sync"

	"github.com/chewxy/hm"
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/internal/lossop"
	"github.com/drknn/drknn/optlayer"
	"gorgonia.org/tensor"
)

// Settings are the op's parameters.
type Settings struct {
	Labels []int     // LFD, LFDCost: length n, classes 0…M−1, every class present (Risk: each MiniSet has its own)
	Theta  []float64 // radii: length 1 (all classes) or M
	Metric optlayer.Metric
	// Normalize divides each problem's costs by their mean over its n×n
	// matrix before solving (optlayer.NormalizeCosts), so Theta is relative
	// to the mini-set's typical distance and P is invariant to rescaling the
	// embedding (DESIGN §5: otherwise the network can inflate the embedding
	// until the adversary can move no mass). The gradient includes the
	// normalisation.
	Normalize bool
	Solver    optlayer.Settings // Warm and Plans are ignored
	Workers   int               // Risk: goroutines over the mini-sets (≤ 1: one); never changes results
}

// Layer is one application of LFD or LFDCost. After each run of the
// machine, Result holds the solver's answer for that run (bounds, gap,
// status).
type Layer struct {
	Output *G.Node // M×n regularised P (PReg)
	op     *lfdOp
}

// Result returns the solver's result of the latest forward run, or nil.
func (l *Layer) Result() *optlayer.Result {
	l.op.st.mu.Lock()
	defer l.op.st.mu.Unlock()
	if len(l.op.st.solved) == 0 {
		return nil
	}
	return l.op.st.solved[0].res
}

// M is the number of classes.
func (l *Layer) M() int { return l.op.m }

// LFD applies the op to an n×d embedding node x (float32 or float64) and
// returns the layer whose Output is the M×n node PReg.
func LFD(x *G.Node, s Settings) (*Layer, error) {
	op, node, err := apply(x, s, outP, false)
	if err != nil {
		return nil, err
	}
	return &Layer{Output: node, op: op}, nil
}

// LFDCost applies the op to an n×n cost node c (c(i,j) ≥ 0); Metric is
// unused.
func LFDCost(c *G.Node, s Settings) (*Layer, error) {
	op, node, err := apply(c, s, outP, true)
	if err != nil {
		return nil, err
	}
	return &Layer{Output: node, op: op}, nil
}

// RiskLayer is one application of Risk: a scalar node whose value after
// each run is the mean worst-case risk over the mini-sets set by SetBatch.
type RiskLayer struct {
	Output *G.Node // scalar, the dtype of the input
	op     *lfdOp
}

// Risk applies the op to an n×d embedding node x (float32 or float64) and
// returns the layer whose Output is the mean worst-case risk of the
// mini-sets given to SetBatch before each run (s.Labels is not used).
func Risk(x *G.Node, s Settings) (*RiskLayer, error) {
	op, node, err := apply(x, s, outRisk, false)
	if err != nil {
		return nil, err
	}
	return &RiskLayer{Output: node, op: op}, nil
}

// SetBatch sets the mini-sets of the next forward runs (Algorithm 1 draws
// new ones every step). The layer keeps sets; do not change them while a
// run may use them.
func (l *RiskLayer) SetBatch(sets []MiniSet) {
	l.op.st.mu.Lock()
	l.op.st.sets = sets
	l.op.st.mu.Unlock()
}

// Last returns the risk, gradient and solver statistics of the latest
// forward run.
func (l *RiskLayer) Last() RiskResult {
	l.op.st.mu.Lock()
	defer l.op.st.mu.Unlock()
	return l.op.st.risk
}

// output says what the op computes from the solved problems.
type output int

const (
	outP    output = iota // the M×n PReg of one problem on all rows
	outRisk               // the scalar mean worst-case risk of a batch
)

func apply(x *G.Node, s Settings, out output, cost bool) (*lfdOp, *G.Node, error) {
	if x == nil {
		return nil, nil, fmt.Errorf("gop: nil input node")
	}
	sh := x.Shape()
	if len(sh) != 2 || sh[0] < 1 || sh[1] < 1 {
		return nil, nil, fmt.Errorf("gop: input %q has shape %v, want a matrix", x.Name(), sh)
	}
	if dt := x.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, nil, fmt.Errorf("gop: input %q has dtype %v, want float32 or float64", x.Name(), dt)
	}
	n, dim := sh[0], sh[1]
	if cost && dim != n {
		return nil, nil, fmt.Errorf("gop: cost input %q has shape %v, want n×n", x.Name(), sh)
	}
	if !cost && s.Metric != optlayer.Euclidean && s.Metric != optlayer.SqEuclidean {
		return nil, nil, fmt.Errorf("gop: unknown metric %d", int(s.Metric))
	}
	if err := checkSettings(s.Solver); err != nil {
		return nil, nil, err
	}
	op := &lfdOp{kind: out, cost: cost, n: n, dim: dim, s: s, st: &lfdState{}}
	op.s.Theta = append([]float64(nil), s.Theta...)
	op.s.Solver.Warm, op.s.Solver.Plans = nil, false
	op.s.Labels = nil
	if out == outP {
		// Let optlayer check labels and radii on a dummy problem of this size.
		p := optlayer.Problem{N: n, Cost: make([]float64, n*n), Labels: s.Labels, Theta: s.Theta}
		if err := p.Validate(); err != nil {
			return nil, nil, fmt.Errorf("gop: %w", err)
		}
		op.s.Labels = append([]int(nil), s.Labels...)
		for _, y := range s.Labels {
			op.m = max(op.m, y+1)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		op.st.sets = []MiniSet{{Index: all, Labels: op.s.Labels}}
	}
	node, err := G.ApplyOp(op, x)
	if err != nil {
		return nil, nil, fmt.Errorf("gop: %w", err)
	}
	return op, node, nil
}

func checkSettings(s optlayer.Settings) error {
	for name, v := range map[string]float64{"Epsilon": s.Epsilon, "Tol": s.Tol, "RegTol": s.RegTol, "CGTol": s.CGTol} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("gop: solver setting %s = %v, want finite and ≥ 0", name, v)
		}
	}
	if s.MaxIter < 0 {
		return fmt.Errorf("gop: solver setting MaxIter = %d, want ≥ 0", s.MaxIter)
	}
	return nil
}

// lfdState carries the batch of the next forward and the latest forward's
// answers to the gradient op.
type lfdState struct {
	mu     sync.Mutex
	sets   []MiniSet
	solved []solved   // outP: the latest forward's problem
	risk   RiskResult // outRisk: the latest forward's risk and gradient
	work   riskWork   // outRisk: buffers reused from step to step
	err    error      // the latest forward's error
}

type lfdOp struct {
	lossop.Pure
	kind      output
	cost      bool
	n, dim, m int
	s         Settings
	st        *lfdState
}

func mat() hm.Type { return &G.TensorType{Dims: 2, Of: hm.TypeVariable('a')} }

func (op *lfdOp) Arity() int { return 1 }
func (op *lfdOp) Type() hm.Type {
	if op.kind == outRisk {
		return hm.NewFnType(mat(), hm.TypeVariable('a'))
	}
	return hm.NewFnType(mat(), mat())
}
func (op *lfdOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.kind == outRisk {
		return tensor.ScalarShape(), nil
	}
	return tensor.Shape{op.m, op.n}, nil
}

// float64s returns v's data as float64 (a copy) after a shape check.
func float64s(what string, v G.Value, r, c int) ([]float64, tensor.Dtype, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, tensor.Dtype{}, fmt.Errorf("gop: %s is %T, want a tensor", what, v)
	}
	if !t.Shape().Eq(tensor.Shape{r, c}) {
		return nil, tensor.Dtype{}, fmt.Errorf("gop: %s has shape %v, want (%d, %d)", what, t.Shape(), r, c)
	}
	switch d := t.Data().(type) {
	case []float64:
		return append([]float64(nil), d...), t.Dtype(), nil
	case []float32:
		o := make([]float64, len(d))
		for i, x := range d {
			o[i] = float64(x)
		}
		return o, t.Dtype(), nil
	}
	return nil, tensor.Dtype{}, fmt.Errorf("gop: %s has dtype %v", what, t.Dtype())
}

func denseOf(x []float64, dt tensor.Dtype, shape ...int) *tensor.Dense {
	if dt == tensor.Float32 {
		o := make([]float32, len(x))
		for i, v := range x {
			o[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(o))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))
}

func (op *lfdOp) Do(v ...G.Value) (G.Value, error) {
	if len(v) != 1 {
		return nil, fmt.Errorf("gop: LFD op wants 1 input, got %d", len(v))
	}
	x, dt, err := float64s("LFD input", v[0], op.n, op.dim)
	if err != nil {
		return nil, err
	}
	op.st.mu.Lock()
	defer op.st.mu.Unlock()
	if op.kind == outRisk {
		if len(op.st.sets) == 0 {
			op.st.err = fmt.Errorf("gop: risk layer run without mini-sets (SetBatch)")
			return nil, op.st.err
		}
		r, err := worstCaseRisk(x, op.n, op.dim, op.st.sets, op.s, &op.st.work)
		op.st.risk, op.st.err = r, err
		if err != nil {
			return nil, fmt.Errorf("gop: %w", err)
		}
		if dt == tensor.Float32 {
			return G.NewF32(float32(r.Risk)), nil
		}
		return G.NewF64(r.Risk), nil
	}
	if op.cost {
		for k, cv := range x {
			if !(cv >= 0) || math.IsInf(cv, 0) {
				return nil, fmt.Errorf("gop: cost[%d][%d] = %v, want finite and ≥ 0", k/op.n, k%op.n, cv)
			}
		}
	}
	sv, err := op.s.forward(x, op.n, op.dim, op.cost, op.st.sets, nil)
	op.st.solved, op.st.err = sv, err
	if err != nil {
		return nil, fmt.Errorf("gop: LFD: %w", err)
	}
	return denseOf(append([]float64(nil), sv[0].res.PReg...), dt, op.m, op.n), nil
}

func (op *lfdOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.gop.LFD(out=%d,cost=%t,n=%d,dim=%d,m=%d,metric=%d,norm=%t,", op.kind, op.cost, op.n, op.dim, op.m, op.s.Metric, op.s.Normalize)
	var b [8]byte
	w := func(u uint64) {
		binary.LittleEndian.PutUint64(b[:], u)
		h.Write(b[:])
	}
	w(uint64(len(op.s.Labels)))
	for _, y := range op.s.Labels {
		w(uint64(y))
	}
	w(uint64(len(op.s.Theta)))
	for _, t := range op.s.Theta {
		w(math.Float64bits(t))
	}
	s := op.s.Solver
	w(math.Float64bits(s.Epsilon))
	w(math.Float64bits(s.Tol))
	w(uint64(s.MaxIter))
	w(math.Float64bits(s.RegTol))
	w(math.Float64bits(s.CGTol))
	if op.kind == outRisk {
		// The batch changes between runs: two risk layers are never one.
		fmt.Fprintf(h, "%p", op.st)
	}
	h.Write([]byte(")"))
}

func (op *lfdOp) Hashcode() uint32 { return lossop.Hashcode(op) }

func (op *lfdOp) String() string {
	switch {
	case op.kind == outRisk:
		return fmt.Sprintf("WorstCaseRisk(n=%d,d=%d)", op.n, op.dim)
	case op.cost:
		return fmt.Sprintf("LFDCost(n=%d,M=%d)", op.n, op.m)
	}
	return fmt.Sprintf("LFD(n=%d,d=%d,M=%d)", op.n, op.dim, op.m)
}

func (op *lfdOp) DiffWRT(int) []bool { return []bool{true} }

func (op *lfdOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("gop: LFD op wants 1 input, got %d", len(in))
	}
	g, err := G.ApplyOp(&lfdGradOp{fwd: op}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{g}, nil
}

// lfdGradOp maps (x, ∂L/∂output) to ∂L/∂x using the forward's answers.
type lfdGradOp struct {
	lossop.Pure
	fwd *lfdOp
}

func (op *lfdGradOp) Arity() int { return 2 }
func (op *lfdGradOp) Type() hm.Type {
	if op.fwd.kind == outRisk {
		return hm.NewFnType(mat(), hm.TypeVariable('a'), mat())
	}
	return hm.NewFnType(mat(), mat(), mat())
}
func (op *lfdGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.n, op.fwd.dim}, nil
}

func (op *lfdGradOp) Do(v ...G.Value) (G.Value, error) {
	f := op.fwd
	if len(v) != 2 {
		return nil, fmt.Errorf("gop: LFD gradient op wants 2 inputs, got %d", len(v))
	}
	t, ok := v[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("gop: LFD gradient op input is %T, want a tensor", v[0])
	}
	dt := t.Dtype()
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	if f.st.err != nil {
		return nil, f.st.err
	}
	if f.kind == outRisk {
		// ∂L/∂x = upstream scalar × the gradient formed in the forward.
		g := f.st.risk.Grad
		if len(g) != f.n*f.dim {
			return nil, fmt.Errorf("gop: risk gradient op ran before its forward op")
		}
		out, err := lossop.ScaledGrad(g, v[1], tensor.Shape{f.n, f.dim}, dt)
		if err != nil {
			return nil, fmt.Errorf("gop: risk gradient: %w", err)
		}
		return out, nil
	}
	if len(f.st.solved) == 0 {
		return nil, fmt.Errorf("gop: LFD gradient op ran before its forward op")
	}
	gp, _, err := float64s("LFD output gradient", v[1], f.m, f.n)
	if err != nil {
		return nil, err
	}
	g, err := f.s.backward(&f.st.solved[0], gp, f.dim, f.cost, nil)
	if err != nil {
		return nil, fmt.Errorf("gop: LFD backward: %w", err)
	}
	return denseOf(g, dt, f.n, f.dim), nil
}

func (op *lfdGradOp) WriteHash(h hash.Hash) {
	h.Write([]byte("drknn.gop.LFDGrad:"))
	op.fwd.WriteHash(h)
	fmt.Fprintf(h, "%p", op.fwd.st)
}
func (op *lfdGradOp) Hashcode() uint32 { return lossop.Hashcode(op) }
func (op *lfdGradOp) String() string   { return "LFDGrad" }

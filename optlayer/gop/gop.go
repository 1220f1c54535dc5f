// Package gop is the Gorgonia op of the LFD layer: it maps an n×d
// embedding node (or an n×n cost node) to the regularised least-favourable
// distributions P (an M×n node), solving the LFD problem with package
// optlayer in the forward pass and returning its exact implicit gradient
// (optlayer.Result.VJP) in the backward pass, so that G.Grad works on a
// TapeMachine and the gradient reaches the network's weights.
//
// Labels, radii, metric, cost normalisation and every solver setting are
// parameters of the op and part of its hash.
package gop

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sync"

	"github.com/chewxy/hm"
	"github.com/drknn/drknn/optlayer"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Settings are the op's parameters.
type Settings struct {
	Labels []int     // length n, classes 0…M−1, every class present
	Theta  []float64 // radii: length 1 (all classes) or M
	Metric optlayer.Metric
	// Normalize divides the costs by their mean over the n×n matrix
	// before solving, so Theta is relative to the mini-set's typical
	// distance and P is invariant to rescaling the embedding (DESIGN §5:
	// otherwise the network can inflate the embedding until the adversary
	// can move no mass). The gradient includes the normalisation.
	Normalize bool
	Solver    optlayer.Settings // Warm and Plans are ignored
}

// Layer is one application of the op. After each run of the machine,
// Result holds the solver's answer for that run (bounds, gap, status).
type Layer struct {
	Output *G.Node // M×n regularised P (PReg)
	op     *lfdOp
}

// Result returns the solver's result of the latest forward run, or nil.
func (l *Layer) Result() *optlayer.Result {
	l.op.st.mu.Lock()
	defer l.op.st.mu.Unlock()
	return l.op.st.res
}

// M is the number of classes.
func (l *Layer) M() int { return l.op.m }

// LFD applies the op to an n×d embedding node x (float32 or float64) and
// returns the layer whose Output is the M×n node PReg.
func LFD(x *G.Node, s Settings) (*Layer, error) { return apply(x, s, false) }

// LFDCost applies the op to an n×n cost node c (c(i,j) ≥ 0); Metric is
// unused.
func LFDCost(c *G.Node, s Settings) (*Layer, error) { return apply(c, s, true) }

func apply(x *G.Node, s Settings, cost bool) (*Layer, error) {
	if x == nil {
		return nil, fmt.Errorf("gop: nil input node")
	}
	sh := x.Shape()
	if len(sh) != 2 || sh[0] < 1 || sh[1] < 1 {
		return nil, fmt.Errorf("gop: input %q has shape %v, want a matrix", x.Name(), sh)
	}
	if dt := x.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("gop: input %q has dtype %v, want float32 or float64", x.Name(), dt)
	}
	n, dim := sh[0], sh[1]
	if cost && dim != n {
		return nil, fmt.Errorf("gop: cost input %q has shape %v, want n×n", x.Name(), sh)
	}
	if !cost && s.Metric != optlayer.Euclidean && s.Metric != optlayer.SqEuclidean {
		return nil, fmt.Errorf("gop: unknown metric %d", int(s.Metric))
	}
	// Let optlayer check labels and radii on a dummy problem of this size.
	p := optlayer.Problem{N: n, Cost: make([]float64, n*n), Labels: s.Labels, Theta: s.Theta}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gop: %w", err)
	}
	if err := checkSettings(s.Solver); err != nil {
		return nil, err
	}
	m := 0
	for _, y := range s.Labels {
		m = max(m, y+1)
	}
	op := &lfdOp{
		cost: cost, n: n, dim: dim, m: m,
		labels: append([]int(nil), s.Labels...), theta: append([]float64(nil), s.Theta...),
		metric: s.Metric, normalize: s.Normalize, solver: s.Solver, st: &lfdState{},
	}
	op.solver.Warm, op.solver.Plans = nil, false
	out, err := G.ApplyOp(op, x)
	if err != nil {
		return nil, fmt.Errorf("gop: %w", err)
	}
	return &Layer{Output: out, op: op}, nil
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

// lfdState carries the latest forward solve to the gradient op.
type lfdState struct {
	mu    sync.Mutex
	res   *optlayer.Result
	x     []float64 // input of that solve (features or costs), float64
	c     []float64 // costs actually solved (normalised if asked)
	scale float64   // the normalising mean (1 when not normalising)
}

type lfdOp struct {
	cost      bool
	n, dim, m int
	labels    []int
	theta     []float64
	metric    optlayer.Metric
	normalize bool
	solver    optlayer.Settings
	st        *lfdState
}

func mat() hm.Type { return &G.TensorType{Dims: 2, Of: hm.TypeVariable('a')} }

func (op *lfdOp) Arity() int    { return 1 }
func (op *lfdOp) Type() hm.Type { return hm.NewFnType(mat(), mat()) }
func (op *lfdOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
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
	var c []float64
	if op.cost {
		for k, cv := range x {
			if !(cv >= 0) || math.IsInf(cv, 0) {
				return nil, fmt.Errorf("gop: cost[%d][%d] = %v, want finite and ≥ 0", k/op.n, k%op.n, cv)
			}
		}
		c = append([]float64(nil), x...)
	} else if c, err = optlayer.Costs(x, op.n, op.dim, op.metric); err != nil {
		return nil, fmt.Errorf("gop: %w", err)
	}
	scale := 1.0
	if op.normalize {
		s := 0.0
		for _, cv := range c {
			s += cv
		}
		scale = s / float64(len(c))
		if !(scale > 0) || math.IsInf(scale, 0) {
			return nil, fmt.Errorf("gop: cannot normalise costs: mean cost %v (all points identical?)", scale)
		}
		for k := range c {
			c[k] /= scale
		}
	}
	settings := op.solver
	res, err := optlayer.Solve(&optlayer.Problem{N: op.n, Cost: c, Labels: op.labels, Theta: op.theta}, &settings)
	if err != nil {
		return nil, fmt.Errorf("gop: LFD solve: %w", err)
	}
	op.st.mu.Lock()
	op.st.res, op.st.x, op.st.c, op.st.scale = res, x, c, scale
	op.st.mu.Unlock()
	return denseOf(append([]float64(nil), res.PReg...), dt, op.m, op.n), nil
}

func (op *lfdOp) ReturnsPtr() bool     { return false }
func (op *lfdOp) CallsExtern() bool    { return false }
func (op *lfdOp) OverwritesInput() int { return -1 }

func (op *lfdOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "drknn.gop.LFD(cost=%t,n=%d,dim=%d,m=%d,metric=%d,norm=%t,", op.cost, op.n, op.dim, op.m, op.metric, op.normalize)
	var b [8]byte
	w := func(u uint64) {
		binary.LittleEndian.PutUint64(b[:], u)
		h.Write(b[:])
	}
	w(uint64(len(op.labels)))
	for _, y := range op.labels {
		w(uint64(y))
	}
	w(uint64(len(op.theta)))
	for _, t := range op.theta {
		w(math.Float64bits(t))
	}
	s := op.solver
	w(math.Float64bits(s.Epsilon))
	w(math.Float64bits(s.Tol))
	w(uint64(s.MaxIter))
	w(math.Float64bits(s.RegTol))
	w(math.Float64bits(s.CGTol))
	h.Write([]byte(")"))
}

func (op *lfdOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op *lfdOp) String() string {
	if op.cost {
		return fmt.Sprintf("LFDCost(n=%d,M=%d)", op.n, op.m)
	}
	return fmt.Sprintf("LFD(n=%d,d=%d,M=%d)", op.n, op.dim, op.m)
}

func (op *lfdOp) DiffWRT(int) []bool { return []bool{true} }

func (op *lfdOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("gop: LFD op wants 1 input, got %d", len(in))
	}
	g, err := G.ApplyOp(&lfdGradOp{fwd: op}, in[0], out, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{g}, nil
}

// lfdGradOp maps (x, P, ∂L/∂P) to ∂L/∂x using the forward's Result.
type lfdGradOp struct{ fwd *lfdOp }

func (op *lfdGradOp) Arity() int    { return 3 }
func (op *lfdGradOp) Type() hm.Type { return hm.NewFnType(mat(), mat(), mat(), mat()) }
func (op *lfdGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.n, op.fwd.dim}, nil
}

func (op *lfdGradOp) Do(v ...G.Value) (G.Value, error) {
	f := op.fwd
	if len(v) != 3 {
		return nil, fmt.Errorf("gop: LFD gradient op wants 3 inputs, got %d", len(v))
	}
	gp, dt, err := float64s("LFD output gradient", v[2], f.m, f.n)
	if err != nil {
		return nil, err
	}
	f.st.mu.Lock()
	res, x, c, scale := f.st.res, f.st.x, f.st.c, f.st.scale
	f.st.mu.Unlock()
	if res == nil {
		return nil, fmt.Errorf("gop: LFD gradient op ran before its forward op")
	}
	gc, err := res.VJP(gp)
	if err != nil {
		return nil, fmt.Errorf("gop: LFD backward: %w", err)
	}
	if f.normalize {
		// c̃ = c/s with s = mean(c): ∂L/∂c = (G − ⟨G, c̃⟩/N²)/s.
		dot := 0.0
		for k, g := range gc {
			dot += g * c[k]
		}
		dot /= float64(len(gc))
		for k := range gc {
			gc[k] = (gc[k] - dot) / scale
		}
	}
	if f.cost {
		return denseOf(gc, dt, f.n, f.n), nil
	}
	gx, err := optlayer.CostGrad(x, f.n, f.dim, f.metric, gc)
	if err != nil {
		return nil, fmt.Errorf("gop: LFD backward: %w", err)
	}
	return denseOf(gx, dt, f.n, f.dim), nil
}

func (op *lfdGradOp) ReturnsPtr() bool     { return false }
func (op *lfdGradOp) CallsExtern() bool    { return false }
func (op *lfdGradOp) OverwritesInput() int { return -1 }
func (op *lfdGradOp) WriteHash(h hash.Hash) {
	h.Write([]byte("drknn.gop.LFDGrad:"))
	op.fwd.WriteHash(h)
	fmt.Fprintf(h, "%p", op.fwd.st)
}
func (op *lfdGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op *lfdGradOp) String() string { return "LFDGrad" }

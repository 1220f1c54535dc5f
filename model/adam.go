package model

import (
	"fmt"
	"math"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/model/internal/kern"
	"gorgonia.org/tensor"
)

// AdamSettings are the hyper-parameters of Adam (Kingma & Ba). Zero fields
// take the defaults LR 1e-3, Beta1 0.9, Beta2 0.999, Eps 1e-8.
type AdamSettings struct {
	LR, Beta1, Beta2, Eps float64
}

func (s AdamSettings) withDefaults() AdamSettings {
	if s.LR == 0 {
		s.LR = 1e-3
	}
	if s.Beta1 == 0 {
		s.Beta1 = 0.9
	}
	if s.Beta2 == 0 {
		s.Beta2 = 0.999
	}
	if s.Eps == 0 {
		s.Eps = 1e-8
	}
	return s
}

func (s AdamSettings) validate() error {
	bad := func(name string, v float64) error {
		return fmt.Errorf("model: Adam %s = %v out of range", name, v)
	}
	switch {
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return bad("lr", s.LR)
	case !(s.Beta1 >= 0 && s.Beta1 < 1):
		return bad("beta1", s.Beta1)
	case !(s.Beta2 >= 0 && s.Beta2 < 1):
		return bad("beta2", s.Beta2)
	case !(s.Eps > 0) || math.IsInf(s.Eps, 0):
		return bad("eps", s.Eps)
	}
	return nil
}

// Adam updates learnable nodes in place from their accumulated gradients
// (bind them with G.BindDualValues on the TapeMachine). It keeps first and
// second moments in the nodes' dtype and makes one pass over each tensor
// per step, allocating nothing. Steps are deterministic.
//
// An Adam from NewMinimiser reads the gradient nodes' values instead (no
// dual values: the machine does not copy every gradient into an
// accumulator that Adam must zero again). It takes each gradient as g + 0,
// which is what accumulating g into a zeroed dual value gives, so the
// steps are bit-identical to the dual-value form.
type Adam struct {
	s     AdamSettings
	nodes G.Nodes
	grads G.Nodes // the gradient nodes of nodes (NewMinimiser); nil: dual values
	m, v  []any   // []float32 or []float64 per node
	t     int
}

// NewAdam returns an optimiser for nodes (float32 or float64 tensors with
// values).
func NewAdam(s AdamSettings, nodes G.Nodes) (*Adam, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	a := &Adam{s: s, nodes: nodes}
	for _, n := range nodes {
		t, ok := n.Value().(*tensor.Dense)
		if !ok {
			return nil, fmt.Errorf("model: Adam: node %q has no tensor value", n.Name())
		}
		switch d := t.Data().(type) {
		case []float32:
			a.m = append(a.m, writtenZeros[float32](len(d)))
			a.v = append(a.v, writtenZeros[float32](len(d)))
		case []float64:
			a.m = append(a.m, writtenZeros[float64](len(d)))
			a.v = append(a.v, writtenZeros[float64](len(d)))
		default:
			return nil, fmt.Errorf("model: Adam: node %q has dtype %v", n.Name(), t.Dtype())
		}
	}
	return a, nil
}

// Steps is the number of steps taken.
func (a *Adam) Steps() int { return a.t }

// Step applies one update to every node from its gradient and then zeroes
// the gradient (Gorgonia accumulates gradients into the dual values across
// runs). It fails, changing nothing, if any gradient is missing, has the
// wrong size, or is not finite.
func (a *Adam) Step() error {
	grads := make([]any, len(a.nodes))
	for i, n := range a.nodes {
		var gv G.Value
		var err error
		if a.grads != nil {
			if gv = a.grads[i].Value(); gv == nil {
				err = fmt.Errorf("no value (the machine has not run)")
			}
		} else {
			gv, err = n.Grad()
		}
		if err != nil {
			return fmt.Errorf("model: Adam: gradient of %q: %w", n.Name(), err)
		}
		gt, ok := gv.(*tensor.Dense)
		if !ok {
			return fmt.Errorf("model: Adam: gradient of %q is %T", n.Name(), gv)
		}
		wt, ok := n.Value().(*tensor.Dense)
		if !ok {
			return fmt.Errorf("model: Adam: node %q has no tensor value", n.Name())
		}
		switch g := gt.Data().(type) {
		case []float32:
			w, _ := wt.Data().([]float32)
			if len(w) != len(g) || len(g) != len(a.m[i].([]float32)) {
				return fmt.Errorf("model: Adam: gradient of %q has %d values, weights %d", n.Name(), len(g), len(w))
			}
			if j := firstNonFinite(g); j >= 0 {
				return fmt.Errorf("model: Adam: gradient of %q is %v at %d", n.Name(), g[j], j)
			}
		case []float64:
			w, _ := wt.Data().([]float64)
			if len(w) != len(g) || len(g) != len(a.m[i].([]float64)) {
				return fmt.Errorf("model: Adam: gradient of %q has %d values, weights %d", n.Name(), len(g), len(w))
			}
			if j := firstNonFinite(g); j >= 0 {
				return fmt.Errorf("model: Adam: gradient of %q is %v at %d", n.Name(), g[j], j)
			}
		default:
			return fmt.Errorf("model: Adam: gradient of %q has dtype %v", n.Name(), gt.Dtype())
		}
		grads[i] = gt.Data()
	}
	a.t++
	s := a.s
	c1 := 1 / (1 - math.Pow(s.Beta1, float64(a.t)))
	c2 := 1 / (1 - math.Pow(s.Beta2, float64(a.t)))
	for i, n := range a.nodes {
		w := n.Value().(*tensor.Dense).Data()
		read := a.grads != nil
		switch g := grads[i].(type) {
		case []float32:
			adamUpdate(w.([]float32), g, a.m[i].([]float32), a.v[i].([]float32), s, c1, c2, read)
		case []float64:
			adamUpdate(w.([]float64), g, a.m[i].([]float64), a.v[i].([]float64), s, c1, c2, read)
		}
	}
	return nil
}

// NonFinite reports whether v, a float64 or float32 tensor or scalar,
// holds NaN or ±Inf (the check Adam makes of every gradient); other values
// report false.
func NonFinite(v G.Value) bool {
	switch v := v.(type) {
	case *tensor.Dense:
		switch x := v.Data().(type) {
		case []float64:
			return anyNonFinite(x)
		case []float32:
			return anyNonFinite(x)
		case float64:
			return anyNonFinite([]float64{x})
		case float32:
			return anyNonFinite([]float32{x})
		}
	case *G.F64:
		return anyNonFinite([]float64{float64(*v)})
	case *G.F32:
		return anyNonFinite([]float32{float32(*v)})
	}
	return false
}

// firstNonFinite returns the index of the first NaN or ±Inf in x, or −1.
// A quick pass finds out whether to look further: the AVX kernel
// (kern.NonFiniteD/S) for the bulk where the CPU has AVX, and four running
// sums of x·0 (0 for finite x, NaN otherwise) for the rest.
func firstNonFinite[T Float](x []T) int {
	if !anyNonFinite(x) {
		return -1
	}
	for i, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}

func anyNonFinite[T Float](x []T) bool {
	i := 0
	if useAdamAsm {
		var bad bool
		switch xx := any(x).(type) {
		case []float32:
			if i = len(xx) &^ 31; i > 0 {
				bad = kern.NonFiniteS(&xx[0], i)
			}
		case []float64:
			if i = len(xx) &^ 15; i > 0 {
				bad = kern.NonFiniteD(&xx[0], i)
			}
		}
		if bad {
			return true
		}
	}
	var s0, s1, s2, s3 T
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * 0
		s1 += x[i+1] * 0
		s2 += x[i+2] * 0
		s3 += x[i+3] * 0
	}
	for ; i < len(x); i++ {
		s0 += x[i] * 0
	}
	return s0+s1+s2+s3 != 0
}

// adamUpdate does one fused in-place pass: m ← β1 m + (1−β1) g,
// v ← β2 v + (1−β2) g², w ← w − lr·(m c1)/(√(v c2) + eps), g ← 0.
// With read, g is taken as g + 0 and left unchanged (a gradient node's
// value, not an accumulator). Chunks run in parallel; each element's
// arithmetic is independent, so the result does not depend on the number
// of goroutines. The vector (AVX) and scalar paths perform the same IEEE
// operations in the same order.
func adamUpdate[T Float](w, g, m, v []T, s AdamSettings, c1, c2 float64, read bool) {
	var p [8]T
	p[0], p[1] = T(s.Beta1), T(1-s.Beta1)
	p[2], p[3] = T(s.Beta2), T(1-s.Beta2)
	p[4], p[5], p[6] = T(s.LR*c1), T(math.Sqrt(c2)), T(s.Eps)
	const chunk = 1 << 16
	body := func(_, lo, hi int) {
		lo, hi = lo*chunk, min(hi*chunk, len(w))
		adamChunk(w[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], &p, read)
	}
	nc := (len(w) + chunk - 1) / chunk
	if nc <= 1 {
		body(0, 0, nc)
		return
	}
	forUnits(nc, body)
}

func adamChunk[T Float](ww, gg, mm, vv []T, p *[8]T, read bool) {
	j := 0
	if useAdamAsm && len(ww) >= 8 {
		nv := len(ww) &^ 7
		switch pp := any(p).(type) {
		case *[8]float32:
			w, g, m, v := &any(ww).([]float32)[0], &any(gg).([]float32)[0], &any(mm).([]float32)[0], &any(vv).([]float32)[0]
			if read {
				kern.AdamGS(w, g, m, v, nv, pp)
			} else {
				kern.AdamS(w, g, m, v, nv, pp)
			}
		case *[8]float64:
			w, g, m, v := &any(ww).([]float64)[0], &any(gg).([]float64)[0], &any(mm).([]float64)[0], &any(vv).([]float64)[0]
			if read {
				kern.AdamGD(w, g, m, v, nv, pp)
			} else {
				kern.AdamD(w, g, m, v, nv, pp)
			}
		}
		j = nv
	}
	adamScalar(ww[j:], gg[j:], mm[j:], vv[j:], p, read)
}

func adamScalar[T Float](ww, gg, mm, vv []T, p *[8]T, read bool) {
	b1, ob1, b2, ob2, lr1, sc2, eps := p[0], p[1], p[2], p[3], p[4], p[5], p[6]
	var zero T // a variable: the compiler must not fold g + 0 into g
	for j := range ww {
		gj := gg[j]
		if read {
			gj += zero
		}
		mj := b1*mm[j] + ob1*gj
		vj := b2*vv[j] + ob2*gj*gj
		mm[j], vv[j] = mj, vj
		ww[j] -= lr1 * mj / (T(math.Sqrt(float64(vj)))*sc2 + eps)
		if !read {
			gg[j] = 0
		}
	}
}

// SetLR changes the learning rate of the following steps (a schedule such
// as step decay); the moments are kept.
func (a *Adam) SetLR(lr float64) error {
	s := a.s
	s.LR = lr
	if err := s.validate(); err != nil {
		return err
	}
	a.s = s
	return nil
}

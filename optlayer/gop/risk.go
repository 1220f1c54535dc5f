package gop

import (
	"errors"
	"fmt"
	"math"

	"github.com/drknn/drknn/internal/par"
	"github.com/drknn/drknn/optlayer"
)

// MiniSet is one problem of a batch: rows of the layer's n×d input and
// their labels 0…M−1 (every class present).
type MiniSet struct {
	Index  []int
	Labels []int
}

// RiskResult is the mean worst-case risk over a batch of mini-sets and its
// gradient with respect to the input embedding.
type RiskResult struct {
	Risk       float64   // mean over mini-sets of M − Σ_i max_m PReg_m(i)
	Grad       []float64 // ∂Risk/∂E, n×d row-major
	MeanRelGap float64   // mean certified relative gap of the LFD solves
	MaxRelGap  float64
	Iterations int // total solver iterations
	NotOptimal int // solves that stopped at the iteration cap
}

// solved is one mini-set of a forward pass: what its backward needs.
type solved struct {
	x     []float64 // the mini-set's rows of the input (nil for a cost input)
	c     []float64 // the costs solved (normalised when Settings.Normalize)
	raw   []float64 // the mini-set's costs before normalisation (Euclidean feature input)
	scale float64   // the normalising mean (1 when not normalising)
	res   *optlayer.Result
}

// forward solves the LFD of every mini-set of x (n×dim features, or with
// cost an n×n cost matrix and a single set covering it) on up to
// s.Workers goroutines. It is the forward pass of every form of the layer.
//
// When the mini-sets' cost matrices hold at least n² entries together (as
// when every mini-set draws from all n rows), the n×n costs of x are
// computed once and each mini-set's are gathered from them: a cost is a
// function of its two rows alone, summed in the same order, so the gathered
// matrices are bit-identical to the ones computed mini-set by mini-set.
//
// With w (the risk layer's buffers, kept from step to step) the mini-sets'
// rows, costs and distances are written into w's buffers instead of fresh
// ones; the values are the same.
func (s *Settings) forward(x []float64, n, dim int, cost bool, sets []MiniSet, w *riskWork) ([]solved, error) {
	out := make([]solved, len(sets))
	problems := make([]*optlayer.Problem, len(sets))
	var full []float64 // n×n costs of x, when shared
	if !cost {
		pairs := 0
		for _, ms := range sets {
			pairs += len(ms.Index) * len(ms.Index)
		}
		if pairs >= n*n {
			if c, err := optlayer.Costs(x, n, dim, s.Metric); err == nil {
				full = c // else: each mini-set reports its own error below
			}
		}
	}
	for k, ms := range sets {
		if len(ms.Index) != len(ms.Labels) || len(ms.Index) == 0 {
			return nil, fmt.Errorf("mini-set %d has %d indices and %d labels", k, len(ms.Index), len(ms.Labels))
		}
		var rows, c []float64
		if cost {
			c = append([]float64(nil), x...)
		} else {
			rows = w.buf(bufRows, k, len(ms.Index)*dim)
			for r, i := range ms.Index {
				if i < 0 || i >= n {
					return nil, fmt.Errorf("mini-set %d row %d out of 0…%d", k, i, n-1)
				}
				copy(rows[r*dim:(r+1)*dim], x[i*dim:(i+1)*dim])
			}
			if full != nil {
				np := len(ms.Index)
				c = w.buf(bufCosts, k, np*np)
				for r, i := range ms.Index {
					for t, j := range ms.Index {
						c[r*np+t] = full[i*n+j]
					}
				}
			} else {
				var err error
				if c, err = optlayer.Costs(rows, len(ms.Index), dim, s.Metric); err != nil {
					return nil, fmt.Errorf("mini-set %d: %w", k, err)
				}
			}
		}
		var raw []float64 // only the Euclidean gradient reads the distances
		if !cost && s.Metric != optlayer.SqEuclidean {
			raw = c
			if s.Normalize {
				raw = w.buf(bufRaw, k, len(c))
				copy(raw, c)
			}
		}
		scale := 1.0
		if s.Normalize {
			var err error
			if scale, err = optlayer.NormalizeCosts(c); err != nil {
				return nil, fmt.Errorf("mini-set %d: %w", k, err)
			}
		}
		problems[k] = &optlayer.Problem{N: len(ms.Index), Cost: c, Labels: ms.Labels, Theta: s.Theta}
		out[k] = solved{x: rows, c: c, raw: raw, scale: scale}
	}
	settings := s.Solver
	settings.Warm, settings.Plans = nil, false
	results, err := optlayer.SolveBatch(problems, &settings, s.Workers)
	if err != nil {
		return nil, err
	}
	for k := range out {
		out[k].res = results[k]
	}
	return out, nil
}

// backward maps ∂L/∂PReg (M×n′) of one solved mini-set to ∂L/∂ of its
// input rows (n′×dim), or of its costs (n×n) for a cost input: implicit
// differentiation of the solver (optlayer.Result.VJP), then the chain rule
// through the normalisation and the metric.
//
// dst, if not nil, receives ∂L/∂ of the input rows (len n′·dim).
func (s *Settings) backward(sv *solved, gradP []float64, dim int, cost bool, dst []float64) ([]float64, error) {
	gc, err := sv.res.VJP(gradP)
	if err != nil {
		return nil, err
	}
	if s.Normalize {
		optlayer.NormalizeCostsVJP(gc, sv.c, sv.scale)
	}
	if cost {
		return gc, nil
	}
	return optlayer.CostGradTo(dst, sv.x, sv.res.N, dim, s.Metric, gc, sv.raw)
}

// WorstCaseRisk solves the LFD of every mini-set on the embedding rows e
// (n×d), in parallel on s.Workers goroutines with results that do not
// depend on their number, and returns the mean worst-case risk
// M − Σ_i max_m PReg_m(i) under the regularised LFD with its exact gradient
// (implicit differentiation through the solver, the cost normalisation and
// the metric). Minimising it is maximising J of the paper (DESIGN.md §5, the
// sign trap). s.Labels is not used: each mini-set carries its labels.
// It is what the Risk layer computes in the graph.
func WorstCaseRisk(e []float64, n, d int, sets []MiniSet, s Settings) (RiskResult, error) {
	if n < 1 || d < 1 || len(e) != n*d {
		return RiskResult{}, fmt.Errorf("risk: embedding has %d values, want %d×%d", len(e), n, d)
	}
	if len(sets) == 0 {
		return RiskResult{}, errors.New("risk: no mini-sets")
	}
	return worstCaseRisk(e, n, d, sets, s, nil)
}

// riskWork holds a risk layer's buffers from one step to the next: the
// mini-sets' rows, costs, distances and row gradients, by mini-set. A
// training step's mini-sets keep their sizes from step to step, so after
// the first step none of these is allocated again. Fresh, they were about
// 12 MB of new memory a step at 5-way 10-shot on CIFAR-10's
// 400-dimensional embedding (32 mini-sets of 50 rows), most of it faulted
// in page by page again after the runtime had returned it to the kernel.
// A nil *riskWork allocates every buffer afresh.
type riskWork struct {
	bufs [numBufs][][]float64 // by kind, then mini-set
}

// the kinds of riskWork's buffers
const (
	bufRows = iota
	bufCosts
	bufRaw
	bufGrads
	numBufs
)

// buf returns mini-set k's buffer of the kind with length size, reusing
// its memory when it is large enough; its contents are not defined. With w
// nil it allocates.
func (w *riskWork) buf(kind, k, size int) []float64 {
	if w == nil {
		return make([]float64, size)
	}
	b := &w.bufs[kind]
	for len(*b) <= k {
		*b = append(*b, nil)
	}
	if cap((*b)[k]) < size {
		(*b)[k] = make([]float64, size)
	}
	(*b)[k] = (*b)[k][:size]
	return (*b)[k]
}

// worstCaseRisk is WorstCaseRisk with the risk layer's buffers w (nil:
// fresh ones). Its result does not share memory with w.
func worstCaseRisk(e []float64, n, d int, sets []MiniSet, s Settings, w *riskWork) (RiskResult, error) {
	sv, err := s.forward(e, n, d, false, sets, w)
	if err != nil {
		return RiskResult{}, fmt.Errorf("risk: %w", err)
	}
	grads := make([][]float64, len(sets))
	dst := make([][]float64, len(sets)) // the gradients' buffers, taken before the workers start
	for k := range sets {
		if w != nil {
			dst[k] = w.buf(bufGrads, k, len(sets[k].Index)*d)
		}
	}
	err = par.For(len(sets), s.Workers, func(k int) error {
		res := sv[k].res
		m, np := res.M, res.N
		gradP := make([]float64, m*np)
		for i := 0; i < np; i++ {
			best := 0
			for c := 1; c < m; c++ {
				if res.PReg[c*np+i] > res.PReg[best*np+i] {
					best = c
				}
			}
			gradP[best*np+i] = -1 // ∂(M − Σ_i max_m P_m(i))/∂P
		}
		gx, err := s.backward(&sv[k], gradP, d, false, dst[k])
		if err != nil {
			return fmt.Errorf("risk: mini-set %d backward: %w", k, err)
		}
		grads[k] = gx
		return nil
	})
	if err != nil {
		return RiskResult{}, err
	}
	out := RiskResult{Grad: make([]float64, n*d)}
	inv := 1 / float64(len(sets))
	for k, ms := range sets { // fixed order: deterministic sums
		res := sv[k].res
		var j float64
		for i := 0; i < res.N; i++ {
			mx := math.Inf(-1)
			for c := 0; c < res.M; c++ {
				mx = math.Max(mx, res.PReg[c*res.N+i])
			}
			j += mx
		}
		out.Risk += (float64(res.M) - j) * inv
		out.MeanRelGap += res.RelGap * inv
		out.MaxRelGap = math.Max(out.MaxRelGap, res.RelGap)
		out.Iterations += res.Iterations
		if res.Status != optlayer.Optimal {
			out.NotOptimal++
		}
		for r, i := range ms.Index {
			for t := 0; t < d; t++ {
				out.Grad[i*d+t] += grads[k][r*d+t] * inv
			}
		}
	}
	return out, nil
}

package experiment

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/drknn/drknn/internal/par"
	"github.com/drknn/drknn/optlayer"
)

// DefaultLFDBlock is eval.lfd_block's default: the largest training set
// whose LFD is solved whole. The exact solve costs O(M·n²) time and memory
// (n = 5,000: about 90 s and 2.2 GB on the project's 2-core machine), so
// larger training sets (protocol fit) are solved in blocks.
const DefaultLFDBlock = 1000

// LFDBlocks returns the blocks SolveLFD splits n training points with the
// given labels into when n exceeds block: optlayer.StratifiedBlocks (⌈n/block⌉
// class-stratified random blocks, seeded; one block of every index when
// block ≤ 0 or n ≤ block).
func LFDBlocks(labels []int, block int, seed int64) [][]int {
	return optlayer.StratifiedBlocks(labels, block, seed)
}

// solveLFDBlocks solves the LFD of each block of LFDBlocks on its own
// (costs normalised by the block's mean cost when theta_relative, as
// Algorithm 1 normalises each mini-set) and assembles the M×n P: a block's
// P_m, a distribution over the block's points, is scaled by the block's
// share n_m(block)/n_m of class m, so each P_m sums to 1 over the whole
// training set and, at ϑ = 0, equals the whole-set LFD (uniform 1/n_m on
// class m). Blocks run in parallel (cfg.Workers); the result does not
// depend on the worker count. Objective and LowerBound are the sums of the
// blocks' certified values, RelGap the largest block's.
func solveLFDBlocks(cfg Config, e []float64, n, dim int, labels []int, theta []float64) (*optlayer.Result, error) {
	m := slices.Max(labels) + 1
	classN := make([]int, m)
	for _, l := range labels {
		classN[l]++
	}
	for c, k := range classN {
		if k == 0 {
			return nil, fmt.Errorf("LFD: class %d has no training points", c)
		}
	}
	blocks := LFDBlocks(labels, cfg.Eval.LFDBlock, cfg.Seed)
	results := make([]*optlayer.Result, len(blocks))
	present := make([][]int, len(blocks)) // block-local class → class
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	err := par.For(len(blocks), workers, func(b int) error {
		idx := blocks[b]
		local := map[int]int{}
		var cls []int
		for _, i := range idx {
			if _, ok := local[labels[i]]; !ok {
				local[labels[i]] = 0
				cls = append(cls, labels[i])
			}
		}
		slices.Sort(cls)
		for j, c := range cls {
			local[c] = j
		}
		eb := make([]float64, 0, len(idx)*dim)
		lb := make([]int, len(idx))
		for j, i := range idx {
			eb = append(eb, e[i*dim:(i+1)*dim]...)
			lb[j] = local[labels[i]]
		}
		th := theta
		if len(theta) == m && m > 1 {
			th = make([]float64, len(cls))
			for j, c := range cls {
				th[j] = theta[c]
			}
		}
		if len(cls) == 1 { // one class: P is its empirical distribution
			p := make([]float64, len(idx))
			for j := range p {
				p[j] = 1 / float64(len(idx))
			}
			results[b], present[b] = &optlayer.Result{M: 1, N: len(idx), P: p, Objective: 1, LowerBound: 1}, cls
			return nil
		}
		r, err := solveLFD(cfg, eb, len(idx), dim, lb, th, nil)
		if err != nil {
			return fmt.Errorf("LFD block %d of %d (%d points): %w", b+1, len(blocks), len(idx), err)
		}
		results[b], present[b] = r, cls
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &optlayer.Result{M: m, N: n, P: make([]float64, m*n), Status: optlayer.Optimal}
	for b, idx := range blocks {
		r := results[b]
		blockN := make([]int, m)
		for _, i := range idx {
			blockN[labels[i]]++
		}
		for j, c := range present[b] {
			w := float64(blockN[c]) / float64(classN[c])
			for t, i := range idx {
				out.P[c*n+i] = w * r.P[j*len(idx)+t]
			}
		}
		out.Objective += r.Objective
		out.LowerBound += r.LowerBound
		out.Iterations += r.Iterations
		out.RelGap = max(out.RelGap, r.RelGap)
		if r.Status != optlayer.Optimal {
			out.Status = r.Status
		}
	}
	out.Gap = out.Objective - out.LowerBound
	return out, nil
}

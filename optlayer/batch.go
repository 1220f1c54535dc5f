package optlayer

import (
	"context"
	"fmt"

	"github.com/drknn/drknn/internal/par"
)

// SolveBatch solves independent problems on up to workers goroutines
// (workers ≤ 0 means one). Every problem is validated first; the first
// invalid one aborts the batch with an error naming its index. The results
// do not depend on the number of workers: each problem is solved by the
// same deterministic sequential code.
//
// SolveBatch is SolveBatchContext with context.Background().
func SolveBatch(ps []*Problem, s *Settings, workers int) ([]*Result, error) {
	return SolveBatchContext(context.Background(), ps, s, workers)
}

// SolveBatchContext is SolveBatch, stopped when ctx is done: no problem
// starts after that, and those under way stop as SolveContext does. The
// batch then returns no results and the error of the lowest-numbered
// problem that stopped, naming it and wrapping ctx.Err().
func SolveBatchContext(ctx context.Context, ps []*Problem, s *Settings, workers int) ([]*Result, error) {
	out, k, err := solveBatch(ctx, ps, s, workers)
	if err != nil {
		return nil, fmt.Errorf("problem %d: %w", k, err)
	}
	return out, nil
}

// solveBatch is SolveBatchContext; on invalid input or a stop it returns
// the index of the problem at fault and its error unwrapped.
func solveBatch(ctx context.Context, ps []*Problem, s *Settings, workers int) ([]*Result, int, error) {
	ins := make([]*instance, len(ps))
	cfgs := make([]config, len(ps))
	for k, p := range ps {
		in, err := p.instance()
		if err != nil {
			return nil, k, err
		}
		cfg, err := s.config(in)
		if err != nil {
			return nil, k, err
		}
		cfg.serial = workers > 1
		ins[k], cfgs[k] = in, cfg
	}
	out := make([]*Result, len(ps))
	errs := make([]error, len(ps)) // by index, read after par.For
	// validation happened above: a solve fails only when ctx stops it
	// (each with a stopper of its own: the count is per problem)
	err := par.For(len(ps), workers, func(k int) error {
		out[k], errs[k] = (&stopper{ctx: ctx}).solve(ins[k], cfgs[k]) // by index: no ordering dependence
		return errs[k]
	})
	if err != nil {
		// par.For's error is the lowest index's, and every index below a
		// failed one ran: the first in errs
		for k, e := range errs {
			if e != nil {
				return nil, k, e
			}
		}
	}
	return out, 0, nil
}

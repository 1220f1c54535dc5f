package optlayer

import (
	"fmt"

	"github.com/drknn/drknn/internal/par"
)

// SolveBatch solves independent problems on up to workers goroutines
// (workers ≤ 0 means one). Every problem is validated first; the first
// invalid one aborts the batch with an error naming its index. The results
// do not depend on the number of workers: each problem is solved by the
// same deterministic sequential code.
func SolveBatch(ps []*Problem, s *Settings, workers int) ([]*Result, error) {
	out, k, err := solveBatch(ps, s, workers)
	if err != nil {
		return nil, fmt.Errorf("problem %d: %w", k, err)
	}
	return out, nil
}

// solveBatch is SolveBatch; on invalid input it returns the index of the
// problem at fault and its error unwrapped.
func solveBatch(ps []*Problem, s *Settings, workers int) ([]*Result, int, error) {
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
	// The solves return no errors: validation happened above.
	_ = par.For(len(ps), workers, func(k int) error {
		out[k] = solveInstance(ins[k], cfgs[k]) // by index: no ordering dependence
		return nil
	})
	return out, 0, nil
}

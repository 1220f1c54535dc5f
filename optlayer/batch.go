package optlayer

import (
	"fmt"
	"sync"
)

// SolveBatch solves independent problems on up to workers goroutines
// (workers ≤ 0 means one). Every problem is validated first; the first
// invalid one aborts the batch with an error naming its index. The results
// do not depend on the number of workers: each problem is solved by the
// same deterministic sequential code.
func SolveBatch(ps []*Problem, s *Settings, workers int) ([]*Result, error) {
	ins := make([]*instance, len(ps))
	cfgs := make([]config, len(ps))
	for k, p := range ps {
		in, err := p.instance()
		if err != nil {
			return nil, fmt.Errorf("problem %d: %w", k, err)
		}
		cfg, err := s.config(in)
		if err != nil {
			return nil, fmt.Errorf("problem %d: %w", k, err)
		}
		cfg.serial = workers > 1
		ins[k], cfgs[k] = in, cfg
	}
	out := make([]*Result, len(ps))
	if workers < 1 {
		workers = 1
	}
	if workers > len(ps) {
		workers = len(ps)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				out[k] = solveInstance(ins[k], cfgs[k])
			}
		}()
	}
	for k := range ps {
		next <- k
	}
	close(next)
	wg.Wait()
	return out, nil
}

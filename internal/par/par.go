// Package par runs independent, indexed pieces of work on a bounded number
// of goroutines (an errgroup with SetLimit) so that the answer never
// depends on the number of workers or on scheduling.
package par

import (
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// For runs f(i) for i = 0…n−1 on up to workers goroutines (workers ≤ 1: in
// order on the caller's goroutine). Each call must write only to its own
// slot of the output. It returns the error of the lowest index that failed:
// once index i has failed, no index above i is started, but every index
// below it still runs, so the lowest failure is always found.
func For(n, workers int, f func(i int) error) error {
	workers = min(workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		g       errgroup.Group
		minFail atomic.Int64       // lowest failed index so far; n while none
		errs    = make([]error, n) // written by index, read after Wait
	)
	minFail.Store(int64(n))
	g.SetLimit(workers)
	for i := 0; i < n && int64(i) < minFail.Load(); i++ {
		g.Go(func() error {
			if int64(i) > minFail.Load() {
				return nil
			}
			if err := f(i); err != nil {
				errs[i] = err
				for {
					cur := minFail.Load()
					if int64(i) >= cur || minFail.CompareAndSwap(cur, int64(i)) {
						break
					}
				}
			}
			return nil
		})
	}
	g.Wait()
	if i := int(minFail.Load()); i < n {
		return errs[i]
	}
	return nil
}

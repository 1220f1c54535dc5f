package optlayer

import (
	"context"
	"fmt"
)

// A solve with a context (SolveContext, SolveBlocksContext,
// SolveBatchContext) polls it between its units of work, each at most a
// fraction of a second at n = 10,000: before every sweep and every Newton
// step (of every stage of every phase), every iteration of the LP over
// locations (distinct.go), every problem of a batch and every round of
// SolveBlocks' bound. It never polls inside a pass, so an uncancelled
// solve does exactly the arithmetic it did without a context; a solve at
// n = 200, M = 10 polls 18–20 times with LPOnly, 30–41 times without
// (benchProblem, seeds 1–4), each one ctx.Err().
//
// A poll that finds the context done unwinds the solve by a panic that
// never leaves the package (Effective Go's "recover within a package"):
// the solver's stages hold no resource but the team's helper, which the
// deferred close stops on the way out, and every Result is dropped. The
// public functions turn it into an error wrapping ctx.Err().

// stopper polls one solve's context and counts the sweeps and Newton
// steps the solve began. A nil stopper (a solve without a context: the
// tests that call solveInstance) never stops and counts nothing.
type stopper struct {
	ctx  context.Context
	iter int
}

// stopped is the panic value of a poll that found the context done.
type stopped struct{ err error }

// check unwinds the solve if its context is done.
func (c *stopper) check() {
	if c == nil {
		return
	}
	if err := c.ctx.Err(); err != nil {
		panic(stopped{fmt.Errorf("optlayer: solve stopped after %d iterations: %w", c.iter, err)})
	}
}

// step is check before one sweep or Newton step, which it counts.
func (c *stopper) step() {
	if c == nil {
		return
	}
	c.check()
	c.iter++
}

// solve runs solveInstance(in, cfg) with c as its stopper: its Result, or
// the error of the poll that stopped it (nil Result). c must not be nil.
func (c *stopper) solve(in *instance, cfg config) (r *Result, err error) {
	cfg.stop = c
	defer func() {
		if v := recover(); v != nil {
			st, ok := v.(stopped)
			if !ok {
				panic(v) // not ours
			}
			r, err = nil, st.err
		}
	}()
	c.check() // a done context stops even a solve that takes no steps
	return solveInstance(in, cfg), nil
}

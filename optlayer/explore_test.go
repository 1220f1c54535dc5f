package optlayer

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

func TestExplore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EXN"))
	M, _ := strconv.Atoi(os.Getenv("EXM"))
	if n == 0 {
		t.Skip()
	}
	p := gaussProblem(1, n, M, 16, 0.1)
	in, _ := p.instance()
	cfg, _ := (&Settings{}).config(in)
	last := 0.0
	_ = last
	cfg.trace = func(it int, s *solver, r float64) {
		if true {
			fmt.Printf("it=%d eps=%.1e r=%.2e marg=%.2e bud=%.2e rebuilds=%d lam=%.3v\n", it, s.eps, r, s.resid/float64(s.M), s.budgetResid(), s.rebuilds, s.lam[:3])

		}
	}
	t0 := time.Now()
	r := solveInstance(in, cfg)
	el := time.Since(t0)
	t.Logf("n=%d M=%d obj=%.6f lb=%.6f rel=%.2e it=%d status=%d resid=%.2e time=%v", n, M, r.Objective, r.LowerBound, r.RelGap, r.Iterations, r.Status, r.Residual, el)
}

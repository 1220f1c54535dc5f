package optlayer

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestExplore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EXN"))
	M, _ := strconv.Atoi(os.Getenv("EXM"))
	if n == 0 {
		t.Skip()
	}
	seed, _ := strconv.Atoi(os.Getenv("EXSEED"))
	p := gaussProblem(int64(seed), n, M, 16, 0.1)
	in, _ := p.instance()
	cfg, _ := (&Settings{}).config(in)
	last := 0.0
	_ = last
	var cg, rb int
	cfg.trace = func(it int, s *solver, r float64) {
		cg, rb = s.cgIters, s.rebuilds
		if os.Getenv("EXQ") != "" {
			return
		}
		if true {
			fmt.Printf("cg=%d it=%d eps=%.1e r=%.2e marg=%.2e bud=%.2e rebuilds=%d lam=%.3v\n", s.cgIters, it, s.eps, r, s.resid/float64(s.M), s.budgetResid(), s.rebuilds, s.lam[:3])

		}
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	if v := os.Getenv("EXF"); v != "" {
		cfg.epsFactor, _ = strconv.ParseFloat(v, 64)
	}
	if v := os.Getenv("EXT"); v != "" {
		cfg.stageTol, _ = strconv.ParseFloat(v, 64)
	}
	if v := os.Getenv("EXS"); v != "" {
		cfg.epsStart, _ = strconv.ParseFloat(v, 64)
	}
	t0 := time.Now()
	if v := os.Getenv("EXLM"); v != "" {
		cfg.lmReg, _ = strconv.ParseFloat(v, 64)
	}
	r := solveInstance(in, cfg)
	for k := 1; k < 10; k++ {
		solveInstance(in, cfg)
	}
	el := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	t.Logf("cpu=%v", time.Duration(syscall.TimevalToNsec(ru1.Utime)-syscall.TimevalToNsec(ru0.Utime)))
	t.Logf("cg=%d rebuilds=%d", cg, rb)
	t.Logf("n=%d M=%d obj=%.6f lb=%.6f rel=%.2e it=%d status=%d resid=%.2e time=%v", n, M, r.Objective, r.LowerBound, r.RelGap, r.Iterations, r.Status, r.Residual, el)
}

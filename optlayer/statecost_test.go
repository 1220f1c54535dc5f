package optlayer

import "testing"

// TestStateCosts: Newton's states and an unconverged (LPOnly) snapshot hold
// no per-entry costs; a converged snapshot holds c(i, j) for every entry,
// which VJP reads (its backward is checked against finite differences in
// grad_test.go).
func TestStateCosts(t *testing.T) {
	p := gaussProblem(3, 120, 4, 8, 0.2)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	n := in.n

	cfg, _ := (&Settings{}).config(in)
	newtonStates := 0
	cfg.trace = func(_ int, s *solver, _ float64) {
		if s.nst != nil {
			newtonStates++
			if s.nst.cv != nil {
				t.Fatalf("a Newton state holds %d entry costs", len(s.nst.cv))
			}
		}
	}
	res := solveInstance(in, cfg)
	if newtonStates == 0 {
		t.Fatal("no Newton state seen: the test checks nothing")
	}
	st := res.st
	if st.unconverged || len(st.cv) != len(st.ri) || len(st.ri) == 0 {
		t.Fatalf("converged snapshot: unconverged %v, %d costs for %d entries", st.unconverged, len(st.cv), len(st.ri))
	}
	for q, j := range st.order {
		for k := st.cp[q]; k < st.cp[q+1]; k++ {
			if i := int(st.ri[k]); st.cv[k] != in.cost[i*n+j] {
				t.Fatalf("entry (%d, %d): cost %v, want %v", i, j, st.cv[k], in.cost[i*n+j])
			}
		}
	}
	if _, err := res.VJP(make([]float64, in.m*n)); err != nil {
		t.Fatal(err)
	}

	// LPOnly stops at the certificate: its snapshot is unconverged
	lcfg, _ := (&Settings{LPOnly: true, Epsilon: 1e-4}).config(in)
	lres := solveInstance(in, lcfg)
	if !lres.st.unconverged {
		t.Skip("the LPOnly solve converged the regularised problem: nothing to check")
	}
	if lres.st.cv != nil {
		t.Fatalf("unconverged snapshot holds %d entry costs", len(lres.st.cv))
	}
}

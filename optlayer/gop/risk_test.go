package gop

import (
	"math"
	"math/rand"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/optlayer"
	"gorgonia.org/tensor"
)

func riskFixture(seed int64) (e []float64, n, d int, sets []MiniSet) {
	rng := rand.New(rand.NewSource(seed))
	n, d = 10, 3
	e = make([]float64, n*d)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 2
		for t := 0; t < d; t++ {
			e[i*d+t] = rng.NormFloat64() + 0.8*float64(labels[i])
		}
	}
	sets = []MiniSet{
		{Index: []int{0, 2, 4, 1, 3}, Labels: []int{0, 0, 0, 1, 1}},
		{Index: []int{6, 5, 7, 9}, Labels: []int{0, 1, 1, 1}},
		{Index: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Labels: labels},
	}
	// Mini-sets list points grouped by label; labels of set 2 follow i%2.
	return e, n, d, sets
}

func riskSettings(metric optlayer.Metric) Settings {
	return Settings{Metric: metric, Theta: []float64{0.3}, Normalize: true,
		Solver: optlayer.Settings{Epsilon: 0.05, Tol: 0.5, RegTol: 1e-12, CGTol: 1e-13}, Workers: 2}
}

func TestWorstCaseRiskGradientMatchesFiniteDifferences(t *testing.T) {
	for _, metric := range []optlayer.Metric{optlayer.Euclidean, optlayer.SqEuclidean} {
		e, n, d, sets := riskFixture(3)
		s := riskSettings(metric)
		res, err := WorstCaseRisk(e, n, d, sets, s)
		if err != nil {
			t.Fatal(err)
		}
		if !(res.Risk > 0 && res.Risk < 1) {
			t.Fatalf("risk %g outside (0, M−1)", res.Risk)
		}
		const h = 1e-5
		var maxErr, maxG float64
		for j := range e {
			orig := e[j]
			e[j] = orig + h
			rp, err1 := WorstCaseRisk(e, n, d, sets, s)
			e[j] = orig - h
			rm, err2 := WorstCaseRisk(e, n, d, sets, s)
			e[j] = orig
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			fd := (rp.Risk - rm.Risk) / (2 * h)
			maxErr = math.Max(maxErr, math.Abs(fd-res.Grad[j]))
			maxG = math.Max(maxG, math.Abs(fd))
		}
		if maxG < 1e-3 {
			t.Fatalf("metric %v: gradient is ~0 everywhere (max |fd| %g): the test cannot see anything", metric, maxG)
		}
		if maxErr > 1e-5*math.Max(1, maxG) {
			t.Errorf("metric %v: max |analytic − central FD| = %g (max |grad| %g)", metric, maxErr, maxG)
		}
	}
}

func TestWorstCaseRiskInvariantToEmbeddingScale(t *testing.T) {
	e, n, d, sets := riskFixture(5)
	s := riskSettings(optlayer.Euclidean)
	s.Solver = optlayer.Settings{Epsilon: 0.01, Tol: 1e-6}
	a, err := WorstCaseRisk(e, n, d, sets, s)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]float64, len(e))
	for i, v := range e {
		big[i] = 10 * v
	}
	b, err := WorstCaseRisk(big, n, d, sets, s)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.Risk-b.Risk) > 1e-6 {
		t.Fatalf("risk %g at scale 1, %g at scale 10: the network could lower the loss by inflating the embedding", a.Risk, b.Risk)
	}
	// Without normalisation the same ϑ in absolute units is not invariant:
	// the test above would catch a missing normalisation.
	s.Normalize = false
	a2, _ := WorstCaseRisk(e, n, d, sets, s)
	b2, _ := WorstCaseRisk(big, n, d, sets, s)
	if !(b2.Risk < a2.Risk-1e-3) {
		t.Fatalf("unnormalised risk did not drop with scale (%g → %g): the fixture is too weak", a2.Risk, b2.Risk)
	}
}

func TestWorstCaseRiskDeterministicAcrossWorkers(t *testing.T) {
	e, n, d, sets := riskFixture(7)
	s := riskSettings(optlayer.Euclidean)
	s.Solver = optlayer.Settings{Epsilon: 0.01}
	s.Workers = 1
	a, err := WorstCaseRisk(e, n, d, sets, s)
	if err != nil {
		t.Fatal(err)
	}
	s.Workers = 3
	b, _ := WorstCaseRisk(e, n, d, sets, s)
	if a.Risk != b.Risk {
		t.Fatalf("risk differs with workers: %v vs %v", a.Risk, b.Risk)
	}
	for i := range a.Grad {
		if a.Grad[i] != b.Grad[i] {
			t.Fatalf("grad[%d] differs with workers", i)
		}
	}
}

func TestWorstCaseRiskBadInput(t *testing.T) {
	e, n, d, sets := riskFixture(1)
	s := riskSettings(optlayer.Euclidean)
	if _, err := WorstCaseRisk(e[:5], n, d, sets, s); err == nil {
		t.Error("short embedding accepted")
	}
	if _, err := WorstCaseRisk(e, n, d, []MiniSet{{Index: []int{0, 99}, Labels: []int{0, 1}}}, s); err == nil {
		t.Error("out-of-range row accepted")
	}
	bad := append([]float64(nil), e...)
	bad[4] = math.NaN()
	if _, err := WorstCaseRisk(bad, n, d, sets, s); err == nil {
		t.Error("NaN embedding accepted")
	}
	same := make([]float64, len(e))
	if _, err := WorstCaseRisk(same, n, d, sets, s); err == nil {
		t.Error("collapsed embedding accepted with normalisation")
	}
}

// TestRiskLayerIsWorstCaseRisk: the Risk node's value and its gradient with
// respect to the input node are exactly WorstCaseRisk's, for the batch set
// before each run, in float64 and float32 graphs; a run without a batch is
// an error.
func TestRiskLayerIsWorstCaseRisk(t *testing.T) {
	e, n, d, sets := riskFixture(3)
	s := riskSettings(optlayer.Euclidean)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		xn := G.NewMatrix(g, dt, G.WithShape(n, d), G.WithName("x"), G.WithValue(dense(dt, e, n, d)))
		l, err := Risk(xn, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := G.Grad(l.Output, xn); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(xn))
		if err := vm.RunAll(); err == nil {
			t.Fatal("a run without mini-sets succeeded")
		}
		vm.Reset()
		ef := toF64(dense(dt, e, n, d).Data()) // the values the graph holds
		// The layer reuses its buffers from run to run (riskWork): batches
		// of the same, fewer, larger and again the first sizes.
		larger := []MiniSet{sets[2], sets[0], {Index: []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 3}, Labels: []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}}}
		for i, j := range larger[2].Index[:10] {
			larger[2].Labels[i] = sets[2].Labels[j] // grouped by label is not required here: only every class present
		}
		var lastGrad []float64 // the previous run's gradient, as Last returned it
		var lastCopy []float64
		for b, batch := range [][]MiniSet{sets, sets[:2], larger, sets} {
			want, err := WorstCaseRisk(ef, n, d, batch, s)
			if err != nil {
				t.Fatal(err)
			}
			l.SetBatch(batch)
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			gv, err := xn.Grad()
			if err != nil {
				t.Fatal(err)
			}
			got, grad := toF64([]float64{0}), toF64(gv.Data())
			switch v := l.Output.Value().Data().(type) {
			case float64:
				got[0] = v
			case float32:
				got[0] = float64(v)
			}
			wantRisk, wantGrad := want.Risk, want.Grad
			if dt == tensor.Float32 {
				wantRisk = float64(float32(wantRisk))
				wantGrad = toF64(dense(dt, wantGrad, n, d).Data())
			}
			if got[0] != wantRisk || l.Last().Risk != want.Risk {
				t.Fatalf("%v batch %d: risk node %v, WorstCaseRisk %v", dt, b, got[0], want.Risk)
			}
			for i := range grad {
				if grad[i] != wantGrad[i] {
					t.Fatalf("%v batch %d: ∂risk/∂x[%d] = %v, WorstCaseRisk %v", dt, b, i, grad[i], wantGrad[i])
				}
			}
			for i := range lastGrad {
				if lastGrad[i] != lastCopy[i] {
					t.Fatalf("%v batch %d: the previous run's gradient changed at %d (shares the layer's buffers)", dt, b, i)
				}
			}
			lastGrad = l.Last().Grad
			lastCopy = append([]float64(nil), lastGrad...)
			gv.(*tensor.Dense).Zero() // dual values accumulate over runs
			vm.Reset()
		}
		vm.Close()
	}
}

// TestSharedCostsBitIdentical: when the mini-sets cover the rows often
// enough, forward computes the n×n costs once and gathers each mini-set's;
// the risk and gradient are bit-identical to the mini-set by mini-set
// costs (forced here by appending rows no mini-set uses, so that the
// mini-sets' entries no longer reach n²).
func TestSharedCostsBitIdentical(t *testing.T) {
	for _, metric := range []optlayer.Metric{optlayer.Euclidean, optlayer.SqEuclidean} {
		e, n, d, sets := riskFixture(5)
		s := riskSettings(metric)
		shared, err := WorstCaseRisk(e, n, d, sets, s)
		if err != nil {
			t.Fatal(err)
		}
		pad := append(append([]float64(nil), e...), make([]float64, n*d)...)
		for i := n * d; i < len(pad); i++ {
			pad[i] = float64(i % 7)
		}
		own, err := WorstCaseRisk(pad, 2*n, d, sets, s)
		if err != nil {
			t.Fatal(err)
		}
		if shared.Risk != own.Risk || shared.MeanRelGap != own.MeanRelGap || shared.Iterations != own.Iterations {
			t.Fatalf("metric %v: shared costs risk %v gap %v it %d, per mini-set %v %v %d", metric, shared.Risk, shared.MeanRelGap, shared.Iterations, own.Risk, own.MeanRelGap, own.Iterations)
		}
		for k, g := range shared.Grad {
			if g != own.Grad[k] {
				t.Fatalf("metric %v: gradient %d: %v shared, %v per mini-set", metric, k, g, own.Grad[k])
			}
		}
		for k := n * d; k < 2*n*d; k++ {
			if own.Grad[k] != 0 {
				t.Fatalf("unused row has gradient %v", own.Grad[k])
			}
		}
	}
}

// TestCostGradDistBitIdentical: CostGradDist (distances read from Costs)
// gives CostGrad's values bit for bit, coincident points included, and so
// does CostGradTo writing into a used buffer.
func TestCostGradDistBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	n, d := 7, 13
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64() * 3
	}
	copy(x[5*d:6*d], x[2*d:3*d]) // points 2 and 5 coincide
	g := make([]float64, n*n)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	for _, metric := range []optlayer.Metric{optlayer.Euclidean, optlayer.SqEuclidean} {
		c, err := optlayer.Costs(x, n, d, metric)
		if err != nil {
			t.Fatal(err)
		}
		a, err := optlayer.CostGrad(x, n, d, metric, g)
		if err != nil {
			t.Fatal(err)
		}
		b, err := optlayer.CostGradDist(x, n, d, metric, g, c)
		if err != nil {
			t.Fatal(err)
		}
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("metric %v entry %d: %v vs %v", metric, k, a[k], b[k])
			}
		}
		// CostGradTo writes the same bits into a used buffer (NaN-filled
		// here: every entry must be overwritten, not added to)
		for _, dist := range [][]float64{nil, c} {
			dst := make([]float64, n*d)
			for k := range dst {
				dst[k] = math.NaN()
			}
			b, err := optlayer.CostGradTo(dst, x, n, d, metric, g, dist)
			if err != nil {
				t.Fatal(err)
			}
			if &b[0] != &dst[0] {
				t.Fatal("CostGradTo did not return dst")
			}
			for k := range a {
				if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
					t.Fatalf("metric %v (dist %t) entry %d: CostGradTo %v, CostGrad %v", metric, dist != nil, k, b[k], a[k])
				}
			}
		}
	}
	if _, err := optlayer.CostGradDist(x, n, d, optlayer.Euclidean, g, make([]float64, 3)); err == nil {
		t.Fatal("short dist accepted")
	}
	if _, err := optlayer.CostGradTo(make([]float64, n*d-1), x, n, d, optlayer.Euclidean, g, nil); err == nil {
		t.Fatal("short dst accepted")
	}
}

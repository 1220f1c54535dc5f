package optlayer

import (
	"errors"
	"math"
	"math/rand"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// tiesPlane is the hard set's `ties` kind drawn in two dimensions: features
// in {0, 1, 2}², so nine locations with ≈ n/9 copies each, random labels,
// ϑ = 0.1 × the median cost.
func tiesPlane(seed int64, n, M int) *Problem { return tiesGrid(seed, n, M, 2) }

// tiesGrid is `ties` drawn in dim dimensions: features in {0, 1, 2}^dim,
// 3^dim locations, ϑ = 0.1 × the median cost.
func tiesGrid(seed int64, n, M, dim int) *Problem { return tiesGridK(seed, n, M, dim, 3) }

// tiesGridK draws the features in {0, …, k−1}^dim: k^dim locations.
func tiesGridK(seed int64, n, M, dim, k int) *Problem {
	rng := rand.New(rand.NewSource(seed))
	labels := everyClassLabels(rng, n, M)
	x := make([]float64, n*dim)
	for j := range x {
		x[j] = float64(rng.Intn(k))
	}
	v := make([]float64, 0, 20000)
	for len(v) < cap(v) {
		i, j := rng.Intn(n), rng.Intn(n)
		if i != j {
			v = append(v, floats.Distance(x[dim*i:dim*(i+1)], x[dim*j:dim*(j+1)], 2))
		}
	}
	sort.Float64s(v)
	return &Problem{N: n, Features: x, Dim: dim, Labels: labels, Theta: []float64{0.1 * v[len(v)/2]}}
}

func TestLocations(t *testing.T) {
	// points 0, 2 and 3 are copies; 1 is not (its costs differ); 4 costs
	// nothing to 0 but differs from it elsewhere (not a metric)
	c := []float64{
		0, 1, 0, 0, 0,
		1, 0, 1, 1, 2,
		0, 1, 0, 0, 0,
		0, 1, 0, 0, 0,
		0, 3, 0, 0, 0,
	}
	in := &instance{n: 5, cost: c}
	loc, reps, ok := in.locations(4)
	want := []int{0, 1, 0, 0, 2}
	if !ok || len(reps) != 3 || reps[0] != 0 || reps[1] != 1 || reps[2] != 4 {
		t.Fatalf("locations: ok %v, representatives %v; want [0 1 4]", ok, reps)
	}
	for i, l := range loc {
		if l != want[i] {
			t.Fatalf("locations: %v, want %v", loc, want)
		}
	}
	if _, _, ok := in.locations(2); ok {
		t.Fatal("locations: three locations accepted with a limit of two")
	}
}

func TestExactTransport(t *testing.T) {
	// three locations on a line at 0, 1, 3; mass (0.5, 0.5, 0) to (0, 0.5,
	// 0.5): the optimum moves 0.5 from 0 to 1 and 0.5 from 1 to 3 (cost 0.5
	// + 1), or equivalently 0.5 from 0 to 3 (1.5) with 1 staying put
	pos := []float64{0, 1, 3}
	cl := make([]float64, 9)
	for l := range pos {
		for q := range pos {
			cl[l*3+q] = math.Abs(pos[l] - pos[q])
		}
	}
	a, b := []float64{0.5, 0.5, 0}, []float64{0, 0.5, 0.5}
	F := exactTransport(cl, a, b)
	if F == nil {
		t.Fatal("exactTransport failed")
	}
	var cost float64
	for k, f := range F {
		if f < 0 {
			t.Fatalf("negative entry %v", F)
		}
		cost += f * cl[k]
	}
	for l := 0; l < 3; l++ {
		var row, col float64
		for q := 0; q < 3; q++ {
			row += F[l*3+q]
			col += F[q*3+l]
		}
		if math.Abs(row-b[l]) > 1e-15 || math.Abs(col-a[l]) > 1e-15 {
			t.Fatalf("marginals of %v: want rows %v, columns %v", F, b, a)
		}
	}
	if math.Abs(cost-1.5) > 1e-12 {
		t.Fatalf("cost %v, want 1.5", cost)
	}
}

func TestRoundMarginals(t *testing.T) {
	// too much in row 0 and column 1, too little elsewhere
	F := []float64{0.6, 0.3, 0, 0.1}
	a, b := []float64{0.5, 0.5}, []float64{0.5, 0.5}
	roundMarginals(F, a, b)
	for l := 0; l < 2; l++ {
		row, col := F[2*l]+F[2*l+1], F[l]+F[2+l]
		if math.Abs(row-0.5) > 1e-15 || math.Abs(col-0.5) > 1e-15 || F[2*l] < 0 || F[2*l+1] < 0 {
			t.Fatalf("rounded %v: marginals not (0.5, 0.5)", F)
		}
	}
}

// On `ties` in two dimensions at n = 2000 the exact transport between the
// nine locations brings every class to the uniform distribution within its
// budget, so the LP value is exactly 1 and the pooled candidate ends the
// solve; the Sinkhorn transport alone did not (5.4 s, objective 1.000052).
// The claim is checked independently: each class's transport, spread over
// the copies, is a plan from P̂_m to u within ϑ. (The LP over locations,
// distinct.go, answers this instance before the pooled candidate is tried:
// it is switched off here.)
func TestPooledLocations(t *testing.T) {
	p := tiesPlane(4, 2000, 10)
	r := solveLPNoDistinct(t, p)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	checkFeasible(t, p, r)
	if r.Status != Optimal || r.Objective != r.LowerBound || math.Abs(r.Objective-1) > 1e-12 || r.Iterations > 3 {
		t.Fatalf("want the pooled answer (objective = lower bound = 1 before the first stage ends): [%v, %v], %d iterations", r.LowerBound, r.Objective, r.Iterations)
	}
	ls := in.locationSet(pooledLocMax)
	if ls == nil || len(ls.reps) != 9 {
		t.Fatalf("locations: want 9, got %v", ls)
	}
	loc, cl := ls.loc, ls.cl
	n, L := in.n, len(ls.reps)
	b := make([]float64, L)
	for l, k := range ls.count {
		b[l] = float64(k) / float64(n)
	}
	for m := 0; m < in.m; m++ {
		a := ls.mass[m]
		nm := 0.0 // class m's points, from the labels
		for _, y := range in.labels {
			if y == m {
				nm++
			}
		}
		F := exactTransport(cl, a, b)
		// the point-level plan γ(i, j) = F(ℓ(i), ℓ(j)) / (count(ℓ(i)) · n_m(ℓ(j)))
		// for j of class m: its column sums, row sums and cost
		colSum := make([]float64, n)
		var cost float64
		rowSum := make([]float64, n)
		for j := 0; j < n; j++ {
			if in.labels[j] != m {
				continue
			}
			q := loc[j]
			for i := 0; i < n; i++ {
				l := loc[i]
				g := F[l*L+q] / (float64(ls.count[l]) * a[q] * nm)
				colSum[j] += g
				rowSum[i] += g
				cost += g * in.cost[i*n+j]
			}
		}
		for i := 0; i < n; i++ {
			if in.labels[i] == m && math.Abs(colSum[i]-1/nm) > 1e-12 {
				t.Fatalf("class %d: column %d sums to %v, want %v", m, i, colSum[i], 1/nm)
			}
			if math.Abs(rowSum[i]-1/float64(n)) > 1e-12 {
				t.Fatalf("class %d: row %d sums to %v, want 1/n", m, i, rowSum[i])
			}
		}
		if cost > in.theta[m] {
			t.Fatalf("class %d: the transport to u costs %v > ϑ = %v", m, cost, in.theta[m])
		}
	}
}

// Two locations one apart, two points of class 0 at the first and two of
// class 1 at the second, ϑ = 0.25: each class moves a quarter of its mass
// to the other location, P_0 = (0.75, 0.25) and P_1 = (0.25, 0.75) over the
// locations, and the LP value is 0.75 + 0.75 = 1.5. The LP over locations
// (distinct.go) gives it outright.
func TestDistinctHandWorked(t *testing.T) {
	c := []float64{
		0, 0, 1, 1,
		0, 0, 1, 1,
		1, 1, 0, 0,
		1, 1, 0, 0,
	}
	p := &Problem{N: 4, Cost: c, Labels: []int{0, 0, 1, 1}, Theta: []float64{0.25}}
	r, err := Solve(p, &Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFeasible(t, p, r)
	if r.Iterations != 0 || r.Status != Optimal || math.Abs(r.Objective-1.5) > 1e-9 || math.Abs(r.LowerBound-1.5) > 1e-9 {
		t.Fatalf("want the LP over locations' answer 1.5: [%v, %v], %d iterations", r.LowerBound, r.Objective, r.Iterations)
	}
	want := []float64{0.375, 0.375, 0.125, 0.125, 0.125, 0.125, 0.375, 0.375}
	for k, w := range want {
		if math.Abs(r.P[k]-w) > 1e-9 {
			t.Fatalf("P = %v, want %v", r.P, want)
		}
	}
}

// `ties` in two dimensions (nine locations): the LP over locations agrees
// with the entropic solve of the whole problem (without it) within both
// certificates, certifies to far below Tol, and gives a feasible P.
func TestDistinctAgrees(t *testing.T) {
	for _, c := range []struct {
		seed int64
		n, M int
	}{{4, 300, 10}, {12, 300, 10}, {31, 600, 3}} {
		p := tiesPlane(c.seed, c.n, c.M)
		r, err := Solve(p, &Settings{LPOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		checkFeasible(t, p, r)
		if r.Iterations != 0 || r.Status != Optimal || r.RelGap > 1e-6 {
			t.Fatalf("seed %d: want the LP over locations' answer: [%v, %v], %d iterations", c.seed, r.LowerBound, r.Objective, r.Iterations)
		}
		if _, err := r.VJP(make([]float64, r.M*r.N)); !errors.Is(err, ErrNotConverged) {
			t.Fatalf("VJP of the LP over locations' answer: %v, want ErrNotConverged", err)
		}
		if _, err := r.ObjectiveGrad(); !errors.Is(err, ErrNotConverged) {
			t.Fatalf("ObjectiveGrad of the LP over locations' answer: %v, want ErrNotConverged", err)
		}
		if g, err := r.FeatureGrad(make([]float64, r.N*r.N)); err != nil || len(g) != r.N*p.Dim {
			t.Fatalf("FeatureGrad of the LP over locations' answer: %d values, %v", len(g), err)
		}
		ref := solveLPNoDistinct(t, p)
		if ref.Status != Optimal || r.LowerBound > ref.Objective*(1+1e-12) || ref.LowerBound > r.Objective*(1+1e-12) {
			t.Fatalf("seed %d n %d: certificates disagree: [%v, %v] over locations, [%v, %v] entropic", c.seed, c.n, r.LowerBound, r.Objective, ref.LowerBound, ref.Objective)
		}
	}
}

// `ties` in four dimensions (81 locations, M = 8 and 5: the Woodbury path, whose
// iterations stop at the certificate): the answer is the LP over
// locations' (no entropic iterations), certified, feasible, and agrees with
// the entropic solve of the whole problem within both certificates.
func TestDistinctWoodbury(t *testing.T) {
	for _, c := range []struct {
		seed int64
		n, M int
	}{{4, 1500, 8}, {11, 1000, 5}} {
		p := tiesGrid(c.seed, c.n, c.M, 4)
		in, err := p.instance()
		if err != nil {
			t.Fatal(err)
		}
		ls := in.locationSet(distinctMaxL)
		if L, lp := len(ls.reps), newReducedLP(ls, in.theta); L <= 64 || lp.nSrc+c.M*L+c.M <= distinctMaxRows || lp.nSrc+c.M*L+c.M > c.n {
			t.Fatalf("seed %d: %d locations, %d sources: not the Woodbury path", c.seed, len(ls.reps), lp.nSrc)
		}
		r, err := Solve(p, &Settings{LPOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		checkFeasible(t, p, r)
		if r.Iterations != 0 || r.Status != Optimal || r.RelGap > DefaultTol {
			t.Fatalf("seed %d: want the LP over locations' answer: [%v, %v], %d iterations", c.seed, r.LowerBound, r.Objective, r.Iterations)
		}
		ref := solveLPNoDistinct(t, p)
		if ref.Status != Optimal || r.LowerBound > ref.Objective*(1+1e-12) || ref.LowerBound > r.Objective*(1+1e-12) {
			t.Fatalf("seed %d: certificates disagree: [%v, %v] over locations, [%v, %v] entropic", c.seed, r.LowerBound, r.Objective, ref.LowerBound, ref.Objective)
		}
	}
}

// solveLPNoDistinct solves p with LPOnly but without the LP over locations
// (distinct.go): the entropic solve with the pooled candidate.
func solveLPNoDistinct(t *testing.T, p *Problem) *Result {
	t.Helper()
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := (&Settings{LPOnly: true}).config(in)
	if err != nil {
		t.Fatal(err)
	}
	cfg.noDistinct = true
	return solveInstance(in, cfg)
}

// The normal equations solved with the sources' rows eliminated (normalEq),
// the rest by dense Cholesky or by Woodbury over the classes' blocks, agree
// with a dense solve of A D Aᵀ, at scalings spread over twelve orders of
// magnitude as they are near an LP's optimum.
func TestNormalEqSchur(t *testing.T) {
	for _, c := range []struct {
		seed      int64
		n, M, dim int
	}{{4, 300, 10, 2}, {12, 200, 3, 3}, {31, 60, 4, 2}, {4, 600, 10, 4}} {
		p := tiesGrid(c.seed, c.n, c.M, c.dim)
		in, err := p.instance()
		if err != nil {
			t.Fatal(err)
		}
		ls := in.locationSet(distinctMaxL)
		r := newReducedLP(ls, in.theta)
		cost, cols, b := r.system()
		nv, nr := len(cost), len(b)
		rng := rand.New(rand.NewSource(c.seed))
		d := make([]float64, nv)
		for k := range d {
			d[k] = math.Pow(10, 12*rng.Float64()-6)
		}
		rhs := make([]float64, nr)
		for i := range rhs {
			rhs[i] = rng.NormFloat64()
		}
		for _, dense := range []bool{true, false} {
			ne := r.newNormalEq(nr, dense)
			if !r.factor(ne, cols, d) {
				t.Fatalf("seed %d (dense %v): factorisation failed", c.seed, dense)
			}
			got := make([]float64, nr)
			if !r.solveTo(ne, got, rhs) {
				t.Fatalf("seed %d (dense %v): solve failed", c.seed, dense)
			}
			checkNormalEq(t, cols, d, rhs, got)
		}
	}
}

// checkNormalEq compares got, the solution of A D Aᵀ x = rhs by normalEq,
// with a dense solve of A D Aᵀ (A's columns cols).
func checkNormalEq(t *testing.T, cols [][]spEnt, d, rhs, got []float64) {
	t.Helper()
	nr := len(rhs)
	H := mat.NewSymDense(nr, nil)
	for k, col := range cols {
		for _, e := range col {
			for _, f := range col {
				if f.row >= e.row {
					H.SetSym(e.row, f.row, H.At(e.row, f.row)+d[k]*e.v*f.v)
				}
			}
		}
	}
	var want mat.VecDense
	if err := want.SolveVec(H, mat.NewVecDense(nr, rhs)); err != nil {
		t.Fatal(err)
	}
	// compare residuals of H: the eliminated form's against the right-hand side
	var res mat.VecDense
	res.MulVec(H, mat.NewVecDense(nr, got))
	res.SubVec(&res, mat.NewVecDense(nr, rhs))
	if rel := mat.Norm(&res, 2) / floats.Norm(rhs, 2); rel > 1e-8 {
		t.Fatalf("%d rows: relative residual %.2e", nr, rel)
	}
	for i := range got {
		if math.Abs(got[i]-want.AtVec(i)) > 1e-6*(1+math.Abs(want.AtVec(i))) {
			t.Fatalf("dy[%d] = %v, the dense solve %v", i, got[i], want.AtVec(i))
		}
	}
}

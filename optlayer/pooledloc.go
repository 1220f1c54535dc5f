package optlayer

// The pooled candidate's transport when the points have few locations.
//
// Points i and j are copies when they cost nothing to each other and have
// the same costs to every point (equal rows and columns of the costs). With
// features rounded to a few values in a low dimension (`ties` drawn in two
// dimensions: nine locations at any n) the Sinkhorn transport of
// pooledot.go fails: its ε_t = ϑ_m/50 is far below the cost between two
// locations, so its kernel keeps only the zero-cost entries, no mass moves
// between locations, and the rounded plan's rank-one repair blows the
// budget — after ≈ 1 s of iterations at n = 3000 — while an exact transport
// fits it (measured: 0.88–0.97 × ϑ on five of six such instances). Then the
// LP value is exactly 1 and the entropic solve took 5–7 s to certify it to
// Tol (Phase B's validation goes to n² candidates: every key ties across a
// location's copies).
//
// Class m's transport from its empirical distribution to u is solved exactly
// between locations instead: source mass a(q) = n_m(q)/n_m at each location
// q, target b(ℓ) = count(ℓ)/n, costs between the locations' representatives
// — a transportation problem of L² variables that gonum's simplex solves
// outright for L ≤ pooledLocMax. Spread evenly over the copies (each point of
// class m at q sends F(ℓ, q)/n_m(q), each copy at ℓ receives F(ℓ, q)/count(ℓ))
// it is a plan from P̂_m to u of the same cost. The simplex's plan is
// clipped at 0 and rounded to exact marginals as pooledot.go rounds
// (Altschuler, Weed & Rigollet 2017, Algorithm 2), and that plan's cost is
// what meets the budget or not. An exact transport over budget also settles
// that u is out of reach for the class (every plan to u costs at least the
// optimum), so the Sinkhorn transports are then skipped.

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

const (
	pooledLocMax = 24    // the most locations whose transports the simplex solves
	pooledLocTol = 1e-10 // the simplex's tolerance
)

// locations groups the points into locations of copies. It returns each
// point's location and one representative point per location, or ok =
// false when there are more than maxL locations (found in one pass: a
// problem without copies gives up after maxL + 1 points).
func (in *instance) locations(maxL int) (loc []int, reps []int, ok bool) {
	n := in.n
	c := in.cost
	loc = make([]int, n)
	for i := 0; i < n; i++ {
		found := -1
		for l, r := range reps {
			if c[i*n+r] == 0 && c[r*n+i] == 0 && sameCosts(c, n, i, r, in.sym) {
				found = l
				break
			}
		}
		if found < 0 {
			if len(reps) == maxL {
				return nil, nil, false
			}
			found = len(reps)
			reps = append(reps, i)
		}
		loc[i] = found
	}
	return loc, reps, true
}

// sameCosts reports whether points i and r have equal rows and equal
// columns in the n×n costs c (sym: c is symmetric, so equal rows are
// enough: the strided column reads took 2.2 s at n = 10,000).
func sameCosts(c []float64, n, i, r int, sym bool) bool {
	ri, rr := c[i*n:(i+1)*n], c[r*n:(r+1)*n]
	for k, v := range ri {
		if v != rr[k] {
			return false
		}
	}
	if sym {
		return true
	}
	for k := 0; k < n; k++ {
		if c[k*n+i] != c[k*n+r] {
			return false
		}
	}
	return true
}

// locSet is the points grouped into locations of copies.
type locSet struct {
	loc   []int       // point → location
	reps  []int       // location → a representative point
	count []int       // location → its points
	cl    []float64   // L×L: cl[ℓ·L+q] the cost from location q to location ℓ
	mass  [][]float64 // class → location → n_m(ℓ)/n_m, the class's mass there
}

// locationSet groups in's points into locations (at most maxL) with their
// costs and the classes' masses, or returns nil when there are more or no
// point has a copy.
func (in *instance) locationSet(maxL int) *locSet {
	loc, reps, ok := in.locations(maxL)
	if !ok || len(reps) == in.n {
		return nil
	}
	n, L := in.n, len(reps)
	ls := &locSet{loc: loc, reps: reps, count: make([]int, L), cl: make([]float64, L*L), mass: make([][]float64, in.m)}
	for l, i := range reps {
		for q, j := range reps {
			ls.cl[l*L+q] = in.cost[i*n+j]
		}
	}
	classN := make([]int, in.m)
	for m := range ls.mass {
		ls.mass[m] = make([]float64, L)
	}
	for i, l := range loc {
		ls.count[l]++
		ls.mass[in.labels[i]][l]++
		classN[in.labels[i]]++
	}
	for m, a := range ls.mass {
		for l := range a {
			a[l] /= float64(classN[m])
		}
	}
	return ls
}

// locationTransports returns, for each class of over, the cost of an
// exactly feasible plan from its empirical distribution to u built from the
// optimal transport between locations (NaN where the simplex failed), or ok
// = false when the points have more than pooledLocMax locations or none
// repeats.
func (s *solver) locationTransports(over []int) (cost []float64, ok bool) {
	ls := s.in.locationSet(pooledLocMax)
	if ls == nil {
		return nil, false
	}
	b := make([]float64, len(ls.reps))
	for l, k := range ls.count {
		b[l] = float64(k) / float64(s.n)
	}
	cost = make([]float64, s.M)
	for m := range cost {
		cost[m] = math.NaN()
	}
	for _, m := range over {
		if F := exactTransport(ls.cl, ls.mass[m], b); F != nil {
			var c float64
			for k, f := range F {
				c += f * ls.cl[k]
			}
			cost[m] = c
		}
	}
	return cost, true
}

// exactTransport returns an exactly feasible plan F (L×L, F[ℓ·L+q] from q
// to ℓ: column sums a, row sums b, Σa = Σb = 1) near an optimal transport
// for the costs cl: the simplex's optimum, clipped at 0 and rounded to the
// marginals. It returns nil when the simplex fails.
func exactTransport(cl, a, b []float64) []float64 {
	L := len(a)
	// variables F(ℓ, q) for the sources q with a(q) > 0; constraints: each
	// source's column sum, each target's row sum but the last (redundant)
	var src []int
	for q, x := range a {
		if x > 0 {
			src = append(src, q)
		}
	}
	nv := len(src) * L
	rows := len(src) + L - 1
	A := mat.NewDense(rows, nv, nil)
	rhs := make([]float64, rows)
	c := make([]float64, nv)
	for k, q := range src {
		rhs[k] = a[q]
		for l := 0; l < L; l++ {
			v := k*L + l
			c[v] = cl[l*L+q]
			A.Set(k, v, 1)
			if l < L-1 {
				A.Set(len(src)+l, v, 1)
			}
		}
	}
	for l := 0; l < L-1; l++ {
		rhs[len(src)+l] = b[l]
	}
	_, x, err := lp.Simplex(c, A, rhs, pooledLocTol, nil)
	if err != nil {
		return nil
	}
	F := make([]float64, L*L)
	for k, q := range src {
		for l := 0; l < L; l++ {
			F[l*L+q] = max(0, x[k*L+l])
		}
	}
	roundMarginals(F, a, b)
	return F
}

// roundMarginals makes F (L×L, rows ℓ, columns q) exactly feasible for the
// row sums b and column sums a: rows scaled down to at most b, then columns
// to at most a, and the missing masses given back as a rank-one plan
// er·ecᵀ/Σec (Altschuler, Weed & Rigollet 2017, Algorithm 2).
func roundMarginals(F, a, b []float64) {
	L := len(a)
	for l := 0; l < L; l++ {
		row := F[l*L : (l+1)*L]
		var s float64
		for _, f := range row {
			s += f
		}
		if s > b[l] {
			x := b[l] / s
			for q := range row {
				row[q] *= x
			}
		}
	}
	ec := make([]float64, L)
	for q := 0; q < L; q++ {
		var s float64
		for l := 0; l < L; l++ {
			s += F[l*L+q]
		}
		if s > a[q] {
			x := a[q] / s
			for l := 0; l < L; l++ {
				F[l*L+q] *= x
			}
			s = a[q]
		}
		ec[q] = max(0, a[q]-s)
	}
	er := make([]float64, L)
	var e float64
	for l := 0; l < L; l++ {
		var s float64
		for _, f := range F[l*L : (l+1)*L] {
			s += f
		}
		er[l] = max(0, b[l]-s)
	}
	for _, x := range ec {
		e += x
	}
	if e > 0 {
		for l := 0; l < L; l++ {
			for q := 0; q < L; q++ {
				F[l*L+q] += er[l] * ec[q] / e
			}
		}
	}
}

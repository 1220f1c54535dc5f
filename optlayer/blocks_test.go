package optlayer

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

func TestStratifiedBlocks(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	labels := make([]int, 103)
	for i := range labels {
		labels[i] = rng.Intn(4)
	}
	labels[7] = 4 // a class of one point
	bs := StratifiedBlocks(labels, 25, 9)
	if len(bs) != 5 {
		t.Fatalf("%d blocks, want ⌈103/25⌉ = 5", len(bs))
	}
	seen := make([]int, len(labels))
	for _, b := range bs {
		if len(b) > 25 || !slices.IsSorted(b) {
			t.Fatalf("block of %d points, sorted %v", len(b), slices.IsSorted(b))
		}
		for _, i := range b {
			seen[i]++
		}
	}
	for i, k := range seen {
		if k != 1 {
			t.Fatalf("index %d in %d blocks", i, k)
		}
	}
	for c := 0; c < 5; c++ {
		if lo, hi := classSpread(labels, bs, c); hi-lo > 1 {
			t.Fatalf("class %d: %d–%d points per block, want a spread ≤ 1", c, lo, hi)
		}
	}
	if !slices.EqualFunc(bs, StratifiedBlocks(labels, 25, 9), slices.Equal) {
		t.Fatal("same seed, different blocks")
	}
	if slices.EqualFunc(bs, StratifiedBlocks(labels, 25, 10), slices.Equal) {
		t.Fatal("another seed, the same blocks")
	}
	if one := StratifiedBlocks(labels, 0, 1); len(one) != 1 || len(one[0]) != len(labels) {
		t.Fatal("size 0 should give one block of every index")
	}
}

// classSpread returns the fewest and the most points of class c in a
// block of bs.
func classSpread(labels []int, bs [][]int, c int) (lo, hi int) {
	lo = len(labels)
	for _, b := range bs {
		k := 0
		for _, i := range b {
			if labels[i] == c {
				k++
			}
		}
		lo, hi = min(lo, k), max(hi, k)
	}
	return lo, hi
}

// blocksFeatures draws n points in dim dimensions, class means shifted,
// and returns the problem with Features and the same one with its Cost.
func blocksFeatures(seed int64, n, M, dim int, thetaRel float64) (feat, cost *Problem) {
	rng := rand.New(rand.NewSource(seed))
	labels := everyClassLabels(rng, n, M)
	x := make([]float64, n*dim)
	for i := range x {
		x[i] = rng.NormFloat64() + 1.2*float64(labels[i/dim]*((i%dim)%2))
	}
	c, err := Costs(x, n, dim, Euclidean)
	if err != nil {
		panic(err)
	}
	th := []float64{thetaRel * medianOffDiag(c, n)}
	return &Problem{N: n, Features: x, Dim: dim, Labels: labels, Theta: th},
		&Problem{N: n, Cost: c, Labels: labels, Theta: th}
}

// mixedResult assembles the whole problem's P, objective and plans from a
// BlocksResult solved with Settings.Plans (for checkFeasible).
func mixedResult(t *testing.T, p *Problem, blocks [][]int, br *BlocksResult) *Result {
	t.Helper()
	n, M := br.N, br.M
	cnt := make([]int, M)
	for _, y := range p.Labels {
		cnt[y]++
	}
	r := &Result{M: M, N: n, P: br.P, Objective: br.Objective, Plans: make([][]float64, M)}
	for m := range r.Plans {
		r.Plans[m] = make([]float64, n*n)
	}
	inBlock := map[[2]int]int{} // (block, class) → points
	for b, idx := range blocks {
		for _, i := range idx {
			inBlock[[2]int{b, p.Labels[i]}]++
		}
	}
	for b, idx := range blocks {
		rb := br.Blocks[b]
		var cls []int
		for _, i := range idx {
			cls = append(cls, p.Labels[i])
		}
		slices.Sort(cls)
		cls = slices.Compact(cls)
		nb := len(idx)
		for j, c := range cls {
			w := float64(inBlock[[2]int{b, c}]) / float64(cnt[c])
			if rb.Plans == nil { // a block of one class: the identity plan
				for _, i := range idx {
					r.Plans[c][i*n+i] = 1 / float64(cnt[c])
				}
				continue
			}
			for t1, i := range idx {
				for t2, i2 := range idx {
					r.Plans[c][i*n+i2] = w * rb.Plans[j][t1*nb+t2]
				}
			}
		}
	}
	return r
}

func TestSolveBlocksBounds(t *testing.T) {
	raised := 0 // cases whose bound the rounds must raise
	defer func() {
		if raised < 2 {
			t.Errorf("the rounds were checked on %d cases, want ≥ 2", raised)
		}
	}()
	for _, tc := range []struct {
		n, M, nb  int
		thetaRel  float64
		stratify  bool
		seed      int64
		multiTh   bool
		wantClose bool // one block: the bound must be the solver's
	}{
		{30, 2, 3, 0.3, true, 1, false, false},
		{36, 3, 3, 0.1, true, 2, false, false},
		{36, 3, 4, 1.0, false, 3, false, false},
		{28, 2, 2, 0, true, 4, false, false},
		{32, 4, 3, 3, true, 5, false, false},
		{30, 3, 3, 0.4, false, 6, true, false},
		{30, 3, 1, 0.3, true, 7, false, true},
	} {
		t.Run(fmt.Sprintf("n=%d/M=%d/B=%d/th=%v/seed=%d", tc.n, tc.M, tc.nb, tc.thetaRel, tc.seed), func(t *testing.T) {
			pf, pc := blocksFeatures(tc.seed, tc.n, tc.M, 3, tc.thetaRel)
			if tc.multiTh {
				th := make([]float64, tc.M)
				for m := range th {
					th[m] = pc.Theta[0] * float64(m) / 2 // class 0 at ϑ = 0
				}
				pf.Theta, pc.Theta = th, th
			}
			var blocks [][]int
			if tc.stratify {
				blocks = StratifiedBlocks(pc.Labels, (tc.n+tc.nb-1)/tc.nb, tc.seed)
			} else { // any partition: contiguous runs (blocks of one class likely)
				perm := rand.New(rand.NewSource(tc.seed)).Perm(tc.n)
				for b := 0; b < tc.nb; b++ {
					blk := slices.Clone(perm[b*tc.n/tc.nb : (b+1)*tc.n/tc.nb])
					slices.Sort(blk)
					blocks = append(blocks, blk)
				}
			}
			set := &Settings{Plans: true}
			rc, err := SolveBlocks(pc, blocks, set)
			if err != nil {
				t.Fatal(err)
			}
			rf, err := solveBlocks(pf, blocks, set, blockOpts{rounds: boundRounds}) // costs computed in every pass
			if err != nil {
				t.Fatal(err)
			}
			r32, err := solveBlocks(pf, blocks, set, blockOpts{boundRounds, 1 << 30, 1}) // float32 costs rounded down
			if err != nil {
				t.Fatal(err)
			}
			checkFeasible(t, pc, mixedResult(t, pc, blocks, rc))
			v := exactLP(t, pc)
			if rc.LowerBound > v+1e-9 || v > rc.Objective+1e-9 {
				t.Fatalf("LB %.10g, exact LP %.10g, objective %.10g: not LB ≤ v ≤ objective", rc.LowerBound, v, rc.Objective)
			}
			if rc.Status != Optimal || rc.BlockRelGap > DefaultTol {
				t.Fatalf("blocks not certified: status %v, largest block gap %v", rc.Status, rc.BlockRelGap)
			}
			if math.Abs(rc.Gap-(rc.Objective-rc.LowerBound)) > 1e-12 || rc.Gap < 0 {
				t.Fatalf("gap %v for objective %v, bound %v", rc.Gap, rc.Objective, rc.LowerBound)
			}
			// costs from features, in the blocks and in the bound's pass:
			// the same answer as from the cost matrix
			if !almost(rf.Objective, rc.Objective, 1e-12) || !almost(rf.LowerBound, rc.LowerBound, 1e-12) {
				t.Fatalf("features: objective %.15g, bound %.15g; costs: %.15g, %.15g", rf.Objective, rf.LowerBound, rc.Objective, rc.LowerBound)
			}
			// rounded down, the float32 costs keep the bound a bound, within
			// about their precision of the float64 one
			if r32.Objective != rf.Objective || r32.LowerBound > v+1e-9 || !almost(r32.LowerBound, rf.LowerBound, 1e-6) {
				t.Fatalf("float32 costs: objective %.15g, bound %.15g; float64: %.15g, %.15g", r32.Objective, r32.LowerBound, rf.Objective, rf.LowerBound)
			}
			// the c-transform rounds never lower the bound, and raise it
			// where the blocks leave a gap
			r0, err := solveBlocks(pc, blocks, set, blockOpts{})
			if err != nil {
				t.Fatal(err)
			}
			if rc.LowerBound < r0.LowerBound {
				t.Fatalf("bound %.6f after the rounds, %.6f before", rc.LowerBound, r0.LowerBound)
			}
			if tc.nb > 1 && r0.LowerBound > 1 && v-r0.LowerBound > 0.05 {
				raised++
				if rc.LowerBound-r0.LowerBound < 0.25*(v-r0.LowerBound) {
					t.Fatalf("bound %.6f after the rounds, %.6f before, LP %.6f: the rounds closed less than a quarter of the gap", rc.LowerBound, r0.LowerBound, v)
				}
			}
			if tc.wantClose {
				r, err := Solve(pc, set)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(r.P, rc.P) || r.Objective != rc.Objective {
					t.Fatal("one block: P differs from Solve's")
				}
				// the certificate at the solver's own duals, only the λ
				// choice and no lbCand: within the tolerance of its bound
				if rc.LowerBound < r.LowerBound-DefaultTol*r.LowerBound {
					t.Fatalf("one block: bound %.10g, Solve's %.10g", rc.LowerBound, r.LowerBound)
				}
			}
			t.Logf("exact %.6f, blocks %.6f (bound %.6f, %.6f without the rounds; rel gap %.3g)", v, rc.Objective, rc.LowerBound, r0.LowerBound, rc.RelGap)
		})
	}
}

func TestSolveBlocksInvalid(t *testing.T) {
	_, p := blocksFeatures(1, 10, 2, 2, 0.2)
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, tc := range []struct {
		name   string
		blocks [][]int
		set    *Settings
	}{
		{"none", nil, nil},
		{"empty block", [][]int{all, {}}, nil},
		{"out of range", [][]int{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 10}}, nil},
		{"negative", [][]int{{-1, 0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}, nil},
		{"twice", [][]int{{0, 1, 2, 3, 4}, {4, 5, 6, 7, 8, 9}}, nil},
		{"missing", [][]int{{0, 1, 2, 3, 4}, {5, 6, 7, 8}}, nil},
		{"warm", [][]int{all}, &Settings{Warm: &Dual{}}},
		{"bad settings", [][]int{all}, &Settings{Epsilon: -1}},
	} {
		if _, err := SolveBlocks(p, tc.blocks, tc.set); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", tc.name, err)
		}
	}
	bad := *p
	bad.Theta = []float64{math.NaN()}
	if _, err := SolveBlocks(&bad, [][]int{all}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN theta: err %v", err)
	}
}

// TestBlocksVJPFiniteDifferences checks the blocked map's gradient against
// central differences of ⟨G, PReg⟩: cost entries inside a block, between
// blocks (0: the blocks never see them) and, from features, every
// coordinate of a few points.
func TestBlocksVJPFiniteDifferences(t *testing.T) {
	pf, pc := blocksFeatures(8, 24, 3, 2, 0.3)
	blocks := StratifiedBlocks(pc.Labels, 12, 2)
	set := fdSettings(0.05)
	rng := rand.New(rand.NewSource(3))
	gp := make([]float64, 3*24)
	for k := range gp {
		gp[k] = rng.NormFloat64()
	}
	loss := func(q *Problem) float64 {
		r, err := SolveBlocks(q, blocks, set)
		if err != nil {
			t.Fatal(err)
		}
		l := 0.0
		for k, g := range gp {
			l += g * r.PReg[k]
		}
		return l
	}
	r, err := SolveBlocks(pc, blocks, set)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := r.VJP(gp)
	if err != nil {
		t.Fatal(err)
	}
	n := pc.N
	blockOf := make([]int, n)
	for b, idx := range blocks {
		for _, i := range idx {
			blockOf[i] = b
		}
	}
	const h = 1e-6
	inside, maxAbs := 0, 0.0
	for _, e := range entries(rng, n, 16) {
		i, j := e[0], e[1]
		fd := (loss(perturbed(pc, i, j, h)) - loss(perturbed(pc, i, j, -h))) / (2 * h)
		if blockOf[i] == blockOf[j] {
			inside++
			maxAbs = math.Max(maxAbs, math.Abs(fd))
		} else if gc[i*n+j] != 0 || math.Abs(fd) > 1e-9 {
			t.Errorf("c(%d,%d) between blocks: VJP %v, finite differences %v, want 0", i, j, gc[i*n+j], fd)
		}
		if d := math.Abs(fd - gc[i*n+j]); d > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂L/∂c(%d,%d): VJP %.8g, finite differences %.8g", i, j, gc[i*n+j], fd)
		}
	}
	if inside < 4 || maxAbs < 1e-3 {
		t.Fatalf("degenerate check: %d entries inside blocks, max |FD| %g", inside, maxAbs)
	}
	rf, err := SolveBlocks(pf, blocks, set)
	if err != nil {
		t.Fatal(err)
	}
	gx, err := rf.FeatureVJP(gp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.FeatureVJP(gp); !errors.Is(err, ErrInvalid) {
		t.Fatalf("FeatureVJP of a Cost problem: %v", err)
	}
	if _, err := rf.VJP(gp[:5]); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short gradP: %v", err)
	}
	d := pf.Dim
	for _, i := range []int{0, 5, 17} {
		for k := 0; k < d; k++ {
			q := *pf
			q.Features = slices.Clone(pf.Features)
			q.Features[i*d+k] += h
			lp := loss(&q)
			q.Features[i*d+k] -= 2 * h
			fd := (lp - loss(&q)) / (2 * h)
			if dv := math.Abs(fd - gx[i*d+k]); dv > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("∂L/∂x(%d,%d): FeatureVJP %.8g, finite differences %.8g", i, k, gx[i*d+k], fd)
			}
		}
	}
	// without the regularised solve there is no gradient
	rl, err := SolveBlocks(pc, blocks, &Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rl.VJP(gp); !errors.Is(err, ErrNotConverged) {
		t.Fatalf("VJP after LPOnly: %v, want ErrNotConverged", err)
	}
}

// TestCosts32Down: the bound's float32 costs are Costs' rounded towards
// zero (never above, less than one float32 step below), at their permuted
// columns, across tile boundaries.
func TestCosts32Down(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	const n, d = 70, 5
	x := make([]float64, n*d)
	for k := range x {
		x[k] = rng.NormFloat64() * 3
	}
	pos := rng.Perm(n)
	for _, metric := range []Metric{Euclidean, SqEuclidean} {
		c, err := Costs(x, n, d, metric)
		if err != nil {
			t.Fatal(err)
		}
		c32 := costs32Down(x, n, d, metric, pos)
		below := 0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				f, v := c32[i*n+pos[j]], c[i*n+j]
				if float64(f) > v || float64(math.Nextafter32(f, float32(math.Inf(1)))) <= v {
					t.Fatalf("metric %d: c32(%d,%d) = %v for the cost %v", metric, i, j, f, v)
				}
				if float64(f) < v {
					below++
				}
			}
		}
		if below < n*n/4 {
			t.Fatalf("metric %d: only %d of %d entries rounded (float32 should round most)", metric, below, n*n)
		}
	}
}

// TestBlocksCopies: Blocks keeps exact copies in one block (features and
// costs, −0 and 0 alike), holds at most size points per block with every
// class spread within a point or two, and is StratifiedBlocks without
// copies.
func TestBlocksCopies(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	const n, d, size = 300, 3, 70
	x := make([]float64, n*d)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = rng.Intn(3)
	}
	feat := &Problem{N: n, Features: x, Dim: d, Labels: labels, Theta: []float64{0.1}}
	plain, err := Blocks(feat, size, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(plain, StratifiedBlocks(labels, size, 2), slices.Equal) {
		t.Fatal("without copies Blocks should be StratifiedBlocks")
	}
	// points 150…299 copy 0…149 (their own random labels), one copy with −0
	x2 := slices.Clone(x)
	copy(x2[150*d:], x2[:150*d])
	x2[0], x2[150*d] = 0, math.Copysign(0, -1)
	c, err := Costs(x2, n, d, Euclidean)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Problem{
		"features": {N: n, Features: x2, Dim: d, Labels: labels, Theta: []float64{0.1}},
		"costs":    {N: n, Cost: c, Labels: labels, Theta: []float64{0.1}},
	} {
		bs, err := Blocks(p, size, 2)
		if err != nil {
			t.Fatal(err)
		}
		blockOf := make([]int, n)
		seen := 0
		for b, idx := range bs {
			if len(idx) > size || !slices.IsSorted(idx) {
				t.Fatalf("%s: block of %d points (at most %d), sorted %v", name, len(idx), size, slices.IsSorted(idx))
			}
			for _, i := range idx {
				blockOf[i] = b
				seen++
			}
		}
		if seen != n || len(bs) != (n+size-1)/size {
			t.Fatalf("%s: %d points in %d blocks", name, seen, len(bs))
		}
		for i := 0; i < 150; i++ {
			if blockOf[i] != blockOf[i+150] {
				t.Fatalf("%s: copies %d and %d in blocks %d and %d", name, i, i+150, blockOf[i], blockOf[i+150])
			}
		}
	}
	// the other points of each class spread evenly
	x3 := slices.Clone(x)
	copy(x3[250*d:], x3[:50*d]) // 50 copies, 200 other points
	bs, err := Blocks(&Problem{N: n, Features: x3, Dim: d, Labels: labels, Theta: []float64{0.1}}, size, 3)
	if err != nil {
		t.Fatal(err)
	}
	for cl := 0; cl < 3; cl++ {
		if lo, hi := classSpread(labels, bs, cl); hi-lo > 8 {
			t.Fatalf("class %d: %d–%d points per block", cl, lo, hi)
		}
	}
	if _, err := Blocks(&Problem{N: 2, Labels: []int{0, 1}, Theta: []float64{1}}, 1, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no costs or features: %v", err)
	}
}

var blockSize = flag.Int("block-size", 1000, "BenchmarkBlocks: the blocks' size")

// BenchmarkBlocks solves BenchmarkHard's instances (-hard-sizes,
// -hard-seed) in blocks of -block-size (Blocks, SolveBlocks with LPOnly, as
// drknn-lfd -block): the objective, the whole problem's certified bound and
// its relative gap, the largest block's gap.
//
//	go test ./optlayer -run '^$' -bench Blocks -benchtime 1x -args -hard-sizes 10000 [-block-size 2000]
func BenchmarkBlocks(b *testing.B) {
	sizes, err := sizeList("hard-sizes", *hardSizes)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range sizes {
		for _, kind := range hardBenchKinds {
			b.Run(fmt.Sprintf("%s/n=%d/block=%d", kind, n, *blockSize), func(b *testing.B) {
				p := hardProblem(kind, *hardSeed, n, 10)
				b.ResetTimer()
				var r *BlocksResult
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					bs, err := Blocks(p, *blockSize, 0)
					if err != nil {
						b.Fatal(err)
					}
					if r, err = SolveBlocks(p, bs, &Settings{LPOnly: true}); err != nil {
						b.Fatal(err)
					}
				}
				if r.Status != Optimal {
					b.Fatalf("status %d, largest block gap %g", r.Status, r.BlockRelGap)
				}
				b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(r.Objective, "objective")
				b.ReportMetric(r.LowerBound, "bound")
				b.ReportMetric(r.RelGap, "relgap")
				b.ReportMetric(r.BlockRelGap, "block-relgap")
			})
		}
	}
}

// TestSolveBlocksNoBound: without the whole problem's certificate the
// answer is the same and the bound the trivial 1.
func TestSolveBlocksNoBound(t *testing.T) {
	_, p := blocksFeatures(3, 40, 3, 2, 0.3)
	blocks := StratifiedBlocks(p.Labels, 14, 1)
	with, err := SolveBlocks(p, blocks, &Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	without, err := SolveBlocks(p, blocks, &Settings{LPOnly: true, NoBlocksBound: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(with.P, without.P) || with.Objective != without.Objective {
		t.Fatal("NoBlocksBound changed the answer")
	}
	if without.LowerBound != 1 || without.Gap != without.Objective-1 || with.LowerBound <= 1 {
		t.Fatalf("bounds %v (with the certificate %v), gap %v", without.LowerBound, with.LowerBound, without.Gap)
	}
}

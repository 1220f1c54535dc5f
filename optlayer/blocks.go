package optlayer

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"

	"github.com/drknn/drknn/internal/par"
	"github.com/drknn/drknn/optlayer/internal/vexp"
)

// The LFD in blocks: an approximation for large n, with its cost certified.
//
// The whole problem's time and memory grow as n² (its n² transport
// variables). SolveBlocks restricts the transport to blocks of a partition
// of the points: each block's LFD is solved on its own (a problem of the
// block's points, classes and the same radii), and P_m is the mixture
// Σ_b (n_m(b)/n_m) P^b_m. The blocks' plans, so mixed, are a feasible plan of
// the whole problem (every column keeps its mass 1/n_m, and the mixture of
// budgets each ≤ ϑ_m is ≤ ϑ_m), so P is feasible and its objective
// Σ_i max_m P_m(i) an upper bound on the whole problem's value v.
//
// The lower bound is the whole problem's own certificate (DESIGN.md §3) at
// duals assembled from the blocks: α_m(i) from the block of row i, and per
// class one λ_m ≥ 0, the best of the blocks' λ_m (at most blockLambdas of
// them): LB = Σ_m max_λ [(1/n_m) Σ_{j of class m} min_i (α_m(i) + λ c(i,j)) −
// λ ϑ_m], the minimum over every row i of the whole set — so the transport
// across blocks that the blocks never used is priced in — and then at the
// duals of two c-transform rounds from there (wholeBound). Objective − LB
// bounds what the blocks cost against the exact LFD; each of the bound's
// five passes is O(n²·K) time (K ≤ blockLambdas + 3) and O(M·n) memory
// beyond the costs, which from Features are computed on the fly or, from
// 64 dimensions on, once as float32 (blockCacheMax). Blocks, the partition
// drknn-lfd uses, keeps exact copies of a point in one block.

// blockCacheMax is the most memory (bytes) the bound of a Features problem
// of blockCacheDim or more dimensions spends on the costs: up to it (n ≤
// 11,585) they are computed once, as float32 rounded down (a smaller cost
// only lowers the bound's minima, so it stays a bound), with each class's
// columns side by side, and each of the bound's passes reads them; above
// it, or in fewer dimensions, every pass computes them again (n²·d work
// each). Measured (drknn-lfd -block 1000, ϑ = 0.1 × median, n = 8000):
// MNIST pixels (d = 784) 14.8 → 6.4 s, CIFAR-10 (d = 3072) 53.7 → 14.5 s;
// at d = 16 (`separated` / `overlap`, n = 10,000) the float32 costs gave
// 12.9 / 4.6 s and 470 MB against 13.2 / 3.2 s and ≤ 150 MB on the fly.
const (
	blockCacheMax = 512 << 20
	blockCacheDim = 64
)

// costs32Down returns the n×n costs of x (Costs' sums, in its tiles) as
// float32, each rounded towards zero, with column j at position pos[j] of
// every row.
func costs32Down(x []float64, n, dim int, metric Metric, pos []int) []float32 {
	c := make([]float32, n*n)
	forCostTiles(x, n, dim, func(acc []float64, i0, j0 int) {
		tileCosts(acc, i0, j0, n, metric, func(i, j int, v float64) {
			f := float32(v)
			if float64(f) > v {
				f = math.Nextafter32(f, 0)
			}
			c[i*n+pos[j]], c[j*n+pos[i]] = f, f
		})
	})
	return c
}

// blockLambdas is the most λ_m per class the whole-set bound tries (the
// blocks' own λ_m, or that many of their quantiles when there are more
// blocks).
const blockLambdas = 8

// BlocksResult is the answer of SolveBlocks.
type BlocksResult struct {
	M, N int
	// P is M×n row-major: block b's P*_m on its points, scaled by the
	// block's share n_m(b)/n_m of class m. It is feasible for the whole
	// problem; every P_m sums to 1.
	P []float64
	// Objective is Σ_i max_m P_m(i), an upper bound on the whole problem's
	// LP value v.
	Objective float64
	// LowerBound is a certified lower bound on v (the whole problem's
	// certificate at duals assembled from the blocks'), so Gap =
	// Objective − LowerBound ≥ 0 bounds what solving in blocks costs, and
	// RelGap = Gap / LowerBound.
	LowerBound, Gap, RelGap float64
	// Blocks holds each block's own answer (its indices are positions
	// within the block; its classes the block's classes, in order).
	// A block of one class is answered without a solve (P its empirical
	// distribution, Iterations 0).
	Blocks []*Result
	// Iterations sums the blocks'; Status is Optimal when every block was
	// certified within Settings.Tol (BlockRelGap, the largest block's
	// relative gap, says how far), IterationLimit otherwise.
	Iterations  int
	Status      Status
	BlockRelGap float64
	// PReg is M×n: the blocks' regularised solutions mixed as P, the map
	// VJP and FeatureVJP differentiate.
	PReg []float64

	parts []blockPart
	dim   int // feature dimension when the problem gave Features, else 0
}

// blockPart is what the backward pass needs of one block: its points, its
// classes in order and each class's weight n_m(b)/n_m.
type blockPart struct {
	idx, cls []int
	w        []float64
}

// StratifiedBlocks returns a class-stratified random partition of the
// points with the given labels into ⌈n/size⌉ blocks of at most size points:
// each class's points shuffled (seeded) and dealt round-robin over the
// blocks, so every block holds a random 1/B of each class (a class with
// fewer than B points is absent from some blocks). Indices within a block
// are ascending. One block of every index when size ≤ 0 or n ≤ size.
func StratifiedBlocks(labels []int, size int, seed int64) [][]int {
	n := len(labels)
	if size <= 0 || n <= size {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
	nb := (n + size - 1) / size
	byClass := map[int][]int{}
	var classes []int
	for i, l := range labels {
		if _, ok := byClass[l]; !ok {
			classes = append(classes, l)
		}
		byClass[l] = append(byClass[l], i)
	}
	slices.Sort(classes)
	rng := rand.New(rand.NewSource(seed ^ 0x1fdb10c))
	blocks := make([][]int, nb)
	next := 0
	for _, c := range classes {
		idx := byClass[c]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		for _, i := range idx {
			blocks[next%nb] = append(blocks[next%nb], i)
			next++
		}
	}
	for _, b := range blocks {
		slices.Sort(b)
	}
	return blocks
}

// Blocks returns a partition of p's points into ⌈N/size⌉ blocks of at most
// size points, for SolveBlocks: StratifiedBlocks's, except that exact
// copies — points with identical features, or at zero cost to each other
// with equal costs to every point — stay in one block (a copy of another
// class is overlap at no cost, which blocks that separate the copies
// lose). Groups of copies go first, whole, each to the block with the
// fewest points (a group larger than a block is dealt point by point);
// then every class's other points, shuffled, each to the block with the
// fewest points of its class (then the fewest points) that has room.
// Without copies it is StratifiedBlocks(p.Labels, size, seed).
func Blocks(p *Problem, size int, seed int64) ([][]int, error) {
	in, err := p.checked()
	if err != nil {
		return nil, err
	}
	n := in.n
	groups := in.copyGroups()
	if len(groups) == 0 || size <= 0 || n <= size {
		return StratifiedBlocks(in.labels, size, seed), nil
	}
	nb := (n + size - 1) / size
	rng := rand.New(rand.NewSource(seed ^ 0x1fdb10c))
	blocks := make([][]int, nb)
	perClass := make([][]int, nb) // block → class → points
	for b := range perClass {
		perClass[b] = make([]int, in.m)
	}
	put := func(b, i int) {
		blocks[b] = append(blocks[b], i)
		perClass[b][in.labels[i]]++
	}
	placed := make([]bool, n)
	rng.Shuffle(len(groups), func(a, b int) { groups[a], groups[b] = groups[b], groups[a] })
	for _, g := range groups {
		best := -1
		for b := range blocks {
			if len(blocks[b])+len(g) <= size && (best < 0 || len(blocks[b]) < len(blocks[best])) {
				best = b
			}
		}
		if best < 0 {
			continue // dealt point by point below
		}
		for _, i := range g {
			put(best, i)
			placed[i] = true
		}
	}
	byClass := make([][]int, in.m)
	for i, y := range in.labels {
		if !placed[i] {
			byClass[y] = append(byClass[y], i)
		}
	}
	for c, idx := range byClass {
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		for _, i := range idx {
			best := -1
			for b := range blocks {
				if len(blocks[b]) >= size {
					continue
				}
				if best < 0 || perClass[b][c] < perClass[best][c] ||
					(perClass[b][c] == perClass[best][c] && len(blocks[b]) < len(blocks[best])) {
					best = b
				}
			}
			put(best, i) // nb·size ≥ n: some block has room
		}
	}
	out := blocks[:0]
	for _, b := range blocks {
		if len(b) > 0 {
			slices.Sort(b)
			out = append(out, b)
		}
	}
	return out, nil
}

// copyGroups returns the groups of two or more exact copies (Blocks), each
// ascending, in the order of their first points.
func (in *instance) copyGroups() [][]int {
	n := in.n
	row := func(i int) []float64 {
		if in.cost != nil {
			return in.cost[i*n : (i+1)*n]
		}
		return in.feat[i*in.dim : (i+1)*in.dim]
	}
	same := func(i, r int) bool {
		if in.cost != nil {
			return in.cost[i*n+r] == 0 && in.cost[r*n+i] == 0 && sameCosts(in.cost, n, i, r, in.sym)
		}
		return slices.Equal(row(i), row(r)) // −0 == 0
	}
	buckets := make(map[uint64][]int) // hash → the first point of each group with it
	of := make([]int, n)              // point → its group's first point
	for i := 0; i < n; i++ {
		h := uint64(14695981039346656037)
		for _, v := range row(i) {
			if v == 0 {
				v = 0 // −0 and 0 hash alike
			}
			h = (h ^ math.Float64bits(v)) * 1099511628211
		}
		of[i] = i
		for _, r := range buckets[h] {
			if same(i, r) {
				of[i] = r
				break
			}
		}
		if of[i] == i {
			buckets[h] = append(buckets[h], i)
		}
	}
	members := make(map[int][]int)
	var firsts []int
	for i, r := range of {
		if len(members[r]) == 0 {
			firsts = append(firsts, r)
		}
		members[r] = append(members[r], i)
	}
	var groups [][]int
	for _, r := range firsts {
		if g := members[r]; len(g) > 1 {
			groups = append(groups, g)
		}
	}
	return groups
}

// SolveBlocks solves p with the transport restricted to the blocks, a
// partition of the indices 0…N−1 (StratifiedBlocks makes one): each block
// is solved by Solve with the settings s (Settings.Warm must be nil), on
// all cores, one goroutine per block (as SolveBatch; the answer does not
// depend on the number of cores). The answer is feasible for p; its gap to p's certified
// lower bound says what the blocks cost (above). Problems are validated
// before any solve, and a Problem with Features never has its N×N costs
// materialised. Settings.NoBlocksBound skips the certificate (LowerBound 1).
//
// SolveBlocks is SolveBlocksContext with context.Background().
func SolveBlocks(p *Problem, blocks [][]int, s *Settings) (*BlocksResult, error) {
	return SolveBlocksContext(context.Background(), p, blocks, s)
}

// SolveBlocksContext is SolveBlocks, stopped when ctx is done: the blocks
// stop as SolveBatchContext's problems do (the error names the block) and
// the certificate between its rounds; it then returns no result and an
// error wrapping ctx.Err(). Invalid input is reported before ctx is looked
// at.
func SolveBlocksContext(ctx context.Context, p *Problem, blocks [][]int, s *Settings) (*BlocksResult, error) {
	return solveBlocksContext(ctx, p, blocks, s, blockOpts{boundRounds, blockCacheMax, blockCacheDim})
}

// blockOpts are the bound's settings: its c-transform rounds, and the
// float32 costs' largest size (bytes) and least dimension (blockCacheMax).
type blockOpts struct {
	rounds   int
	cacheMax float64
	cacheDim int
}

// solveBlocksContext is SolveBlocksContext with the bound's settings o.
func solveBlocksContext(ctx context.Context, p *Problem, blocks [][]int, s *Settings, o blockOpts) (*BlocksResult, error) {
	in, err := p.checked()
	if err != nil {
		return nil, err
	}
	if s != nil && s.Warm != nil {
		return nil, invalidf("SolveBlocks: Settings.Warm is not supported (one dual per block)")
	}
	n, M := in.n, in.m
	if len(blocks) == 0 {
		return nil, invalidf("SolveBlocks: no blocks")
	}
	seen := make([]bool, n)
	for b, idx := range blocks {
		if len(idx) == 0 {
			return nil, invalidf("block %d of %d is empty", b+1, len(blocks))
		}
		for _, i := range idx {
			if i < 0 || i >= n {
				return nil, invalidf("block %d of %d: index %d out of range [0, %d)", b+1, len(blocks), i, n)
			}
			if seen[i] {
				return nil, invalidf("block %d of %d: index %d is in an earlier block or twice (blocks must partition 0…N−1)", b+1, len(blocks), i)
			}
			seen[i] = true
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, invalidf("index %d is in no block (blocks must partition 0…N−1)", i)
		}
	}
	classN := make([]int, M)
	for _, y := range in.labels {
		classN[y]++
	}
	out := &BlocksResult{M: M, N: n, P: make([]float64, M*n), PReg: make([]float64, M*n),
		Blocks: make([]*Result, len(blocks)), parts: make([]blockPart, len(blocks))}
	if in.cost == nil {
		out.dim = in.dim
	}
	// the blocks' problems, solved side by side (SolveBatch: one
	// goroutine per solve, the same answers as Solve's)
	clsOf := make([][]int, len(blocks))
	var ps []*Problem
	var at []int // block of ps[k]
	for b, idx := range blocks {
		sub, cls := blockProblem(p, in, idx)
		clsOf[b] = cls
		if sub == nil {
			out.Blocks[b] = oneClass(len(idx))
			continue
		}
		ps, at = append(ps, sub), append(at, b)
	}
	rs, k, err := solveBatch(ctx, ps, s, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, fmt.Errorf("block %d of %d (%d points): %w", at[k]+1, len(blocks), len(blocks[at[k]]), err)
	}
	for k, r := range rs {
		out.Blocks[at[k]] = r
	}
	alpha := make([]float64, M*n)
	lams := make([][]float64, M) // the blocks' λ_m
	inBlock := make([]int, M)    // a block's points of each class
	for b, idx := range blocks {
		r, cls := out.Blocks[b], clsOf[b]
		nb := len(idx)
		// the caller's slice is not kept: VJP must see these points
		out.parts[b] = blockPart{idx: slices.Clone(idx), cls: cls, w: make([]float64, len(cls))}
		clear(inBlock)
		for _, i := range idx {
			inBlock[in.labels[i]]++
		}
		for j, c := range cls {
			w := float64(inBlock[c]) / float64(classN[c])
			out.parts[b].w[j] = w
			for t, i := range idx {
				out.P[c*n+i] = w * r.P[j*nb+t]
				if len(r.PReg) == len(cls)*nb {
					out.PReg[c*n+i] = w * r.PReg[j*nb+t]
				}
				if len(r.Dual.Alpha) == len(cls)*nb {
					alpha[c*n+i] = r.Dual.Alpha[j*nb+t]
				}
			}
			if l := r.Dual.Lambda; len(l) == len(cls) && l[j] >= 0 && !math.IsInf(l[j], 0) {
				lams[c] = append(lams[c], l[j])
			}
		}
		out.Iterations += r.Iterations
		out.BlockRelGap = max(out.BlockRelGap, r.RelGap)
		if r.Status != Optimal {
			out.Status = r.Status
		}
	}
	for i := 0; i < n; i++ {
		best := 0.0
		for m := 0; m < M; m++ {
			best = max(best, out.P[m*n+i])
		}
		out.Objective += best
	}
	// α_m(i) ≥ 0 with Σ_m α_m(i) ≤ 1 keeps Σ_i max_m p_m(i) ≥ Σ α·p, so the
	// certificate holds for any such α: the blocks' are clipped to it
	for i := 0; i < n; i++ {
		sum := 0.0
		for m := 0; m < M; m++ {
			a := alpha[m*n+i]
			if !(a > 0) || math.IsInf(a, 1) {
				a = 0
			}
			alpha[m*n+i] = a
			sum += a
		}
		if sum > 1 {
			for m := 0; m < M; m++ {
				alpha[m*n+i] /= sum
			}
		}
	}
	if s != nil && s.NoBlocksBound {
		o.rounds = -1 // no bound: LowerBound stays the trivial 1
	}
	if o.rounds >= 0 && in.cost == nil && in.dim >= o.cacheDim && 4*float64(n)*float64(n) <= o.cacheMax {
		in.c32pos = make([]int, n)
		k := 0
		for _, cols := range classCols(in) {
			for _, j := range cols {
				in.c32pos[j] = k
				k++
			}
		}
		in.c32 = costs32Down(in.feat, n, in.dim, in.metric, in.c32pos)
	}
	// v ≥ Σ_i P_1(i) = 1 for any P: the bound is at least that
	out.LowerBound = 1
	if o.rounds >= 0 {
		lb, err := wholeBound(ctx, in, blocks, alpha, lams, o.rounds)
		in.c32, in.c32pos = nil, nil
		if err != nil {
			return nil, err
		}
		out.LowerBound = max(1, lb)
	}
	out.Gap = max(0, out.Objective-out.LowerBound)
	out.RelGap = out.Gap / out.LowerBound
	return out, nil
}

// blockProblem returns the problem of p's points idx and their classes in
// order (the block's class j is cls[j]); nil for a block of one class.
func blockProblem(p *Problem, in *instance, idx []int) (sub *Problem, cls []int) {
	local := make(map[int]int)
	for _, i := range idx {
		if _, ok := local[in.labels[i]]; !ok {
			local[in.labels[i]] = 0
			cls = append(cls, in.labels[i])
		}
	}
	slices.Sort(cls)
	for j, c := range cls {
		local[c] = j
	}
	nb := len(idx)
	if len(cls) == 1 {
		return nil, cls
	}
	sub = &Problem{N: nb, Labels: make([]int, nb), Theta: make([]float64, len(cls)), Metric: p.Metric}
	for t, i := range idx {
		sub.Labels[t] = local[in.labels[i]]
	}
	for j, c := range cls {
		sub.Theta[j] = in.theta[c]
	}
	if in.cost != nil {
		sub.Cost = make([]float64, nb*nb)
		for t, i := range idx {
			row := in.cost[i*in.n : (i+1)*in.n]
			for u, j := range idx {
				sub.Cost[t*nb+u] = row[j]
			}
		}
	} else {
		sub.Features, sub.Dim = make([]float64, 0, nb*in.dim), in.dim
		for _, i := range idx {
			sub.Features = append(sub.Features, in.feat[i*in.dim:(i+1)*in.dim]...)
		}
	}
	return sub, cls
}

// oneClass is the answer for a block of nb points of one class: its
// empirical distribution, with the dual α = 1 (max_m p_m(i) = p(i)) and
// λ = 0.
func oneClass(nb int) *Result {
	r := &Result{M: 1, N: nb, P: make([]float64, nb), Objective: 1, LowerBound: 1, Status: Optimal,
		Dual: Dual{Lambda: []float64{0}, Alpha: make([]float64, nb)}}
	for t := range r.P {
		r.P[t] = 1 / float64(nb)
		r.Dual.Alpha[t] = 1
	}
	r.PReg = r.P
	return r
}

// VJP returns ∂L/∂C (N×N row-major) for the upstream gradient gradP =
// ∂L/∂PReg (M×N) of the blocked map: each block's Result.VJP of its share
// of gradP, placed at its points' rows and columns; costs between blocks
// do not enter the map (their entries are 0), nor do the costs of a block
// of one class. The blocks must have been solved without Settings.LPOnly
// (ErrNotConverged otherwise, as Result.VJP).
func (r *BlocksResult) VJP(gradP []float64) ([]float64, error) {
	n := r.N
	gc := make([]float64, n*n)
	err := r.vjp(gradP, func(part blockPart, g []float64, rb *Result) error {
		for t, i := range part.idx {
			for u, j := range part.idx {
				gc[i*n+j] = g[t*len(part.idx)+u]
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return gc, nil
}

// FeatureVJP returns ∂L/∂X (N×Dim row-major) for gradP = ∂L/∂PReg when the
// problem gave Features: each block's gradient chained through the metric
// (Result.FeatureGrad), without forming the N×N ∂L/∂C.
func (r *BlocksResult) FeatureVJP(gradP []float64) ([]float64, error) {
	if r.dim == 0 {
		return nil, invalidf("FeatureVJP: the problem was given by Cost, not Features")
	}
	d := r.dim
	gx := make([]float64, r.N*d)
	err := r.vjp(gradP, func(part blockPart, g []float64, rb *Result) error {
		x, err := rb.FeatureGrad(g)
		if err != nil {
			return err
		}
		for t, i := range part.idx {
			copy(gx[i*d:(i+1)*d], x[t*d:(t+1)*d])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return gx, nil
}

// vjp checks gradP and calls put with every block's ∂L/∂C (blocks of one
// class have none), the blocks on all cores; put writes only the block's
// own points.
func (r *BlocksResult) vjp(gradP []float64, put func(part blockPart, g []float64, rb *Result) error) error {
	n := r.N
	if len(gradP) != r.M*n {
		return invalidf("len(gradP) = %d, want M×N = %d", len(gradP), r.M*n)
	}
	for k, x := range gradP {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return invalidf("gradP[%d] = %v is not finite", k, x)
		}
	}
	return par.For(len(r.parts), runtime.GOMAXPROCS(0), func(b int) error {
		part := r.parts[b]
		if len(part.cls) == 1 {
			return nil
		}
		nb := len(part.idx)
		gb := make([]float64, len(part.cls)*nb)
		for j, c := range part.cls {
			for t, i := range part.idx {
				gb[j*nb+t] = part.w[j] * gradP[c*n+i]
			}
		}
		g, err := r.Blocks[b].VJP(gb)
		if err == nil {
			err = put(part, g, r.Blocks[b])
		}
		if err != nil {
			return fmt.Errorf("block %d of %d: %w", b+1, len(r.parts), err)
		}
		return nil
	})
}

// wholeBound returns the whole problem's certificate (DESIGN.md §3): the
// best of the bound at the blocks' row duals alpha (M×n, α_m(i) ≥ 0, Σ_m ≤
// 1) and at the duals of up to rounds c-transform rounds from them. Per
// class the bound tries the blocks' λ_m (lams[m]; boundLambdas); a class
// with ϑ_m = 0 takes the limit λ → ∞ (the minimum of α_m over the rows at
// zero cost).
//
// A round: g(j), the minimum of α_m(i) + λ_m c(i,j) over the rows of j's
// own block in round one (what the blocks certified) and over every row
// later, prices each column; h_m(i) = max_j (g(j) − λ_m c(i,j)) ≥ 0 is the
// least α that undercuts no column, scaled down in rows where it sums to
// more than 1; the bound at α = h then tries λ_m near the last one. The
// rounds let rows of one block raise their α where another block's columns
// need it (separated, n = 3000, three blocks: the bound 1.024 → 1.084 in
// one round, 1.096 in two, for an LP value of 1.125 and blocks' objective
// 1.173). Each pass is O(n²·K) time and O(M·n) memory per goroutine. ctx
// is polled before each pass: a done ctx ends the bound with an error
// wrapping ctx.Err().
func wholeBound(ctx context.Context, in *instance, blocks [][]int, alpha []float64, lams [][]float64, rounds int) (float64, error) {
	cands := make([][]float64, in.m)
	for m := range cands {
		cands[m] = boundLambdas(lams[m], in.theta[m] == 0)
	}
	stopped := func(round int) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("optlayer: SolveBlocks' lower bound stopped before its pass %d of up to %d: %w", round+1, rounds+1, err)
		}
		return nil
	}
	if err := stopped(0); err != nil {
		return 0, err
	}
	lam, g, lb := boundPass(in, alpha, cands)
	for round := 0; round < rounds; round++ {
		if err := stopped(round + 1); err != nil {
			return 0, err
		}
		if round == 0 {
			g = ownMins(in, blocks, alpha, lam)
		}
		h := transform(in, g, lam)
		for m := range cands {
			if l := lam[m]; !math.IsInf(l, 1) && l > 0 {
				cands[m] = slices.Compact(slices.Sorted(slices.Values(append(boundLambdas(lams[m], false), 0.9*l, l, 1.1*l))))
			}
		}
		lam2, g2, lb2 := boundPass(in, h, cands)
		if !(lb2 > lb) {
			break
		}
		lam, g, lb = lam2, g2, lb2
	}
	return lb, nil
}

// boundRounds is the number of c-transform rounds of wholeBound.
const boundRounds = 2

// boundLambdas returns the λ to try for one class: the blocks' own (sorted,
// distinct) or blockLambdas of their quantiles; +Inf alone for ϑ = 0; 0
// when no block gave one.
func boundLambdas(ls []float64, zeroTheta bool) []float64 {
	if zeroTheta {
		return []float64{math.Inf(1)}
	}
	ls = slices.Compact(slices.Sorted(slices.Values(ls)))
	if len(ls) == 0 {
		return []float64{0}
	}
	if len(ls) <= blockLambdas {
		return ls
	}
	out := make([]float64, blockLambdas)
	for k := range out {
		out[k] = ls[k*(len(ls)-1)/(blockLambdas-1)]
	}
	return slices.Compact(out)
}

// classCols returns the columns (points) of each class.
func classCols(in *instance) [][]int {
	cols := make([][]int, in.m)
	for j, y := range in.labels {
		cols[y] = append(cols[y], j)
	}
	return cols
}

// boundPass returns, per class, the best λ of cands[m] for the row duals
// alpha, the column prices g(j) = min_i (α_m(i) + λ_m c(i,j)) at it, and
// the certificate Σ_m [(1/n_m) Σ_j g(j) − λ_m ϑ_m].
func boundPass(in *instance, alpha []float64, cands [][]float64) (lam, g []float64, lb float64) {
	n := in.n
	lam, g = make([]float64, in.m), make([]float64, n)
	for m, cols := range classCols(in) {
		cand := cands[m]
		K := len(cand)
		am := alpha[m*n : (m+1)*n]
		// per chunk of 16 columns: each column's minimum at every λ_k
		nch := (len(cols) + 15) / 16
		mins := make([]float64, 16*K*nch)
		_ = par.For(nch, runtime.GOMAXPROCS(0), func(ch int) error {
			chunk := cols[16*ch : min(16*ch+16, len(cols))]
			mk := mins[16*K*ch : 16*K*(ch+1)]
			for x := range mk {
				mk[x] = math.Inf(1)
			}
			in.costCols(chunk, nil, func(i int, c *[16]float64) {
				a := am[i]
				for k, l := range cand {
					mk := mk[16*k : 16*k+16]
					if math.IsInf(l, 1) {
						for q := range chunk {
							if c[q] == 0 && a < mk[q] {
								mk[q] = a
							}
						}
						continue
					}
					for q := range chunk {
						if v := a + l*c[q]; v < mk[q] {
							mk[q] = v
						}
					}
				}
			})
			return nil
		})
		best, kb := math.Inf(-1), 0
		for k, l := range cand {
			v := 0.0
			for ch := 0; ch < nch; ch++ {
				for q := range min(16, len(cols)-16*ch) {
					v += mins[16*K*ch+16*k+q]
				}
			}
			v /= float64(len(cols))
			if !math.IsInf(l, 1) {
				v -= l * in.theta[m]
			}
			if v > best {
				best, kb = v, k
			}
		}
		lam[m] = cand[kb]
		for x, j := range cols {
			ch := x / 16
			g[j] = mins[16*K*ch+16*kb+x%16]
		}
		lb += best
	}
	return lam, g, lb
}

// ownMins returns g(j) = min over the rows i of j's block of α_m(i) +
// λ_m c(i,j) (m the class of j; λ = +Inf: over the rows at zero cost).
func ownMins(in *instance, blocks [][]int, alpha, lam []float64) []float64 {
	n := in.n
	g := make([]float64, n)
	_ = par.For(len(blocks), runtime.GOMAXPROCS(0), func(b int) error {
		idx := blocks[b]
		for ch := 0; ch < len(idx); ch += 16 {
			chunk := idx[ch:min(ch+16, len(idx))]
			var mk [16]float64
			for q := range mk {
				mk[q] = math.Inf(1)
			}
			in.costCols(chunk, idx, func(i int, c *[16]float64) {
				for q, j := range chunk {
					m := in.labels[j]
					v := alpha[m*n+i]
					if l := lam[m]; math.IsInf(l, 1) {
						if c[q] != 0 {
							continue
						}
					} else {
						v += l * c[q]
					}
					mk[q] = min(mk[q], v)
				}
			})
			for q, j := range chunk {
				g[j] = mk[q]
			}
		}
		return nil
	})
	return g
}

// transform returns the row duals h_m(i) = max(0, max_j (g(j) − λ_m
// c(i,j))) over the columns j of class m, scaled to sum to 1 in rows where
// they sum to more (classes with λ = +Inf: over the columns at zero cost).
// Each goroutine keeps its own maxima over a share of the columns; maxima
// combine exactly, so the answer does not depend on the split.
func transform(in *instance, g, lam []float64) []float64 {
	n, M := in.n, in.m
	type job struct {
		m    int
		cols []int
	}
	var jobs []job
	for m, cols := range classCols(in) {
		for ch := 0; ch < len(cols); ch += 16 {
			jobs = append(jobs, job{m, cols[ch:min(ch+16, len(cols))]})
		}
	}
	W := max(1, min(runtime.GOMAXPROCS(0), len(jobs)))
	hs := make([][]float64, W)
	_ = par.For(W, W, func(w int) error {
		h := make([]float64, M*n) // ≥ 0 already: α is clipped at 0
		for _, jb := range jobs[w*len(jobs)/W : (w+1)*len(jobs)/W] {
			hm, l := h[jb.m*n:(jb.m+1)*n], lam[jb.m]
			in.costCols(jb.cols, nil, func(i int, c *[16]float64) {
				for q, j := range jb.cols {
					v := g[j]
					if math.IsInf(l, 1) {
						if c[q] != 0 {
							continue
						}
					} else {
						v -= l * c[q]
					}
					hm[i] = max(hm[i], v)
				}
			})
		}
		hs[w] = h
		return nil
	})
	h := hs[0]
	for _, o := range hs[1:] {
		for k, v := range o {
			h[k] = max(h[k], v)
		}
	}
	for i := 0; i < n; i++ {
		sum := 0.0
		for m := 0; m < M; m++ {
			sum += h[m*n+i]
		}
		if sum > 1 {
			for m := 0; m < M; m++ {
				h[m*n+i] /= sum
			}
		}
	}
	return h
}

// costCols calls f(i, c) for every row i of rows (every row when nil), in
// order, with c[q] = c(i, cols[q]) for q < len(cols) ≤ 16: read from the
// cost matrix or from the rounded-down float32 costs (blockCacheMax), or
// computed from the features sixteen columns at a time (vexp.SqDist16,
// the sums of Costs, so the same values).
func (in *instance) costCols(cols, rows []int, f func(i int, c *[16]float64)) {
	n, L := in.n, len(cols)
	var c [16]float64
	var pack []float64
	if in.cost == nil && in.c32 == nil {
		// the columns' features interleaved (lanes beyond len(cols)
		// repeat the last column)
		d := in.dim
		pack = make([]float64, 16*d)
		for l := 0; l < 16; l++ {
			j := cols[min(l, L-1)]
			for k, v := range in.feat[j*d : (j+1)*d] {
				pack[16*k+l] = v
			}
		}
	}
	visit := func(i int) {
		switch {
		case in.cost != nil:
			row := in.cost[i*n : (i+1)*n]
			for q, j := range cols {
				c[q] = row[j]
			}
		case in.c32 != nil:
			row := in.c32[i*n : (i+1)*n]
			for q, j := range cols {
				c[q] = float64(row[in.c32pos[j]])
			}
		default:
			c = [16]float64{}
			vexp.SqDist16(in.feat[i*in.dim:(i+1)*in.dim], pack, &c)
			if in.metric == Euclidean {
				for q := range c[:L] {
					c[q] = math.Sqrt(c[q])
				}
			}
		}
		f(i, &c)
	}
	if rows == nil {
		for i := 0; i < n; i++ {
			visit(i)
		}
		return
	}
	for _, i := range rows {
		visit(i)
	}
}

package eval

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func checkVotes(t *testing.T, name string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d votes, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !near(got[i], want[i], 1e-15) {
			t.Fatalf("%s: votes %v, want %v", name, got, want)
		}
	}
}

func predictOne(t *testing.T, c Classifier, q ...float64) int {
	t.Helper()
	p, err := c.Predict(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p[0]
}

// Training set of the hand-worked Dr.k-NN cases: five points on a line.
var (
	lineX = []float64{0, 1, 2, 10, 11}
	lineY = []int{0, 0, 1, 1, 1}
	lineP = []float64{
		0.4, 0.3, 0.2, 0.1, 0, // P*_0
		0, 0.1, 0.2, 0.3, 0.4, // P*_1
	}
)

func TestDrKNNHandWorked(t *testing.T) {
	c := &DrKNN{K: 3, P: lineP}
	if err := c.Fit(lineX, 5, 1, lineY, 2); err != nil {
		t.Fatal(err)
	}
	// ξ = 0.9: neighbours 1 (0.1), 0 (0.9), 2 (1.1).
	v, err := c.Votes([]float64{0.9, 10.4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkVotes(t, "k=3", v, []float64{
		(0.3 + 0.4 + 0.2) / 3, (0.1 + 0 + 0.2) / 3,
		// ξ = 10.4: neighbours 3 (0.4), 4 (0.6), 2 (8.4).
		(0.1 + 0 + 0.2) / 3, (0.3 + 0.4 + 0.2) / 3,
	})
	p, _ := c.Predict([]float64{0.9, 10.4}, 2)
	if p[0] != 0 || p[1] != 1 {
		t.Fatalf("predictions %v, want [0 1]", p)
	}

	// Dr.k-NN differs from vanilla k-NN: ξ = 2.2 with k = 3 has neighbours
	// 2, 1, 0 (labels 1, 0, 0): vanilla says 0 by 2 votes to 1; the LFD
	// weights say 0 too, (0.2+0.3+0.4)/3 vs (0.2+0.1+0)/3. With
	// weights moved towards class 1 the answer flips although the labels
	// do not change.
	flip := []float64{
		0.1, 0.1, 0.1, 0.3, 0.4,
		0.2, 0.2, 0.6, 0, 0,
	}
	c2 := &DrKNN{K: 3, P: flip}
	if err := c2.Fit(lineX, 5, 1, lineY, 2); err != nil {
		t.Fatal(err)
	}
	if got := predictOne(t, c2, 2.2); got != 1 {
		t.Fatalf("Dr.k-NN with class-1-heavy LFD predicts %d, want 1", got)
	}
	van := &KNN{K: 3}
	van.Fit(lineX, 5, 1, lineY, 2)
	if got := predictOne(t, van, 2.2); got != 0 {
		t.Fatalf("vanilla k-NN predicts %d, want 0", got)
	}
}

func TestDrKNNNeighbourTies(t *testing.T) {
	// ξ = 1.5 is equidistant (0.5) from points 1 and 2; with k = 1 the
	// lower index, point 1, is the neighbour.
	c := &DrKNN{K: 1, P: lineP}
	if err := c.Fit(lineX, 5, 1, lineY, 2); err != nil {
		t.Fatal(err)
	}
	v, _ := c.Votes([]float64{1.5}, 1)
	checkVotes(t, "tie at 1.5", v, []float64{0.3, 0.1})
	// Swap the two points' order: now the class-1 point has the lower
	// index and wins the tie.
	x := []float64{0, 2, 1, 10, 11}
	y := []int{0, 1, 0, 1, 1}
	p := []float64{0.4, 0.2, 0.3, 0.1, 0, 0, 0.2, 0.1, 0.3, 0.4}
	c.P = p
	if err := c.Fit(x, 5, 1, y, 2); err != nil {
		t.Fatal(err)
	}
	v, _ = c.Votes([]float64{1.5}, 1)
	checkVotes(t, "swapped tie at 1.5", v, []float64{0.2, 0.2})
	// Ties among the k-th neighbours in 2-D: four points at distance 1.
	sq := []float64{1, 0, 0, 1, -1, 0, 0, -1, 5, 5}
	sy := []int{1, 0, 0, 1, 1}
	kn := &KNN{K: 2}
	kn.Fit(sq, 5, 2, sy, 2)
	v, _ = kn.Votes([]float64{0, 0}, 1)
	// Neighbours 0 and 1 (labels 1, 0): one vote each.
	checkVotes(t, "2-D tie", v, []float64{0.5, 0.5})
}

func TestDrKNNClassTies(t *testing.T) {
	x := []float64{0, 1, 5}
	y := []int{0, 1, 1}
	p := []float64{
		0.25, 0.25, 0.5,
		0.25, 0.25, 0.5,
	}
	for _, tc := range []struct {
		tie  TieRule
		want int
	}{{TieVanillaCount, 1}, {TieLowestIndex, 0}} {
		c := &DrKNN{K: 2, P: p, Tie: tc.tie}
		if err := c.Fit(x, 3, 1, y, 2); err != nil {
			t.Fatal(err)
		}
		// ξ = 3.5: neighbours 2 and 1, both labelled 1; votes tie at 0.375.
		v, _ := c.Votes([]float64{3.5}, 1)
		checkVotes(t, "tie", v, []float64{0.375, 0.375})
		if got := predictOne(t, c, 3.5); got != tc.want {
			t.Errorf("%v: predicted %d, want %d", tc.tie, got, tc.want)
		}
	}
	// Votes equal in exact arithmetic but not in floating point
	// (0.1 + 0.2 ≠ 0.3) still tie: with TieLowestIndex class 0 wins even
	// though its computed vote is the smaller.
	p2 := []float64{
		0.3, 0, 0.7,
		0.1, 0.2, 0.7,
	}
	c := &DrKNN{K: 2, P: p2, Tie: TieLowestIndex}
	if err := c.Fit(x, 3, 1, y, 2); err != nil {
		t.Fatal(err)
	}
	v, _ := c.Votes([]float64{0.4}, 1)
	if v[0] == v[1] || !near(v[0], v[1], 1e-16) {
		t.Fatalf("test premise: votes %v should differ by rounding only", v)
	}
	if got := predictOne(t, c, 0.4); got != 0 {
		t.Errorf("rounding-level tie: predicted %d, want 0", got)
	}
	// Vanilla k-NN class ties go to the lowest index.
	kn := &KNN{K: 2}
	kn.Fit(x, 3, 1, y, 2)
	if got := predictOne(t, kn, 0.4); got != 0 {
		t.Errorf("k-NN tie: predicted %d, want 0", got)
	}
}

// truncP is a 3-class LFD over six points whose columns, normalised,
// are (⅓,⅓,⅓), (1,0,0), (½,½,0), (0,0,1), (0,1,0) and all-zero.
var truncP = []float64{
	0.4, 0.4, 0.2, 0, 0, 0,
	0.4, 0, 0.2, 0, 0.4, 0,
	0.4, 0, 0, 0.6, 0, 0,
}

func TestNormalisedEntropy(t *testing.T) {
	h, err := NormalisedEntropy(truncP, 3, 6, NormLogM)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0, math.Log(2) / math.Log(3), 0, 0, 0}
	for i := range want {
		if !near(h[i], want[i], 1e-12) {
			t.Fatalf("entropies %v, want %v", h, want)
		}
	}
	// Two classes: columns (0.75, 0.25), (1, 0), (0, 1).
	p2 := []float64{0.6, 0.4, 0, 0.2, 0, 0.8}
	h, _ = NormalisedEntropy(p2, 2, 3, NormLogM)
	hb := -(0.75*math.Log(0.75) + 0.25*math.Log(0.25)) / math.Log(2)
	if !near(h[0], hb, 1e-12) || h[1] != 0 || h[2] != 0 {
		t.Fatalf("log-M entropies %v, want [%v 0 0]", h, hb)
	}
	h, _ = NormalisedEntropy(p2, 2, 3, NormMinMax)
	if h[0] != 1 || h[1] != 0 || h[2] != 0 {
		t.Fatalf("min-max entropies %v, want [1 0 0]", h)
	}
	// All equal: min-max gives every point 1.
	h, _ = NormalisedEntropy([]float64{0.5, 0.5, 0.5, 0.5}, 2, 2, NormMinMax)
	if h[0] != 1 || h[1] != 1 {
		t.Fatalf("equal entropies under min-max: %v", h)
	}
	if _, err := NormalisedEntropy([]float64{1}, 1, 1, NormLogM); err == nil {
		t.Fatal("M = 1 accepted")
	}
}

func TestTruncatedDrKNN(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5}
	y := []int{2, 0, 0, 2, 1, 0}
	c := &TruncatedDrKNN{DrKNN: DrKNN{K: 3, P: truncP}, Tau: 0.9}
	if err := c.Fit(x, 6, 1, y, 3); err != nil {
		t.Fatal(err)
	}
	keep, k := c.Kept()
	if len(keep) != 1 || keep[0] != 0 || k != 1 || c.FellBack() {
		t.Fatalf("τ=0.9 keeps %v with k=%d (fell back %v), want [0] with k=1", keep, k, c.FellBack())
	}
	// Every query's single neighbour is point 0, votes (0.4, 0.4, 0.4)
	// tie, and the vanilla count (point 0 is labelled 2) decides.
	v, _ := c.Votes([]float64{5}, 1)
	checkVotes(t, "τ=0.9", v, []float64{0.4, 0.4, 0.4})
	if got := predictOne(t, c, 5); got != 2 {
		t.Errorf("τ=0.9 predicts %d, want 2", got)
	}
	c.Tie = TieLowestIndex
	if got := predictOne(t, c, 5); got != 0 {
		t.Errorf("τ=0.9, lowest-index ties, predicts %d, want 0", got)
	}
	// τ = 0.6 keeps points 0 and 2; k = 3 is cut to 2.
	c.Tau, c.Tie = 0.6, TieVanillaCount
	if err := c.Fit(x, 6, 1, y, 3); err != nil {
		t.Fatal(err)
	}
	keep, k = c.Kept()
	if len(keep) != 2 || keep[0] != 0 || keep[1] != 2 || k != 2 {
		t.Fatalf("τ=0.6 keeps %v, k=%d", keep, k)
	}
	v, _ = c.Votes([]float64{1.9}, 1)
	checkVotes(t, "τ=0.6", v, []float64{0.3, 0.3, 0.2})
	// Counts (point 2 → class 0, point 0 → class 2) tie too: lowest index.
	if got := predictOne(t, c, 1.9); got != 0 {
		t.Errorf("τ=0.6 predicts %d, want 0", got)
	}
	// Strict: fewer than k kept is an error.
	c.Strict = true
	if err := c.Fit(x, 6, 1, y, 3); err == nil || !strings.Contains(err.Error(), "fewer than k") {
		t.Errorf("strict with 2 kept < k=3: %v", err)
	}
	if _, err := c.Predict([]float64{1}, 1); !errors.Is(err, ErrNotFitted) {
		t.Errorf("predict after a failed fit: %v", err)
	}

	// No point reaches τ: fall back to plain Dr.k-NN, or fail in strict mode.
	p2 := []float64{0.6, 0.4, 0, 0.2, 0, 0.8}
	x2, y2 := []float64{0, 1, 2}, []int{0, 0, 1}
	tr := &TruncatedDrKNN{DrKNN: DrKNN{K: 2, P: p2}, Tau: 0.9}
	if err := tr.Fit(x2, 3, 1, y2, 2); err != nil {
		t.Fatal(err)
	}
	plain := &DrKNN{K: 2, P: p2}
	plain.Fit(x2, 3, 1, y2, 2)
	q := []float64{-1, 0.5, 1.4, 1.6, 3}
	a, _ := tr.Votes(q, 5)
	b, _ := plain.Votes(q, 5)
	if !tr.FellBack() {
		t.Fatal("no point kept but FellBack is false")
	}
	checkVotes(t, "fall-back", a, b)
	tr.Strict = true
	if err := tr.Fit(x2, 3, 1, y2, 2); !errors.Is(err, ErrNothingKept) {
		t.Errorf("strict, nothing kept: %v", err)
	}
	// The paper's min-max normalisation keeps point 0 at τ = 0.9.
	tr.Strict, tr.Norm, tr.K = false, NormMinMax, 1
	if err := tr.Fit(x2, 3, 1, y2, 2); err != nil {
		t.Fatal(err)
	}
	if keep, k := tr.Kept(); len(keep) != 1 || keep[0] != 0 || k != 1 || tr.FellBack() {
		t.Errorf("min-max keeps %v k=%d", keep, k)
	}
	// τ outside [0, 1].
	for _, tau := range []float64{-0.1, 1.5, math.NaN()} {
		tr.Tau = tau
		if err := tr.Fit(x2, 3, 1, y2, 2); err == nil {
			t.Errorf("τ = %v accepted", tau)
		}
	}
	// τ = 0 keeps everything and equals plain Dr.k-NN.
	tr.Tau, tr.Norm, tr.K = 0, NormLogM, 2
	tr.Fit(x2, 3, 1, y2, 2)
	a, _ = tr.Votes(q, 5)
	checkVotes(t, "τ=0", a, b)
}

func TestDrKNNErrors(t *testing.T) {
	good := func() *DrKNN { return &DrKNN{K: 2, P: lineP} }
	cases := map[string]func() error{
		"k=0":        func() error { c := good(); c.K = 0; return c.Fit(lineX, 5, 1, lineY, 2) },
		"k<0":        func() error { c := good(); c.K = -1; return c.Fit(lineX, 5, 1, lineY, 2) },
		"k>n":        func() error { c := good(); c.K = 6; return c.Fit(lineX, 5, 1, lineY, 2) },
		"x short":    func() error { return good().Fit(lineX[:4], 5, 1, lineY, 2) },
		"n=0":        func() error { return good().Fit(nil, 0, 1, nil, 2) },
		"d=0":        func() error { return good().Fit(nil, 5, 0, lineY, 2) },
		"y short":    func() error { return good().Fit(lineX, 5, 1, lineY[:4], 2) },
		"label high": func() error { return good().Fit(lineX, 5, 1, []int{0, 0, 2, 1, 1}, 2) },
		"label neg":  func() error { return good().Fit(lineX, 5, 1, []int{0, -1, 1, 1, 1}, 2) },
		"NaN x":      func() error { return good().Fit([]float64{0, math.NaN(), 2, 3, 4}, 5, 1, lineY, 2) },
		"Inf x":      func() error { return good().Fit([]float64{0, 1, math.Inf(1), 3, 4}, 5, 1, lineY, 2) },
		"P short":    func() error { c := good(); c.P = lineP[:9]; return c.Fit(lineX, 5, 1, lineY, 2) },
		"P transposed M": func() error {
			c := good()
			return c.Fit(lineX, 5, 1, lineY, 3)
		},
		"P row sum": func() error {
			c := good()
			c.P = append([]float64(nil), lineP...)
			c.P[0] = 0.5
			return c.Fit(lineX, 5, 1, lineY, 2)
		},
		"P negative": func() error {
			c := good()
			c.P = []float64{0.5, 0.5, 0.2, -0.2, 0, 0, 0.1, 0.2, 0.3, 0.4}
			return c.Fit(lineX, 5, 1, lineY, 2)
		},
		"P NaN": func() error {
			c := good()
			c.P = append([]float64(nil), lineP...)
			c.P[3] = math.NaN()
			return c.Fit(lineX, 5, 1, lineY, 2)
		},
		"P nil": func() error { c := good(); c.P = nil; return c.Fit(lineX, 5, 1, lineY, 2) },
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	c := good()
	if _, err := c.Predict([]float64{1}, 1); !errors.Is(err, ErrNotFitted) {
		t.Errorf("predict before fit: %v", err)
	}
	if err := c.Fit(lineX, 5, 1, lineY, 2); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string][]float64{"short": {1}, "NaN": {1, math.NaN()}, "Inf": {math.Inf(-1), 0}} {
		if _, err := c.Predict(q, 2); err == nil {
			t.Errorf("query %s accepted", name)
		}
	}
	if _, err := c.Predict([]float64{1}, -1); err == nil {
		t.Error("nq = -1 accepted")
	}
	if p, err := c.Predict(nil, 0); err != nil || len(p) != 0 {
		t.Errorf("no queries: %v %v", p, err)
	}
	c.K = 6 // changed after Fit: an error, not a vote over missing neighbours
	if _, err := c.Predict([]float64{1}, 1); err == nil {
		t.Error("k raised above n after Fit accepted")
	}
	c.K = 2
	// A small solver error on the row sums is tolerated; SumTol tightens it.
	p := append([]float64(nil), lineP...)
	p[0] += 1e-5
	c.P = p
	if err := c.Fit(lineX, 5, 1, lineY, 2); err != nil {
		t.Errorf("row sum off by 1e-5 rejected: %v", err)
	}
	c.SumTol = 1e-6
	if err := c.Fit(lineX, 5, 1, lineY, 2); err == nil {
		t.Error("row sum off by 1e-5 accepted with SumTol 1e-6")
	}
}

// randomProblem draws n training points and nq queries in d dimensions
// with m classes and a random valid P.
func randomProblem(seed int64, n, nq, d, m int) (x []float64, y []int, p, q []float64) {
	rng := rand.New(rand.NewSource(seed))
	x = make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y = make([]int, n)
	for i := range y {
		y[i] = i % m
	}
	p = make([]float64, m*n)
	for c := 0; c < m; c++ {
		s := 0.0
		for i := 0; i < n; i++ {
			p[c*n+i] = rng.Float64()
			s += p[c*n+i]
		}
		for i := 0; i < n; i++ {
			p[c*n+i] /= s
		}
	}
	q = make([]float64, nq*d)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	return
}

func TestDrKNNMatchesBruteForce(t *testing.T) {
	// Against a direct implementation: sort all points by (distance,
	// index), take k, average the P columns.
	n, nq, d, m, k := 40, 60, 7, 4, 5
	x, y, p, q := randomProblem(1, n, nq, d, m)
	for _, metric := range []Metric{Euclidean{}, Manhattan{}, Cosine{}, SquaredEuclidean{}} {
		c := &DrKNN{K: k, P: p, Metric: metric}
		if err := c.Fit(x, n, d, y, m); err != nil {
			t.Fatal(err)
		}
		v, _ := c.Votes(q, nq)
		for j := 0; j < nq; j++ {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			dist := func(i int) float64 { return metric.Distance(q[j*d:(j+1)*d], x[i*d:(i+1)*d]) }
			// insertion sort by (distance, index)
			for a := 1; a < n; a++ {
				for b := a; b > 0 && (dist(idx[b]) < dist(idx[b-1]) || dist(idx[b]) == dist(idx[b-1]) && idx[b] < idx[b-1]); b-- {
					idx[b], idx[b-1] = idx[b-1], idx[b]
				}
			}
			for cl := 0; cl < m; cl++ {
				s := 0.0
				for _, i := range idx[:k] {
					s += p[cl*n+i]
				}
				if !near(v[j*m+cl], s/float64(k), 1e-15) {
					t.Fatalf("%T query %d class %d: %v, want %v", metric, j, cl, v[j*m+cl], s/float64(k))
				}
			}
		}
	}
}

func TestParallelDeterminism(t *testing.T) {
	n, nq, d, m := 30, 101, 5, 3
	x, y, p, q := randomProblem(2, n, nq, d, m)
	var ref []float64
	for _, w := range []int{1, 2, 3, 8} {
		c := &DrKNN{K: 4, P: p, Workers: w}
		c.Fit(x, n, d, y, m)
		v, _ := c.Votes(q, nq)
		if ref == nil {
			ref = v
			continue
		}
		for i := range v {
			if v[i] != ref[i] {
				t.Fatalf("workers=%d changes vote %d", w, i)
			}
		}
	}
}

func BenchmarkDrKNNPredict(b *testing.B) {
	// 1,000 queries against 50 training points in the d = 400 embedding.
	n, nq, d, m := 50, 1000, 400, 5
	x, y, p, q := randomProblem(3, n, nq, d, m)
	for _, w := range []int{1, 0} {
		name := "workers=1"
		if w == 0 {
			name = "workers=GOMAXPROCS"
		}
		b.Run(name, func(b *testing.B) {
			c := &DrKNN{K: 5, P: p, Workers: w}
			if err := c.Fit(x, n, d, y, m); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Predict(q, nq); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

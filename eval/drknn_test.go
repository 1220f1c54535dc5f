package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
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

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func TestNormalisedEntropy(t *testing.T) {
	// truncP: H = log 3, 0, log 2, 0, 0 and none (no mass). Min–max over
	// the points with mass: H_min = 0, H_max = log 3.
	for _, norm := range []EntropyNorm{NormMinMax, NormLogM} {
		h, err := NormalisedEntropy(truncP, 3, 6, norm)
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{1, 0, math.Log(2) / math.Log(3), 0, 0, 0}
		for i := range want {
			if !near(h[i], want[i], 1e-15) {
				t.Fatalf("%v: entropies %v, want %v", norm, h, want)
			}
		}
	}
	// Two classes: columns (0.75, 0.25), (1, 0), (0, 1).
	p2 := []float64{0.6, 0.4, 0, 0.2, 0, 0.8}
	h, _ := NormalisedEntropy(p2, 2, 3, NormLogM)
	hb := -(0.75*math.Log(0.75) + 0.25*math.Log(0.25)) / math.Log(2)
	if !near(h[0], hb, 1e-15) || h[1] != 0 || h[2] != 0 {
		t.Fatalf("log-M entropies %v, want [%v 0 0]", h, hb)
	}
	h, _ = NormalisedEntropy(p2, 2, 3, NormMinMax)
	if h[0] != 1 || h[1] != 0 || h[2] != 0 {
		t.Fatalf("min-max entropies %v, want [1 0 0]", h)
	}
	// Min–max differs from log M when H_min > 0: columns (½,½), (¾,¼),
	// (¼,¾) have H = log 2, H(¾,¼), H(¾,¼) → min–max 1, 0, 0.
	h, _ = NormalisedEntropy(tieP, 2, 6, NormMinMax)
	if want := []float64{1, 0, 0, 0, 0, 0}; !slices.Equal(h, want) {
		t.Fatalf("min-max on tieP: %v, want %v", h, want)
	}
	h, _ = NormalisedEntropy(tieP, 2, 6, NormLogM)
	if !near(h[1], hb, 1e-15) || h[0] != 1 {
		t.Fatalf("log-M on tieP: %v", h)
	}
	// Entropy is a symmetric function of the column, bit for bit: (¾,¼)
	// and (¼,¾), and a column and its rescaling, give the same H.
	raw, valid, err := Entropy(tieP, 2, 6)
	if err != nil {
		t.Fatal(err)
	}
	if raw[1] != raw[2] || raw[1] != raw[3] || raw[3] != raw[4] || valid[5] || !valid[0] {
		t.Fatalf("raw entropies %v valid %v: want H1 = H2 = H3 = H4 bit for bit, point 5 without mass", raw, valid)
	}
	// All equal: min-max gives every point 1.
	h, _ = NormalisedEntropy([]float64{0.5, 0.5, 0.5, 0.5}, 2, 2, NormMinMax)
	if h[0] != 1 || h[1] != 1 {
		t.Fatalf("equal entropies under min-max: %v", h)
	}
	if _, err := NormalisedEntropy([]float64{1}, 1, 1, NormLogM); err == nil {
		t.Fatal("M = 1 accepted")
	}
	if _, err := NormalisedEntropy(p2, 2, 3, EntropyNorm(9)); err == nil {
		t.Fatal("unknown normalisation accepted")
	}
}

// tieP is a 2-class LFD over six points (labels 0, 0, 0, 1, 1, 1) whose
// normalised columns are (½,½), (¾,¼), (¾,¼), (¼,¾), (¼,¾) and none: points
// 1–4 have the same entropy. Every mass is dyadic, so the columns
// normalise exactly.
var (
	tieP = []float64{
		0.25, 0.375, 0.1875, 0.0625, 0.125, 0,
		0.25, 0.125, 0.0625, 0.1875, 0.375, 0,
	}
	tieY = []int{0, 0, 0, 1, 1, 1}
	tieX = []float64{0, 1, 2, 3, 4, 5}
)

// fitTruncated fits a TruncatedDrKNN and checks the kept set, the size of
// Ξ̃ and whether the guard fell back to every point.
func fitTruncated(t *testing.T, c *TruncatedDrKNN, x []float64, y []int, m int, wantKeep []int, wantByTau int, wantFellBack bool) {
	t.Helper()
	if err := c.Fit(x, len(y), len(x)/len(y), y, m); err != nil {
		t.Fatal(err)
	}
	keep, k := c.Kept()
	tr := c.Truncation()
	if !slices.Equal(keep, wantKeep) || k != c.K || tr.ByTau != wantByTau || tr.Kept != len(wantKeep) || tr.N != len(y) || tr.FellBack != wantFellBack {
		t.Fatalf("τ=%v K=%d %v %v: kept %v (k=%d), %+v; want %v, %d by τ, fell back %v",
			c.Tau, c.K, c.Norm, c.Guard, keep, k, tr, wantKeep, wantByTau, wantFellBack)
	}
}

var all6 = []int{0, 1, 2, 3, 4, 5}

func TestTruncatedDrKNN(t *testing.T) {
	// M = 3, truncP: normalised entropies 1, 0, 0.63, 0, 0, – (no mass);
	// labels 2, 0, 0, 2, 1, 0. τ = 0.9 gives Ξ̃ = {0}, which has no point of
	// class 0 or 1.
	x := []float64{0, 1, 2, 3, 4, 5}
	y := []int{2, 0, 0, 2, 1, 0}
	q := []float64{-1, 0.5, 1.4, 1.6, 2.5, 3.5, 4.6, 6}
	plain := func(k int) []float64 {
		c := &DrKNN{K: k, P: truncP}
		c.Fit(x, 6, 1, y, 3)
		v, _ := c.Votes(q, len(q))
		return v
	}
	// Default guard: classes 0 and 1 are short, so every point votes and
	// the votes are plain Dr.k-NN's.
	c := &TruncatedDrKNN{DrKNN: DrKNN{K: 1, P: truncP}, Tau: 0.9}
	fitTruncated(t, c, x, y, 3, all6, 1, true)
	v, _ := c.Votes(q, len(q))
	checkVotes(t, "fall-back", v, plain(1))
	// GuardFloor adds each short class's highest-entropy point: 2 (log 2)
	// for class 0 (not 1, H = 0, nor 5, no mass), 4 for class 1.
	c.Guard = GuardFloor
	fitTruncated(t, c, x, y, 3, []int{0, 2, 4}, 1, false)
	// Query 5: nearest kept point 4, column (0, 0.4, 0).
	v, _ = c.Votes([]float64{5, 1.9}, 2)
	checkVotes(t, "τ=0.9 K=1 floor", v, []float64{0, 0.4, 0, 0.2, 0.2, 0})
	// Query 1.9: point 2, votes (0.2, 0.2, 0) tie; its label 0 decides.
	if got := predictOne(t, c, 1.9); got != 0 {
		t.Errorf("τ=0.9 K=1 predicts %d at 1.9, want 0", got)
	}
	if got := predictOne(t, c, 5); got != 1 {
		t.Errorf("τ=0.9 K=1 predicts %d at 5, want 1", got)
	}
	// K = 2: floors min(2, n_m) = 2, 1, 2: class 0 adds 2 then 1, class 1
	// adds 4, class 2 adds 3 beside 0. Point 5 (no mass) is dropped.
	c.K = 2
	fitTruncated(t, c, x, y, 3, []int{0, 1, 2, 3, 4}, 1, false)
	// Query 4.6: kept neighbours 4 (0.6) and 3 (1.6).
	v, _ = c.Votes([]float64{4.6}, 1)
	checkVotes(t, "τ=0.9 K=2 floor", v, []float64{0, 0.2, 0.3})
	// τ = 0.6 (min–max): Ξ̃ = {0, 2}; K = 1 needs one point of class 1.
	c.Tau, c.K = 0.6, 1
	fitTruncated(t, c, x, y, 3, []int{0, 2, 4}, 2, false)
	c.Guard = GuardFallback
	fitTruncated(t, c, x, y, 3, all6, 2, true)
	// Strict: a short class is an error, and the classifier is left
	// unfitted.
	c.Guard = GuardStrict
	if err := c.Fit(x, 6, 1, y, 3); !errors.Is(err, ErrTooFewKept) || !strings.Contains(err.Error(), "class 1") {
		t.Errorf("strict with class 1 dropped: %v", err)
	}
	if _, err := c.Predict([]float64{1}, 1); !errors.Is(err, ErrNotFitted) {
		t.Errorf("predict after a failed fit: %v", err)
	}
	// Strict passes when Ξ̃ covers every class: τ = 0 keeps all.
	c.Tau = 0
	fitTruncated(t, c, x, y, 3, all6, 6, false)
	// τ outside [0, 1], an unknown guard.
	for _, tau := range []float64{-0.1, 1.5, math.NaN()} {
		c.Tau = tau
		if err := c.Fit(x, 6, 1, y, 3); err == nil {
			t.Errorf("τ = %v accepted", tau)
		}
	}
	c.Tau, c.Guard = 0.5, TruncGuard(7)
	if err := c.Fit(x, 6, 1, y, 3); err == nil {
		t.Error("unknown guard accepted")
	}
	// τ = 0 keeps everything and equals plain Dr.k-NN.
	for _, k := range []int{1, 3} {
		tr := &TruncatedDrKNN{DrKNN: DrKNN{K: k, P: truncP}}
		fitTruncated(t, tr, x, y, 3, all6, 6, false)
		a, _ := tr.Votes(q, len(q))
		checkVotes(t, "τ=0", a, plain(k))
	}
}

func TestTruncatedEntropyTies(t *testing.T) {
	// M = 2, tieP: H(0) = log 2 > H(1) = H(2) = H(3) = H(4), point 5 has no
	// mass. Min–max: Ξ̃ = {0} at τ = 0.9, so class 1 is short and the
	// default guard falls back. Class 0 = {0, 1, 2}, class 1 = {3, 4, 5}:
	// the floor breaks the tie 1/2 and 3/4 by the lower index and ranks 5
	// last.
	c := &TruncatedDrKNN{DrKNN: DrKNN{K: 1, P: tieP}, Tau: 0.9}
	fitTruncated(t, c, tieX, tieY, 2, all6, 1, true)
	c.Guard = GuardFloor
	fitTruncated(t, c, tieX, tieY, 2, []int{0, 3}, 1, false)
	c.K = 2
	fitTruncated(t, c, tieX, tieY, 2, []int{0, 1, 3, 4}, 1, false)
	// Query 5.4 with K = 2 over {0, 1, 3, 4}: neighbours 4 and 3, votes
	// ((0.125 + 0.0625)/2, (0.375 + 0.1875)/2).
	v, _ := c.Votes([]float64{5.4}, 1)
	checkVotes(t, "ties", v, []float64{0.09375, 0.28125})
	c.K = 3 // class 1 must take point 5 (no mass) to reach its floor
	fitTruncated(t, c, tieX, tieY, 2, all6, 1, false)
	// Under log M, H(¾,¼)/log 2 ≈ 0.811: τ = 0.8 keeps points 0–4 (each
	// class has K = 1), τ = 0.82 only 0 (and the floor's 3).
	c.Norm, c.Tau, c.K, c.Guard = NormLogM, 0.8, 1, GuardFallback
	fitTruncated(t, c, tieX, tieY, 2, []int{0, 1, 2, 3, 4}, 5, false)
	c.Tau, c.Guard = 0.82, GuardFloor
	fitTruncated(t, c, tieX, tieY, 2, []int{0, 3}, 1, false)
}

func TestTruncatedExtremes(t *testing.T) {
	// All certain (M = 2): every column one-hot, every H = 0. Min–max has
	// no spread, so no point is more informative than another and all are
	// in Ξ̃: the vote is plain Dr.k-NN's. Under log M nothing reaches τ: the
	// default guard falls back, the floor keeps each class's lowest-index
	// point.
	x := []float64{0, 1, 2, 3}
	y := []int{0, 0, 1, 1}
	p := []float64{0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5}
	q := []float64{-1, 0.4, 1.6, 2.2, 9}
	plain := &DrKNN{K: 1, P: p}
	plain.Fit(x, 4, 1, y, 2)
	want, _ := plain.Votes(q, len(q))
	c := &TruncatedDrKNN{DrKNN: DrKNN{K: 1, P: p}, Tau: 0.9}
	fitTruncated(t, c, x, y, 2, []int{0, 1, 2, 3}, 4, false)
	got, _ := c.Votes(q, len(q))
	checkVotes(t, "all certain, min-max", got, want)
	c.Norm = NormLogM
	fitTruncated(t, c, x, y, 2, []int{0, 1, 2, 3}, 0, true)
	got, _ = c.Votes(q, len(q))
	checkVotes(t, "all certain, log M, fall-back", got, want)
	c.Guard = GuardFloor
	fitTruncated(t, c, x, y, 2, []int{0, 2}, 0, false)
	got, _ = c.Votes([]float64{0.9, 1.6}, 2)
	checkVotes(t, "all certain, log M, floor", got, []float64{0.5, 0, 0, 0.5})

	// All uncertain (M = 5): every column uniform, every H = log 5. Both
	// normalisations keep every point.
	n := 10
	x5 := make([]float64, n)
	y5 := make([]int, n)
	p5 := make([]float64, 5*n)
	for i := range x5 {
		x5[i], y5[i] = float64(i), i%5
	}
	for i := range p5 {
		p5[i] = 0.1
	}
	plain = &DrKNN{K: 3, P: p5}
	plain.Fit(x5, n, 1, y5, 5)
	q5 := []float64{-2, 0.5, 4.4, 7.7, 20}
	want, _ = plain.Votes(q5, len(q5))
	for _, norm := range []EntropyNorm{NormMinMax, NormLogM} {
		c := &TruncatedDrKNN{DrKNN: DrKNN{K: 3, P: p5}, Tau: 0.9, Norm: norm, Guard: GuardStrict}
		fitTruncated(t, c, x5, y5, 5, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, false)
		got, _ := c.Votes(q5, len(q5))
		checkVotes(t, "all uncertain "+norm.String(), got, want)
	}
}

func TestTruncatedFiveClasses(t *testing.T) {
	// M = 5, two points per class on a line (labels 0,0,1,1,…,4,4). Point
	// 2c is one-hot in class c (H = 0); point 2c+1 (c < 4) carries ½,½ on
	// classes c and c+1 (H = log 2); point 9 is uniform (H = log 5). Every
	// mass is dyadic and each row sums to 1.
	const b, u = 0.125, 0.125
	n, m := 10, 5
	p := make([]float64, m*n)
	x := make([]float64, n)
	y := make([]int, n)
	for i := range x {
		x[i], y[i] = float64(i), i/2
	}
	for c := 0; c < m; c++ {
		p[c*n+9] = u
		if c < 4 {
			p[c*n+2*c+1] = b
		}
		if c > 0 {
			p[c*n+2*c-1] = b
		}
		rest := 1.0
		for i := 0; i < n; i++ {
			if i != 2*c {
				rest -= p[c*n+i]
			}
		}
		p[c*n+2*c] = rest
	}
	if err := checkP(p, m, n, 1e-15); err != nil {
		t.Fatal(err)
	}
	odd := []int{1, 3, 5, 7, 9}
	// Min–max: normalised entropies 0, log2/log5 ≈ 0.43 (odd points), 1
	// (point 9). τ = 0.4: Ξ̃ = the odd points, one per class, enough for
	// K = 1: truncation acts under the default guard and keeps half.
	c := &TruncatedDrKNN{DrKNN: DrKNN{K: 1, P: p}, Tau: 0.4}
	fitTruncated(t, c, x, y, m, odd, 5, false)
	// Query 4.2: nearest kept point 5, votes b on classes 2 and 3; the
	// tie goes to point 5's label, 2. (Plain Dr.k-NN would use point 4.)
	v, _ := c.Votes([]float64{4.2}, 1)
	checkVotes(t, "M=5", v, []float64{0, 0, b, b, 0})
	if got := predictOne(t, c, 4.2); got != 2 {
		t.Errorf("M=5 predicts %d, want 2", got)
	}
	pr, _ := c.Proba([]float64{4.2}, 1)
	checkVotes(t, "M=5 proba", pr, []float64{0, 0, 0.5, 0.5, 0})
	// τ = 0.9: Ξ̃ = {9}; four classes short: fall back, or the floor adds
	// each other class's half-and-half point.
	c.Tau = 0.9
	fitTruncated(t, c, x, y, m, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, true)
	c.Guard = GuardFloor
	fitTruncated(t, c, x, y, m, odd, 1, false)
	// K = 2 at τ = 0.4: every class needs both points; the floor adds the
	// even ones, the default falls back.
	c.Tau, c.K = 0.4, 2
	fitTruncated(t, c, x, y, m, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, false)
	c.Guard = GuardFallback
	fitTruncated(t, c, x, y, m, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, true)
}

// TestTruncatedProperties checks on random LFDs (M = 2 and 5, both
// normalisations, several τ and K) that Ξ̃ is exactly Appendix B's set, that
// every class keeps at least min(K, n_m) points, that a point added by the
// floor has entropy at least that of every dropped point of its class, and
// that the votes are plain Dr.k-NN's over the kept points.
func TestTruncatedProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	for trial := 0; trial < 40; trial++ {
		m := []int{2, 5}[trial%2]
		n := m * (2 + rng.Intn(8))
		d := 3
		x, y, p, q := randomProblem(int64(100+trial), n, 30, d, m)
		// Sharpen some columns so entropies spread out, and zero a few.
		for i := 0; i < n; i++ {
			switch rng.Intn(4) {
			case 0:
				for c := 0; c < m; c++ {
					if c != y[i] {
						p[c*n+i] *= 1e-3
					}
				}
			case 1:
				if rng.Intn(3) == 0 {
					for c := 0; c < m; c++ {
						p[c*n+i] = 0
					}
				}
			}
		}
		for c := 0; c < m; c++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += p[c*n+i]
			}
			for i := 0; i < n; i++ {
				p[c*n+i] /= s
			}
		}
		h, valid, _ := Entropy(p, m, n)
		norm := []EntropyNorm{NormMinMax, NormLogM}[trial/2%2]
		guard := []TruncGuard{GuardFallback, GuardFloor}[trial/4%2]
		tau := []float64{0, 0.5, 0.9, 1}[rng.Intn(4)]
		k := 1 + rng.Intn(min(6, n))
		c := &TruncatedDrKNN{DrKNN: DrKNN{K: k, P: p}, Tau: tau, Norm: norm, Guard: guard}
		if err := c.Fit(x, n, d, y, m); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		keep, _ := c.Kept()
		kept := make([]bool, n)
		for _, i := range keep {
			kept[i] = true
		}
		// Appendix B's set, computed directly.
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range h {
			if valid[i] {
				lo, hi = math.Min(lo, h[i]), math.Max(hi, h[i])
			}
		}
		inTau := make([]bool, n)
		byTau := 0
		for i := range h {
			var e float64
			switch {
			case !valid[i]:
				e = 0
			case norm == NormLogM:
				e = h[i] / math.Log(float64(m))
			case hi-lo <= 1e-12:
				e = 1
			default:
				e = (h[i] - lo) / (hi - lo)
			}
			inTau[i] = tau == 0 || valid[i] && e >= tau-1e-9
			if inTau[i] {
				byTau++
				if !kept[i] {
					t.Fatalf("trial %d: point %d in Ξ̃ (ĥ = %v ≥ τ = %v) not kept", trial, i, e, tau)
				}
			}
		}
		tr := c.Truncation()
		if tr.ByTau != byTau || tr.N != n || tr.Kept != len(keep) {
			t.Fatalf("trial %d: %+v, want |Ξ̃| = %d, n = %d, kept %d", trial, tr, byTau, n, len(keep))
		}
		short := false
		for cl := 0; cl < m; cl++ {
			var nm, inT, have int
			minAdded, maxDropped := math.Inf(1), math.Inf(-1)
			for i := range y {
				if y[i] != cl {
					continue
				}
				nm++
				e := h[i]
				if !valid[i] {
					e = -1
				}
				if inTau[i] {
					inT++
				}
				switch {
				case kept[i]:
					have++
					if !inTau[i] {
						minAdded = math.Min(minAdded, e)
					}
				default:
					maxDropped = math.Max(maxDropped, e)
				}
			}
			short = short || inT < min(k, nm)
			if have < min(k, nm) {
				t.Fatalf("trial %d: class %d keeps %d points, want ≥ min(K=%d, n_m=%d)", trial, cl, have, k, nm)
			}
			if guard == GuardFloor && minAdded < maxDropped {
				t.Fatalf("trial %d: class %d: floor added entropy %v but dropped %v", trial, cl, minAdded, maxDropped)
			}
			if guard == GuardFloor && !math.IsInf(minAdded, 1) && have != min(k, nm) {
				t.Fatalf("trial %d: class %d: floor added points beyond min(K, n_m)", trial, cl)
			}
		}
		switch {
		case guard == GuardFallback && tr.FellBack != short:
			t.Fatalf("trial %d: fell back %v, a class short of Ξ̃ %v", trial, tr.FellBack, short)
		case guard == GuardFallback && short && len(keep) != n:
			t.Fatalf("trial %d: fell back but keeps %d of %d", trial, len(keep), n)
		case guard == GuardFallback && !short && len(keep) != byTau:
			t.Fatalf("trial %d: kept %d, |Ξ̃| = %d", trial, len(keep), byTau)
		case guard == GuardFloor && tr.FellBack:
			t.Fatalf("trial %d: the floor fell back", trial)
		}
		// Votes: the original masses averaged over the K nearest kept
		// points, by a brute-force (distance, index) search.
		v, err := c.Votes(q, 30)
		if err != nil {
			t.Fatal(err)
		}
		checkBruteForce(t, fmt.Sprintf("trial %d", trial), v, Euclidean{}, x, d, keep, p, n, m, k, q, 30)
	}
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
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		checkBruteForce(t, fmt.Sprintf("%T", metric), v, metric, x, d, all, p, n, m, k, q, nq)
	}
}

// checkBruteForce compares Dr.k-NN votes v (nq×m) with a direct
// computation: sort the candidate points by (distance, index), average the
// P columns of the first k.
func checkBruteForce(t *testing.T, name string, v []float64, metric Metric, x []float64, d int, cand []int, p []float64, n, m, k int, q []float64, nq int) {
	t.Helper()
	for j := 0; j < nq; j++ {
		idx := append([]int(nil), cand...)
		dist := func(i int) float64 { return metric.Distance(q[j*d:(j+1)*d], x[i*d:(i+1)*d]) }
		sort.SliceStable(idx, func(a, b int) bool { return dist(idx[a]) < dist(idx[b]) })
		for cl := 0; cl < m; cl++ {
			s := 0.0
			for _, i := range idx[:k] {
				s += p[cl*n+i]
			}
			if !near(v[j*m+cl], s/float64(k), 1e-15) {
				t.Fatalf("%s: query %d class %d: vote %v, want %v", name, j, cl, v[j*m+cl], s/float64(k))
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

// BenchmarkSqDist compares the neighbour search's distance kernel (four
// partial sums of squared differences) with gonum's floats.Distance(·, ·, 2)
// (overflow-safe scaled assembly) at the embedding width d = 400. The
// hand-written loop is kept because it is faster (see the README).
func BenchmarkSqDist(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x, y := make([]float64, 400), make([]float64, 400)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	var sink float64
	b.Run("sqDist", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += sqDist(x, y)
		}
	})
	b.Run("floats.Distance", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += floats.Distance(x, y, 2)
		}
	})
	_ = sink
}

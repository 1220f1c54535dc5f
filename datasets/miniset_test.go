package datasets

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func labelsFor(counts ...int) []int {
	var l []int
	// interleaved, so positions are not grouped by class
	left := append([]int(nil), counts...)
	for added := true; added; {
		added = false
		for c := range left {
			if left[c] > 0 {
				l = append(l, c)
				left[c]--
				added = true
			}
		}
	}
	return l
}

func checkMiniSet(t *testing.T, labels []int, avail []int, size int, ms MiniSet) {
	t.Helper()
	if len(ms.Index) != size || len(ms.Labels) != size || len(ms.Counts) != len(avail) {
		t.Fatalf("mini-set sizes %d/%d/%d", len(ms.Index), len(ms.Labels), len(ms.Counts))
	}
	sum := 0
	for m, n := range ms.Counts {
		if n < 1 || n > avail[m] {
			t.Fatalf("n_%d = %d outside 1…%d", m, n, avail[m])
		}
		sum += n
	}
	if sum != size {
		t.Fatalf("split %v sums to %d, want %d", ms.Counts, sum, size)
	}
	seen := map[int]bool{}
	got := make([]int, len(avail))
	for k, i := range ms.Index {
		if seen[i] {
			t.Fatalf("point %d drawn twice", i)
		}
		seen[i] = true
		if labels[i] != ms.Labels[k] {
			t.Fatalf("point %d has label %d, mini-set says %d", i, labels[i], ms.Labels[k])
		}
		if k > 0 && ms.Labels[k] < ms.Labels[k-1] {
			t.Fatal("labels not grouped by class")
		}
		got[ms.Labels[k]]++
	}
	if !slices.Equal(got, ms.Counts) {
		t.Fatalf("points per class %v, counts %v", got, ms.Counts)
	}
}

func TestMiniSetInvariants(t *testing.T) {
	cases := []struct {
		avail []int
		size  int
	}{
		{[]int{5, 5}, 2}, {[]int{5, 5}, 10}, {[]int{5, 5}, 7}, {[]int{1, 1, 1}, 3},
		{[]int{1, 20, 2}, 10}, {[]int{10, 10, 10, 10, 10}, 25}, {[]int{3}, 2},
	}
	for _, c := range cases {
		labels := labelsFor(c.avail...)
		s, err := NewMiniSetSampler(labels, len(c.avail), c.size)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(1))
		for k := 0; k < 500; k++ {
			checkMiniSet(t, labels, c.avail, c.size, s.Draw(rng))
		}
	}
}

// n′ = total forces n_m = available; n′ = M forces all ones.
func TestMiniSetForcedSplits(t *testing.T) {
	labels := labelsFor(2, 4, 3)
	rng := rand.New(rand.NewSource(5))
	ms, err := DrawMiniSet(labels, 3, 9, rng)
	if err != nil || !slices.Equal(ms.Counts, []int{2, 4, 3}) {
		t.Fatalf("n′ = 9: %v %v", ms.Counts, err)
	}
	ms, _ = DrawMiniSet(labels, 3, 3, rng)
	if !slices.Equal(ms.Counts, []int{1, 1, 1}) {
		t.Fatalf("n′ = 3: %v", ms.Counts)
	}
}

// The split is uniform over the feasible compositions: with class sizes
// 2, 3, 4 and n′ = 6 there are exactly 6 (1+1+4, 1+2+3, 1+3+2, 2+1+3,
// 2+2+2, 2+3+1; enumerated by brute force below), each expected 1/6 of
// 12,000 draws; chi-square with 5 d.o.f. must stay below 30 (p ≈ 1.5e-5).
func TestMiniSetSplitUniform(t *testing.T) {
	avail := []int{2, 3, 4}
	const size = 6
	var feasible []string
	for a := 1; a <= 2; a++ {
		for b := 1; b <= 3; b++ {
			if c := size - a - b; c >= 1 && c <= 4 {
				feasible = append(feasible, fmt.Sprint([]int{a, b, c}))
			}
		}
	}
	if len(feasible) != 6 {
		t.Fatalf("enumeration found %v", feasible)
	}
	s, err := NewMiniSetSampler(labelsFor(avail...), 3, size)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(11))
	n := 2000 * len(feasible)
	count := map[string]int{}
	for k := 0; k < n; k++ {
		count[fmt.Sprint(s.Split(rng))]++
	}
	if len(count) != len(feasible) {
		t.Fatalf("drew splits %v, feasible %v", count, feasible)
	}
	chi := 0.0
	for _, f := range feasible {
		e := float64(n) / float64(len(feasible))
		chi += (float64(count[f]) - e) * (float64(count[f]) - e) / e
	}
	if chi > 30 {
		t.Fatalf("split counts %v, chi-square %.1f", count, chi)
	}
}

// Points within a class are drawn uniformly: each of 5 points of a class
// appears in about 2/5 of mini-sets that take 2 of them.
func TestMiniSetPointsUniform(t *testing.T) {
	labels := labelsFor(5, 1)
	s, err := NewMiniSetSampler(labels, 2, 3) // forces n_0 = 2, n_1 = 1
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(2))
	hits := map[int]int{}
	const n = 10000
	for k := 0; k < n; k++ {
		ms := s.Draw(rng)
		for j, i := range ms.Index {
			if ms.Labels[j] == 0 {
				hits[i]++
			}
		}
	}
	for i, y := range labels {
		if y == 0 && (hits[i] < 3700 || hits[i] > 4300) {
			t.Fatalf("point %d drawn %d times of %d, want ≈ 4000", i, hits[i], n)
		}
	}
}

func TestMiniSetSeeded(t *testing.T) {
	labels := labelsFor(6, 6, 6)
	s, _ := NewMiniSetSampler(labels, 3, 8)
	a, b := rand.New(rand.NewSource(9)), rand.New(rand.NewSource(9))
	for k := 0; k < 50; k++ {
		if x, y := s.Draw(a), s.Draw(b); !reflect.DeepEqual(x, y) {
			t.Fatal("same generator seed, different mini-sets")
		}
	}
}

func TestMiniSetErrors(t *testing.T) {
	labels := labelsFor(3, 2)
	cases := []struct {
		labels        []int
		classes, size int
		want          string
	}{
		{labels, 2, 1, "smaller than the 2 classes"},
		{labels, 2, 6, "exceeds the 5 available"},
		{labels, 3, 4, "class 2 has no training points"},
		{[]int{0, 1, 2}, 2, 2, "label 2 outside 0…1"},
		{labels, 0, 2, "0 classes"},
	}
	for _, c := range cases {
		if _, err := NewMiniSetSampler(c.labels, c.classes, c.size); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v/%d/%d: error %v, want %q", c.labels, c.classes, c.size, err, c.want)
		}
	}
}

// Large, lopsided settings stay exact: 10 classes of 100 points plus one of
// 1 point, n′ near the total — the only class-10 count is 1.
func TestMiniSetLargeLopsided(t *testing.T) {
	avail := []int{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 1}
	labels := labelsFor(avail...)
	s, err := NewMiniSetSampler(labels, len(avail), 995)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	for k := 0; k < 50; k++ {
		checkMiniSet(t, labels, avail, 995, s.Draw(rng))
	}
}

func BenchmarkMiniSetSampler(b *testing.B) {
	labels := labelsFor(10, 10, 10, 10, 10)
	rng := rand.New(rand.NewSource(1))
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewMiniSetSampler(labels, 5, 25); err != nil {
				b.Fatal(err)
			}
		}
	})
	s, _ := NewMiniSetSampler(labels, 5, 25)
	b.Run("draw", func(b *testing.B) {
		for b.Loop() {
			s.Draw(rng)
		}
	})
}

// Many classes: 3000 classes of 2 points. The number of splits of a row
// spans more than float64's range (1 at n′ = M or n′ = all points, about
// 2³⁰⁰⁰ in between), so the rescaled linear table rounded feasible states
// to zero and n′ = 6000 (the only split: every class 2) was refused. The
// log table serves every n′ from M to all points, forced splits exactly.
func TestMiniSetManyClasses(t *testing.T) {
	const M = 3000
	avail := make([]int, M)
	for m := range avail {
		avail[m] = 2
	}
	labels := labelsFor(avail...)
	rng := rand.New(rand.NewSource(7))
	for _, size := range []int{M, M + 1, 4500, 2*M - 1, 2 * M} {
		s, err := NewMiniSetSampler(labels, M, size)
		if err != nil {
			t.Fatalf("n′ = %d: %v", size, err)
		}
		for k := 0; k < 3; k++ {
			checkMiniSet(t, labels, avail, size, s.Draw(rng))
		}
	}
	// with 3000 classes, the first class's count is uniform over its
	// feasible values too: at n′ = 4500 half the classes take 2, so
	// n₀ = 2 in about half of the draws
	s, err := NewMiniSetSampler(labels, M, 4500)
	if err != nil {
		t.Fatal(err)
	}
	two := 0
	const draws = 2000
	for k := 0; k < draws; k++ {
		if s.Split(rng)[0] == 2 {
			two++
		}
	}
	if f := float64(two) / draws; f < 0.45 || f > 0.55 {
		t.Fatalf("n₀ = 2 in %.3f of the draws, want ≈ 0.5", f)
	}
}

// The log table draws the same splits in distribution as the linear one:
// forced to the log path on the small case of TestMiniSetSplitUniform
// (class sizes 2, 3, 4, n′ = 6), every feasible split is drawn about
// equally often.
// The log table draws the same splits in distribution as the linear one:
// forced to the log path on the small case of TestMiniSetSplitUniform
// (class sizes 2, 3, 4, n′ = 6), every feasible split is drawn about
// equally often.
func TestMiniSetLogTableUniform(t *testing.T) {
	avail := []int{2, 3, 4}
	s, err := NewMiniSetSampler(labelsFor(avail...), 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	s.ways, s.logWays = nil, logWaysTable(s.byClass, 6)
	rng := rand.New(rand.NewSource(11))
	count := map[string]int{}
	const n = 12000
	for k := 0; k < n; k++ {
		count[fmt.Sprint(s.Split(rng))]++
	}
	if len(count) != 6 {
		t.Fatalf("drew splits %v, want the 6 feasible", count)
	}
	chi := 0.0
	for _, c := range count {
		e := float64(n) / 6
		chi += (float64(c) - e) * (float64(c) - e) / e
	}
	if chi > 30 {
		t.Fatalf("split counts %v, chi-square %.1f", count, chi)
	}
}

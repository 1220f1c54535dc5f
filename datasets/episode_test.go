package datasets

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// toyData has class c with counts[c] samples; sample values encode the index.
func toyData(counts ...int) *Dataset {
	d := &Dataset{Name: "toy", Shape: []int{1}}
	for c := range counts {
		d.Classes = append(d.Classes, fmt.Sprint("c", c))
	}
	// interleave classes so natural order is not class-major
	left := append([]int(nil), counts...)
	for {
		added := false
		for c := range left {
			if left[c] > 0 {
				d.X = append(d.X, float32(len(d.Labels)))
				d.Labels = append(d.Labels, c)
				left[c]--
				added = true
			}
		}
		if !added {
			return d
		}
	}
}

// checkEpisode verifies the invariants every episode must satisfy.
func checkEpisode(t *testing.T, d *Dataset, s EpisodeSettings, ep *Episode) {
	t.Helper()
	if len(ep.Classes) != s.Ways {
		t.Fatalf("%d classes, want %d", len(ep.Classes), s.Ways)
	}
	chosen := map[int]int{}
	for m, c := range ep.Classes {
		if _, dup := chosen[c]; dup {
			t.Fatalf("class %d chosen twice", c)
		}
		chosen[c] = m
	}
	if len(ep.TrainIndex) != s.Ways*s.Shots || len(ep.TrainLabels) != len(ep.TrainIndex) {
		t.Fatalf("%d training samples, want %d", len(ep.TrainIndex), s.Ways*s.Shots)
	}
	used := map[int]bool{}
	perClass := make([]int, s.Ways)
	for k, i := range ep.TrainIndex {
		m := ep.TrainLabels[k]
		if used[i] || d.Labels[i] != ep.Classes[m] {
			t.Fatalf("train sample %d (local %d): duplicate or wrong class", i, m)
		}
		used[i] = true
		perClass[m]++
	}
	for m, n := range perClass {
		if n != s.Shots {
			t.Fatalf("local class %d has %d training samples", m, n)
		}
	}
	remaining := 0
	for i, y := range d.Labels {
		if _, ok := chosen[y]; ok && !used[i] {
			remaining++
		}
	}
	q := s.Queries
	if q == 0 {
		q = DefaultQueries
	}
	if want := min(q, remaining); len(ep.QueryIndex) != want || ep.Short != (remaining < q) || ep.QueriesRequested != q {
		t.Fatalf("%d queries (short %v), want %d of %d remaining", len(ep.QueryIndex), ep.Short, want, remaining)
	}
	for k, i := range ep.QueryIndex {
		m := ep.QueryLabels[k]
		if used[i] {
			t.Fatalf("query %d is also a training sample or repeated", i)
		}
		used[i] = true
		if d.Labels[i] != ep.Classes[m] {
			t.Fatalf("query %d has local label %d but class %d", i, m, d.Labels[i])
		}
		if k > 0 && ep.QueryIndex[k-1] >= i {
			t.Fatal("query indices not ascending")
		}
	}
}

func TestEpisodeInvariantsAndSeeds(t *testing.T) {
	d := toyData(30, 12, 7, 25, 9, 40)
	for _, s := range []EpisodeSettings{
		{Ways: 2, Shots: 5, Queries: 10},
		{Ways: 3, Shots: 6, Queries: 1000},
		{Ways: 6, Shots: 1},
		{Ways: 4, Shots: 3, Queries: 7, Classes: []int{5, 0, 3, 1, 4}},
	} {
		eps := map[string]bool{}
		for seed := int64(0); seed < 200; seed++ {
			s.Seed = seed
			ep, err := NewEpisode(d, s)
			if err != nil {
				t.Fatal(err)
			}
			checkEpisode(t, d, s, ep)
			again, _ := NewEpisode(d, s)
			if !reflect.DeepEqual(ep, again) {
				t.Fatalf("seed %d: two different episodes", seed)
			}
			if s.Classes != nil {
				for _, c := range ep.Classes {
					if c == 2 {
						t.Fatal("class outside the candidates chosen")
					}
				}
			}
			eps[fmt.Sprint(ep.Classes, ep.TrainIndex, ep.QueryIndex)] = true
		}
		if len(eps) < 190 {
			t.Errorf("%+v: only %d distinct episodes from 200 seeds", s, len(eps))
		}
	}
}

// Class choice is uniform: over 3,000 seeds each of 6 classes appears in a
// 2-way episode about 1,000 times (chi-square, 5 d.o.f., far from 30).
func TestEpisodeClassChoiceUniform(t *testing.T) {
	d := toyData(10, 10, 10, 10, 10, 10)
	count := make([]float64, 6)
	const n = 3000
	for seed := int64(0); seed < n; seed++ {
		ep, err := NewEpisode(d, EpisodeSettings{Ways: 2, Shots: 1, Queries: 1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ep.Classes {
			count[c]++
		}
	}
	chi := 0.0
	for _, c := range count {
		chi += (c - n*2/6.0) * (c - n*2/6.0) / (n * 2 / 6.0)
	}
	if chi > 30 {
		t.Fatalf("class counts %v, chi-square %.1f", count, chi)
	}
}

func TestEpisodeShortQueries(t *testing.T) {
	d := toyData(6, 7, 8)
	s := EpisodeSettings{Ways: 3, Shots: 5, Seed: 1}
	ep, err := NewEpisode(d, s)
	if err != nil {
		t.Fatal(err)
	}
	checkEpisode(t, d, s, ep)
	if !ep.Short || len(ep.QueryIndex) != 1+2+3 || ep.QueriesRequested != DefaultQueries {
		t.Fatalf("short %v, %d queries", ep.Short, len(ep.QueryIndex))
	}
	tr, q := ep.Train(d), ep.Query(d)
	if tr.Len() != 15 || q.Len() != 6 || tr.Classes[0] != d.Classes[ep.Classes[0]] || !slices.Equal(q.Labels, ep.QueryLabels) {
		t.Fatalf("Train/Query views: %d, %d, %v", tr.Len(), q.Len(), tr.Classes)
	}
	if tr.Sample(3)[0] != float32(ep.TrainIndex[3]) {
		t.Fatal("Train view holds the wrong sample")
	}
}

func TestEpisodeErrors(t *testing.T) {
	d := toyData(10, 5, 10)
	cases := []struct {
		s    EpisodeSettings
		want string
	}{
		{EpisodeSettings{Ways: 2, Shots: 5}, "class 1 (\"c1\") of toy has 5 samples, a 5-shot task needs at least 6"},
		{EpisodeSettings{Ways: 4, Shots: 1}, "4-way task but toy has only 3 candidate classes"},
		{EpisodeSettings{Ways: 0, Shots: 1}, "0 ways"},
		{EpisodeSettings{Ways: 2, Shots: 0}, "0 shots"},
		{EpisodeSettings{Ways: 2, Shots: 1, Queries: -1}, "-1 queries"},
		{EpisodeSettings{Ways: 2, Shots: 1, Classes: []int{0, 3}}, "candidate class 3 outside"},
		{EpisodeSettings{Ways: 2, Shots: 1, Classes: []int{0, 0}}, "listed twice"},
		{EpisodeSettings{Ways: 2, Shots: 1, Classes: []int{2}}, "only 1 candidate"},
	}
	for _, c := range cases {
		if _, err := NewEpisode(d, c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.s, err, c.want)
		}
	}
	// A class with no samples is not a candidate unless listed.
	d2 := toyData(10, 0, 10)
	if _, err := NewEpisode(d2, EpisodeSettings{Ways: 2, Shots: 2}); err != nil {
		t.Fatal(err)
	}
	bad := toyData(3, 3)
	bad.Labels[0] = 7
	if _, err := NewEpisode(bad, EpisodeSettings{Ways: 1, Shots: 1}); err == nil {
		t.Fatal("invalid data set accepted")
	}
}

// Real data: a 5-way 5-shot MNIST episode with 1,000 queries and the
// Lung Cancer 3-way 8-shot task (class 1 has 9 patients: 1 query).
func TestEpisodeRealData(t *testing.T) {
	dir, err := datadir.Require("mnist")
	if err != nil {
		t.Fatal(err)
	}
	mn, err := ReadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := EpisodeSettings{Ways: 5, Shots: 5, Seed: 42}
	ep, err := NewEpisode(mn, s)
	if err != nil {
		t.Fatal(err)
	}
	checkEpisode(t, mn, s, ep)
	if again, _ := NewEpisode(mn, s); !reflect.DeepEqual(ep, again) {
		t.Fatal("same seed, different MNIST episode")
	}
	if len(ep.QueryIndex) != 1000 || ep.Short {
		t.Fatalf("%d queries", len(ep.QueryIndex))
	}
	ldir, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	lung, err := ReadLungCancer(ldir)
	if err != nil {
		t.Fatal(err)
	}
	s = EpisodeSettings{Ways: 3, Shots: 8, Seed: 1}
	ep, err = NewEpisode(lung, s)
	if err != nil {
		t.Fatal(err)
	}
	checkEpisode(t, lung, s, ep)
	if len(ep.QueryIndex) != 32-24 || !ep.Short {
		t.Fatalf("lung: %d queries, short %v", len(ep.QueryIndex), ep.Short)
	}
	if _, err := NewEpisode(lung, EpisodeSettings{Ways: 3, Shots: 9}); err == nil {
		t.Fatal("9-shot lung task accepted (class 1 has 9 patients)")
	}
}

func TestNewEpisodesSeeds(t *testing.T) {
	d := toyData(20, 20, 20, 20)
	s := EpisodeSettings{Ways: 2, Shots: 3, Queries: 5, Seed: 100}
	eps, err := NewEpisodes(d, s, 10)
	if err != nil || len(eps) != 10 {
		t.Fatal(err)
	}
	s.Seed = 107
	one, _ := NewEpisode(d, s)
	if !reflect.DeepEqual(eps[7], one) {
		t.Fatal("episode 7 is not the one drawn with seed 107")
	}
	if _, err := NewEpisodes(d, s, 0); err == nil {
		t.Fatal("0 episodes accepted")
	}
}

func BenchmarkEpisodeMNIST(b *testing.B) {
	dir, err := datadir.Require("mnist")
	if err != nil {
		b.Fatal(err)
	}
	d, err := ReadMNIST(dir)
	if err != nil {
		b.Fatal(err)
	}
	s := EpisodeSettings{Ways: 5, Shots: 10}
	for b.Loop() {
		s.Seed++
		if _, err := NewEpisode(d, s); err != nil {
			b.Fatal(err)
		}
	}
}

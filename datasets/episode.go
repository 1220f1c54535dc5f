package datasets

import (
	"fmt"
	"math/rand"
	"sort"
)

// DefaultQueries is the number of query samples of an episode when
// EpisodeSettings.Queries is 0: the paper classifies 1,000 unseen samples.
const DefaultQueries = 1000

// EpisodeSettings describes one M-way K-shot task (DESIGN.md §7).
type EpisodeSettings struct {
	Ways    int   // M ≥ 1: classes per episode
	Shots   int   // K ≥ 1: training samples per class
	Queries int   // Q: at most this many query samples in total (0 → DefaultQueries)
	Classes []int // candidate class ids to draw from; nil → every class that has samples
	Seed    int64 // the episode is a function of (data set, settings, seed)
}

// Episode is one drawn task. Indices refer to the data set's natural order;
// local labels are 0…M−1, local label m meaning class Classes[m].
type Episode struct {
	Classes     []int // chosen class ids of the data set, in draw order
	TrainIndex  []int // M·K samples, grouped by local label, ascending within a class
	TrainLabels []int // local label of each training sample
	QueryIndex  []int // query samples, ascending
	QueryLabels []int // local label of each query sample

	// QueriesRequested is the query count asked for; Short reports that the
	// chosen classes had fewer remaining samples, so every remaining sample
	// became a query (len(QueryIndex) < QueriesRequested).
	QueriesRequested int
	Short            bool
}

// NewEpisode draws an episode from d, fully determined by s (and d):
//
//  1. M classes are drawn uniformly without replacement from the candidates
//     (s.Classes, or every class with at least one sample);
//  2. K training samples are drawn uniformly without replacement from each
//     chosen class;
//  3. the queries are min(Q, remaining) samples drawn uniformly without
//     replacement from the remaining samples of the chosen classes, so
//     training and query sets are disjoint and the class mix of the queries
//     follows the data set.
//
// Every candidate class must hold at least K+1 samples (K to train, one
// left over); otherwise — or when there are fewer than M candidates — it
// returns an error naming the class.
func NewEpisode(d *Dataset, s EpisodeSettings) (*Episode, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("episode: %w", err)
	}
	if s.Ways < 1 {
		return nil, fmt.Errorf("episode: %d ways, want ≥ 1", s.Ways)
	}
	if s.Shots < 1 {
		return nil, fmt.Errorf("episode: %d shots, want ≥ 1", s.Shots)
	}
	q := s.Queries
	if q == 0 {
		q = DefaultQueries
	}
	if q < 0 {
		return nil, fmt.Errorf("episode: %d queries, want ≥ 0 (0 means %d)", s.Queries, DefaultQueries)
	}
	byClass := d.ClassIndex()
	var cand []int
	if s.Classes == nil {
		for c, idx := range byClass {
			if len(idx) > 0 {
				cand = append(cand, c)
			}
		}
	} else {
		seen := map[int]bool{}
		for _, c := range s.Classes {
			if c < 0 || c >= len(d.Classes) {
				return nil, fmt.Errorf("episode: candidate class %d outside 0…%d of %s", c, len(d.Classes)-1, d.Name)
			}
			if seen[c] {
				return nil, fmt.Errorf("episode: candidate class %d (%q) listed twice", c, d.Classes[c])
			}
			seen[c] = true
			cand = append(cand, c)
		}
	}
	if len(cand) < s.Ways {
		return nil, fmt.Errorf("episode: %d-way task but %s has only %d candidate classes", s.Ways, d.Name, len(cand))
	}
	for _, c := range cand {
		if n := len(byClass[c]); n < s.Shots+1 {
			return nil, fmt.Errorf("episode: class %d (%q) of %s has %d samples, a %d-shot task needs at least %d (K to train, 1 to query)",
				c, d.Classes[c], d.Name, n, s.Shots, s.Shots+1)
		}
	}

	rng := rand.New(rand.NewSource(s.Seed))
	ep := &Episode{QueriesRequested: q}
	for _, j := range rng.Perm(len(cand))[:s.Ways] {
		ep.Classes = append(ep.Classes, cand[j])
	}
	localOf := make(map[int]int, s.Ways) // class id → local label
	var pool []int
	for m, c := range ep.Classes {
		localOf[c] = m
		idx := append([]int(nil), byClass[c]...)
		partialShuffle(rng, idx, s.Shots)
		train := append([]int(nil), idx[:s.Shots]...)
		sort.Ints(train)
		for _, i := range train {
			ep.TrainIndex = append(ep.TrainIndex, i)
			ep.TrainLabels = append(ep.TrainLabels, m)
		}
		pool = append(pool, idx[s.Shots:]...)
	}
	sort.Ints(pool) // a canonical order before the query draw
	if len(pool) <= q {
		ep.Short = len(pool) < q
	} else {
		partialShuffle(rng, pool, q)
		pool = pool[:q]
		sort.Ints(pool)
	}
	ep.QueryIndex = pool
	ep.QueryLabels = make([]int, len(pool))
	for k, i := range pool {
		ep.QueryLabels[k] = localOf[d.Labels[i]]
	}
	return ep, nil
}

// partialShuffle moves a uniform random k-subset of a (in random order) to
// a[:k], as the first k steps of a Fisher–Yates shuffle.
func partialShuffle(rng *rand.Rand, a []int, k int) {
	for i := 0; i < k && i < len(a)-1; i++ {
		j := i + rng.Intn(len(a)-i)
		a[i], a[j] = a[j], a[i]
	}
}

// ClassIndex returns, for every class id, the indices of its samples in
// natural order.
func (d *Dataset) ClassIndex() [][]int {
	out := make([][]int, len(d.Classes))
	for i, y := range d.Labels {
		if y >= 0 && y < len(out) {
			out[y] = append(out[y], i)
		}
	}
	return out
}

// ClassCounts returns the number of samples of every class.
func (d *Dataset) ClassCounts() []int {
	out := make([]int, len(d.Classes))
	for _, y := range d.Labels {
		if y >= 0 && y < len(out) {
			out[y]++
		}
	}
	return out
}

// Train returns the episode's training samples as a data set whose labels
// are the local labels 0…M−1 and whose class names are the chosen classes'
// names.
func (e *Episode) Train(d *Dataset) *Dataset { return e.localSubset(d, e.TrainIndex, e.TrainLabels) }

// Query returns the episode's query samples with local labels (see Train).
func (e *Episode) Query(d *Dataset) *Dataset { return e.localSubset(d, e.QueryIndex, e.QueryLabels) }

func (e *Episode) localSubset(d *Dataset, idx, labels []int) *Dataset {
	out := d.Subset(idx)
	out.Labels = append(out.Labels[:0], labels...)
	out.Classes = make([]string, len(e.Classes))
	for m, c := range e.Classes {
		out.Classes[m] = d.Classes[c]
	}
	return out
}

// NewEpisodes draws count episodes with seeds s.Seed, s.Seed+1, …,
// s.Seed+count−1 (the paper repeats each task 10 times). Episode i is
// exactly NewEpisode(d, s) with s.Seed+i, so any one can be redrawn alone.
func NewEpisodes(d *Dataset, s EpisodeSettings, count int) ([]*Episode, error) {
	if count < 1 {
		return nil, fmt.Errorf("episode: %d episodes requested", count)
	}
	out := make([]*Episode, count)
	for i := range out {
		si := s
		si.Seed = s.Seed + int64(i)
		ep, err := NewEpisode(d, si)
		if err != nil {
			return nil, err
		}
		out[i] = ep
	}
	return out, nil
}

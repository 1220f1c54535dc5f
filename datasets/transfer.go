package datasets

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The transfer protocol's data: a split of the classes into base classes
// (an embedding is trained on them), a validation part (it selects the
// checkpoint) and novel classes (few-shot tasks are evaluated on them and
// nothing else ever sees them), the sampler of training episodes over the
// base classes (with rotated copies as extra classes), and the novel-class
// tasks of the evaluation (K shots and Q queries per class).

// TransferSplit divides a data set for the transfer protocol. Classes are
// class ids of the data set; indices are sample indices in its natural
// order. Novel classes share no class and no sample with training or
// validation (Check).
type TransferSplit struct {
	Base  []int // classes training draws its episodes from, ascending
	Val   []int // classes validation episodes draw from, ascending
	Novel []int // classes of the evaluation tasks, ascending
	// TrainIndex are the samples training may use (of Base classes),
	// ValIndex those validation may use (of Val classes), NovelIndex those
	// of the novel classes; all ascending.
	TrainIndex, ValIndex, NovelIndex []int
	// HeldOut says how the validation part was chosen: "classes" (whole
	// base classes, never trained on), "samples" (a fraction of every base
	// class's samples, never trained on) or "split" (the data set's own
	// validation classes, miniImageNet's val.csv).
	HeldOut string
}

// NewTransferSplit splits d into the base classes base and the novel
// classes novel (nil: every class not in base). Every sample of a base
// class is a training sample until a validation part is held out
// (HoldOutClasses, HoldOutSamples); until then Val is empty.
func NewTransferSplit(d *Dataset, base, novel []int) (*TransferSplit, error) {
	nc := len(d.Classes)
	inBase := make([]bool, nc)
	for _, c := range base {
		if c < 0 || c >= nc {
			return nil, fmt.Errorf("transfer split: base class %d outside 0…%d of %s", c, nc-1, d.Name)
		}
		if inBase[c] {
			return nil, fmt.Errorf("transfer split: base class %d (%q) listed twice", c, d.Classes[c])
		}
		inBase[c] = true
	}
	if novel == nil {
		for c := 0; c < nc; c++ {
			if !inBase[c] {
				novel = append(novel, c)
			}
		}
	}
	inNovel := make([]bool, nc)
	for _, c := range novel {
		if c < 0 || c >= nc {
			return nil, fmt.Errorf("transfer split: novel class %d outside 0…%d of %s", c, nc-1, d.Name)
		}
		if inBase[c] {
			return nil, fmt.Errorf("transfer split: class %d (%q) is both base and novel", c, d.Classes[c])
		}
		inNovel[c] = true
	}
	s := &TransferSplit{Base: sortedCopy(base), Novel: sortedCopy(novel)}
	if len(s.Base) == 0 {
		return nil, fmt.Errorf("transfer split: no base classes in %s", d.Name)
	}
	if len(s.Novel) == 0 {
		return nil, fmt.Errorf("transfer split: no novel classes in %s (every class is a base class)", d.Name)
	}
	for i, y := range d.Labels {
		switch {
		case inBase[y]:
			s.TrainIndex = append(s.TrainIndex, i)
		case inNovel[y]:
			s.NovelIndex = append(s.NovelIndex, i)
		}
	}
	return s, nil
}

func sortedCopy(a []int) []int {
	out := slices.Clone(a)
	sort.Ints(out)
	return out
}

// ClassIDs resolves a list of class names or 0-based class indices
// ("cat", "3") against d's classes. A name wins over an index when a class
// is called "3". Unknown names, indices out of range and repeats are
// errors naming the item.
func ClassIDs(d *Dataset, items []string) ([]int, error) {
	byName := make(map[string]int, len(d.Classes))
	for c, name := range d.Classes {
		byName[name] = c
	}
	seen := map[int]string{}
	out := make([]int, 0, len(items))
	for _, it := range items {
		c, ok := byName[it]
		if !ok {
			v, err := strconv.Atoi(strings.TrimSpace(it))
			if err != nil || v < 0 || v >= len(d.Classes) {
				return nil, fmt.Errorf("class %q: no class of %s has that name, and it is not an index 0…%d", it, d.Name, len(d.Classes)-1)
			}
			c = v
		}
		if prev, dup := seen[c]; dup {
			return nil, fmt.Errorf("class %q: the same class as %q (%s)", it, prev, d.Classes[c])
		}
		seen[c] = it
		out = append(out, c)
	}
	return out, nil
}

// OmniglotBaseClasses returns the classes of an Omniglot data set that come
// from the background set (base) and from the evaluation set (novel), the
// standard split of Lake et al. It reads each class's set from the source
// file of its samples (Dataset.Files), so it works whatever sets were read
// and in whatever order.
func OmniglotBaseClasses(d *Dataset) (base, novel []int, err error) {
	if len(d.Files) != d.Len() {
		return nil, nil, fmt.Errorf("omniglot split: %s has no source files to tell background from evaluation drawings", d.Name)
	}
	set := make([]string, len(d.Classes))
	for i, y := range d.Labels {
		f := d.Files[i]
		var s string
		switch {
		case strings.HasPrefix(f, OmniglotBackground+"/"), strings.HasPrefix(f, OmniglotBackground+".zip:"):
			s = "base"
		case strings.HasPrefix(f, OmniglotEvaluation+"/"), strings.HasPrefix(f, OmniglotEvaluation+".zip:"):
			s = "novel"
		default:
			return nil, nil, fmt.Errorf("omniglot split: sample %d (%s) is from neither %s nor %s", i, f, OmniglotBackground, OmniglotEvaluation)
		}
		if set[y] != "" && set[y] != s {
			return nil, nil, fmt.Errorf("omniglot split: class %q has drawings in both sets", d.Classes[y])
		}
		set[y] = s
	}
	for c, s := range set {
		switch s {
		case "base":
			base = append(base, c)
		case "novel":
			novel = append(novel, c)
		}
	}
	if len(base) == 0 || len(novel) == 0 {
		return nil, nil, fmt.Errorf("omniglot split: read both %s and %s (data.split), found %d background and %d evaluation characters",
			OmniglotBackground, OmniglotEvaluation, len(base), len(novel))
	}
	return base, novel, nil
}

// ClassGroup returns the group of a class name for HoldOutClasses: the part
// before the first "/" (an Omniglot character's alphabet), or the whole
// name.
func ClassGroup(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}

// HoldOutClasses moves whole groups of base classes (ClassGroup: Omniglot
// alphabets; other data sets' classes one by one) to the validation part
// until it holds at least n classes: groups in an order drawn from seed.
// At least one base class must remain.
func (s *TransferSplit) HoldOutClasses(d *Dataset, n int, seed int64) error {
	if s.HeldOut != "" {
		return fmt.Errorf("transfer split: a validation part is held out already (%s)", s.HeldOut)
	}
	if n < 1 || n >= len(s.Base) {
		return fmt.Errorf("transfer split: %d validation classes, want 1…%d (fewer than the %d base classes)", n, len(s.Base)-1, len(s.Base))
	}
	var groups []string
	members := map[string][]int{}
	for _, c := range s.Base {
		g := ClassGroup(d.Classes[c])
		if _, ok := members[g]; !ok {
			groups = append(groups, g)
		}
		members[g] = append(members[g], c)
	}
	sort.Strings(groups)
	rng := rand.New(rand.NewSource(seed))
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	val := map[int]bool{}
	for _, g := range groups {
		if len(val) >= n {
			break
		}
		for _, c := range members[g] {
			val[c] = true
		}
	}
	if len(val) >= len(s.Base) {
		return fmt.Errorf("transfer split: holding out %d classes by group takes every base class", n)
	}
	var base []int
	for _, c := range s.Base {
		if val[c] {
			s.Val = append(s.Val, c)
		} else {
			base = append(base, c)
		}
	}
	s.Base = base
	train := s.TrainIndex[:0:0]
	for _, i := range s.TrainIndex {
		if val[d.Labels[i]] {
			s.ValIndex = append(s.ValIndex, i)
		} else {
			train = append(train, i)
		}
	}
	s.TrainIndex, s.HeldOut = train, "classes"
	return nil
}

// HoldOutSamples holds out round(fraction × n_c) samples of every base
// class c (at least one, and at least one left for training), drawn from
// seed, as the validation part: validation tasks are then drawn from the
// base classes' held-out samples, which training never sees.
func (s *TransferSplit) HoldOutSamples(d *Dataset, fraction float64, seed int64) error {
	if s.HeldOut != "" {
		return fmt.Errorf("transfer split: a validation part is held out already (%s)", s.HeldOut)
	}
	if !(fraction > 0 && fraction < 1) {
		return fmt.Errorf("transfer split: validation fraction %v, want 0 < f < 1", fraction)
	}
	byClass := subsetClassIndex(d, s.TrainIndex)
	rng := rand.New(rand.NewSource(seed))
	held := map[int]bool{}
	for _, c := range s.Base {
		idx := slices.Clone(byClass[c])
		if len(idx) < 2 {
			return fmt.Errorf("transfer split: base class %q has %d samples, too few to hold any out", d.Classes[c], len(idx))
		}
		k := min(max(int(fraction*float64(len(idx))+0.5), 1), len(idx)-1)
		partialShuffle(rng, idx, k)
		for _, i := range idx[:k] {
			held[i] = true
		}
	}
	train := s.TrainIndex[:0:0]
	for _, i := range s.TrainIndex {
		if held[i] {
			s.ValIndex = append(s.ValIndex, i)
		} else {
			train = append(train, i)
		}
	}
	s.TrainIndex, s.Val, s.HeldOut = train, slices.Clone(s.Base), "samples"
	return nil
}

// Check verifies what the protocol promises: class lists in range, sorted
// and disjoint where they must be (novel classes are neither base nor
// validation classes), every index in range, sorted, of a class of its
// part, and no sample in two parts.
func (s *TransferSplit) Check(d *Dataset) error {
	nc, n := len(d.Classes), d.Len()
	part := make([]string, nc)
	mark := func(name string, cs []int) error {
		for k, c := range cs {
			if c < 0 || c >= nc {
				return fmt.Errorf("transfer split: %s class %d outside 0…%d", name, c, nc-1)
			}
			if k > 0 && cs[k-1] >= c {
				return fmt.Errorf("transfer split: %s classes not ascending and distinct at %d", name, c)
			}
		}
		return nil
	}
	for _, p := range []struct {
		name string
		cs   []int
	}{{"base", s.Base}, {"validation", s.Val}, {"novel", s.Novel}} {
		if err := mark(p.name, p.cs); err != nil {
			return err
		}
	}
	for _, c := range s.Base {
		part[c] = "base"
	}
	for _, c := range s.Val {
		if part[c] == "base" && s.HeldOut != "samples" {
			return fmt.Errorf("transfer split: class %q is both a base and a validation class", d.Classes[c])
		}
		part[c] = "validation"
	}
	for _, c := range s.Novel {
		if part[c] != "" {
			return fmt.Errorf("transfer split: novel class %q is also a %s class", d.Classes[c], part[c])
		}
		part[c] = "novel"
	}
	owner := make([]string, n)
	for _, p := range []struct {
		name string
		idx  []int
		cs   []int
	}{{"training", s.TrainIndex, s.Base}, {"validation", s.ValIndex, s.Val}, {"novel", s.NovelIndex, s.Novel}} {
		ok := make(map[int]bool, len(p.cs))
		for _, c := range p.cs {
			ok[c] = true
		}
		for k, i := range p.idx {
			if i < 0 || i >= n {
				return fmt.Errorf("transfer split: %s sample %d outside 0…%d", p.name, i, n-1)
			}
			if k > 0 && p.idx[k-1] >= i {
				return fmt.Errorf("transfer split: %s samples not ascending and distinct at %d", p.name, i)
			}
			if !ok[d.Labels[i]] {
				return fmt.Errorf("transfer split: %s sample %d is of class %q, not one of its classes", p.name, i, d.Classes[d.Labels[i]])
			}
			if owner[i] != "" {
				return fmt.Errorf("transfer split: sample %d is both a %s and a %s sample", i, owner[i], p.name)
			}
			owner[i] = p.name
		}
	}
	return nil
}

// ClassNames returns the names of classes cs of d.
func ClassNames(d *Dataset, cs []int) []string {
	out := make([]string, len(cs))
	for k, c := range cs {
		out[k] = d.Classes[c]
	}
	return out
}

// subsetClassIndex returns, for every class id of d, its samples among idx
// (in the order of idx).
func subsetClassIndex(d *Dataset, idx []int) [][]int {
	out := make([][]int, len(d.Classes))
	for _, i := range idx {
		y := d.Labels[i]
		out[y] = append(out[y], i)
	}
	return out
}

// TaskSettings describe one M-way K-shot task of the transfer protocol's
// evaluation (or validation): Queries per class, drawn from the samples
// Index (nil: all) of the candidate classes.
type TaskSettings struct {
	Ways, Shots int
	Queries     int   // per class; a class with fewer remaining samples gives all it has (Episode.Short)
	Classes     []int // candidate classes
	Index       []int // the samples the task may use (nil: every sample)
	Seed        int64
}

// TaskSampler draws tasks from a fixed pool (the candidate classes and
// samples of TaskSettings); NewTask is a one-off draw.
type TaskSampler struct {
	s       TaskSettings
	byClass [][]int // per candidate, its samples among Index, ascending
}

// NewTaskSampler checks s against d: at least Ways candidate classes, each
// with more than Shots samples (Shots to train, at least one query).
func NewTaskSampler(d *Dataset, s TaskSettings) (*TaskSampler, error) {
	if s.Ways < 1 || s.Shots < 1 || s.Queries < 1 {
		return nil, fmt.Errorf("task: %d ways, %d shots, %d queries per class: want each ≥ 1", s.Ways, s.Shots, s.Queries)
	}
	if len(s.Classes) < s.Ways {
		return nil, fmt.Errorf("task: %d-way task from %d candidate classes", s.Ways, len(s.Classes))
	}
	idx, err := d.Indices(s.Index)
	if err != nil {
		return nil, fmt.Errorf("task: %w", err)
	}
	all := subsetClassIndex(d, idx)
	t := &TaskSampler{s: s, byClass: make([][]int, len(s.Classes))}
	for k, c := range s.Classes {
		if c < 0 || c >= len(d.Classes) {
			return nil, fmt.Errorf("task: class %d outside 0…%d", c, len(d.Classes)-1)
		}
		t.byClass[k] = sortedCopy(all[c])
		if len(t.byClass[k]) < s.Shots+1 {
			return nil, fmt.Errorf("task: class %q has %d samples, a %d-shot task needs at least %d", d.Classes[c], len(t.byClass[k]), s.Shots, s.Shots+1)
		}
	}
	return t, nil
}

// Draw returns the task of seed: Ways classes drawn uniformly without
// replacement from the candidates (Classes in draw order, local labels
// 0…M−1), then per class Shots training samples and min(Queries, the
// rest) query samples, uniformly without replacement. TrainIndex is
// grouped by class, ascending within a class; QueryIndex ascending.
func (t *TaskSampler) Draw(seed int64) *Episode {
	s := t.s
	rng := rand.New(rand.NewSource(seed))
	ep := &Episode{QueriesRequested: s.Queries * s.Ways}
	var query [][2]int
	for m, k := range rng.Perm(len(s.Classes))[:s.Ways] {
		ep.Classes = append(ep.Classes, s.Classes[k])
		idx := slices.Clone(t.byClass[k])
		q := min(s.Queries, len(idx)-s.Shots)
		partialShuffle(rng, idx, s.Shots+q)
		tr := sortedCopy(idx[:s.Shots])
		for _, i := range tr {
			ep.TrainIndex = append(ep.TrainIndex, i)
			ep.TrainLabels = append(ep.TrainLabels, m)
		}
		for _, i := range idx[s.Shots : s.Shots+q] {
			query = append(query, [2]int{i, m})
		}
		if q < s.Queries {
			ep.Short = true
		}
	}
	sort.Slice(query, func(a, b int) bool { return query[a][0] < query[b][0] })
	for _, p := range query {
		ep.QueryIndex = append(ep.QueryIndex, p[0])
		ep.QueryLabels = append(ep.QueryLabels, p[1])
	}
	return ep
}

// NewTask draws one task (NewTaskSampler(d, s).Draw(s.Seed)).
func NewTask(d *Dataset, s TaskSettings) (*Episode, error) {
	t, err := NewTaskSampler(d, s)
	if err != nil {
		return nil, err
	}
	return t.Draw(s.Seed), nil
}

// Rotations is the number of quarter-turn rotations a training class can
// appear in when rotations are on (0°, 90°, 180°, 270°).
const Rotations = 4

// BaseEpisode is one training episode over the base classes: Ways·PerClass
// samples grouped by class (class m's at m·PerClass…), each with its
// quarter-turn count.
type BaseEpisode struct {
	Classes []int // drawn classes, in draw order (local label m = position)
	Rot     []int // per drawn class: counter-clockwise quarter turns 0…3
	Index   []int // Ways·PerClass sample indices, class by class
	Labels  []int // local labels 0…Ways−1
}

// BaseSampler draws training episodes from the base classes' training
// samples. With rotations, each base class c seen rotated by r quarter
// turns (r = 0…3) is a class of its own (c, r), so there are four times as
// many training classes (Vinyals et al., Snell et al.); the rotation of
// the samples is the caller's (Rotate90).
type BaseSampler struct {
	classes []int   // candidate (class, rotation) pairs, encoded c·Rotations + r (or c)
	byClass [][]int // per class id: its training samples
	rotate  bool
}

// NewBaseSampler prepares draws from the training samples idx (nil: all)
// of the classes cs. Every class needs at least perClass samples.
func NewBaseSampler(d *Dataset, cs, idx []int, rotate bool, perClass int) (*BaseSampler, error) {
	if perClass < 1 {
		return nil, fmt.Errorf("base episodes: %d samples per class, want ≥ 1", perClass)
	}
	b := &BaseSampler{byClass: d.ClassIndex(), rotate: rotate}
	if idx != nil {
		b.byClass = subsetClassIndex(d, idx)
	}
	for _, c := range cs {
		if c < 0 || c >= len(d.Classes) {
			return nil, fmt.Errorf("base episodes: class %d outside 0…%d", c, len(d.Classes)-1)
		}
		if n := len(b.byClass[c]); n < perClass {
			return nil, fmt.Errorf("base episodes: class %q has %d training samples, an episode takes %d per class", d.Classes[c], n, perClass)
		}
		if rotate {
			for r := 0; r < Rotations; r++ {
				b.classes = append(b.classes, c*Rotations+r)
			}
		} else {
			b.classes = append(b.classes, c)
		}
	}
	return b, nil
}

// Classes is the number of training classes (base classes × 4 with
// rotations).
func (b *BaseSampler) Classes() int { return len(b.classes) }

// Draw draws an episode from rng: ways training classes uniformly without
// replacement, then perClass samples of each uniformly without replacement.
func (b *BaseSampler) Draw(rng *rand.Rand, ways, perClass int) (*BaseEpisode, error) {
	if ways < 1 || ways > len(b.classes) {
		return nil, fmt.Errorf("base episodes: %d-way episode from %d training classes", ways, len(b.classes))
	}
	ep := &BaseEpisode{}
	for m, k := range rng.Perm(len(b.classes))[:ways] {
		c, r := b.classes[k], 0
		if b.rotate {
			c, r = c/Rotations, c%Rotations
		}
		idx := slices.Clone(b.byClass[c])
		if len(idx) < perClass {
			return nil, fmt.Errorf("base episodes: class %d has %d samples, want %d", c, len(idx), perClass)
		}
		partialShuffle(rng, idx, perClass)
		ep.Classes = append(ep.Classes, c)
		ep.Rot = append(ep.Rot, r)
		for _, i := range idx[:perClass] {
			ep.Index = append(ep.Index, i)
			ep.Labels = append(ep.Labels, m)
		}
	}
	return ep, nil
}

// Rotate90 writes to dst the image src (c planes of h×h) rotated
// counter-clockwise by r quarter turns (r mod 4; np.rot90(img, r) on each
// plane): for r = 1, out(y, x) = in(x, h−1−y).
func Rotate90(dst, src []float32, c, h, w, r int) error {
	if len(src) != c*h*w || len(dst) != len(src) {
		return fmt.Errorf("rotate: %d and %d values for %d×%d×%d", len(src), len(dst), c, h, w)
	}
	r = ((r % 4) + 4) % 4
	if r != 0 && h != w {
		return fmt.Errorf("rotate: a %d×%d image is not square", h, w)
	}
	n := h
	for ch := 0; ch < c; ch++ {
		in, out := src[ch*h*w:(ch+1)*h*w], dst[ch*h*w:(ch+1)*h*w]
		switch r {
		case 0:
			copy(out, in)
		case 1:
			for y := 0; y < n; y++ {
				for x := 0; x < n; x++ {
					out[y*n+x] = in[x*n+n-1-y]
				}
			}
		case 2:
			for y := 0; y < n; y++ {
				for x := 0; x < n; x++ {
					out[y*n+x] = in[(n-1-y)*n+n-1-x]
				}
			}
		case 3:
			for y := 0; y < n; y++ {
				for x := 0; x < n; x++ {
					out[y*n+x] = in[(n-1-x)*n+y]
				}
			}
		}
	}
	return nil
}

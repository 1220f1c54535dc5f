package datasets

import (
	"errors"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// labelled returns a data set of 1-value samples (value = index) with the
// given classes and per-sample labels.
func labelled(classes []string, labels []int) *Dataset {
	d := &Dataset{Name: "toy", Shape: []int{1}, Classes: classes, Labels: labels}
	for i := range labels {
		d.X = append(d.X, float32(i))
	}
	return d
}

// toy6 has 6 classes with 4 samples each, interleaved: sample i has class i % 6.
func toy6() *Dataset {
	labels := make([]int, 24)
	for i := range labels {
		labels[i] = i % 6
	}
	return labelled([]string{"A/a", "A/b", "B/a", "B/b", "C/a", "C/b"}, labels)
}

func TestTransferSplitByClasses(t *testing.T) {
	d := toy6()
	s, err := NewTransferSplit(d, []int{4, 0, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Base, []int{0, 2, 4}) || !reflect.DeepEqual(s.Novel, []int{1, 3, 5}) {
		t.Fatalf("base %v novel %v", s.Base, s.Novel)
	}
	// Samples 0, 2, 4, 6, … are of even classes (base), the odd ones novel.
	for _, i := range s.TrainIndex {
		if i%2 != 0 {
			t.Fatalf("training sample %d is of novel class %d", i, d.Labels[i])
		}
	}
	if len(s.TrainIndex) != 12 || len(s.NovelIndex) != 12 || len(s.ValIndex) != 0 {
		t.Fatalf("%d training, %d novel, %d validation samples", len(s.TrainIndex), len(s.NovelIndex), len(s.ValIndex))
	}
	if err := s.Check(d); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		base, novel []int
		want        string
	}{
		{[]int{0, 0}, nil, "listed twice"},
		{[]int{6}, nil, "outside"},
		{[]int{0, 1}, []int{1, 2}, "both base and novel"},
		{[]int{0, 1, 2, 3, 4, 5}, nil, "no novel classes"},
		{nil, []int{1}, "no base classes"},
	} {
		if _, err := NewTransferSplit(d, bad.base, bad.novel); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("base %v novel %v: error %v, want %q", bad.base, bad.novel, err, bad.want)
		}
	}
}

func TestClassIDs(t *testing.T) {
	d := labelled([]string{"cat", "dog", "3", "bird"}, []int{0, 1, 2, 3})
	got, err := ClassIDs(d, []string{"dog", "0", "3", "bird"})
	if err != nil {
		t.Fatal(err)
	}
	// "3" is a class's name, so it means that class (id 2), not index 3.
	if want := []int{1, 0, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, bad := range [][]string{{"cow"}, {"4"}, {"-1"}, {"cat", "0"}} {
		if _, err := ClassIDs(d, bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestHoldOutClassesByGroup(t *testing.T) {
	d := toy6()
	s, err := NewTransferSplit(d, []int{0, 1, 2, 3}, []int{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HoldOutClasses(d, 1, 7); err != nil {
		t.Fatal(err)
	}
	// One class asked for, but groups move whole: alphabet A (0, 1) or B (2, 3).
	if !reflect.DeepEqual(s.Val, []int{0, 1}) && !reflect.DeepEqual(s.Val, []int{2, 3}) {
		t.Fatalf("validation classes %v, want a whole group", s.Val)
	}
	if len(s.Base) != 2 || len(s.ValIndex) != 8 || len(s.TrainIndex) != 8 || s.HeldOut != "classes" {
		t.Fatalf("base %v, %d validation and %d training samples, %q", s.Base, len(s.ValIndex), len(s.TrainIndex), s.HeldOut)
	}
	if err := s.Check(d); err != nil {
		t.Fatal(err)
	}
	// Same seed, same choice.
	s2, _ := NewTransferSplit(d, []int{0, 1, 2, 3}, []int{4, 5})
	s2.HoldOutClasses(d, 1, 7)
	if !reflect.DeepEqual(s, s2) {
		t.Fatal("the hold-out is not a function of the seed")
	}
	if err := s2.HoldOutSamples(d, 0.5, 1); err == nil {
		t.Fatal("a second hold-out was accepted")
	}
	s3, _ := NewTransferSplit(d, []int{0, 1, 2, 3}, []int{4, 5})
	if err := s3.HoldOutClasses(d, 3, 1); err == nil {
		t.Fatal("holding out 3 of 4 classes in groups of 2 took every class, without an error")
	}
}

func TestHoldOutSamples(t *testing.T) {
	d := toy6()
	s, _ := NewTransferSplit(d, []int{0, 1}, nil)
	if err := s.HoldOutSamples(d, 0.3, 3); err != nil {
		t.Fatal(err)
	}
	// round(0.3 × 4) = 1 sample of each of the 2 base classes.
	if len(s.ValIndex) != 2 || len(s.TrainIndex) != 6 || !reflect.DeepEqual(s.Val, s.Base) {
		t.Fatalf("validation %v, training %v", s.ValIndex, s.TrainIndex)
	}
	if d.Labels[s.ValIndex[0]] == d.Labels[s.ValIndex[1]] {
		t.Fatalf("both held-out samples %v are of one class", s.ValIndex)
	}
	if err := s.Check(d); err != nil {
		t.Fatal(err)
	}
}

func TestTransferSplitCheckFindsLeaks(t *testing.T) {
	d := toy6()
	good := func() *TransferSplit {
		s, _ := NewTransferSplit(d, []int{0, 1, 2}, nil)
		s.HoldOutClasses(d, 1, 1)
		return s
	}
	for name, spoil := range map[string]func(s *TransferSplit){
		"novel sample in training": func(s *TransferSplit) { s.TrainIndex = append(s.TrainIndex, 5); slices.Sort(s.TrainIndex) },
		"novel class also base":    func(s *TransferSplit) { s.Base = append(s.Base, 5) },
		"novel class validates":    func(s *TransferSplit) { s.Val = append(s.Val, 5); s.ValIndex = append(s.ValIndex, 5) },
		"training sample validates": func(s *TransferSplit) {
			s.ValIndex = append(s.ValIndex, s.TrainIndex[0])
			slices.Sort(s.ValIndex)
		},
		"unsorted": func(s *TransferSplit) { s.NovelIndex[0], s.NovelIndex[1] = s.NovelIndex[1], s.NovelIndex[0] },
	} {
		s := good()
		if err := s.Check(d); err != nil {
			t.Fatalf("%s: the good split fails: %v", name, err)
		}
		spoil(s)
		if err := s.Check(d); err == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
}

func TestOmniglotBaseClassesFixture(t *testing.T) {
	for _, layout := range []string{"folders", "zips"} {
		dir := t.TempDir()
		if layout == "folders" {
			writeOmniFolders(t, dir)
		} else {
			writeOmniZips(t, dir)
		}
		// Evaluation first: the split must follow the files, not the order.
		d, err := ReadOmniglot(dir, OmniglotOptions{Sets: []string{"evaluation", "background"}, Size: 28})
		if err != nil {
			t.Fatal(err)
		}
		base, novel, err := OmniglotBaseClasses(d)
		if err != nil {
			t.Fatal(err)
		}
		// Classes: Mid/character01 (evaluation), then Alpha/…01, …02, Zeta/…01, …02.
		if !reflect.DeepEqual(base, []int{1, 2, 3, 4}) || !reflect.DeepEqual(novel, []int{0}) {
			t.Fatalf("%s: base %v novel %v (classes %v)", layout, base, novel, d.Classes)
		}
		bg, err := ReadOmniglot(dir, OmniglotOptions{Sets: []string{"background"}, Size: 28})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := OmniglotBaseClasses(bg); err == nil {
			t.Fatalf("%s: a background-only data set split without an error", layout)
		}
	}
}

func TestTaskSampler(t *testing.T) {
	d := toy6()
	s := TaskSettings{Ways: 3, Shots: 2, Queries: 1, Classes: []int{1, 3, 5}, Seed: 4}
	ep, err := NewTask(d, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.TrainIndex) != 6 || len(ep.QueryIndex) != 3 || ep.Short {
		t.Fatalf("%d training, %d query samples, short %v", len(ep.TrainIndex), len(ep.QueryIndex), ep.Short)
	}
	seen := map[int]bool{}
	perClass := map[int]int{}
	for k, i := range append(slices.Clone(ep.TrainIndex), ep.QueryIndex...) {
		if seen[i] {
			t.Fatalf("sample %d drawn twice", i)
		}
		seen[i] = true
		var local int
		if k < 6 {
			local = ep.TrainLabels[k]
		} else {
			local = ep.QueryLabels[k-6]
			perClass[local]++
		}
		if d.Labels[i] != ep.Classes[local] {
			t.Fatalf("sample %d of class %d labelled as %d (class %d)", i, d.Labels[i], local, ep.Classes[local])
		}
		if d.Labels[i]%2 != 1 {
			t.Fatalf("sample %d of a non-candidate class", i)
		}
	}
	for m := 0; m < 3; m++ {
		if perClass[m] != 1 {
			t.Fatalf("class %d has %d queries, want 1", m, perClass[m])
		}
	}
	if !slices.IsSorted(ep.QueryIndex) {
		t.Fatal("queries not ascending")
	}
	again, _ := NewTask(d, s)
	if !reflect.DeepEqual(ep, again) {
		t.Fatal("not a function of the seed")
	}
	// 4 samples per class, 2 shots: asking 5 queries gives the 2 left.
	s.Queries = 5
	ep, _ = NewTask(d, s)
	if !ep.Short || len(ep.QueryIndex) != 6 {
		t.Fatalf("short %v with %d queries, want all 6 remaining", ep.Short, len(ep.QueryIndex))
	}
	// Restricted to some samples: only those are drawn.
	s.Index, s.Shots, s.Queries = []int{1, 3, 5, 7, 9, 11}, 1, 1
	ep, err = NewTask(d, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range append(ep.TrainIndex, ep.QueryIndex...) {
		if i > 11 {
			t.Fatalf("sample %d outside Index drawn", i)
		}
	}
	s.Shots = 2 // each class has 2 samples in Index: none left to query
	if _, err := NewTask(d, s); err == nil {
		t.Fatal("a 2-shot task of classes with 2 samples was accepted")
	}
}

func TestBaseSamplerRotations(t *testing.T) {
	d := toy6()
	b, err := NewBaseSampler(d, []int{0, 2}, nil, true, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.Classes() != 8 {
		t.Fatalf("%d training classes, want 2 × 4 rotations", b.Classes())
	}
	rng := rand.New(rand.NewSource(1))
	pairs := map[[2]int]bool{}
	for k := 0; k < 200; k++ {
		ep, err := b.Draw(rng, 8, 3)
		if err != nil {
			t.Fatal(err)
		}
		for m := range ep.Classes {
			p := [2]int{ep.Classes[m], ep.Rot[m]}
			if pairs[p] && k == 0 {
				t.Fatalf("(class, rotation) %v twice in one episode", p)
			}
			pairs[p] = true
		}
		for k, i := range ep.Index {
			if c := d.Labels[i]; c != ep.Classes[ep.Labels[k]] || (c != 0 && c != 2) {
				t.Fatalf("sample %d of class %d in an episode of %v", i, c, ep.Classes)
			}
		}
		if k == 0 {
			pairs = map[[2]int]bool{}
		}
	}
	if len(pairs) != 8 {
		t.Fatalf("%d (class, rotation) pairs seen, want 8", len(pairs))
	}
	if _, err := b.Draw(rng, 9, 3); err == nil {
		t.Fatal("a 9-way episode from 8 training classes")
	}
	if _, err := NewBaseSampler(d, []int{0}, nil, false, 5); err == nil {
		t.Fatal("5 samples per class from a class of 4")
	}
}

func TestRotate90(t *testing.T) {
	// One 3×3 plane 0…8 and a second plane 10…18; np.rot90(a, r).
	src := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18}
	want := map[int][]float32{
		1: {2, 5, 8, 1, 4, 7, 0, 3, 6},
		2: {8, 7, 6, 5, 4, 3, 2, 1, 0},
		3: {6, 3, 0, 7, 4, 1, 8, 5, 2},
	}
	dst := make([]float32, 18)
	for r, w := range want {
		if err := Rotate90(dst, src, 2, 3, 3, r); err != nil {
			t.Fatal(err)
		}
		for k := range w {
			if dst[k] != w[k] || dst[9+k] != w[k]+10 {
				t.Fatalf("r = %d: got %v, want %v (and +10)", r, dst, w)
			}
		}
	}
	if err := Rotate90(dst[:6], src[:6], 1, 2, 3, 1); err == nil {
		t.Fatal("rotated a 2×3 image")
	}
}

// TestMiniImageNetTransfer: the three split files as one data set, train's
// classes base, val's validation, test's novel; a class in two files is
// corrupt.
func TestMiniImageNetTransfer(t *testing.T) {
	dir := t.TempDir()
	writeMiniImageNet(t, dir) // train.csv: 2 classes, 4 images; test.csv: 1 class, 1 image
	writeTestFile(t, dir+"/val.csv", []byte("filename,label\nn0174965700000002.jpg,n09999999\n"))
	d, err := ReadMiniImageNetTransfer(dir, 8, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Classes, []string{"n01532829", "n01749657", "n09999999", "n00000001"}) ||
		!reflect.DeepEqual(d.Labels, []int{1, 0, 0, 1, 2, 3}) || !reflect.DeepEqual(d.Shape, []int{1, 8, 8}) ||
		d.Files[4] != "val:images/n0174965700000002.jpg" {
		t.Fatalf("classes %v labels %v shape %v files %v", d.Classes, d.Labels, d.Shape, d.Files)
	}
	s, err := MiniImageNetSplit(d)
	if err != nil {
		t.Fatal(err)
	}
	want := &TransferSplit{Base: []int{0, 1}, Val: []int{2}, Novel: []int{3}, TrainIndex: []int{0, 1, 2, 3},
		ValIndex: []int{4}, NovelIndex: []int{5}, HeldOut: "split"}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("split %+v", s)
	}
	writeTestFile(t, dir+"/val.csv", []byte("filename,label\nn0174965700000002.jpg,n01749657\n"))
	if _, err := ReadMiniImageNetTransfer(dir, 8, false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "both") {
		t.Fatalf("a class in train.csv and val.csv: %v", err)
	}
}

package datasets

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// Facts of the real lung-cancer.data, computed independently with python3
// (str.split, collections.Counter): the "?" cells as (row, attribute) with
// 0-based attributes after the class column, and each attribute's mode.
var lungMissing = []LungCell{{0, 3}, {14, 3}, {18, 3}, {20, 3}, {25, 37}}

func TestReadLungCancerReal(t *testing.T) {
	dir, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadLungCancer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Len() != 32 || !slices.Equal(d.Shape, []int{56}) || strings.Join(d.Classes, ",") != "1,2,3" {
		t.Fatalf("%d rows, shape %v, classes %v", d.Len(), d.Shape, d.Classes)
	}
	if got := d.ClassCounts(); !slices.Equal(got, []int{9, 13, 10}) {
		t.Fatalf("class counts %v, want 9/13/10", got)
	}
	// Row 0 begins 1,0,3,0,?,0,2,2: class 1; attribute 3 is missing and
	// takes the mode of attribute 3 (1: observed 0×1, 1×15, 2×12).
	want := []float32{0, 1, 0, 1.0 / 3, 0, 2.0 / 3, 2.0 / 3}
	for a, w := range want {
		if got := d.Sample(0)[a]; got != w {
			t.Errorf("row 0 attribute %d = %v, want %v", a, got, w)
		}
	}
	// Attribute 37's mode is 2 (observed 1×11, 2×18, 3×2).
	for _, c := range lungMissing {
		w := float32(1.0 / 3)
		if c.Attr == 37 {
			w = 2.0 / 3
		}
		if got := d.Sample(c.Row)[c.Attr]; got != w {
			t.Errorf("imputed row %d attribute %d = %v, want %v", c.Row, c.Attr, got, w)
		}
	}
	for _, v := range d.X {
		if v != 0 && v != 1.0/3 && v != 2.0/3 && v != 1 {
			t.Fatalf("feature %v not in {0, 1/3, 2/3, 1}", v)
		}
	}
	if d.Labels[0] != 0 || d.Labels[31] != 2 || d.Files[5] != "lung-cancer.data:5" {
		t.Errorf("labels %d…%d files %q", d.Labels[0], d.Labels[31], d.Files[5])
	}

	path, _ := datadir.Require("lung-cancer", LungCancerFile)
	d2, err := ReadLungCancer(path) // the file path itself works too
	if err != nil || d2.Len() != 32 {
		t.Fatalf("file path: %v", err)
	}
}

func TestParseLungCancerMissingCells(t *testing.T) {
	path, err := datadir.Require("lung-cancer", LungCancerFile)
	if err != nil {
		t.Fatal(err)
	}
	raw := readFileT(t, path)
	tab, err := ParseLungCancer(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tab.Missing) != fmt.Sprint(lungMissing) {
		t.Fatalf("missing cells %v, want %v", tab.Missing, lungMissing)
	}
	modes, err := tab.Modes()
	if err != nil {
		t.Fatal(err)
	}
	if modes[3] != 1 || modes[37] != 2 {
		t.Fatalf("modes of attributes 3, 37 = %d, %d; want 1, 2", modes[3], modes[37])
	}
}

// lungRow renders a row: class then attrs (56 values, "?" for -1).
func lungRow(class int, attrs []int) string {
	f := []string{fmt.Sprint(class)}
	for _, v := range attrs {
		if v < 0 {
			f = append(f, "?")
		} else {
			f = append(f, fmt.Sprint(v))
		}
	}
	return strings.Join(f, ",")
}

func constAttrs(v int) []int {
	a := make([]int, LungAttributes)
	for i := range a {
		a[i] = v
	}
	return a
}

// Imputation by hand: attribute 0 observed as 2, 2, 3 → mode 2; attribute
// 1 observed as 1, 3 (a tie) → the smaller value 1; the class column plays
// no part (the row with the missing cells has class 3, the others 1).
func TestLungImputationHandWorked(t *testing.T) {
	r0, r1, r2, r3 := constAttrs(0), constAttrs(0), constAttrs(0), constAttrs(0)
	r0[0], r1[0], r2[0], r3[0] = 2, 2, 3, -1
	r0[1], r1[1], r2[1], r3[1] = 1, 3, -1, -1
	text := lungRow(1, r0) + "\r\n\r\n" + lungRow(1, r1) + "\n" + lungRow(2, r2) + "\n" + lungRow(3, r3) + "\n\n"
	tab, err := ParseLungCancer(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	d, err := tab.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 4 || !slices.Equal(d.Labels, []int{0, 0, 1, 2}) {
		t.Fatalf("%d rows labels %v", d.Len(), d.Labels)
	}
	if got := d.Sample(3)[0]; got != 2.0/3 {
		t.Errorf("attribute 0 imputed as %v, want 2/3", got)
	}
	if got, got2 := d.Sample(3)[1], d.Sample(2)[1]; got != 1.0/3 || got2 != 1.0/3 {
		t.Errorf("attribute 1 imputed as %v, %v; want 1/3 (tie → smaller)", got, got2)
	}
	// Changing the classes does not change the features.
	text2 := strings.ReplaceAll(strings.ReplaceAll(text, "\n3,", "\n1,"), "\n2,", "\n3,")
	tab2, err := ParseLungCancer(strings.NewReader(text2))
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := tab2.Dataset()
	for i := range d.X {
		if d.X[i] != d2.X[i] {
			t.Fatal("features depend on the class column")
		}
	}
}

func TestParseLungCancerBadInput(t *testing.T) {
	good := lungRow(1, constAttrs(2))
	allMissing := constAttrs(1)
	allMissing[10] = -1
	cases := []struct{ name, text, want string }{
		{"class 4", lungRow(4, constAttrs(1)), "line 1: class \"4\""},
		{"empty class", "," + lungRow(1, constAttrs(1))[2:], "line 1: class \"\""},
		{"missing class", "?," + lungRow(1, constAttrs(1))[2:], "line 1: class \"?\""},
		{"value 4", good + "\n" + strings.Replace(good, ",2,", ",4,", 1), "line 2: attribute 1 is \"4\""},
		{"55 attributes", good[:len(good)-2], "56 fields, want 57"},
		{"58 fields", good + ",1", "58 fields"},
		{"text value", strings.Replace(good, ",2,", ",x,", 1), "attribute 1 is \"x\""},
		{"empty", "\n\n", "no data rows"},
		{"all missing", lungRow(1, allMissing) + "\n" + lungRow(2, allMissing), "attribute 11 is missing in every row"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := ParseLungCancer(strings.NewReader(c.text))
			if err == nil {
				_, err = tab.Dataset()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.want)
			}
		})
	}
	dir := t.TempDir()
	p := writeFile(t, dir, LungCancerFile, []byte(lungRow(5, constAttrs(0))))
	if _, err := ReadLungCancer(dir); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v does not name %s", err, p)
	}
}

func FuzzParseLungCancer(f *testing.F) {
	f.Add([]byte(lungRow(1, constAttrs(2))))
	r := constAttrs(3)
	r[5] = -1
	f.Add([]byte(lungRow(2, constAttrs(0)) + "\r\n" + lungRow(3, r) + "\n"))
	f.Add([]byte("1,?\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseLungCancer(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(tab.Class) != len(tab.Attrs) || len(tab.Class) == 0 {
			t.Fatalf("%d classes, %d rows", len(tab.Class), len(tab.Attrs))
		}
		d, err := tab.Dataset()
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, v := range d.X {
			if v != 0 && v != 1.0/3 && v != 2.0/3 && v != 1 {
				t.Fatalf("feature %v", v)
			}
		}
	})
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// One-hot by hand: row 0 has attribute values 0, 1, 2, 3, 0, 0, …; row 1
// all 3. Feature 4a+v is 1 exactly when attribute a has value v.
func TestLungOneHotHandWorked(t *testing.T) {
	r0 := constAttrs(0)
	r0[1], r0[2], r0[3] = 1, 2, 3
	tab, err := ParseLungCancer(strings.NewReader(lungRow(1, r0) + "\n" + lungRow(2, constAttrs(3)) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := tab.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	oh, err := LungOneHot(d)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(oh.Shape, []int{224}) || oh.Len() != 2 || !slices.Equal(oh.Labels, []int{0, 1}) {
		t.Fatalf("shape %v, %d rows, labels %v", oh.Shape, oh.Len(), oh.Labels)
	}
	want0 := []float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0}
	for i, w := range want0 {
		if got := oh.Sample(0)[i]; got != w {
			t.Fatalf("row 0 feature %d = %v, want %v (first 20: %v)", i, got, w, oh.Sample(0)[:20])
		}
	}
	for i, v := range oh.Sample(1) {
		if w := float32(map[bool]int{true: 1, false: 0}[i%4 == 3]); v != w {
			t.Fatalf("row 1 feature %d = %v, want %v", i, v, w)
		}
	}
	// Rows 0 and 1 differ in 55 attributes (attribute 3 is 3 in both):
	// squared distance 2·55.
	var d2 float64
	for i := range oh.Sample(0) {
		e := float64(oh.Sample(0)[i] - oh.Sample(1)[i])
		d2 += e * e
	}
	if d2 != 110 {
		t.Fatalf("squared distance %v, want 110", d2)
	}
	d.X[5] = 0.5
	if _, err := LungOneHot(d); err == nil || !strings.Contains(err.Error(), "row 0 attribute 6") {
		t.Fatalf("value 0.5: error %v", err)
	}
	if _, err := LungOneHot(oh); err == nil {
		t.Fatal("accepted a one-hot data set (shape [224])")
	}
}

func TestLungOneHotReal(t *testing.T) {
	dir, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load("lung-cancer", dir, Options{OneHot: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ReadLungCancer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 32 || !slices.Equal(d.Shape, []int{224}) || !slices.Equal(d.Labels, plain.Labels) {
		t.Fatalf("%d rows of shape %v", d.Len(), d.Shape)
	}
	for i := 0; i < d.Len(); i++ {
		for a := 0; a < LungAttributes; a++ {
			v := plain.Sample(i)[a] * 3
			for k := 0; k < 4; k++ {
				w := float32(0)
				if float32(k) == v {
					w = 1
				}
				if got := d.Sample(i)[4*a+k]; got != w {
					t.Fatalf("row %d attribute %d (value %v): indicator %d is %v", i, a, v, k, got)
				}
			}
		}
	}
}

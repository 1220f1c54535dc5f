package datasets

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// irisLike has string labels in a middle column, a quoted number, spaces,
// and missing cells of every spelling (NA, empty, ?, nan).
const irisLike = "\ufeffid, height ,species,weight,colour code\r\n" +
	"1,1.5,setosa,NA,3\r\n" +
	"2,,versicolor,2.5,?\r\n" +
	"\r\n" +
	"3,1.7,setosa,3.0,4\r\n" +
	"4, 1.1 ,virginica,nan,2\r\n" +
	"\"5\",2.0,versicolor,4.5,1\r\n"

func TestCSVStringLabelsMiddleColumnMissing(t *testing.T) {
	d, err := ParseCSV(strings.NewReader(irisLike), "iris.csv", CSVOptions{Label: "species"})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := [][]float64{{1, 1.5, nan, 3}, {2, nan, 2.5, nan}, {3, 1.7, 3, 4}, {4, 1.1, nan, 2}, {5, 2, 4.5, 1}}
	if d.Len() != 5 || !reflect.DeepEqual(d.Shape, []int{4}) || !reflect.DeepEqual(d.Features, []string{"id", "height", "weight", "colour code"}) ||
		!reflect.DeepEqual(d.Classes, []string{"setosa", "versicolor", "virginica"}) || !reflect.DeepEqual(d.Labels, []int{0, 1, 0, 2, 1}) ||
		!reflect.DeepEqual(d.Files, []string{"iris.csv:0", "iris.csv:1", "iris.csv:2", "iris.csv:3", "iris.csv:4"}) {
		t.Fatalf("%d rows, shape %v, features %v, classes %v, labels %v, files %v", d.Len(), d.Shape, d.Features, d.Classes, d.Labels, d.Files)
	}
	for i, row := range want {
		for j, w := range row {
			got := float64(d.Sample(i)[j])
			if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && got != float64(float32(w)) {
				t.Fatalf("row %d column %d = %v, want %v", i, j, got, w)
			}
		}
	}
	wantMissing := []Cell{{0, 2, "weight"}, {1, 3, "height"}, {1, 3, "colour code"}, {3, 6, "weight"}}
	if !reflect.DeepEqual(d.Report.Missing, wantMissing) {
		t.Fatalf("missing %v, want %v", d.Report.Missing, wantMissing)
	}

	// Default error mode names the first missing cell (row, line, column).
	if _, err := Impute(d, []int{0, 2, 4}, ""); err == nil || !strings.Contains(err.Error(), `iris.csv:0 (line 2), column "weight": missing value`) {
		t.Fatalf("error mode: %v", err)
	}
	// Mean over the training rows 0, 2, 4 only (the query rows 1 and 3 do
	// not count): height (1.5+1.7+2)/3, weight (3+4.5)/2, colour (3+4+1)/3.
	m, err := Impute(d, []int{0, 2, 4}, ImputeMean)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		row, col int
		want     float64
	}{{0, 2, 3.75}, {1, 1, (1.5 + 1.7 + 2) / 3}, {1, 3, 8.0 / 3}, {3, 2, 3.75}, {2, 2, 3}}
	for _, c := range checks {
		if got := float64(m.Sample(c.row)[c.col]); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("mean: row %d column %d = %v, want %v", c.row, c.col, got, c.want)
		}
	}
	if !math.IsNaN(float64(d.Sample(0)[2])) {
		t.Fatal("Impute changed its input")
	}
	// Mode: the most frequent training value, ties to the smallest.
	mo, err := Impute(d, []int{0, 2, 4}, ImputeMode)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		row, col int
		want     float64
	}{{0, 2, 3}, {1, 1, 1.5}, {1, 3, 1}, {3, 2, 3}} {
		if got := float64(mo.Sample(c.row)[c.col]); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("mode: row %d column %d = %v, want %v", c.row, c.col, got, c.want)
		}
	}
	// A column with no training value cannot be filled.
	if _, err := Impute(d, []int{0}, ImputeMean); err == nil || !strings.Contains(err.Error(), `column "weight"`) || !strings.Contains(err.Error(), "no value among the 1 training") {
		t.Fatalf("no training value: %v", err)
	}
	if _, err := Impute(d, nil, "median"); err == nil {
		t.Fatal("unknown mode accepted")
	}

	// Through Load: the folder holds one .csv; "error" (the default) fails,
	// "mean" keeps the NaN for the episode to fill.
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "iris.csv"), []byte(irisLike))
	writeTestFile(t, filepath.Join(dir, "notes.txt"), []byte("x"))
	if _, err := Load("csv", dir, Options{Label: "species"}); err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "data.missing") {
		t.Fatalf("Load with missing cells, default mode: %v", err)
	}
	l, err := Load("csv", dir, Options{Label: "species", Missing: "mean"})
	if err != nil || l.Len() != 5 || len(l.Report.Missing) != 4 {
		t.Fatalf("Load mean: %v", err)
	}
	// Default label column: the last one, so "species" must be numeric.
	if _, err := Load("csv", filepath.Join(dir, "iris.csv"), Options{Missing: "mean"}); !errors.Is(err, ErrCorrupt) ||
		!strings.Contains(err.Error(), `line 2, column "species": "setosa" is not a number (only the label column "colour code" may hold text)`) {
		t.Fatalf("default label column: %v", err)
	}
}

func TestCSVLabelOrder(t *testing.T) {
	// Integer labels sort by value, not as strings.
	d, err := ParseCSV(strings.NewReader("a,y\n1,10\n2,2\n3,1\n4,2\n"), "n.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Classes, []string{"1", "2", "10"}) || !reflect.DeepEqual(d.Labels, []int{2, 1, 0, 1}) || d.Report != nil {
		t.Fatalf("classes %v labels %v report %v", d.Classes, d.Labels, d.Report)
	}
	// Any text among them: byte order ("B" < "a").
	d, err = ParseCSV(strings.NewReader("x,y\n1,b\n2,10\n3,B\n4,a\n"), "s.csv", CSVOptions{})
	if err != nil || !reflect.DeepEqual(d.Classes, []string{"10", "B", "a", "b"}) || !reflect.DeepEqual(d.Labels, []int{3, 0, 1, 2}) {
		t.Fatalf("classes %v labels %v: %v", d.Classes, d.Labels, err)
	}
	// An empty header cell gets a name (pandas' index column).
	d, err = ParseCSV(strings.NewReader(",v,y\n0,1.5,a\n1,2.5,b\n"), "p.csv", CSVOptions{})
	if err != nil || !reflect.DeepEqual(d.Features, []string{"column 1", "v"}) {
		t.Fatalf("features %v: %v", d.Features, err)
	}
}

func TestCSVBadInput(t *testing.T) {
	for _, c := range []struct {
		name, text, label, want string
	}{
		{"empty", "", "", "empty file"},
		{"header only", "a,b\n", "", "no data rows"},
		{"one column", "y\n1\n", "", "want a label column and at least one feature"},
		{"field count", "a,b,y\n1,2,x\n1,2\n", "", "line 3: 2 fields, want 3"},
		{"text feature", "a,b,y\n1,red,x\n", "", `line 2, column "b": "red" is not a number`},
		{"duplicate column", "a,b,a\n1,2,3\n", "", `columns 1 and 3 are both named "a"`},
		{"missing label", "a,y\n1,x\n2,\n", "", `line 3: missing label (column "y")`},
		{"unknown label column", "a,y\n1,x\n", "class", `no label column "class" (columns: a, y)`},
		{"infinite", "a,y\n1e400,x\n", "", "not a finite float32"},
		{"beyond float32", "a,y\n1e39,x\n", "", "not a finite float32"},
		{"inf literal", "a,y\n-Inf,x\n", "", "not a finite float32"},
		{"bare quote", "a,y\n1\"2,x\n", "", "line 2"},
		// no header: the first sample would be lost as column names
		{"headerless", "5.1,3.5,setosa\n4.9,3.0,setosa\n6.3,3.3,virginica\n", "", "line 1 (5.1,3.5,setosa) looks like a data row"},
		{"headerless numeric labels", "0.5,1.5,2\n0.25,1,7\n", "", "looks like a data row"},
		{"headerless label column", "1,2,3\n4,5,6\n", "1", "looks like a data row"},
	} {
		d, err := ParseCSV(strings.NewReader(c.text), "t.csv", CSVOptions{Label: c.label})
		if err == nil || d != nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", c.name, err, c.want)
		}
	}
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a.csv"), []byte("a,y\n1,x\n"))
	writeTestFile(t, filepath.Join(dir, "b.CSV"), []byte("a,y\n1,x\n"))
	if _, err := Load("csv", dir, Options{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "2 .csv files (a.csv, b.CSV)") {
		t.Errorf("two CSVs: %v", err)
	}
	if _, err := Load("csv", t.TempDir(), Options{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no .csv file") {
		t.Errorf("no CSV: %v", err)
	}
	if _, err := Load("csv", filepath.Join(dir, "a.csv"), Options{Label: "nope"}); err == nil || errors.Is(err, ErrCorrupt) {
		t.Errorf("a wrong label setting is not a corrupt file: %v", err)
	}
}

// TestCSVHeaderForms: a byte-order mark before a quoted header (R's
// write.csv with fileEncoding "UTF-8-BOM", pandas with QUOTE_ALL and
// utf-8-sig), and numeric column names that are a header: pandas' 0, 1, 2,
// … of an unnamed frame, or numbers with a named label column.
func TestCSVHeaderForms(t *testing.T) {
	for _, c := range []struct {
		name, text string
		features   []string
		rows       int
	}{
		{"BOM, quoted header", "\ufeff\"a\",\"b\",\"label\"\r\n1,2,\"x\"\r\n3,4,\"y\"\r\n", []string{"a", "b"}, 2},
		{"BOM, plain header", "\ufeffa,b,label\n1,2,x\n", []string{"a", "b"}, 1},
		{"pandas unnamed frame", "0,1,2\n0.5,1.5,1\n2.5,3.5,2\n", []string{"0", "1"}, 2},
		{"numeric features, named label", "0.1,0.2,species\n1,2,x\n", []string{"0.1", "0.2"}, 1},
	} {
		d, err := ParseCSV(strings.NewReader(c.text), "t.csv", CSVOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(d.Features, c.features) || len(d.Labels) != c.rows {
			t.Errorf("%s: features %q, %d rows; want %q, %d", c.name, d.Features, len(d.Labels), c.features, c.rows)
		}
	}
}

// FuzzParseCSV: any input parses to a consistent data set (every missing
// cell listed and NaN, every other value finite) or fails with one line.
func FuzzParseCSV(f *testing.F) {
	f.Add(irisLike, "species")
	f.Add("a,y\n1,10\n2,2\n", "")
	f.Add(",v,y\n0,1.5,a\n1,,b\n", "v")
	f.Add("a,b\n\"x\ny\",1\n", "a")
	f.Add("a,y\n1e39,x\n", "")
	f.Fuzz(func(t *testing.T, text, label string) {
		d, err := ParseCSV(strings.NewReader(text), "f.csv", CSVOptions{Label: label})
		if err != nil {
			if d != nil {
				t.Fatal("data set returned with an error")
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		nans := 0
		for _, v := range d.X {
			if v != v {
				nans++
			} else if math.IsInf(float64(v), 0) {
				t.Fatalf("infinite value %v", v)
			}
		}
		listed := 0
		if d.Report != nil {
			listed = len(d.Report.Missing)
		}
		if nans != listed {
			t.Fatalf("%d NaN values, %d listed as missing", nans, listed)
		}
		train := make([]int, d.Len())
		for i := range train {
			train[i] = i
		}
		if m, err := Impute(d, train, ImputeMode); err == nil {
			for _, v := range m.X {
				if v != v {
					t.Fatal("NaN left after imputation")
				}
			}
		}
	})
}

package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Layout of the UCI Lung Cancer file (Hong & Yang 1991).
const (
	LungAttributes = 56 // nominal attributes per row, values 0…3
	lungMaxValue   = 3
	// LungCancerFile is the upstream file name.
	LungCancerFile = "lung-cancer.data"
	maxLungRows    = 1 << 20
)

// LungCell locates one attribute cell: Row in file order (0-based, blank
// lines not counted), Attr 0…55 (the attribute after the class column).
type LungCell struct{ Row, Attr int }

// LungTable is the parsed UCI Lung Cancer file before imputation.
type LungTable struct {
	Class   []int   // 1…3, one per row
	Attrs   [][]int // LungAttributes values per row, −1 where the file has "?"
	Missing []LungCell
}

// ParseLungCancer parses the UCI Lung Cancer format: one patient per line,
// 57 comma-separated fields, the class (1, 2 or 3) first, then 56 nominal
// attributes 0…3, "?" for a missing attribute. There is no header; blank
// lines, surrounding spaces, CR LF line ends and a missing final newline are
// accepted. A missing class, a value outside its range, a wrong field
// count or an empty file is an error naming the line.
func ParseLungCancer(r io.Reader) (*LungTable, error) {
	t := &LungTable{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if len(t.Class) >= maxLungRows {
			return nil, fmt.Errorf("more than %d rows", maxLungRows)
		}
		fields := strings.Split(s, ",")
		if len(fields) != 1+LungAttributes {
			return nil, fmt.Errorf("line %d: %d fields, want %d (class + %d attributes)", line, len(fields), 1+LungAttributes, LungAttributes)
		}
		cls := strings.TrimSpace(fields[0])
		c, err := strconv.Atoi(cls)
		if err != nil || c < 1 || c > 3 {
			return nil, fmt.Errorf("line %d: class %q, want 1, 2 or 3", line, cls)
		}
		row := make([]int, LungAttributes)
		for a := range row {
			f := strings.TrimSpace(fields[1+a])
			if f == "?" {
				row[a] = -1
				t.Missing = append(t.Missing, LungCell{Row: len(t.Class), Attr: a})
				continue
			}
			v, err := strconv.Atoi(f)
			if err != nil || v < 0 || v > lungMaxValue {
				return nil, fmt.Errorf("line %d: attribute %d is %q, want 0…%d or ?", line, a+1, f, lungMaxValue)
			}
			row[a] = v
		}
		t.Class = append(t.Class, c)
		t.Attrs = append(t.Attrs, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(t.Class) == 0 {
		return nil, errors.New("no data rows")
	}
	return t, nil
}

// Modes returns, for each attribute, its most frequent observed value over
// all rows, ignoring the class column (ties go to the smaller value). It is
// an error when an attribute is missing in every row.
func (t *LungTable) Modes() ([]int, error) {
	modes := make([]int, LungAttributes)
	for a := range modes {
		var count [lungMaxValue + 1]int
		seen := false
		for _, row := range t.Attrs {
			if v := row[a]; v >= 0 {
				count[v]++
				seen = true
			}
		}
		if !seen {
			return nil, fmt.Errorf("attribute %d is missing in every row", a+1)
		}
		best := 0
		for v := 1; v <= lungMaxValue; v++ {
			if count[v] > count[best] {
				best = v
			}
		}
		modes[a] = best
	}
	return modes, nil
}

// Dataset imputes the missing cells and returns the data set: Shape [56],
// features value/3 in [0, 1], labels class−1, Classes "1", "2", "3", natural
// order = file order.
//
// Imputation: a missing cell takes its attribute's mode over all rows of
// the file (LungTable.Modes). The mode ignores the class column, so no label
// — in particular no query label of an episode — influences the features.
// It does look at the attribute values of every row, query rows included;
// that is unsupervised, transductive preprocessing of 5 cells out of 1,792
// and is the usual treatment of this file.
func (t *LungTable) Dataset() (*Dataset, error) {
	modes, err := t.Modes()
	if err != nil {
		return nil, err
	}
	n := len(t.Class)
	d := &Dataset{
		Name:    "lung-cancer",
		Shape:   []int{LungAttributes},
		X:       make([]float32, 0, n*LungAttributes),
		Labels:  make([]int, n),
		Classes: []string{"1", "2", "3"},
	}
	for i, row := range t.Attrs {
		d.Labels[i] = t.Class[i] - 1
		for a, v := range row {
			if v < 0 {
				v = modes[a]
			}
			d.X = append(d.X, float32(v)/lungMaxValue)
		}
	}
	return d, nil
}

// LungOneHot returns a copy of a Lung Cancer data set (Shape [56], values
// v/3 for v = 0…3, as ReadLungCancer returns) with every attribute replaced
// by 4 indicator features: feature 4a+v is 1 when attribute a has value v,
// else 0 (Shape [224]). The distance between two rows then counts the
// attributes on which they differ, whatever the values' order. A value that
// is not one of 0, 1/3, 2/3, 1 is an error naming the row and attribute.
func LungOneHot(d *Dataset) (*Dataset, error) {
	if len(d.Shape) != 1 || d.Shape[0] != LungAttributes {
		return nil, fmt.Errorf("lung-cancer one-hot: samples of shape %v, want [%d]", d.Shape, LungAttributes)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("lung-cancer one-hot: %w", err)
	}
	const width = lungMaxValue + 1
	out := &Dataset{Name: d.Name, Shape: []int{LungAttributes * width}, Classes: d.Classes,
		Labels: append([]int(nil), d.Labels...), X: make([]float32, d.Len()*LungAttributes*width)}
	if d.Files != nil {
		out.Files = append([]string(nil), d.Files...)
	}
	for i := 0; i < d.Len(); i++ {
		for a, f := range d.Sample(i) {
			v := math.Round(float64(f) * lungMaxValue)
			if !(math.Abs(float64(f)*lungMaxValue-v) < 1e-4) || v < 0 || v > lungMaxValue {
				return nil, fmt.Errorf("lung-cancer one-hot: row %d attribute %d is %g, not a value v/3 with v in 0…%d", i, a+1, f, lungMaxValue)
			}
			out.X[(i*LungAttributes+a)*width+int(v)] = 1
		}
	}
	return out, nil
}

// ReadLungCancer reads the UCI Lung Cancer data from path, which is either
// the file itself or a folder holding lung-cancer.data. See
// LungTable.Dataset for the imputation and scaling. Files holds
// "lung-cancer.data:<row>".
func ReadLungCancer(path string) (*Dataset, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, LungCancerFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, classify(fmt.Errorf("lung-cancer: %w", err))
	}
	defer f.Close()
	t, err := ParseLungCancer(f)
	if err != nil {
		return nil, corruptf("lung-cancer: %s: %w", path, err)
	}
	d, err := t.Dataset()
	if err != nil {
		return nil, corruptf("lung-cancer: %s: %w", path, err)
	}
	base := filepath.Base(path)
	d.Files = make([]string, d.Len())
	for i := range d.Files {
		d.Files[i] = base + ":" + strconv.Itoa(i)
	}
	return d, nil
}

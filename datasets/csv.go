package datasets

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/drknn/drknn/internal/filekind"
)

// CSVOptions selects the label column of a CSV table.
type CSVOptions struct {
	// Label names the label column (its header, exactly); "" means the
	// last column.
	Label string
}

// maxCSVColumns bounds the columns of a table (a corrupt file with no
// line breaks must not make a huge header).
const maxCSVColumns = 1 << 16

// MaxCSVRecordBytes bounds one record (a row, with the line breaks of its
// quoted fields) of any table drknn reads (NewCSVReader). encoding/csv
// reads a whole record into memory, so a file without line breaks
// (/dev/zero, a binary file named .csv) was read until memory ran out. A
// row at maxCSVColumns columns of 25-character numbers is 1.6 MiB; 16 MiB
// leaves ten times that for long text labels and cells, and bounds what a
// broken file costs (encoding/csv's buffers hold two or three times a
// record) to well under 100 MB.
const MaxCSVRecordBytes = 16 << 20

// ErrCSVRecordTooLong is wrapped by the error of a record longer than
// MaxCSVRecordBytes.
var ErrCSVRecordTooLong = fmt.Errorf("a record longer than %d MiB", MaxCSVRecordBytes>>20)

// quoteCellRunes is how many characters of a cell a message quotes.
const quoteCellRunes = 40

// QuoteCell quotes a cell (or a column name) for a message: whole when it
// has at most 40 characters, else its first 40 and its length — `"1234…"…
// (200000 bytes)` — so that one bad cell cannot make a line of megabytes.
func QuoteCell(s string) string {
	if head, ok := clipCell(s); ok {
		return fmt.Sprintf("%q… (%d bytes)", head, len(s))
	}
	return strconv.Quote(s)
}

// clipCell returns the first quoteCellRunes characters of s and whether s
// is longer.
func clipCell(s string) (string, bool) {
	n := 0
	for i := range s {
		if n == quoteCellRunes {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// ListCells lists names for a message joined by sep, as written (not
// quoted) but each cut as QuoteCell cuts it, and at most the first 10, then
// the count.
func ListCells(names []string, sep string) string {
	const most = 10
	q := make([]string, 0, most+1)
	for _, n := range names[:min(len(names), most)] {
		if head, ok := clipCell(n); ok {
			n = fmt.Sprintf("%s… (%d bytes)", head, len(n))
		}
		q = append(q, n)
	}
	if len(names) > most {
		q = append(q, fmt.Sprintf("… (%d columns)", len(names)))
	}
	return strings.Join(q, sep)
}

// missingCSV reports whether a cell (trimmed) stands for a missing value:
// empty, NA, N/A, NaN or ? (case-insensitive).
func missingCSV(s string) bool {
	switch strings.ToLower(s) {
	case "", "na", "n/a", "nan", "?":
		return true
	}
	return false
}

// NewCSVReader is how every table of drknn is opened — the csv data set's
// reader (ParseCSV), the miniImageNet split files, and drknn-predict -csv —
// so that all accept the same files: a UTF-8 byte-order mark is dropped
// from the stream before the CSV reader sees it (left in the first cell it
// makes a quoted first header, "\ufeff\"a\",… as R's write.csv with
// fileEncoding "UTF-8-BOM" writes, a bare quote), rows may have any number
// of fields (the caller checks), leading spaces before a field (and its
// quote) are dropped, and there is no comment character (a line starting
// with '#' is data).
//
// A record longer than MaxCSVRecordBytes is an error wrapping
// ErrCSVRecordTooLong and naming the line where it starts, returned by
// Read once the bound is passed (the file is not read further).
func NewCSVReader(r io.Reader) *csv.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	cr := csv.NewReader(&recordBound{r: br, line: 1, start: 1})
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	return cr
}

// recordBound passes a CSV stream through, failing once a record — the
// bytes from its first to the line break that ends it outside quotes —
// passes MaxCSVRecordBytes: encoding/csv would read it whole. Quotes are
// counted as RFC 4180 writes them (an escaped quote is two, so the parity
// holds); a bare quote in an unquoted field is encoding/csv's own error
// before the parity matters.
type recordBound struct {
	r      io.Reader
	n      int  // bytes of the current record so far
	quoted bool // inside a quoted field
	line   int  // the line the stream is at
	start  int  // the line the current record starts on
	err    error
}

func (b *recordBound) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	for i, c := range p[:n] {
		switch c {
		case '"':
			b.quoted = !b.quoted
		case '\n':
			b.line++
			if !b.quoted {
				b.n, b.start = 0, b.line
				continue
			}
		}
		if b.n++; b.n > MaxCSVRecordBytes {
			b.err = fmt.Errorf("line %d: %w (no line break ends it; is this a CSV file?)", b.start, ErrCSVRecordTooLong)
			return i, b.err
		}
	}
	return n, err
}

// ParseCSV parses a table of labelled feature rows: a header row naming the
// columns, then one sample per row, comma-separated (RFC 4180 quoting; a
// UTF-8 byte-order mark, spaces around fields, CR LF line ends and blank
// lines are accepted). name is used in Files ("NAME:ROW", rows counted from
// 0 after the header) and messages.
//
// The label column (opts.Label, default the last) may hold any text;
// classes are its distinct values, sorted numerically when every label is
// an integer ("2" < "10"), otherwise as strings (byte order); labels follow
// that order. Every other column is a feature and must hold numbers
// (strconv.ParseFloat syntax, finite, within float32 range) or a missing
// marker — an empty cell, NA, N/A, NaN or ? — which is stored as NaN and
// listed in Dataset.Report.Missing (see Impute). Samples have Shape [F]
// (F = columns − 1), values as written (not rescaled), Features the column
// names (an empty header becomes "column N"), natural order = file rows.
//
// A row with the wrong number of fields, a missing label, text in a feature
// column, a duplicate column name, no header or no data row is an error
// naming the line and column. So is a first line that is a data row (a file
// without a header, such as UCI's iris.data): every feature column's name a
// number and the label column's name a number or one of the labels — except
// the names 0, 1, 2, … in order that pandas gives an unnamed frame.
func ParseCSV(r io.Reader, name string, opts CSVOptions) (*Dataset, error) {
	cr := NewCSVReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file (want a header row naming the columns)")
	}
	if err != nil {
		return nil, err
	}
	if len(head) > maxCSVColumns {
		return nil, fmt.Errorf("line 1: %d columns, more than %d", len(head), maxCSVColumns)
	}
	if len(head) < 2 {
		return nil, fmt.Errorf("line 1: %d column, want a label column and at least one feature column", len(head))
	}
	cols := make([]string, len(head))
	seen := map[string]int{}
	for j, h := range head {
		h = strings.TrimSpace(h)
		if h == "" {
			h = "column " + strconv.Itoa(j+1)
		}
		if k, dup := seen[h]; dup {
			return nil, fmt.Errorf("line 1: columns %d and %d are both named %s", k+1, j+1, QuoteCell(h))
		}
		seen[h] = j
		cols[j] = h
	}
	label := len(cols) - 1
	if opts.Label != "" {
		j, ok := seen[opts.Label]
		if !ok {
			return nil, fmt.Errorf("no label column %s (columns: %s)", QuoteCell(opts.Label), ListCells(cols, ", "))
		}
		label = j
	}
	features := slices.Delete(slices.Clone(cols), label, label+1)
	F := len(features)
	d := &Dataset{Name: "csv", Shape: []int{F}, Features: features, Report: &Report{}}
	var labels []string
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err // csv.ParseError names the line and column
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(cols) {
			return nil, fmt.Errorf("line %d: %d fields, want %d (the header's columns)", line, len(rec), len(cols))
		}
		for j, cell := range rec {
			cell = strings.TrimSpace(cell)
			if j == label {
				if missingCSV(cell) {
					return nil, fmt.Errorf("line %d: missing label (column %s)", line, QuoteCell(cols[j]))
				}
				labels = append(labels, cell)
				continue
			}
			if missingCSV(cell) {
				d.X = append(d.X, float32(math.NaN()))
				d.Report.Missing = append(d.Report.Missing, Cell{Row: row, Line: line, Column: cols[j]})
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("line %d, column %s: %s is not a number (only the label column %s may hold text)", line, QuoteCell(cols[j]), QuoteCell(cell), QuoteCell(cols[label]))
			}
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
				return nil, fmt.Errorf("line %d, column %s: %s is not a finite float32 number", line, QuoteCell(cols[j]), QuoteCell(cell))
			}
			d.X = append(d.X, float32(v))
		}
		d.Files = append(d.Files, name+":"+strconv.Itoa(row))
	}
	if len(labels) == 0 {
		return nil, errors.New("no data rows after the header")
	}
	if headerIsData(cols, label, labels) {
		return nil, fmt.Errorf("line 1 (%s) looks like a data row, not a header: every feature column's name is a number, and so is the label column's name %s or it is one of the labels below; add a first line naming the columns",
			ListCells(cols, ","), QuoteCell(cols[label]))
	}
	d.Classes = sortLabels(labels)
	d.Labels = make([]int, len(labels))
	for i, l := range labels {
		d.Labels[i], _ = slices.BinarySearchFunc(d.Classes, l, compareLabels(d.Classes))
	}
	if len(d.Report.Missing) == 0 {
		d.Report = nil
	}
	return d, d.Validate()
}

// headerIsData reports whether the header cols of a table with label
// column label and row labels labels is a data row of a file without a
// header (UCI's iris.data, say): every feature column's name parses as a
// number and the label column's name is itself one of the labels or a
// number. The column names pandas gives an unnamed frame, 0, 1, 2, … in
// order, are a header.
func headerIsData(cols []string, label int, labels []string) bool {
	sequential := true
	for j, c := range cols {
		if j == label {
			continue
		}
		if _, err := strconv.ParseFloat(c, 64); err != nil {
			return false
		}
	}
	for j, c := range cols {
		if c != strconv.Itoa(j) {
			sequential = false
			break
		}
	}
	if sequential {
		return false
	}
	if _, err := strconv.ParseFloat(cols[label], 64); err == nil {
		return true
	}
	return slices.Contains(labels, cols[label])
}

// sortLabels returns the distinct labels sorted: by integer value when all
// are integers (ties between spellings such as "1" and "01" by string),
// otherwise as strings.
func sortLabels(labels []string) []string {
	set := map[string]bool{}
	var out []string
	for _, l := range labels {
		if !set[l] {
			set[l] = true
			out = append(out, l)
		}
	}
	slices.SortFunc(out, compareLabels(out))
	return out
}

// compareLabels returns the ordering sortLabels uses for the label set
// names: numeric when every name is an integer, else by string.
func compareLabels(names []string) func(a, b string) int {
	numeric := true
	for _, n := range names {
		if _, err := strconv.ParseInt(n, 10, 64); err != nil {
			numeric = false
			break
		}
	}
	return func(a, b string) int {
		if numeric {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
		}
		return strings.Compare(a, b)
	}
}

// ReadCSV reads a CSV table (see ParseCSV) from path: a .csv file, or a
// folder holding exactly one .csv file (hidden files ignored). A missing
// path or a folder without a .csv is ErrNotFound; a folder with several,
// or a bad table, ErrCorrupt. Files holds "NAME.csv:ROW".
func ReadCSV(path string, opts CSVOptions) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, classify(fmt.Errorf("csv: %w", err))
	}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, classify(fmt.Errorf("csv: %w", err))
		}
		var found []string
		for _, e := range entries {
			if !skipName(e.Name()) && !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".csv") {
				found = append(found, e.Name())
			}
		}
		switch len(found) {
		case 0:
			return nil, notFoundf("csv: no .csv file in %s", path)
		case 1:
			path = filepath.Join(path, found[0])
		default:
			return nil, corruptf("csv: %s holds %d .csv files (%s): name the one to read as data_dir", path, len(found), strings.Join(found, ", "))
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, classify(fmt.Errorf("csv: %w", err))
	}
	defer f.Close()
	// A device or a pipe (/dev/zero, /dev/stdin) has no end to wait for.
	if fi, err := f.Stat(); err != nil {
		return nil, classify(fmt.Errorf("csv: %w", err))
	} else if !fi.Mode().IsRegular() {
		return nil, corruptf("csv: %s: not a regular file (%s); data_dir names a .csv file or a folder holding one", path, filekind.Of(fi.Mode()))
	}
	d, err := ParseCSV(f, filepath.Base(path), opts)
	if err != nil {
		if opts.Label != "" && strings.HasPrefix(err.Error(), "no label column") {
			return nil, fmt.Errorf("csv: %s: %w", path, err) // a setting, not a broken file
		}
		return nil, corruptf("csv: %s: %w", path, err)
	}
	return d, nil
}

// Impute modes for missing feature values (the YAML key data.missing).
const (
	ImputeError = "error" // any missing value is an error naming it (the default, also "")
	ImputeMean  = "mean"  // a column's mean over the training samples
	ImputeMode  = "mode"  // a column's most frequent value over the training samples (ties: the smallest)
)

// Impute returns a copy of d whose missing values (NaN) are filled per
// feature position with a statistic of the training samples train only
// (indices into d), so that no query value influences the fill; d itself is
// unchanged. mode is ImputeError ("" too), ImputeMean or ImputeMode. With
// ImputeError any missing value, and with the others a column with no value
// among the training samples, is an error naming the row, line and column.
// A data set without missing values is returned as is.
func Impute(d *Dataset, train []int, mode string) (*Dataset, error) {
	if mode != "" && mode != ImputeError && mode != ImputeMean && mode != ImputeMode {
		return nil, fmt.Errorf("missing values: unknown mode %q (want error, mean or mode)", mode)
	}
	s := d.SampleSize()
	first := -1
	for i, v := range d.X {
		if v != v {
			first = i
			break
		}
	}
	if first < 0 {
		return d, nil
	}
	where := func(i, j int) string {
		w := fmt.Sprintf("row %d", i)
		if d.Files != nil {
			w = d.Files[i]
		}
		if d.Report != nil {
			for _, c := range d.Report.Missing {
				if c.Row == i {
					w += fmt.Sprintf(" (line %d)", c.Line)
					break
				}
			}
		}
		col := fmt.Sprintf("value %d", j)
		if d.Features != nil && j < len(d.Features) {
			col = "column " + QuoteCell(d.Features[j])
		}
		return w + ", " + col
	}
	if mode == "" || mode == ImputeError {
		return nil, fmt.Errorf("%s: %s: missing value (set data.missing to mean or mode to fill it from the training samples)", d.Name, where(first/s, first%s))
	}
	fill, err := ImputeValues(d, train, mode)
	if err != nil {
		return nil, err
	}
	for j, v := range fill {
		if v != v && hasNaNAt(d, j) {
			return nil, fmt.Errorf("%s: %s: missing value, and the column has no value among the %d training samples to fill it with", d.Name, where(firstNaNRow(d, j), j), len(train))
		}
	}
	out := *d
	out.X = slices.Clone(d.X)
	for i, v := range out.X {
		if v != v {
			out.X[i] = fill[i%s]
		}
	}
	return &out, nil
}

// ImputeValues returns the value Impute fills each feature position with:
// the mean (ImputeMean) or the most frequent value, ties to the smallest
// (ImputeMode), of the position's present values among the training
// samples train (indices into d); NaN for a position with no value there.
// Tools that must fill new samples exactly as a run filled its episode (an
// export's preprocessing) record these.
func ImputeValues(d *Dataset, train []int, mode string) ([]float32, error) {
	if mode != ImputeMean && mode != ImputeMode {
		return nil, fmt.Errorf("missing values: mode %q has no fill values (want mean or mode)", mode)
	}
	s := d.SampleSize()
	fill := make([]float32, s)
	vals := make([]float32, 0, len(train))
	for j := 0; j < s; j++ {
		vals = vals[:0]
		for _, i := range train {
			if v := d.X[i*s+j]; v == v {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			fill[j] = float32(math.NaN())
			continue
		}
		if mode == ImputeMean {
			sum := 0.0
			for _, v := range vals {
				sum += float64(v)
			}
			fill[j] = float32(sum / float64(len(vals)))
		} else {
			slices.Sort(vals)
			best, bestN := vals[0], 0
			for a := 0; a < len(vals); {
				b := a
				for b < len(vals) && vals[b] == vals[a] {
					b++
				}
				if b-a > bestN {
					best, bestN = vals[a], b-a
				}
				a = b
			}
			fill[j] = best
		}
	}
	return fill, nil
}

func hasNaNAt(d *Dataset, j int) bool { return firstNaNRow(d, j) >= 0 }

func firstNaNRow(d *Dataset, j int) int {
	s := d.SampleSize()
	for i := 0; i < d.Len(); i++ {
		if v := d.X[i*s+j]; v != v {
			return i
		}
	}
	return -1
}

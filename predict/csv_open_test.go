package predict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
)

// TestCSVOpenedAsTraining: a table the csv data set of training reads is
// read by -csv too, columns found by name — a UTF-8 byte-order mark before
// a quoted header (R's write.csv with fileEncoding "UTF-8-BOM", pandas
// with QUOTE_ALL and encoding "utf-8-sig") was "bare \" in non-quoted-field"
// here — and spaces before a quoted field are accepted by both.
func TestCSVOpenedAsTraining(t *testing.T) {
	for name, in := range map[string]string{
		"BOM, quoted header":  "\ufeff\"sepal_len\",\"sepal_wid\",\"species\"\r\n5.1,3.5,\"setosa\"\r\n6.2,2.9,\"virginica\"\r\n",
		"BOM, plain header":   "\ufeffsepal_len,sepal_wid,species\n5.1,3.5,setosa\n6.2,2.9,virginica\n",
		"space before quotes": "sepal_len, \"sepal_wid\", \"species\"\n5.1, \"3.5\", \"setosa\"\n6.2,2.9,virginica\n",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := datasets.ParseCSV(strings.NewReader(in), "iris", datasets.CSVOptions{})
			if err != nil {
				t.Fatalf("training reader: %v", err)
			}
			m := featureModel(t, d.Features, []float64{0, 0})
			rows, err := m.readCSVSamples(strings.NewReader(in), "iris.csv", 2, d.Features)
			if err != nil {
				t.Fatalf("-csv: %v (the training reader took it: features %q)", err, d.Features)
			}
			if len(rows) != 2 || rows[0].err != nil || rows[0].x[0] != 5.1 || rows[0].x[1] != 3.5 || rows[1].x[1] != 2.9 {
				t.Fatalf("-csv rows %+v", rows)
			}
		})
	}
}

// endlessZeros is /dev/zero: zero bytes without end; n counts them.
type endlessZeros struct{ n int }

func (z *endlessZeros) Read(p []byte) (int, error) {
	if z.n > 4*datasets.MaxCSVRecordBytes { // the test fails, not the machine
		return 0, io.EOF
	}
	clear(p)
	z.n += len(p)
	return len(p), nil
}

// TestCSVBounded: -csv of a file without line breaks stops after
// datasets.MaxCSVRecordBytes with one line naming the file and line 1
// (it read until memory ran out); a device is refused before it is read.
func TestCSVBounded(t *testing.T) {
	m := featureModel(t, []string{"a", "b"}, []float64{0, 0})
	z := &endlessZeros{}
	_, err := m.readCSVSamples(z, "zero.csv", 2, []string{"a", "b"})
	if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "zero.csv: line 1: a record longer than") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%v", err)
	}
	if z.n > datasets.MaxCSVRecordBytes+1<<20 {
		t.Fatalf("read %d bytes", z.n)
	}
	if _, err := m.csvSamples(context.Background(), "/dev/null"); err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "/dev/null: not a regular file") {
		t.Fatalf("/dev/null: %v", err)
	}
}

// TestCSVLongCellQuotedShort: a row whose cell is 200,000 digits fails
// alone with a short message quoting the cell's first 40 characters and its
// length (the whole cell made a 2 MB line); so does a header without the
// model's column, however long the model's list of columns.
func TestCSVLongCellQuotedShort(t *testing.T) {
	long := strings.Repeat("9", 200000)
	m := featureModel(t, []string{"a", "b"}, []float64{0, 0})
	rows, err := m.readCSVSamples(strings.NewReader("a,b\n1,2\n"+long+",3\n"), "t.csv", 2, []string{"a", "b"})
	if err != nil || len(rows) != 2 || rows[1].err == nil {
		t.Fatalf("%v, %+v", err, rows)
	}
	if msg := rows[1].err.Error(); len(msg) > 200 || !strings.Contains(msg, `"`+long[:40]+`"… (200000 bytes) is not a finite number`) {
		t.Fatalf("%d-byte error %.300q", len(msg), msg)
	}
	names := make([]string, 3000)
	for i := range names {
		names[i] = strings.Repeat("c", 100) + strconv.Itoa(i)
	}
	_, err = m.readCSVSamples(strings.NewReader("x,y\n1,2\n"), "t.csv", len(names), names)
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "(3000 columns)") {
		t.Fatalf("%d-byte error %.300q", len(fmt.Sprint(err)), fmt.Sprint(err))
	}
}

package datasets

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// endless serves prefix, then repeat over and over, up to limit bytes in
// all (then EOF): a file with no end to its last record, as /dev/zero.
type endless struct {
	prefix, repeat string
	served, limit  int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.served >= e.limit {
		return 0, io.EOF
	}
	p = p[:min(len(p), e.limit-e.served)]
	n := 0
	if e.served < len(e.prefix) {
		n = copy(p, e.prefix[e.served:])
	}
	for n < len(p) {
		k := (e.served + n - len(e.prefix)) % len(e.repeat)
		n += copy(p[n:], e.repeat[k:])
	}
	e.served += n
	return n, nil
}

// TestCSVRecordBound: a record longer than MaxCSVRecordBytes — a line
// without an end (zero bytes), or a quoted field holding line after line —
// is an error naming the line where the record starts, and the reader
// stops soon after the bound instead of reading on (it read the whole
// record, 19.6 GB of /dev/zero, before).
func TestCSVRecordBound(t *testing.T) {
	const limit = 4 * MaxCSVRecordBytes
	for _, c := range []struct {
		name, prefix, repeat, want string
	}{
		{"zeros", "", "\x00", "line 1: a record longer than"},
		{"long row", "a,b,y\n1,2,x\n", "1", "line 3: a record longer than"},
		{"quoted lines", "a,y\n1,x\n2,\"", "z\n", "line 3: a record longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &endless{prefix: c.prefix, repeat: c.repeat, limit: limit}
			_, err := ParseCSV(r, "f.csv", CSVOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrCSVRecordTooLong) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%v; want an error with %q", err, c.want)
			}
			if r.served > MaxCSVRecordBytes+1<<20 {
				t.Fatalf("read %d bytes, the bound is %d", r.served, MaxCSVRecordBytes)
			}
		})
	}
	// A record just under the bound, and many short ones, are read.
	long := "a,y\n1," + strings.Repeat("x", MaxCSVRecordBytes-10) + "\n2,y\n"
	if d, err := ParseCSV(strings.NewReader(long), "f.csv", CSVOptions{}); err != nil || d.Len() != 2 {
		t.Fatalf("a record under the bound: %v", err)
	}
	row := "1," + strings.Repeat("x", 1021) + "\n"
	many := &endless{prefix: "a,y\n", repeat: row, limit: 4 + (MaxCSVRecordBytes/len(row)+10)*len(row)}
	if d, err := ParseCSV(many, "f.csv", CSVOptions{}); err != nil || d.Len() != MaxCSVRecordBytes/len(row)+10 {
		t.Fatalf("many short records: %v", err)
	}
}

// TestReadCSVNotRegular: a data_dir that is a device (or a pipe) is
// refused naming it, before it is read.
func TestReadCSVNotRegular(t *testing.T) {
	_, err := ReadCSV("/dev/null", CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), "/dev/null") || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("ReadCSV(/dev/null): %v", err)
	}
}

// TestCSVLongCellQuotedShort: an error that quotes a cell, a column name or
// the header quotes at most the first 40 characters of each and says how
// long it is, so that the one line stays short (a 200,000-digit cell made
// a 200 KB line).
func TestCSVLongCellQuotedShort(t *testing.T) {
	long := strings.Repeat("7", 200000)
	text := strings.Repeat("é", 100000)
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprint(i + 1)
	}
	for _, c := range []struct {
		name, in, label, want string
	}{
		{"long number", "a,y\n1,x\n" + long + ",y\n", "", `line 3, column "a": "` + long[:40] + `"… (200000 bytes) is not a finite float32 number`},
		{"long text", "a,y\n" + text + ",x\n", "", `"… (200000 bytes) is not a number`},
		{"long label name", long + ",y\nx,1\n", long, ""},
		{"long duplicate", long + "," + long + ",y\n1,2,x\n", "", "… (200000 bytes)"},
		{"many columns, no label", strings.Join(many, ",") + "\n" + strings.Join(many, ",") + "\n", "nothere", "… (5000 columns)"},
		{"header is data", strings.Join(many, ",") + "\n" + strings.Join(many, ",") + "\n", "", "… (5000 columns)"},
	} {
		_, err := ParseCSV(strings.NewReader(c.in), "f.csv", CSVOptions{Label: c.label})
		if c.name == "long label name" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err) // a long name is fine
			}
			continue
		}
		if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %d-byte error %.500q; want ≤ 400 bytes with %q", c.name, len(fmt.Sprint(err)), fmt.Sprint(err), c.want)
		}
	}
	if got := QuoteCell("abc"); got != `"abc"` {
		t.Errorf("QuoteCell(abc) = %s", got)
	}
	if got := QuoteCell(text); !utf8.ValidString(got) || got != `"`+strings.Repeat("é", 40)+`"… (200000 bytes)` {
		t.Errorf("QuoteCell(é…) = %s", got)
	}
}

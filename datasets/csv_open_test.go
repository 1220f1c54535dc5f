package datasets

import (
	"strings"
	"testing"
)

// TestMiniImageNetCSVQuotedBOMHeader: the split files are opened as every
// table (NewCSVReader): a byte-order mark before a quoted header was a
// bare quote.
func TestMiniImageNetCSVQuotedBOMHeader(t *testing.T) {
	rows, err := ParseMiniImageNetCSV(strings.NewReader("\ufeff\"filename\",\"label\"\r\n\"a.jpg\",\"n01\"\r\n"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v, %+v", err, rows)
	}
}

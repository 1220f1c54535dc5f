// Package oneline puts an error's message on one line, as a log line, a
// refusal or results.json records it: Err collapses a message's lines and
// white space, Quote quotes a string that holds a newline or another
// character that is not printable (a gob type name read from a corrupt
// file, for instance).
package oneline

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/drknn/drknn/internal/vmerr"
)

// Err is err's message on one line: its lines joined by "; ", runs of white
// space collapsed, and Gorgonia's report of a failing graph instruction left
// out (vmerr.Clean: the op's own error stays).
func Err(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(vmerr.Clean(err).Error(), "\n", "; ")), " ")
}

// Quote is s, quoted (strconv.Quote) when it holds a newline or another
// character that is not printable, else s as it is.
func Quote(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

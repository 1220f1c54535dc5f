package oneline

import (
	"errors"
	"fmt"
	"testing"
)

func TestErr(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("a\nb   c"), "a; b c"},
		{fmt.Errorf("read x.npy: %w", errors.New("header\n\tends early ")), "read x.npy: header; ends early"},
		{errors.New("plain"), "plain"},
	} {
		if got := Err(c.err); got != c.want {
			t.Errorf("Err(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"gob: type mismatch", "gob: type mismatch"},
		{"name\nwith a newline", `"name\nwith a newline"`},
		{"tab\there", `"tab\there"`},
		{"bell\a", `"bell\a"`},
		{"ünïcode ok", "ünïcode ok"},
		{"", ""},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

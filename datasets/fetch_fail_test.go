package datasets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchRefusesBadBaseURL: Fetch and FetchAll check BaseURL before any
// work — no folder made, no request — and CheckBaseURL accepts the usual
// mirror addresses.
func TestFetchRefusesBadBaseURL(t *testing.T) {
	m := newMirror(t)
	set := oneFileSet("tiny", "a.bin", []byte("a"))
	for _, u := range []string{"::bad", "ftp://x", "http//x", "http://", "http:x", "https://:443/", "x.example/data",
		m.srv.URL + "?q", m.srv.URL + "?", m.srv.URL + "#", "http://x/\x7f", " http://x"} {
		if CheckBaseURL(u) == nil {
			t.Errorf("CheckBaseURL(%q) accepted it", u)
		}
		dir := filepath.Join(t.TempDir(), "data")
		opts := FetchOptions{Dir: dir, BaseURL: u, Retries: -1}
		for name, err := range map[string]error{
			"Fetch":    Fetch(context.Background(), set, opts),
			"FetchAll": FetchAll(context.Background(), []FetchSet{set, set}, opts),
		} {
			if err == nil || !strings.Contains(err.Error(), "base URL") || strings.Count(err.Error(), "base URL") != 1 {
				t.Errorf("%s with BaseURL %q: %v; want one error about the base URL", name, u, err)
			}
		}
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("BaseURL %q: %s was created", u, dir)
		}
	}
	if m.gets != 0 {
		t.Errorf("%d requests with malformed base URLs", m.gets)
	}
	for _, u := range []string{"http://127.0.0.1:8080", "https://mirror.example/data/", "http://[::1]:9/x", "HTTP://Mirror.Example"} {
		if err := CheckBaseURL(u); err != nil {
			t.Errorf("CheckBaseURL(%q): %v", u, err)
		}
	}
}

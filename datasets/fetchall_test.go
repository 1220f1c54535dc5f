package datasets

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One set that cannot be fetched does not stop the others: FetchAll fetches
// every set it can and reports each failure, naming the set. (It stopped at
// the first failure, leaving the sets after it unfetched.)
func TestFetchAllReportsFailuresAndGoesOn(t *testing.T) {
	m := newMirror(t)
	a, c := testBlob(300), testBlob(500)
	m.files["/a/a.bin"] = a
	m.files["/c/c.bin"] = c
	sets := []FetchSet{oneFileSet("a", "a.bin", a), oneFileSet("b", "b.bin", testBlob(400)), oneFileSet("c", "c.bin", c)}
	dir := t.TempDir()
	var log bytes.Buffer
	err := FetchAll(context.Background(), sets, FetchOptions{Dir: dir, BaseURL: m.srv.URL + "/", Retries: -1, Progress: logTo(&log)})
	if err == nil || !strings.HasPrefix(err.Error(), "b: ") || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("FetchAll: %v, want one error naming set b", err)
	}
	for name, want := range map[string][]byte{"a/a.bin": a, "c/c.bin": c} {
		got, rerr := os.ReadFile(filepath.Join(dir, name))
		if rerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s not fetched after set b failed: %v\n%s", name, rerr, log.String())
		}
	}
	noLeftovers(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := FetchAll(ctx, sets, FetchOptions{Dir: t.TempDir(), BaseURL: m.srv.URL + "/", Retries: -1}); err == nil || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("cancelled FetchAll: %v, want one error (it stops at the first set)", err)
	}
}

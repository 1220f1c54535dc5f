package datasets

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeOf returns the tree at root as path -> contents ("/" for a folder).
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			out[filepath.ToSlash(rel)] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func makeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if c == "/" {
			if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeTestFile(t, filepath.Join(root, filepath.FromSlash(p)), []byte(c))
	}
}

// The present files (one the archive does not have, keep.txt and
// sub/mine), the archive's, and what merging gives.
var (
	mergeOld = map[string]string{"a": "old a", "sub": "/", "sub/b": "old b", "sub/mine": "old mine", "keep.txt": "old keep"}
	mergeNew = map[string]string{"a": "new a", "sub": "/", "sub/b": "new b", "c": "new c"}
	mergeOut = map[string]string{"a": "new a", "sub": "/", "sub/b": "new b", "sub/mine": "old mine", "c": "new c", "keep.txt": "old keep"}
)

// hidden lists the entries of dir whose names start with a dot (left-over
// .replaced-/.extract- folders).
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestMergeIntoConflictChangesNothing: the new files have a file where the
// present ones have a folder. The merge fails naming it, and the present
// files are all as they were (moving the files one by one replaced "a"
// before failing on "b", leaving half old, half new).
func TestMergeIntoConflictChangesNothing(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "tmp", "keep"), filepath.Join(dir, "keep")
	old := map[string]string{"a": "old a", "b": "/", "b/x": "old x"}
	makeTree(t, dst, old)
	makeTree(t, src, map[string]string{"a": "new a", "b": "new b"})
	err := mergeInto(src, dst)
	if got := treeOf(t, dst); !maps.Equal(got, old) {
		t.Fatalf("after the failed merge (%v) %s holds %v, want it unchanged %v", err, dst, got, old)
	}
	if err == nil || !strings.Contains(err.Error(), "b is a folder among the present files but a file among the new ones") ||
		!strings.Contains(err.Error(), "nothing changed") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line naming b", err)
	}
	if h := hidden(t, dir); len(h) > 0 {
		t.Fatalf("left over: %v", h)
	}
}

// TestMergeIntoSwapFailures makes each step of the swap fail in turn: the
// destination is then complete as it was or complete as merged, never a
// mix; the error says where the files are; and the next extraction's
// recovery followed by a merge gives the merged tree with nothing left over.
func TestMergeIntoSwapFailures(t *testing.T) {
	errBoom := errors.New("boom")
	cases := []struct {
		name      string
		failCalls []int // which rename calls (1-based) fail
		failRm    bool
		want      map[string]string // dst after the failure (nil: absent)
		msg       string
	}{
		{"moving the present files aside", []int{1}, false, mergeOld, "moving it aside: boom; nothing changed"},
		{"moving the new files in", []int{2}, false, mergeOld, "boom; nothing changed"},
		{"moving the new files in and the old back", []int{2, 3}, false, nil, "(the next get puts them back)"},
		{"removing the replaced copy", nil, true, mergeOut, "is complete, but the replaced copy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, ".extract-keep-1", "keep"), filepath.Join(dir, "keep")
			makeTree(t, dst, mergeOld)
			makeTree(t, src, mergeNew)
			calls := 0
			rename := func(from, to string) error {
				calls++
				for _, n := range c.failCalls {
					if n == calls {
						return errBoom
					}
				}
				return os.Rename(from, to)
			}
			removeAll := os.RemoveAll
			if c.failRm {
				removeAll = func(string) error { return errBoom }
			}
			err := mergeIntoWith(src, dst, rename, removeAll)
			if err == nil || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.msg)
			}
			if c.want == nil {
				if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s: %v", dst, err)
				}
				// The error names the folder holding every old file.
				h := hidden(t, dir)
				var kept string
				for _, n := range h {
					if strings.HasPrefix(n, ".replaced-keep-") {
						kept = filepath.Join(dir, n)
					}
				}
				if kept == "" || !strings.Contains(err.Error(), kept) || !maps.Equal(treeOf(t, kept), mergeOld) {
					t.Fatalf("old files not intact where the error %q says (%v)", err, h)
				}
			} else if got := treeOf(t, dst); !maps.Equal(got, c.want) {
				t.Fatalf("%s holds %v, want %v", dst, got, c.want)
			}
			// The next run: recovery, then extraction and merge anew.
			os.RemoveAll(filepath.Join(dir, ".extract-keep-1"))
			if _, err := recoverReplaced(dir, "keep"); err != nil {
				t.Fatal(err)
			}
			makeTree(t, src, mergeNew)
			if err := mergeInto(src, dst); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(dir, ".extract-keep-1"))
			if got := treeOf(t, dst); !maps.Equal(got, mergeOut) {
				t.Fatalf("after the rerun %s holds %v, want %v", dst, got, mergeOut)
			}
			if h := hidden(t, dir); len(h) > 0 {
				t.Fatalf("left over after the rerun: %v", h)
			}
		})
	}
}

// TestExtractRecoversInterruptedSwap: a run killed between moving the
// present files aside and moving the new ones in leaves no KEEP folder but
// a .replaced-KEEP-* one (and a stale .extract-KEEP-* folder). The next
// extraction puts the old files back, then merges: nothing of them is lost.
// A .replaced- folder beside a present KEEP (killed after the swap) is
// removed.
func TestExtractRecoversInterruptedSwap(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.zip")
	files := map[string][]byte{}
	for p, c := range mergeNew {
		if c != "/" {
			files["keep/"+p] = []byte(c)
		}
	}
	writeTestFile(t, archive, zipOf(t, files))
	to := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(to, ".replaced-keep-123"), mergeOld)
	makeTree(t, filepath.Join(to, ".extract-keep-456", "keep"), map[string]string{"half": "written"})
	var log []string
	logf := func(f string, a ...any) { log = append(log, f) }
	if err := extractArchive(archive, "zip", to, "keep", logf); err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, filepath.Join(to, "keep")); !maps.Equal(got, mergeOut) {
		t.Fatalf("after recovery and extraction: %v, want %v", got, mergeOut)
	}
	if h := hidden(t, to); len(h) > 0 || len(log) != 2 {
		t.Fatalf("left over %v; log %q", h, log)
	}
	makeTree(t, filepath.Join(to, ".replaced-keep-789"), map[string]string{"x": "stale"})
	if err := extractArchive(archive, "zip", to, "keep", logf); err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, filepath.Join(to, "keep")); !maps.Equal(got, mergeOut) || len(hidden(t, to)) > 0 {
		t.Fatalf("after removing a stale copy: %v, left over %v", got, hidden(t, to))
	}
}

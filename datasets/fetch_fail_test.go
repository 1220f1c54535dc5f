package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
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

// failServer answers every request the way mode says: "500", "404",
// "wrong" (other bytes of the right length: checksum mismatch), "short" (the
// first half of the file, then a clean end: a truncated download),
// "cut0" (headers announcing the whole file, then the connection cut before
// any byte).
func failServer(t *testing.T, mode string, content []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode {
		case "500":
			w.WriteHeader(http.StatusInternalServerError)
		case "404":
			http.NotFound(w, r)
		case "wrong":
			w.Write(bytes.Repeat([]byte{1}, len(content)))
		case "short":
			w.Write(content[:len(content)/2])
		case "cut0":
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFailedFetchLeavesNoFolders: a fetch that fails (server error, missing
// file, checksum mismatch, truncated download, connection cut before the
// first byte) leaves the data folder as it was: no empty set folder, no
// empty extraction folder, no data folder that was not there, and a set
// already present (here an old file that the fetch would replace) and
// another set untouched. The readers and Verify then see the set as absent
// (ErrNotFound), not as there. Fetch used to leave DIR/SET behind empty, and
// for omniglot and covid-ct Verify then reported the set BAD.
func TestFailedFetchLeavesNoFolders(t *testing.T) {
	content := testBlob(50000)
	zipped := zipOf(t, map[string][]byte{"keep/a.txt": content})
	plain := oneFileSet("plain", "f.bin", content)
	archive := FetchSet{Name: "arch", Files: []FetchFile{{URL: "https://upstream.invalid/arch.zip", MD5: md5hex(zipped),
		Dest: "arch/dl/arch.zip", Extract: "zip", ExtractTo: "arch/out", Keep: "keep"}}}
	for _, mode := range []string{"500", "404", "wrong", "short", "cut0"} {
		for _, set := range []FetchSet{plain, archive} {
			body := content
			if set.Name == "arch" {
				body = zipped
			}
			srv := failServer(t, mode, body)
			opts := FetchOptions{BaseURL: srv.URL, Retries: -1}

			// A data folder that is not there stays not there.
			opts.Dir = filepath.Join(t.TempDir(), "new", "data")
			if err := Fetch(context.Background(), set, opts); err == nil {
				t.Fatalf("%s %s: no error", mode, set.Name)
			}
			if _, err := os.Lstat(filepath.Dir(opts.Dir)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s %s: failed fetch left %v behind", mode, set.Name, treeOf(t, filepath.Dir(filepath.Dir(opts.Dir))))
			}

			// An existing data folder keeps exactly what it held.
			opts.Dir = t.TempDir()
			before := map[string]string{"other": "/", "other/x": "other set", "plain": "/", "plain/f.bin": "old version"}
			if set.Name == "arch" {
				before = map[string]string{"other": "/", "other/x": "other set"}
			}
			makeTree(t, opts.Dir, before)
			if err := Fetch(context.Background(), set, opts); err == nil {
				t.Fatalf("%s %s: no error", mode, set.Name)
			}
			if got := treeOf(t, opts.Dir); !maps.Equal(got, before) {
				t.Errorf("%s %s: data folder %v after a failed fetch, want %v as before", mode, set.Name, got, before)
			}
		}
	}
}

// TestFailedGetLeavesSetAbsent: with the built-in table, a get of each set
// that fails leaves no folder, Load reports ErrNotFound and Verify finds no
// data set.
func TestFailedGetLeavesSetAbsent(t *testing.T) {
	srv := failServer(t, "500", nil)
	for _, s := range FetchSets() {
		dir := t.TempDir()
		if err := Fetch(context.Background(), s, FetchOptions{Dir: dir, BaseURL: srv.URL, Retries: -1}); err == nil {
			t.Fatalf("%s: no error", s.Name)
		}
		if left := treeOf(t, dir); len(left) > 0 {
			t.Errorf("%s: failed get left %v", s.Name, left)
		}
		if _, err := Load(s.Name, filepath.Join(dir, Subdir(s.Name)), Options{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Load after a failed get: %v, want ErrNotFound", s.Name, err)
		}
		if _, err := Verify(context.Background(), dir); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Verify after a failed get: %v, want ErrNotFound (no data set)", s.Name, err)
		}
	}
}

// TestVerifyTreeSetsAbsentOrPartial: an omniglot or covid-ct folder holding
// none of the set's folders (only an unfinished download kept for the next
// get) is absent, one holding some of them partial; it used to be BAD ("no
// such file or directory"), and a failed get that kept its .part made the
// set look there and broken.
func TestVerifyTreeSetsAbsentOrPartial(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{
		"lung-cancer/lung-cancer.data":            "",
		"omniglot/images_background.zip.part":     "PK",
		"omniglot/images_background.zip.part.src": `{"url":"https://x/images_background.zip"}`,
		"covid-ct/CT_COVID.zip.part":              "PK",
		"covid-ct/CT_NonCOVID/a.png":              "x",
	})
	r, err := Verify(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SetState{}
	for _, s := range r.Sets {
		got[s.Name] = s.State
	}
	if got["omniglot"] != StateAbsent || got["covid-ct"] != StateBad {
		t.Errorf("states %v; want omniglot absent, covid-ct BAD (CT_NonCOVID holds 1 image, not 397)", got)
	}
	// With the one present folder complete, covid-ct is partial.
	for i := range 396 {
		writeTestFile(t, filepath.Join(dir, "covid-ct", "CT_NonCOVID", fmt.Sprintf("b%d.png", i)), []byte("x"))
	}
	r, err = Verify(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Sets {
		if s.Name == "covid-ct" && (s.State != StatePartial || !strings.Contains(s.Detail, "missing covid-ct/CT_COVID/")) {
			t.Errorf("covid-ct with CT_NonCOVID complete and no CT_COVID: %s %q, want partial naming CT_COVID/", s.State, s.Detail)
		}
	}
}

// TestCIFARBatchesChecked: every CIFAR-10 batch has an md5, the recorded
// test_batch.bin one matches the shared copy, and verify reports a damaged
// training batch as BAD — the five training batches had no md5, so a
// damaged one passed as ok.
func TestCIFARBatchesChecked(t *testing.T) {
	for n, sum := range knownFiles["cifar10"] {
		if len(sum) != 32 || !isHex(sum) {
			t.Errorf("%s: md5 %q", n, sum)
		}
	}
	real, err := datadir.Require("cifar-10", "cifar-10-batches-bin")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cifar-10", "cifar-10-batches-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"test_batch.bin", "batches.meta.txt"} {
		if err := os.Symlink(filepath.Join(real, n), filepath.Join(bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	state := func() SetStatus {
		t.Helper()
		r, err := Verify(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return r.Sets[1]
	}
	if s := state(); s.Name != "cifar10" || s.State != StatePartial {
		t.Fatalf("shared test batch: %+v, want cifar10 partial (its md5 matching)", s)
	}
	// A training batch of the right size but other bytes.
	writeTestFile(t, filepath.Join(bin, "data_batch_1.bin"), bytes.Repeat([]byte{3}, 30730000))
	if s := state(); s.State != StateBad || !strings.Contains(s.Detail, "data_batch_1.bin: md5") {
		t.Errorf("damaged data_batch_1.bin: %+v, want BAD naming it", s)
	}
}

// TestUnverifiedArchiveNotExtractingIsRemoved: an archive without a checksum
// (COVID-CT's) that arrives cut short does not extract; it is removed, so
// the next fetch downloads it again and succeeds. It used to be kept, taken
// as downloaded ("have … unverified") by every later fetch, and fail to
// extract each time.
func TestUnverifiedArchiveNotExtractingIsRemoved(t *testing.T) {
	good := zipOf(t, map[string][]byte{"keep/a.txt": []byte("a")})
	m := newMirror(t)
	m.files["/s/s.zip"] = good[:len(good)/2] // served as if whole
	set := FetchSet{Name: "s", Files: []FetchFile{{URL: "https://upstream.invalid/s.zip", Dest: "s/s.zip", Extract: "zip", ExtractTo: "s", Keep: "keep"}}}
	dir := t.TempDir()
	opts := FetchOptions{Dir: dir, BaseURL: m.srv.URL, Retries: -1}
	if err := Fetch(context.Background(), set, opts); err == nil || !strings.Contains(err.Error(), "not a valid zip") {
		t.Fatalf("truncated unverified archive: %v", err)
	}
	if left := treeOf(t, dir); len(left) > 0 {
		t.Errorf("a failed extraction left %q", slices.Sorted(maps.Keys(left)))
	}
	m.files["/s/s.zip"] = good
	if err := Fetch(context.Background(), set, opts); err != nil {
		t.Fatalf("fetch after the server has the whole archive: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "s", "keep", "a.txt")); err != nil || string(b) != "a" {
		t.Fatalf("extracted file: %q, %v", b, err)
	}
}

// FuzzCheckBaseURL: CheckBaseURL never panics, and an address it accepts
// makes request URLs (BASE/SET/FILE, as Fetch builds them) that parse with
// its scheme and host, so no request goes anywhere but the mirror named.
func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080", "https://m.example/data/", "::bad", "ftp://x", "http//x", "http://",
		"http:x", "http://x?q", "http://x#f", "http://[::1]:9/x", "http://u:p@h/p", "http://x/%zz", "http://x/a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if CheckBaseURL(u) != nil {
			return
		}
		base, err := url.Parse(u)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", u, err)
		}
		full := strings.TrimSuffix(u, "/") + "/mnist/t10k-labels-idx1-ubyte.gz"
		req, err := http.NewRequest(http.MethodGet, full, nil)
		if err != nil {
			t.Fatalf("accepted %q, but the request URL %q does not parse: %v", u, full, err)
		}
		// (NewRequest drops an empty port: "h:" is "h".)
		if req.URL.Scheme != base.Scheme || req.URL.Host != strings.TrimSuffix(base.Host, ":") || req.URL.RawQuery != "" || req.URL.Fragment != "" {
			t.Fatalf("accepted %q, but the request goes to %s://%s (query %q, fragment %q)", u, req.URL.Scheme, req.URL.Host, req.URL.RawQuery, req.URL.Fragment)
		}
	})
}

// An archive without a checksum is removed after a failed extraction only
// when this get downloaded it and the archive itself is at fault. A whole
// archive already there (placed by hand, or kept with -keep-archives) whose
// extraction fails for another reason — here a folder where the archive
// has a file — is kept; so is a cut-short one already there, with a line
// saying to delete it. Both were deleted.
func TestArchiveKeptWhenNotAtFault(t *testing.T) {
	good := zipOf(t, map[string][]byte{"keep/a.txt": []byte("a")})
	set := FetchSet{Name: "s", Files: []FetchFile{{URL: "https://upstream.invalid/s.zip", Dest: "s/s.zip", Extract: "zip", ExtractTo: "s", Keep: "keep"}}}
	for _, c := range []struct {
		name string
		zip  []byte
		want string
	}{
		{"whole archive, clash with the files present", good, "a folder among the present files"},
		{"cut-short archive already there", good[:len(good)/2], "delete it to download it again"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			zp := filepath.Join(dir, "s", "s.zip")
			writeTestFile(t, zp, c.zip)
			writeTestFile(t, filepath.Join(dir, "s", "keep", "a.txt", "x"), []byte("x")) // a folder where the archive has a file
			err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1, BaseURL: "http://127.0.0.1:1"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if b, serr := os.ReadFile(zp); serr != nil || !bytes.Equal(b, c.zip) {
				t.Fatalf("the archive that was there is gone or changed (%v): %v", serr, err)
			}
		})
	}
}

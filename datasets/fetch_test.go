package datasets

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drknn/drknn/internal/datadir"
)

// logTo returns a FetchOptions.Progress that writes lines to b.
func logTo(b *bytes.Buffer) func(string) {
	return func(msg string) { b.WriteString(msg + "\n") }
}

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// mirror is a test HTTP server holding files by URL path. cut(path, n)
// makes the next n whole-file requests for path stop half-way (connection
// aborted); noRange makes it ignore Range headers.
type mirror struct {
	mu      sync.Mutex
	files   map[string][]byte
	cuts    map[string]int
	noRange bool
	etags   map[string]string // ETag sent for a path, if any
	ranges  []string          // Range headers seen, in order
	paths   []string          // URL paths requested, in order
	gets    int
	srv     *httptest.Server
}

func newMirror(t *testing.T) *mirror {
	m := &mirror{files: map[string][]byte{}, cuts: map[string]int{}, etags: map[string]string{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *mirror) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	data, ok := m.files[r.URL.Path]
	rng := r.Header.Get("Range")
	m.ranges = append(m.ranges, rng)
	m.paths = append(m.paths, r.URL.Path)
	m.gets++
	cut := m.cuts[r.URL.Path] > 0 && (rng == "" || m.noRange)
	if cut {
		m.cuts[r.URL.Path]--
	}
	noRange := m.noRange
	etag := m.etags[r.URL.Path]
	m.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if etag != "" {
		w.Header().Set("ETag", etag) // ServeContent then honours If-Range
	}
	if cut {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // cut the connection mid-body
	}
	if noRange {
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// testBlob returns n deterministic bytes.
func testBlob(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func oneFileSet(name, file string, content []byte) FetchSet {
	return FetchSet{Name: name, Files: []FetchFile{{URL: "https://upstream.invalid/" + file, MD5: md5hex(content), Dest: name + "/" + file}}}
}

func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.Contains(p, ".part") || strings.Contains(p, ".extract-")) {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// TestFetchRealFilesThroughMirror serves the real lung-cancer.data and the
// real MNIST test files and fetches them with the built-in table: their
// recorded checksums must match, the layout must be what the readers read.
func TestFetchRealFilesThroughMirror(t *testing.T) {
	data, err := datadir.Require()
	if err != nil {
		t.Fatal(err)
	}
	m := newMirror(t)
	for _, p := range []string{"lung-cancer/lung-cancer.data", "mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"} {
		b, err := os.ReadFile(filepath.Join(data, p))
		if err != nil {
			t.Fatal(err)
		}
		m.files["/"+p] = b
	}
	dir := t.TempDir()
	var log bytes.Buffer
	opts := FetchOptions{Dir: dir, BaseURL: m.srv.URL + "/", Progress: logTo(&log)}
	lung, _ := LookupFetchSet("lung-cancer")
	if err := Fetch(context.Background(), lung, opts); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if _, err := ReadLungCancer(filepath.Join(dir, "lung-cancer", "lung-cancer.data")); err != nil {
		t.Fatalf("fetched file does not read: %v", err)
	}
	// Again: complete, so no request at all.
	before := m.gets
	if err := Fetch(context.Background(), lung, opts); err != nil || m.gets != before {
		t.Fatalf("second get: %v, %d requests", err, m.gets-before)
	}
	// The MNIST test files against the published md5s (the training files
	// are not in the shared data, so only these two entries are served).
	mn, _ := LookupFetchSet("mnist")
	mn.Files, mn.Check = slices.DeleteFunc(mn.Files, func(f FetchFile) bool { return !strings.HasPrefix(f.Name(), "t10k-") }), nil
	if err := Fetch(context.Background(), mn, opts); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	d, err := ReadMNIST(filepath.Join(dir, "mnist"))
	if err != nil || d.Len() != 10000 {
		t.Fatalf("fetched MNIST: %v", err)
	}
	noLeftovers(t, dir)
}

// TestFetchMNISTTestSplitFirst: a get of MNIST fetches the t10k pair
// before the train pair, so that a get that stops part-way never leaves a
// folder holding the training split alone — which the reader's default
// would read (60,000 training images) where a complete folder gives the
// 10,000 test images. Here the mirror has the real t10k files but no
// train-* files: the get fails on the first train file, and what it leaves
// reads as the complete set would (the t10k split). A mirror without the
// t10k files fails the get before any train-* request. The train pair used
// to be fetched first: its failure left nothing, and a failure of the
// t10k pair after it left the train split alone.
func TestFetchMNISTTestSplitFirst(t *testing.T) {
	data, err := datadir.Require()
	if err != nil {
		t.Fatal(err)
	}
	mn, _ := LookupFetchSet("mnist")
	var names []string
	for _, f := range mn.Files {
		names = append(names, f.Name())
	}
	if want := []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"}; !slices.Equal(names, want) {
		t.Errorf("mnist files in the order %v, want %v", names, want)
	}

	m := newMirror(t)
	for _, n := range []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		b, err := os.ReadFile(filepath.Join(data, "mnist", n))
		if err != nil {
			t.Fatal(err)
		}
		m.files["/mnist/"+n] = b
	}
	dir := t.TempDir()
	err = Fetch(context.Background(), mn, FetchOptions{Dir: dir, BaseURL: m.srv.URL, Retries: -1})
	if err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz") {
		t.Fatalf("get with the train files missing upstream: %v, want a failure naming train-images-idx3-ubyte.gz", err)
	}
	if want := []string{"/mnist/t10k-images-idx3-ubyte.gz", "/mnist/t10k-labels-idx1-ubyte.gz", "/mnist/train-images-idx3-ubyte.gz"}; !slices.Equal(m.paths, want) {
		t.Fatalf("requests %v, want %v", m.paths, want)
	}
	d, err := Load("mnist", filepath.Join(dir, "mnist"), Options{})
	if err != nil || d.Len() != 10000 || d.Files[0] != "t10k-images-idx3-ubyte.gz:0" {
		t.Fatalf("the folder a failed get left: %v, want the 10,000 t10k images", err)
	}

	// No t10k files upstream: nothing of the train split is asked for.
	empty := newMirror(t)
	if err := Fetch(context.Background(), mn, FetchOptions{Dir: t.TempDir(), BaseURL: empty.srv.URL, Retries: -1}); err == nil {
		t.Fatal("get from an empty mirror: no error")
	}
	for _, p := range empty.paths {
		if strings.Contains(p, "train-") {
			t.Fatalf("requests %v: a train file was asked for after the t10k pair failed", empty.paths)
		}
	}
}

func TestFetchChecksumMismatch(t *testing.T) {
	m := newMirror(t)
	good := testBlob(5000)
	bad := append([]byte(nil), good...)
	bad[1234] ^= 1
	m.files["/s/f.bin"] = bad
	dir := t.TempDir()
	err := Fetch(context.Background(), oneFileSet("s", "f.bin", good), FetchOptions{Dir: dir, BaseURL: m.srv.URL})
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), md5hex(good)) {
		t.Fatalf("error %v, want a checksum mismatch naming the expected md5", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s", "f.bin")); !os.IsNotExist(err) {
		t.Fatal("corrupt download left in place")
	}
	noLeftovers(t, dir)
	// A sha256 entry is checked too.
	set := oneFileSet("s", "f.bin", good)
	set.Files[0].MD5, set.Files[0].SHA256 = "", strings.Repeat("0", 64)
	m.files["/s/f.bin"] = good
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, BaseURL: m.srv.URL}); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("sha256 mismatch: %v", err)
	}
	// 404: an error, no retries.
	m.gets = 0
	err = Fetch(context.Background(), oneFileSet("s", "missing.bin", good), FetchOptions{Dir: dir, BaseURL: m.srv.URL})
	if err == nil || !strings.Contains(err.Error(), "404") || m.gets != 1 {
		t.Fatalf("404: %v after %d requests", err, m.gets)
	}
}

func TestFetchResumesCutDownload(t *testing.T) {
	m := newMirror(t)
	content := testBlob(1 << 20)
	m.files["/s/big.bin"] = content
	m.cuts["/s/big.bin"] = 1
	dir := t.TempDir()
	var log bytes.Buffer
	if err := Fetch(context.Background(), oneFileSet("s", "big.bin", content), FetchOptions{Dir: dir, BaseURL: m.srv.URL, Progress: logTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "s", "big.bin"))
	if !bytes.Equal(got, content) {
		t.Fatal("resumed file differs")
	}
	if len(m.ranges) != 2 || m.ranges[0] != "" || !strings.HasPrefix(m.ranges[1], "bytes=") || m.ranges[1] == "bytes=0-" {
		t.Fatalf("requests' Range headers %q, want none then a resume", m.ranges)
	}
	if !strings.Contains(log.String(), "resuming") {
		t.Fatalf("log does not mention resuming:\n%s", log.String())
	}
	noLeftovers(t, dir)
}

func TestFetchRestartsWhenRangeIgnored(t *testing.T) {
	m := newMirror(t)
	content := testBlob(300000)
	m.files["/s/f.bin"] = content
	m.cuts["/s/f.bin"] = 2
	m.noRange = true
	dir := t.TempDir()
	var log bytes.Buffer
	if err := Fetch(context.Background(), oneFileSet("s", "f.bin", content), FetchOptions{Dir: dir, BaseURL: m.srv.URL, Progress: logTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, content) || m.gets != 3 {
		t.Fatalf("equal %v after %d requests, want 3", bytes.Equal(got, content), m.gets)
	}
	if !strings.Contains(log.String(), "restarting") {
		t.Fatalf("log does not mention the restart:\n%s", log.String())
	}
	noLeftovers(t, dir)
}

// TestFetchGivesUpThenResumesLater: a connection cut on every attempt ends
// in an error with the partial file kept; the next run resumes it.
func TestFetchGivesUpThenResumesLater(t *testing.T) {
	m := newMirror(t)
	content := testBlob(200000)
	m.files["/s/f.bin"] = content
	m.cuts["/s/f.bin"] = 100
	m.noRange = true
	dir := t.TempDir()
	set := oneFileSet("s", "f.bin", content)
	err := Fetch(context.Background(), set, FetchOptions{Dir: dir, BaseURL: m.srv.URL, Retries: 2})
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Fatalf("error %v", err)
	}
	part := filepath.Join(dir, "s", "f.bin.part")
	if fi, err := os.Stat(part); err != nil || fi.Size() != int64(len(content)/2) {
		t.Fatalf("partial file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s", "f.bin")); !os.IsNotExist(err) {
		t.Fatal("incomplete file renamed into place")
	}
	m.mu.Lock()
	m.cuts["/s/f.bin"], m.noRange, m.ranges = 0, false, nil
	m.mu.Unlock()
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, BaseURL: m.srv.URL}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("bytes=%d-", len(content)/2); len(m.ranges) != 1 || m.ranges[0] != want {
		t.Fatalf("Range headers %q, want [%s]", m.ranges, want)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, content) {
		t.Fatal("file differs after resuming")
	}
	noLeftovers(t, dir)
}

// TestFetchStalePartRestarts: a leftover .part whose source is recorded as
// this address but which holds another version of the file is resumed, the
// result mismatches, and the download starts over and succeeds. A leftover
// .part of unknown origin (no record) is not resumed at all.
func TestFetchStalePartRestarts(t *testing.T) {
	m := newMirror(t)
	content := testBlob(100000)
	m.files["/s/f.bin"] = content
	dir := t.TempDir()
	part := filepath.Join(dir, "s", "f.bin.part")
	writeTestFile(t, part, bytes.Repeat([]byte{7}, 40000))
	writeTestFile(t, part+".src", []byte(`{"url":"`+m.srv.URL+`/s/f.bin"}`))
	var log bytes.Buffer
	if err := Fetch(context.Background(), oneFileSet("s", "f.bin", content), FetchOptions{Dir: dir, BaseURL: m.srv.URL, Progress: logTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, content) || !reflect.DeepEqual(m.ranges, []string{"bytes=40000-", ""}) {
		t.Fatalf("equal %v, Range headers %q", bytes.Equal(got, content), m.ranges)
	}
	noLeftovers(t, dir)

	dir = t.TempDir()
	part = filepath.Join(dir, "s", "f.bin.part")
	writeTestFile(t, part, bytes.Repeat([]byte{7}, 40000))
	m.ranges = nil
	log.Reset()
	if err := Fetch(context.Background(), oneFileSet("s", "f.bin", content), FetchOptions{Dir: dir, BaseURL: m.srv.URL, Progress: logTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, _ = os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, content) || !reflect.DeepEqual(m.ranges, []string{""}) || !strings.Contains(log.String(), "no record of where its bytes came from") {
		t.Fatalf("unknown origin: equal %v, Range headers %q, log:\n%s", bytes.Equal(got, content), m.ranges, log.String())
	}
	noLeftovers(t, dir)
}

// unverifiedSet is a one-file set without a checksum (like COVID-CT) at
// url, with fallback addresses alt.
func unverifiedSet(url string, alt ...string) FetchSet {
	return FetchSet{Name: "s", Files: []FetchFile{{URL: url, Alt: alt, Dest: "s/f.bin"}}}
}

// TestFetchNoResumeAcrossSources: bytes of a .part are never continued from
// another address. The primary address is cut half-way on every attempt,
// then its fallback (holding another version of the same length) is tried:
// it must be downloaded whole, not asked for the second half. The spliced
// file (half of each) would pass, the file having no checksum.
func TestFetchNoResumeAcrossSources(t *testing.T) {
	m := newMirror(t)
	v1, v2 := testBlob(100000), bytes.Repeat([]byte{9}, 100000)
	m.files["/a/f.bin"], m.files["/b/f.bin"] = v1, v2
	m.cuts["/a/f.bin"] = 100
	dir := t.TempDir()
	var log bytes.Buffer
	set := unverifiedSet(m.srv.URL+"/a/f.bin", m.srv.URL+"/b/f.bin")
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1, Progress: logTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, v2) || !reflect.DeepEqual(m.ranges, []string{"", ""}) {
		t.Fatalf("got %d bytes equal to the fallback's: %v (first half from the primary: %v); Range headers %q\n%s",
			len(got), bytes.Equal(got, v2), bytes.Equal(got[:50000], v1[:50000]), m.ranges, log.String())
	}
	if !strings.Contains(log.String(), "its bytes came from "+m.srv.URL+"/a/f.bin") {
		t.Fatalf("log does not say why the partial file was not resumed:\n%s", log.String())
	}
	noLeftovers(t, dir)

	// Across runs: a .part from a mirror (-base-url) is not resumed from
	// upstream either.
	dir = t.TempDir()
	m.cuts["/s/f.bin"], m.files["/s/f.bin"] = 100, v1
	m.ranges = nil
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, BaseURL: m.srv.URL, Retries: -1}); err == nil {
		t.Fatal("cut download from the mirror succeeded")
	}
	set.Files[0].Alt = nil
	set.Files[0].URL = m.srv.URL + "/b/f.bin"
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1}); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, v2) || !reflect.DeepEqual(m.ranges, []string{"", ""}) {
		t.Fatalf("mirror then upstream: equal %v, Range headers %q", bytes.Equal(got, v2), m.ranges)
	}
	noLeftovers(t, dir)
}

// TestFetchNoResumeOfChangedFile: the same address serves another version
// of the file (another ETag) on the next run: the resume asks If-Range with
// the ETag first seen, the server answers with the whole new file, and the
// result is the new file, not half of each.
func TestFetchNoResumeOfChangedFile(t *testing.T) {
	m := newMirror(t)
	v1, v2 := testBlob(100000), bytes.Repeat([]byte{9}, 100000)
	m.files["/a/f.bin"], m.etags["/a/f.bin"], m.cuts["/a/f.bin"] = v1, `"v1"`, 1
	dir := t.TempDir()
	set := unverifiedSet(m.srv.URL + "/a/f.bin")
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1}); err == nil {
		t.Fatal("cut download succeeded")
	}
	m.files["/a/f.bin"], m.etags["/a/f.bin"] = v2, `"v2"`
	var log bytes.Buffer
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1, Progress: logTo(&log)}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, v2) {
		t.Fatalf("got %d bytes, equal to the new version: false (first half old: %v)\n%s", len(got), bytes.Equal(got[:50000], v1[:50000]), log.String())
	}
	if !strings.Contains(log.String(), "the file changed") {
		t.Fatalf("log does not mention the restart:\n%s", log.String())
	}
	// Unchanged (same ETag): the resume goes ahead.
	dir = t.TempDir()
	m.cuts["/a/f.bin"], m.ranges = 1, nil
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1}); err == nil {
		t.Fatal("cut download succeeded")
	}
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir, Retries: -1}); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "s", "f.bin"))
	if !bytes.Equal(got, v2) || !reflect.DeepEqual(m.ranges, []string{"", "bytes=50000-"}) {
		t.Fatalf("unchanged file: equal %v, Range headers %q", bytes.Equal(got, v2), m.ranges)
	}
	noLeftovers(t, dir)
}

func FuzzParsePartSource(f *testing.F) {
	f.Add([]byte(`{"url":"https://x/y","etag":"\"a\"","last_modified":"Mon, 02 Jan 2006 15:04:05 GMT"}`))
	f.Add([]byte(`{"url":""}`))
	f.Add([]byte(`{"url":"u"} {}`))
	f.Add([]byte(`{"url":"u","size":3}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parsePartSource(b)
		if err != nil {
			if s != (partSource{}) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %+v, error %q", b, s, err)
			}
			return
		}
		if s.URL == "" {
			t.Fatalf("%q: accepted without a url", b)
		}
		// A record round-trips through writePartSource's encoding.
		p := filepath.Join(t.TempDir(), "r")
		if err := writePartSource(p, s); err != nil {
			t.Fatal(err)
		}
		back, err := readPartSource(p)
		if err != nil || back != s {
			t.Fatalf("%+v read back as %+v, %v", s, back, err)
		}
	})
}

func tarGz(t *testing.T, files map[string][]byte) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeysBytes(files) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg})
		tw.Write(files[name])
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

func zipOf(t testing.TB, files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range sortedKeysBytes(files) {
		w, err := zw.Create(name)
		if err != nil {
			panic(err)
		}
		w.Write(files[name])
	}
	zw.Close()
	return b.Bytes()
}

func sortedKeysBytes(m map[string][]byte) []string {
	s := map[string]string{}
	for k := range m {
		s[k] = ""
	}
	return sortedKeys(s)
}

// TestFetchArchivesLayout fetches a CIFAR-like tarball, Omniglot-like zips
// and COVID-like zips (one with a folder, one flat with __MACOSX junk) and
// reads the results with the readers.
func TestFetchArchivesLayout(t *testing.T) {
	m := newMirror(t)
	batch := testBlob(3073 * 2)
	tgz := tarGz(t, map[string][]byte{
		"cifar-10-batches-bin/test_batch.bin":   batch,
		"cifar-10-batches-bin/batches.meta.txt": []byte("a\nb\n"),
		"other/ignored.txt":                     []byte("x"),
	})
	m.files["/cifar10/cifar-10-binary.tar.gz"] = tgz
	cifar := FetchSet{Name: "cifar10", Files: []FetchFile{{URL: "https://upstream.invalid/cifar-10-binary.tar.gz", MD5: md5hex(tgz),
		Dest: "cifar-10/cifar-10-binary.tar.gz", Extract: "tar.gz", ExtractTo: "cifar-10", Keep: "cifar-10-batches-bin"}}}

	src := t.TempDir()
	writeOmniFolders(t, src)
	omniFiles := map[string]map[string][]byte{}
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		set := strings.SplitN(rel, "/", 2)[0]
		if omniFiles[set] == nil {
			omniFiles[set] = map[string][]byte{}
		}
		omniFiles[set][rel], _ = os.ReadFile(p)
		return nil
	})
	omni := FetchSet{Name: "omniglot"}
	for _, set := range []string{"images_background", "images_evaluation"} {
		z := zipOf(t, omniFiles[set])
		m.files["/omniglot/"+set+".zip"] = z
		omni.Files = append(omni.Files, FetchFile{URL: "https://upstream.invalid/" + set + ".zip", MD5: md5hex(z),
			Dest: "omniglot/" + set + ".zip", Extract: "zip", ExtractTo: "omniglot", Keep: set})
	}

	covidA := zipOf(t, map[string][]byte{
		"CT_COVID/x1.png":            pngGrey(t, 10, 10, func(x, y int) uint8 { return 100 }),
		"CT_COVID/x2.png":            pngGrey(t, 10, 10, func(x, y int) uint8 { return 200 }),
		"__MACOSX/CT_COVID/._x1.png": []byte("resource fork"),
	})
	covidB := zipOf(t, map[string][]byte{ // flat: no CT_NonCOVID/ folder inside
		"n1.jpg":            jpegFlat(t, 12, 12, color.RGBA{A: 255}),
		".DS_Store":         []byte("junk"),
		"__MACOSX/._n1.jpg": []byte("resource fork"),
	})
	m.files["/covid-ct/CT_COVID.zip"] = covidA
	m.files["/covid-ct/CT_NonCOVID.zip"] = covidB
	covid := FetchSet{Name: "covid-ct", Files: []FetchFile{
		{URL: "https://upstream.invalid/CT_COVID.zip", Dest: "covid-ct/CT_COVID.zip", Extract: "zip", ExtractTo: "covid-ct", Keep: "CT_COVID"},
		{URL: "https://upstream.invalid/CT_NonCOVID.zip", Dest: "covid-ct/CT_NonCOVID.zip", Extract: "zip", ExtractTo: "covid-ct", Keep: "CT_NonCOVID"},
	}}

	dir := t.TempDir()
	var log bytes.Buffer
	opts := FetchOptions{Dir: dir, BaseURL: m.srv.URL, Progress: logTo(&log)}
	for _, s := range []FetchSet{cifar, omni, covid} {
		if err := Fetch(context.Background(), s, opts); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "cifar-10", "cifar-10-batches-bin", "test_batch.bin")); !bytes.Equal(got, batch) {
		t.Fatal("test_batch.bin not extracted")
	}
	for _, p := range []string{"cifar-10/other", "cifar-10/cifar-10-binary.tar.gz", "omniglot/images_background.zip", "covid-ct/__MACOSX", "covid-ct/CT_NonCOVID/.DS_Store"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s should not exist", p)
		}
	}
	want, err := ReadOmniglot(src, OmniglotOptions{Size: 28})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadOmniglot(filepath.Join(dir, "omniglot"), OmniglotOptions{Size: 28})
	if err != nil || !reflect.DeepEqual(got.X, want.X) || !reflect.DeepEqual(got.Classes, want.Classes) {
		t.Fatalf("fetched Omniglot differs: %v", err)
	}
	cd, err := ReadCOVIDCT(filepath.Join(dir, "covid-ct"), 4)
	if err != nil || !reflect.DeepEqual(cd.Files, []string{"CT_COVID/x1.png", "CT_COVID/x2.png", "CT_NonCOVID/n1.jpg"}) {
		t.Fatalf("fetched COVID-CT: %v %v", err, cd)
	}
	// KeepArchives keeps them; a second extraction merges over the first.
	opts.KeepArchives = true
	os.Remove(filepath.Join(dir, "covid-ct", "CT_COVID", "x2.png"))
	if err := Fetch(context.Background(), covid, opts); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"covid-ct/CT_COVID.zip", "covid-ct/CT_COVID/x2.png"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	noLeftovers(t, dir)
}

func TestFetchRejectsEscapingEntries(t *testing.T) {
	for _, name := range []string{"../evil.txt", "CT_COVID/../../evil.txt", "/abs/evil.txt"} {
		m := newMirror(t)
		z := zipOf(t, map[string][]byte{"CT_COVID/ok.png": []byte("x"), name: []byte("gotcha")})
		m.files["/c/CT_COVID.zip"] = z
		set := FetchSet{Name: "c", Files: []FetchFile{{URL: "https://upstream.invalid/CT_COVID.zip", MD5: md5hex(z),
			Dest: "c/CT_COVID.zip", Extract: "zip", ExtractTo: "c", Keep: "CT_COVID"}}}
		root := t.TempDir()
		dir := filepath.Join(root, "data")
		err := Fetch(context.Background(), set, FetchOptions{Dir: dir, BaseURL: m.srv.URL})
		if err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("entry %q: error %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(root, "evil.txt")); !os.IsNotExist(err) {
			t.Errorf("entry %q escaped", name)
		}
		noLeftovers(t, dir)
	}
}

// TestVerifyRealData checks the shared data folder with verify: every
// present set is as published and every MD5SUMS entry (33,212 files) matches.
func TestVerifyRealData(t *testing.T) {
	dir, err := datadir.Require("MD5SUMS")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Verify(context.Background(), filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.WriteTo(&out)
	if !r.OK() {
		t.Fatalf("verify: not ok\n%s", out.String())
	}
	for _, want := range []string{"omniglot     ok", "covid-ct     ok", "lung-cancer  ok", "MD5SUMS      ok, 33212 files match", "mnist        partial"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("verify output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFetchFallsBackToAlt: a failing primary address (404) moves on to the
// alternates; a checksum mismatch does not.
func TestFetchFallsBackToAlt(t *testing.T) {
	primary, alt := newMirror(t), newMirror(t)
	content := testBlob(4096)
	alt.files["/f.bin"] = content
	set := FetchSet{Name: "s", Files: []FetchFile{{URL: primary.srv.URL + "/f.bin", Alt: []string{alt.srv.URL + "/f.bin"},
		MD5: md5hex(content), Dest: "s/f.bin"}}}
	dir := t.TempDir()
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "s", "f.bin")); !bytes.Equal(got, content) || primary.gets != 1 || alt.gets != 1 {
		t.Fatalf("equal %v, requests %d + %d", bytes.Equal(got, content), primary.gets, alt.gets)
	}
	primary.files["/f.bin"] = testBlob(10) // wrong bytes
	alt.gets = 0
	dir = t.TempDir()
	if err := Fetch(context.Background(), set, FetchOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") || alt.gets != 0 {
		t.Fatalf("mismatch on the primary: %v, %d requests to the alternate", err, alt.gets)
	}
}

// FuzzParseMD5SUMS: any input parses to safe entries or fails cleanly.
func FuzzParseMD5SUMS(f *testing.F) {
	f.Add("9fb629c4189551a2d022fa330f9573f3  ./mnist/t10k-images-idx3-ubyte.gz\n")
	f.Add("9FB629C4189551A2D022FA330F9573F3 *a b.png\r\n# comment\n\n")
	f.Add("9fb629c4189551a2d022fa330f9573f3  ../etc/passwd\n")
	f.Add("9fb629c4189551a2d022fa330f9573f3 x\n")
	f.Add("zz  x\n")
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseMD5SUMS(strings.NewReader(s))
		if err != nil {
			if entries != nil {
				t.Fatal("entries returned with an error")
			}
			return
		}
		for _, e := range entries {
			if len(e.MD5) != 32 || !isHex(e.MD5) || strings.ToLower(e.MD5) != e.MD5 {
				t.Fatalf("bad md5 accepted: %q", e.MD5)
			}
			if e.Path == "" || strings.HasPrefix(e.Path, "/") || e.Path == ".." || strings.HasPrefix(e.Path, "../") {
				t.Fatalf("unsafe path accepted: %q", e.Path)
			}
		}
	})
}

// TestVerifyNoData: a folder without any built-in set (empty set folders
// count as absent) or a missing folder is ErrNotFound, not a pass.
func TestVerifyNoData(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "mnist"), 0o755)
	for _, d := range []string{dir, filepath.Join(dir, "nothere")} {
		r, err := Verify(context.Background(), d)
		if !errors.Is(err, ErrNotFound) || r != nil || !strings.Contains(err.Error(), d) {
			t.Errorf("%s: report %v, error %v", d, r, err)
		}
	}
	writeTestFile(t, filepath.Join(dir, "lung-cancer", "lung-cancer.data"), []byte("x"))
	r, err := Verify(context.Background(), dir)
	if err != nil || r.OK() || r.Sets[0].State != StateAbsent || r.Sets[3].State != StateBad {
		t.Fatalf("one bad set: %v %+v", err, r)
	}
}

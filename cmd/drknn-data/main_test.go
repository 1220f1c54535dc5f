package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/internal/datadir"
)

// runCmd runs the command as main would: the exit status, standard output
// and standard error.
func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = cli.Report(&e, "drknn-data", run(context.Background(), args, &o, &e))
	return code, o.String(), e.String()
}

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, {"fetch"}, {"get"}, {"get", "imagenet"}, {"get", "mnist", "-bogus"}, {"get", "mnist", "-retries", "x"},
		{"get", "mnist", "-retries", "-1"}, {"verify", "mnist"}, {"list", "x"}, {"verify", "-base-url", "x"},
	} {
		code, out, errOut := runCmd(args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "drknn-data: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
		}
	}
	if code, out, _ := runCmd("-h"); code != 0 || !strings.Contains(out, "usage") {
		t.Errorf("-h: %d %q", code, out)
	}
	if code, out, _ := runCmd("get", "-h"); code != 0 || !strings.Contains(out, "usage") {
		t.Errorf("get -h: %d %q", code, out)
	}
	if code, out, _ := runCmd("list"); code != 0 || !strings.Contains(out, "c32a1d4ab5d03f1284b67883e8d87530") || !strings.Contains(out, "unverified") {
		t.Errorf("list: %d %q", code, out)
	}
}

// TestVerifyNothingThere: verify of a folder without any data set (or of a
// folder that does not exist) fails with one line saying where it looked and
// how to get data — it used to print "absent" five times and exit 0.
func TestVerifyNothingThere(t *testing.T) {
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "mnist"), 0o755) // an empty set folder is absent too
	for _, dir := range []string{empty, filepath.Join(empty, "nothere")} {
		code, out, errOut := runCmd("verify", "-dir", dir)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, dir) {
			t.Errorf("verify %s: exit %d, stdout %q, stderr %q; want exit 1 and one line naming the folder", dir, code, out, errOut)
		}
		if !strings.Contains(errOut, "drknn-data get") {
			t.Errorf("verify of %s does not say how to get data: %q", dir, errOut)
		}
		if dir != empty && !strings.Contains(errOut, "DRKNN_DATA") {
			t.Errorf("verify of a missing folder does not say how to choose the data folder: %q", errOut)
		}
	}
}

func TestGetAndVerify(t *testing.T) {
	data, err := datadir.Require("lung-cancer", "lung-cancer.data")
	if err != nil {
		t.Fatal(err)
	}
	lung, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/lung-cancer/lung-cancer.data" {
			http.NotFound(w, r)
			return
		}
		w.Write(lung)
	}))
	defer srv.Close()
	dir := t.TempDir()
	// Flags after the name, as the usage shows.
	code, out, errOut := runCmd("get", "lung-cancer", "-dir", dir, "-base-url", srv.URL)
	if code != 0 || !strings.Contains(out, "lung-cancer: done") {
		t.Fatalf("get: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCmd("verify", "-dir", dir)
	if code != 0 || !strings.Contains(out, "lung-cancer  ok") || !strings.Contains(out, "mnist        absent") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	// Damage the file: verify fails and says why.
	os.WriteFile(filepath.Join(dir, "lung-cancer", "lung-cancer.data"), append(lung, '\n'), 0o644)
	code, out, errOut = runCmd("verify", "-dir", dir)
	if code != 1 || !strings.Contains(out, "lung-cancer  BAD") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("verify damaged: exit %d\n%s%s", code, out, errOut)
	}
	// get repairs it (the mismatching file is downloaded again).
	if code, out, errOut := runCmd("get", "-dir", dir, "-base-url", srv.URL, "lung-cancer"); code != 0 {
		t.Fatalf("get again: %d\n%s%s", code, out, errOut)
	}
	// An MD5SUMS file in the folder is checked too.
	writeFile(t, filepath.Join(dir, "MD5SUMS"), []byte(md5hex(lung)+"  ./lung-cancer/lung-cancer.data\n"+md5hex([]byte("x"))+"  ./nothere.txt\n"))
	code, out, _ = runCmd("verify", "-dir", dir)
	if code != 1 || !strings.Contains(out, "1 of 2 files missing or different") || !strings.Contains(out, "nothere.txt: missing") {
		t.Fatalf("verify MD5SUMS: exit %d\n%s", code, out)
	}
	// A file of a present set without a line in MD5SUMS is a failure too.
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("x"))
	writeFile(t, filepath.Join(dir, "MD5SUMS"), []byte(md5hex([]byte("x"))+"  ./notes.txt\n"))
	code, out, errOut = runCmd("verify", "-dir", dir)
	if code != 1 || !strings.Contains(out, "\n  lung-cancer/lung-cancer.data: no entry in MD5SUMS\n") || !strings.Contains(errOut, "not listed in MD5SUMS") {
		t.Fatalf("verify with the lung-cancer line missing from MD5SUMS: exit %d\n%s%s", code, out, errOut)
	}
	writeFile(t, filepath.Join(dir, "MD5SUMS"), []byte("not a sums line\n"))
	if code, _, errOut := runCmd("verify", "-dir", dir); code != 1 || !strings.Contains(errOut, "MD5SUMS line 1") {
		t.Fatalf("bad MD5SUMS: exit %d %q", code, errOut)
	}
	// A failing get: exit 1, one line.
	if code, _, errOut := runCmd("get", "mnist", "-dir", t.TempDir(), "-base-url", srv.URL, "-retries", "0"); code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("failing get: exit %d %q", code, errOut)
	}
}

// TestBadBaseURLAndDir: a malformed -base-url (or an empty -dir) is bad
// usage: exit 2 and one line naming the flag and the value, before any
// request and before any folder is made. It used to create DIR/SET and exit
// 1 with the network error ("http://" even fetched from a host named after
// the set).
func TestBadBaseURLAndDir(t *testing.T) {
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests++ }))
	defer srv.Close()
	for _, u := range []string{"::bad", "ftp://x", "http//x", "http://", "http:x", "http://:80", "mirror.example/data",
		srv.URL + "?a=1", srv.URL + "#f", "http://x\n"} {
		dir := filepath.Join(t.TempDir(), "data")
		code, out, errOut := runCmd("get", "lung-cancer", "-dir", dir, "-base-url", u, "-retries", "0")
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-base-url") ||
			!strings.Contains(errOut, strings.TrimSuffix(fmt.Sprintf("%q", u), `"`)) {
			t.Errorf("-base-url %q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming -base-url and the value", u, code, out, errOut)
		}
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("-base-url %q: %s was created", u, dir)
		}
	}
	if requests != 0 {
		t.Errorf("%d requests made with malformed -base-url values", requests)
	}
	for _, args := range [][]string{{"get", "lung-cancer", "-dir", ""}, {"verify", "-dir", ""}} {
		code, out, errOut := runCmd(args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-dir") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming -dir", args, code, out, errOut)
		}
	}
	// Well-formed addresses pass (with or without a path, a trailing slash).
	lung, err := datadir.Require("lung-cancer", "lung-cancer.data")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(lung)
	if err != nil {
		t.Fatal(err)
	}
	mirror := httptest.NewServer(http.StripPrefix("/m", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(b) })))
	defer mirror.Close()
	for _, u := range []string{mirror.URL + "/m", mirror.URL + "/m/"} {
		if code, out, errOut := runCmd("get", "lung-cancer", "-dir", t.TempDir(), "-base-url", u); code != 0 {
			t.Errorf("-base-url %q: exit %d\n%s%s", u, code, out, errOut)
		}
	}
}

// TestFailedGetLeavesNothing: a get that fails (a server error, a download
// that does not match its checksum) exits 1 with one line per set and
// leaves no folder behind — it used to leave DIR and DIR/SET, empty.
func TestFailedGetLeavesNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/lung-cancer/") {
			w.Write([]byte("not the data"))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "data")
	code, _, errOut := runCmd("get", "mnist", "lung-cancer", "-dir", dir, "-base-url", srv.URL, "-retries", "0")
	if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "mnist: ") || !strings.Contains(errOut, "lung-cancer: ") {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line naming both sets", code, errOut)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed get left %s behind", dir)
	}
}

// TestIdleTimeoutFlag: -idle-timeout sets how long a download may receive
// nothing before it is abandoned as stalled (datasets.FetchOptions.
// IdleTimeout). Against a server that sends the headers and then nothing,
// a get with -idle-timeout 100ms -retries 0 fails well within the 60 s
// default: exit 1, one line naming the address and saying it stalled for
// 100ms. A negative value is bad usage (exit 2, one line naming the flag
// and the value, before any request); 0 is the default and a get with it
// works. There was no such flag: the 60 s could not be changed.
func TestIdleTimeoutFlag(t *testing.T) {
	lungPath, err := datadir.Require("lung-cancer", "lung-cancer.data")
	if err != nil {
		t.Fatal(err)
	}
	lung, err := os.ReadFile(lungPath)
	if err != nil {
		t.Fatal(err)
	}
	requests := 0
	var mu sync.Mutex
	release := make(chan struct{})
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		w.Header().Set("Content-Length", fmt.Sprint(len(lung)))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select { // nothing more until the client goes away
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stall.Close()
	defer close(release) // runs first: lets the handler end

	start := time.Now()
	code, _, errOut := runCmd("get", "lung-cancer", "-dir", t.TempDir(), "-base-url", stall.URL, "-retries", "0", "-idle-timeout", "100ms")
	took := time.Since(start)
	t.Logf("after %v: exit %d, %q", took, code, errOut)
	if code != 1 || took > 10*time.Second || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, stall.URL+"/lung-cancer/lung-cancer.data") || !strings.Contains(errOut, "stalled") || !strings.Contains(errOut, "100ms") {
		t.Fatalf("get from a stalling server with -idle-timeout 100ms: exit %d after %v, stderr %q; want exit 1 at once and one line naming the address and saying it stalled for 100ms", code, took, errOut)
	}

	mu.Lock()
	requests = 0
	mu.Unlock()
	for _, v := range []string{"-1s", "-1ns"} {
		dir := filepath.Join(t.TempDir(), "data")
		code, out, errOut := runCmd("get", "lung-cancer", "-dir", dir, "-base-url", stall.URL, "-idle-timeout", v)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-idle-timeout "+v) {
			t.Errorf("-idle-timeout %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming -idle-timeout and %s", v, code, out, errOut, v)
		}
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("-idle-timeout %s: %s was created", v, dir)
		}
	}
	if code, _, errOut := runCmd("get", "lung-cancer", "-idle-timeout", "soon"); code != 2 || !strings.Contains(errOut, "-idle-timeout") {
		t.Errorf("-idle-timeout soon: exit %d, stderr %q; want exit 2 naming the flag", code, errOut)
	}
	mu.Lock()
	if requests != 0 {
		t.Errorf("%d requests made with a bad -idle-timeout", requests)
	}
	mu.Unlock()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(lung) }))
	defer srv.Close()
	if code, out, errOut := runCmd("get", "lung-cancer", "-dir", t.TempDir(), "-base-url", srv.URL, "-idle-timeout", "0"); code != 0 || !strings.Contains(out, "lung-cancer: done") {
		t.Errorf("-idle-timeout 0: exit %d\n%s%s", code, out, errOut)
	}
}

type fullWriter struct{}

func (fullWriter) Write(p []byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutFull: list and verify to a full standard output (`>
// /dev/full`) exit 1 with one line, as main runs them.
func TestStdoutFull(t *testing.T) {
	data, err := datadir.Require("lung-cancer", "lung-cancer.data")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lung-cancer", "lung-cancer.data"), b)
	for _, args := range [][]string{{"list"}, {"verify", "-dir", dir}} {
		var se bytes.Buffer
		code := cli.Exec(context.Background(), "drknn-data", run, args, fullWriter{}, &se)
		if code != 1 || strings.Count(se.String(), "\n") != 1 || !strings.Contains(se.String(), "writing standard output: no space left on device") {
			t.Errorf("%q: exit %d, stderr %q", args, code, se.String())
		}
	}
}

// TestRetriesBounded: -retries above 100 is bad usage (one line naming the
// flag, exit 2, before any request); a get retrying against a server that
// always cuts the connection stops promptly when its context is cancelled
// (Ctrl-C), exit 130, one line.
func TestRetriesBounded(t *testing.T) {
	requests := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("cut")) // then the connection closes short
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "data")
	for _, n := range []string{"101", "1000000000"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // the test fails, not hangs
		var o, e bytes.Buffer
		code := cli.Report(&e, "drknn-data", run(ctx, []string{"get", "lung-cancer", "-dir", dir, "-base-url", srv.URL, "-retries", n}, &o, &e))
		cancel()
		out, errOut := o.String(), e.String()
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-retries "+n) || !strings.Contains(errOut, "100") {
			t.Errorf("-retries %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming -retries and its bound", n, code, out, errOut)
		}
	}
	if requests != 0 {
		t.Errorf("%d requests before the flag was refused", requests)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var o, e bytes.Buffer
	start := time.Now()
	code := cli.Report(&e, "drknn-data", run(ctx, []string{"get", "lung-cancer", "-dir", dir, "-base-url", srv.URL, "-retries", "100"}, &o, &e))
	if d := time.Since(start); d > 5*time.Second || code == 0 || strings.Count(e.String(), "\n") != 1 {
		t.Errorf("cancelled get: exit %d after %v, stderr %q", code, d, e.String())
	}
}

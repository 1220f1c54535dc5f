package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stallServer serves content at /s/f.bin: the headers (with the whole
// length), the first sent bytes, then nothing until the client goes away
// or the test ends. With sent < 0 it stalls before the headers.
func stallServer(t *testing.T, content []byte, sent int) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/s/f.bin" {
			http.NotFound(w, r)
			return
		}
		if sent >= 0 {
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			w.WriteHeader(http.StatusOK)
			w.Write(content[:sent])
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: lets the handler end
	return srv
}

// TestFetchStalledDownloadFails: a server that stops sending — after the
// headers and part of the body, or before the headers — fails the get
// after FetchOptions.IdleTimeout without a byte, in one line naming the
// address and saying it stalled; the bytes received stay in DEST.part for
// the next get to resume, and nothing is put in place as if complete. It
// used to wait forever (until Ctrl-C): the client had a time limit on the
// response headers only.
func TestFetchStalledDownloadFails(t *testing.T) {
	content := testBlob(10000)
	for _, c := range []struct {
		name string
		sent int // bytes sent before stalling; < 0: no headers either
	}{
		{"mid-body", 1000},
		{"after the headers", 0},
		{"before the headers", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := stallServer(t, content, c.sent)
			dir := t.TempDir()
			// The guard only keeps a failing test from hanging.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			err := Fetch(ctx, oneFileSet("s", "f.bin", content), FetchOptions{
				Dir: dir, BaseURL: srv.URL, Retries: -1, IdleTimeout: 100 * time.Millisecond,
			})
			took := time.Since(start)
			t.Logf("after %v: %v", took, err)
			if err == nil {
				t.Fatal("no error from a server that stalls")
			}
			msg := err.Error()
			url := srv.URL + "/s/f.bin"
			if took > 2*time.Second || strings.Contains(msg, "\n") || !strings.Contains(msg, url) || !strings.Contains(msg, "stalled") || !strings.Contains(msg, "100ms") {
				t.Fatalf("after %v: error %q: want, well within 2 s, one line naming %s and saying it stalled for 100ms", took, msg, url)
			}
			if !errors.Is(err, errStalled) || ctx.Err() != nil {
				t.Errorf("errors.Is(err, errStalled) = %v, guard expired: %v", errors.Is(err, errStalled), ctx.Err())
			}
			dest := filepath.Join(dir, "s", "f.bin")
			if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a stalled download was put in place: %v", err)
			}
			part, err := os.ReadFile(dest + ".part")
			switch {
			case c.sent > 0 && (err != nil || !bytes.Equal(part, content[:c.sent])):
				t.Errorf("%s.part: %d bytes (%v), want the %d received, kept to resume", dest, len(part), err, c.sent)
			case c.sent <= 0 && !errors.Is(err, os.ErrNotExist):
				t.Errorf("%s.part left with nothing to resume (%v)", dest, err)
			}
		})
	}
}

// TestFetchSlowDownloadNotStalled: the limit is on time without a byte,
// not on the whole download — a body that trickles in over more than three
// times the idle limit is downloaded whole.
func TestFetchSlowDownloadNotStalled(t *testing.T) {
	content := testBlob(2000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.WriteHeader(http.StatusOK)
		for i := 0; i < len(content); i += 100 {
			w.Write(content[i : i+100])
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	start := time.Now()
	err := Fetch(t.Context(), oneFileSet("s", "f.bin", content), FetchOptions{
		Dir: dir, BaseURL: srv.URL, Retries: -1, IdleTimeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("slow but steady download: %v", err)
	}
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Fatalf("took %v: the server did not trickle as meant", took)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "s", "f.bin")); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("downloaded file: %d bytes, %v", len(got), err)
	}
}

// TestFetchStalledDownloadResumes: a stall is retried like a cut
// connection — the next attempt asks for the rest with a Range request and
// the file is completed and checked.
func TestFetchStalledDownloadResumes(t *testing.T) {
	content := testBlob(10000)
	release := make(chan struct{})
	var ranges []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ranges = append(ranges, r.Header.Get("Range")) // one request at a time
		if len(ranges) == 1 {
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			w.WriteHeader(http.StatusOK)
			w.Write(content[:1000])
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // a guard, as above
	defer cancel()
	err := Fetch(ctx, oneFileSet("s", "f.bin", content), FetchOptions{
		Dir: dir, BaseURL: srv.URL, Retries: 1, IdleTimeout: 100 * time.Millisecond, Progress: logTo(&log),
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(ranges) != 2 || ranges[1] != "bytes=1000-" || !strings.Contains(log.String(), "stalled") {
		t.Fatalf("requests with ranges %q, log:\n%s", ranges, log.String())
	}
	if got, err := os.ReadFile(filepath.Join(dir, "s", "f.bin")); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("downloaded file: %d bytes, %v", len(got), err)
	}
	noLeftovers(t, dir)
}

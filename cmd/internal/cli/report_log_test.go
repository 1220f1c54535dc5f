//go:build linux

package cli

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drknn/drknn/experiment"
)

// folderState is what the folder dir holds: each regular file's bytes,
// each symbolic link's target, and the type of anything else (never read:
// a named pipe or a device).
func folderState(t *testing.T, dir string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case e.Type().IsRegular():
			b, err := os.ReadFile(p)
			state[rel] = "file " + string(b)
			return err
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			state[rel] = "link " + target
			return err
		}
		state[rel] = e.Type().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// logRun is a run folder with a run's other output (results.json) beside
// the train.log that make makes, and the folder's files before the run.
func logRun(t *testing.T, make func(log string) error) (dir, log string, before map[string]string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"run": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "train.log")
	if err := make(log); err != nil {
		t.Skipf("cannot make the train.log of the test: %v", err)
	}
	return dir, log, folderState(t, dir)
}

// startRun observes a run's start in dir, failing t if that has not
// returned within 10 s (then release, when set, lets it return).
func startRun(t *testing.T, r *Reporter, dir string, release func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Observe(experiment.Started{Dir: dir, Repeats: 1, Steps: 1})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		if release != nil {
			release()
		}
		<-done
		t.Fatal("the run's start waited 10 s on its train.log")
	}
}

// TestReporterLogNotRegular: a train.log that is not a regular file — a
// directory, a symbolic link to a device (a private /dev/full), a named
// pipe — is refused when the run starts, before any log line is written:
// one line naming it and what it is, exit status 1; the run's other files
// and what train.log is are left as they were. A device used to get the
// log lines written into it (the first failed write reported at the end)
// and a named pipe to block the run for ever at its start (a first Ctrl-C
// did not end it). A train.log that is a regular file, or a symbolic link
// to one, is written as before.
func TestReporterLogNotRegular(t *testing.T) {
	cases := []struct {
		name, what string
		make       func(log string) error
	}{
		{"directory", "a directory", func(log string) error {
			if err := os.Mkdir(log, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(log, "kept"), []byte("kept\n"), 0o644)
		}},
		{"device", "a device", func(log string) error {
			dev := filepath.Join(filepath.Dir(filepath.Dir(log)), "full") // a private /dev/full: c 1 7
			if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
				return err
			}
			return os.Symlink(dev, log)
		}},
		{"fifo", "a named pipe", func(log string) error { return syscall.Mkfifo(log, 0o644) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, log, before := logRun(t, c.make)
			var term bytes.Buffer
			r := &Reporter{Term: &term}
			startRun(t, r, dir, func() {
				if f, err := os.OpenFile(log, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					defer f.Close() // a reader: the pipe's opening for writing returns
				}
			})
			err := r.Err()
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), log) || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("train.log %s: the run's start reported %v; want one line naming %s, %s", c.name, err, log, c.what)
			}
			if code := Code(err); code != 1 {
				t.Fatalf("exit status %d, want 1", code)
			}
			r.Observe(experiment.Message{Text: "a log line"})
			r.Observe(experiment.Finished{})
			if r.Err() != err {
				t.Fatalf("the first error %v became %v", err, r.Err())
			}
			if after := folderState(t, dir); !maps.Equal(after, before) {
				t.Fatalf("the run folder changed: %q, was %q", after, before)
			}
		})
	}
}

// TestReporterLogLink: a train.log that is a symbolic link to a regular
// file gets the log lines appended to that file.
func TestReporterLogLink(t *testing.T) {
	target := filepath.Join(t.TempDir(), "elsewhere.log")
	if err := os.WriteFile(target, []byte("earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, _, _ := logRun(t, func(log string) error { return os.Symlink(target, log) })
	r := &Reporter{}
	startRun(t, r, dir, nil)
	r.Observe(experiment.Message{Text: "a log line"})
	r.Observe(experiment.Finished{})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(target)
	if err != nil || !strings.HasPrefix(string(b), "earlier\n") || !strings.HasSuffix(string(b), " a log line\n") {
		t.Fatalf("the linked log: %q, %v", b, err)
	}
}

package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin runs LoadConfig(path) and fails the test when it has not
// returned within d (a config read that blocks or never ends).
func loadWithin(t *testing.T, d time.Duration, path string, sets ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := LoadConfig(path, sets)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("LoadConfig(%s) still reading after %v", path, d)
		return nil
	}
}

// wantOneLine fails unless err is a config error on one line holding every
// part of want.
func wantOneLine(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want an error naming %q", what, want)
	}
	if !errors.Is(err, ErrConfig) {
		t.Errorf("%s: %v is not an ErrConfig (exit 2)", what, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: message on several lines: %q", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", what, msg, w)
		}
	}
}

// TestLoadConfigRefusesDevicesFifosAndHugeFiles: -config names a file of a
// few KB; a device (/dev/zero), a fifo or a file beyond MaxConfigBytes is
// refused at once, naming the file (and the limit), and never read whole.
func TestLoadConfigRefusesDevicesFifosAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "cfg.yaml")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		err := loadWithin(t, 5*time.Second, fifo)
		wantOneLine(t, "fifo", err, fifo, "not a regular file")
	})
	t.Run("huge", func(t *testing.T) {
		big := filepath.Join(dir, "big.yaml")
		// a valid config followed by a comment line past the limit
		b := append([]byte("dataset: synthetic-images\n# "), make([]byte, MaxConfigBytes)...)
		for i := len("dataset: synthetic-images\n# "); i < len(b); i++ {
			b[i] = 'x'
		}
		if err := os.WriteFile(big, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		err := loadWithin(t, 5*time.Second, big)
		wantOneLine(t, "huge", err, big, "1 MiB")
		// exactly at the limit still reads
		if err := os.WriteFile(big, b[:MaxConfigBytes], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := loadWithin(t, 5*time.Second, big); err != nil {
			t.Errorf("a file of exactly %d bytes: %v", MaxConfigBytes, err)
		}
	})
	t.Run("devzero", func(t *testing.T) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip(err)
		}
		err := loadWithin(t, 5*time.Second, "/dev/zero")
		wantOneLine(t, "/dev/zero", err, "/dev/zero", "not a regular file")
	})
	t.Run("folder", func(t *testing.T) {
		err := loadWithin(t, 5*time.Second, dir)
		wantOneLine(t, "folder", err, dir, "not a regular file")
	})
}

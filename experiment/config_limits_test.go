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

// TestAbsurdIntegerSettingsRefused: integer settings that would allocate
// without bound (the repeats' results, a step's mini-sets, the loss
// histories) are refused at validation, naming the key, the value and the
// allowed range — never an out-of-memory crash at run time.
func TestAbsurdIntegerSettingsRefused(t *testing.T) {
	src := "dataset: synthetic-images\n"
	cases := []struct{ set, want string }{
		{"repeats=1000000000", "key repeats = 1000000000"},
		{"repeats=10000000", "key repeats = 10000000"},
		{"train.minisets=1000000000", "key train.minisets = 1000000000"},
		{"train.minisets=10000000", "key train.minisets = 10000000"},
		{"train.steps=1000000000000", "key train.steps = 1000000000000"},
		{"eval.fewshot_steps=1000000000000", "key eval.fewshot_steps = 1000000000000"},
		{"queries=1000000000000", "key queries = 1000000000000"},
		{"shots=1000000000", "key shots = 1000000000"},
		{"ways=1000000000", "key ways = 1000000000"},
		{"data.synthetic=1000000000", "key data.synthetic = 1000000000"},
		{"train.checkpoint_every=1000000000000", "key train.checkpoint_every = 1000000000000"},
		{"eval.k=1000000000", "key eval.k = 1000000000"},
		{"model.dim=1000000000", "key model.dim = 1000000000"},
		{"model.hidden=1000000000", "key model.hidden = 1000000000"},
		{"model.channels=1000000000", "key model.channels = 1000000000"},
		{"eval.lfd_block=1000000000", "key eval.lfd_block = 1000000000"},
	}
	for _, c := range cases {
		_, err := ParseConfig("x.yaml", []byte(src), []string{c.set})
		wantOneLine(t, c.set, err, c.want, "want ", "…")
	}
	// The audit's command line: one line naming train.minisets.
	_, err := ParseConfig("synthetic", []byte(src), []string{"repeats=1", "train.steps=2", "train.minisets=1000000000"})
	wantOneLine(t, "audit", err, "train.minisets", "1000000000")

	// A step holds train.minisets mini-sets of n′ points: their product is
	// bounded too, and the message names both keys.
	_, err = ParseConfig("x.yaml", []byte(src), []string{"ways=50", "shots=1000", "train.minisets=10000"})
	wantOneLine(t, "product", err, "train.minisets", "train.miniset_size", "ways × shots")

	// What the shipped configs and the README use stays accepted.
	for _, sets := range [][]string{
		{"repeats=600", "train.steps=3000", "train.minisets=32", "eval.fewshot_steps=2000"},
		{"repeats=10000", "train.minisets=10000"},
		{"ways=5", "shots=10", "train.steps=80"},
	} {
		if _, err := ParseConfig("x.yaml", []byte(src), sets); err != nil {
			t.Errorf("%q: %v", sets, err)
		}
	}
}

// TestMultiDocumentConfigRefused: a second YAML document ("---") is not
// silently dropped: the file is refused naming the line it starts on.
func TestMultiDocumentConfigRefused(t *testing.T) {
	_, err := ParseConfig("multi.yaml", []byte("dataset: synthetic-images\n---\nways: 3\n"), nil)
	wantOneLine(t, "multi", err, "multi.yaml", "line 2", "second YAML document")
	_, err = ParseConfig("multi.yaml", []byte("dataset: synthetic-images\nways: 2\n\n---\n# only a comment\nways: 3\n"), []string{"ways=3"})
	wantOneLine(t, "multi with -set", err, "multi.yaml", "line 4")
	// A leading "---" (one document), and an empty document after the
	// first, stay accepted.
	if _, err := ParseConfig("two.yaml", []byte("dataset: synthetic-images\n---\n# ways: 3\n"), nil); err != nil {
		t.Errorf("an empty second document: %v", err)
	}
	if _, err := ParseConfig("one.yaml", []byte("---\ndataset: synthetic-images\n"), nil); err != nil {
		t.Errorf("one document after ---: %v", err)
	}
}

// TestSolverSettingsCheckedAtValidation: train.epsilon and train.tol are
// held to the ranges the LFD solver (optlayer) supports up front, naming
// the key, not at run time as a divergence.
func TestSolverSettingsCheckedAtValidation(t *testing.T) {
	src := "dataset: synthetic-images\n"
	for _, c := range []struct{ set, want string }{
		{"train.epsilon=1e-300", "key train.epsilon = 1e-300"},
		{"train.epsilon=1e-9", "key train.epsilon = 1e-09"},
		{"train.epsilon=1e300", "key train.epsilon = 1e+300"},
		{"train.tol=1e-300", "key train.tol = 1e-300"},
	} {
		_, err := ParseConfig("x.yaml", []byte(src), []string{c.set})
		wantOneLine(t, c.set, err, c.want, "supported")
		if err != nil && strings.Contains(err.Error(), "Settings.") {
			t.Errorf("%s: %v names the solver's Go field, not the key", c.set, err)
		}
	}
	for _, set := range []string{"train.epsilon=1e-6", "train.epsilon=1000", "train.tol=1e-12"} {
		if _, err := ParseConfig("x.yaml", []byte(src), []string{set}); err != nil {
			t.Errorf("%s: %v", set, err)
		}
	}
}

// TestFileErrorNotBlamedOnSet: an error in the file itself is reported as
// the file's (key and line), whatever -set arguments are given.
func TestFileErrorNotBlamedOnSet(t *testing.T) {
	src := "dataset: synthetic-images\ntrain: 5\n"
	_, err := ParseConfig("sect.yaml", []byte(src), []string{"train.steps=2"})
	wantOneLine(t, "sect", err, "sect.yaml", `key "train" (line 2) must be a mapping`)
	if err != nil && strings.Contains(err.Error(), "-set") {
		t.Errorf("%v blames the -set argument", err)
	}
	_, err = ParseConfig("sect.yaml", []byte("dataset: synthetic-images\ntrian:\n  steps: 3\n"), []string{"train.steps=2"})
	wantOneLine(t, "unknown", err, `unknown key "trian" (line 2)`)
	if err != nil && strings.Contains(err.Error(), "-set") {
		t.Errorf("%v blames the -set argument", err)
	}
	// A -set's own error is still the -set's.
	_, err = ParseConfig("ok.yaml", []byte("dataset: synthetic-images\n"), []string{"train.stpes=2"})
	wantOneLine(t, "set", err, `-set "train.stpes=2"`)
}

// TestInapplicableDataKeysRefused: a data.* key the data set kind does not
// read is refused naming the key and the kind, as data.onehot is.
func TestInapplicableDataKeysRefused(t *testing.T) {
	for _, c := range []struct{ src, set, want string }{
		{"dataset: csv\ndata_dir: t.csv\n", "data.grey=true", "key data.grey"},
		{"dataset: npy\ndata_dir: d\n", "data.grey=true", "key data.grey"},
		{"dataset: synthetic-gauss\n", "data.grey=true", "key data.grey"},
		{"dataset: lung-cancer\n", "data.grey=true", "key data.grey"},
		{"dataset: csv\ndata_dir: t.csv\n", "data.size=32", "key data.size"},
		{"dataset: mnist\n", "data.size=32", "key data.size"},
		{"dataset: cifar10\n", "data.size=32", "key data.size"},
		{"dataset: mnist\n", "data.synthetic=50", "key data.synthetic"},
		{"dataset: mnist\n", "data.omniglot=alphabets", "key data.omniglot"},
		{"dataset: npy\ndata_dir: d\n", "data.missing=mean", "key data.missing"},
	} {
		_, err := ParseConfig("x.yaml", []byte(c.src), []string{c.set})
		kind := strings.TrimPrefix(strings.SplitN(c.src, "\n", 2)[0], "dataset: ")
		wantOneLine(t, c.src+" "+c.set, err, c.want, kind)
	}
	for _, c := range []struct{ src, set string }{
		{"dataset: imagefolder\ndata_dir: d\n", "data.grey=true"},
		{"dataset: cifar10\n", "data.grey=true"},
		{"dataset: miniimagenet\n", "data.grey=true"},
		{"dataset: mnist\n", "data.grey=true"}, // grey already: asks for what it is
		{"dataset: omniglot\n", "data.size=28"},
		{"dataset: covid-ct\n", "data.size=32"},
		{"dataset: synthetic-images\n", "data.size=16"},
		{"dataset: synthetic-gauss\n", "data.synthetic=50"},
		{"dataset: csv\ndata_dir: t.csv\n", "data.missing=mode"},
		{"dataset: npy\ndata_dir: d\n", "data.missing=error"},
		{"dataset: mnist\n", "data.omniglot=characters"},
	} {
		if _, err := ParseConfig("x.yaml", []byte(c.src), []string{c.set}); err != nil {
			t.Errorf("%q %s: %v", c.src, c.set, err)
		}
	}
}

// TestDataSizeNamedForSynthetic: a synthetic-images size out of its range
// (and any absurd data.size) names the key data.size.
func TestDataSizeNamedForSynthetic(t *testing.T) {
	_, err := ParseConfig("x.yaml", []byte("dataset: synthetic-images\n"), []string{"data.size=100000"})
	wantOneLine(t, "synthetic", err, "key data.size = 100000", "8…256")
	_, err = ParseConfig("x.yaml", []byte("dataset: synthetic-images\n"), []string{"data.size=4"})
	wantOneLine(t, "synthetic small", err, "key data.size = 4", "8…256")
	_, err = ParseConfig("x.yaml", []byte("dataset: imagefolder\ndata_dir: d\n"), []string{"data.size=100000"})
	wantOneLine(t, "imagefolder", err, "key data.size = 100000")
}

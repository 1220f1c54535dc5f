package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadMNISTPartialDownloadRefused: a folder left half-done — by an
// interrupted drknn-data get (which downloads train-images, train-labels,
// t10k-images, t10k-labels in that order through NAME.part files) or by
// hand — is refused in one line naming the missing or bad file and saying
// how to complete it. It used to be read as the train split alone whenever
// no t10k file was there as a regular file: 60,000 training images instead
// of the 10,000 test images, without a word.
func TestReadMNISTPartialDownloadRefused(t *testing.T) {
	trImg, trLab := fakeMNIST(3)
	teImg, teLab := fakeMNIST(2)
	teImgGz := gz(t, teImg)
	part := func(d, name string, b []byte) {
		writeFile(t, d, name+".part", b)
		writeFile(t, d, name+".part.src", []byte(`{"url":"https://example.invalid/`+name+`"}`+"\n"))
	}
	cases := []struct {
		name  string
		train bool // a complete train pair is there too
		write func(d string)
		kind  error
		want  []string // the message must contain these
	}{
		{"t10k images interrupted", true, func(d string) {
			part(d, "t10k-images-idx3-ubyte.gz", teImgGz[:len(teImgGz)/2])
		}, ErrNotFound, []string{"t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz.part"}},
		{"t10k images interrupted, record only", true, func(d string) {
			writeFile(t, d, "t10k-images-idx3-ubyte.gz.part.src", []byte(`{"url":"https://example.invalid/x"}`))
		}, ErrNotFound, []string{"t10k-images-idx3-ubyte.gz"}},
		{"t10k labels interrupted", true, func(d string) {
			writeFile(t, d, "t10k-images-idx3-ubyte.gz", teImgGz)
			part(d, "t10k-labels-idx1-ubyte.gz", nil)
		}, ErrNotFound, []string{"t10k-labels-idx1-ubyte.gz", "t10k-labels-idx1-ubyte.gz.part"}},
		{"t10k images alone", true, func(d string) {
			writeFile(t, d, "t10k-images-idx3-ubyte.gz", teImgGz)
		}, ErrNotFound, []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte"}},
		{"t10k labels alone", true, func(d string) {
			writeFile(t, d, "t10k-labels-idx1-ubyte.gz", gz(t, teLab))
		}, ErrNotFound, []string{"t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte"}},
		{"t10k images a folder", true, func(d string) {
			if err := os.Mkdir(filepath.Join(d, "t10k-images-idx3-ubyte.gz"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, ErrCorrupt, []string{"t10k-images-idx3-ubyte.gz", "not a regular file"}},
		{"t10k images a dangling link", true, func(d string) {
			if err := os.Symlink(filepath.Join(d, "elsewhere.gz"), filepath.Join(d, "t10k-images-idx3-ubyte.gz")); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
		}, ErrNotFound, []string{"t10k-images-idx3-ubyte.gz"}},
		{"t10k images truncated", true, func(d string) {
			writeFile(t, d, "t10k-images-idx3-ubyte.gz", teImgGz[:len(teImgGz)-9])
			writeFile(t, d, "t10k-labels-idx1-ubyte.gz", gz(t, teLab))
		}, ErrCorrupt, []string{"t10k-images-idx3-ubyte.gz", "truncated", "delete it"}},
		{"train labels interrupted, no t10k", false, func(d string) {
			writeFile(t, d, "train-images-idx3-ubyte.gz", gz(t, trImg))
			part(d, "train-labels-idx1-ubyte.gz", gz(t, trLab)[:20])
		}, ErrNotFound, []string{"train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte.gz.part"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "mnist")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.train {
				writeFile(t, dir, "train-images-idx3-ubyte.gz", gz(t, trImg))
				writeFile(t, dir, "train-labels-idx1-ubyte.gz", gz(t, trLab))
			}
			c.write(dir)
			fix := "drknn-data get mnist -dir " + root
			for _, r := range []struct {
				how  string
				read func() (*Dataset, error)
			}{
				{"ReadMNISTSplit default", func() (*Dataset, error) { return ReadMNISTSplit(dir, "") }},
				{"ReadMNIST", func() (*Dataset, error) { return ReadMNIST(dir) }},
				{"Load", func() (*Dataset, error) { return Load("mnist", dir, Options{}) }},
			} {
				d, err := r.read()
				if err == nil {
					t.Fatalf("%s: no error; read %d samples", r.how, d.Len())
				}
				msg := err.Error()
				if !errors.Is(err, c.kind) || strings.Contains(msg, "\n") || strings.Count(msg, "drknn-data get") != 1 || !strings.Contains(msg, fix) {
					t.Errorf("%s: error %q: want one %v line saying once %q", r.how, msg, c.kind, fix)
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: error %q does not name %q", r.how, msg, w)
					}
				}
			}
		})
	}
}

// TestReadMNISTPartialOtherSplit: what is documented stays — a folder that
// holds the train pair alone reads it by default, and an explicit split
// reads that split whatever state the other one is in; a default read of
// a complete t10k pair is the same whatever the train files' state (it
// never reads them).
func TestReadMNISTPartialOtherSplit(t *testing.T) {
	trImg, trLab := fakeMNIST(3)
	teImg, teLab := fakeMNIST(2)
	dir := t.TempDir()
	writeFile(t, dir, "train-images-idx3-ubyte.gz", gz(t, trImg))
	writeFile(t, dir, "train-labels-idx1-ubyte.gz", gz(t, trLab))
	if d, err := ReadMNISTSplit(dir, ""); err != nil || d.Len() != 3 {
		t.Fatalf("train pair alone: %v", err)
	}
	writeFile(t, dir, "t10k-images-idx3-ubyte.gz.part", gz(t, teImg)[:30])
	if d, err := ReadMNISTSplit(dir, MNISTTrain); err != nil || d.Len() != 3 {
		t.Fatalf("split train beside a partial t10k: %v", err)
	}
	if _, err := ReadMNISTSplit(dir, MNISTAll); err == nil || !strings.Contains(err.Error(), "t10k-images-idx3-ubyte.gz.part") {
		t.Fatalf("split all beside a partial t10k: %v", err)
	}

	dir = t.TempDir()
	writeFile(t, dir, "t10k-images-idx3-ubyte.gz", gz(t, teImg))
	writeFile(t, dir, "t10k-labels-idx1-ubyte.gz", gz(t, teLab))
	writeFile(t, dir, "train-images-idx3-ubyte.gz", gz(t, trImg))
	writeFile(t, dir, "train-labels-idx1-ubyte.gz.part", gz(t, trLab)[:10])
	for _, split := range []string{"", MNISTTest} {
		if d, err := ReadMNISTSplit(dir, split); err != nil || d.Len() != 2 {
			t.Fatalf("split %q of a complete t10k beside a partial train: %v", split, err)
		}
	}
	if _, err := ReadMNIST(dir); err == nil || !strings.Contains(err.Error(), "train-labels-idx1-ubyte.gz") {
		t.Fatalf("ReadMNIST (both splits) beside a partial train: %v", err)
	}
}

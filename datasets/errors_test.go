package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errorCase is one broken data folder: what Load must say about it.
type errorCase struct {
	name    string                         // data set name for Load
	opts    Options                        // reader options
	write   func(t *testing.T, dir string) // writes the (broken) folder
	kind    error                          // ErrNotFound or ErrCorrupt
	mention string                         // a file or folder the message must name
}

// readerErrorCases lists, for every file-based reader, an absent folder, an
// absent required file and a corrupt file.
func readerErrorCases(t *testing.T) []errorCase {
	t.Helper()
	img, lab := fakeMNIST(3)
	nothing := func(*testing.T, string) {}
	lungRows := lungRow(1, constAttrs(0)) + "\n" + lungRow(2, constAttrs(1)) + "\n"
	return []errorCase{
		{"mnist", Options{}, nothing, ErrNotFound, "nothere"},
		{"mnist", Options{}, func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "t10k-images-idx3-ubyte.gz"), img) }, ErrNotFound, "t10k-labels-idx1-ubyte"},
		{"mnist", Options{Split: "train"}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "t10k-images-idx3-ubyte.gz"), img)
			writeTestFile(t, filepath.Join(d, "t10k-labels-idx1-ubyte.gz"), lab)
		}, ErrNotFound, "train-images-idx3-ubyte"},
		{"mnist", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "t10k-images-idx3-ubyte.gz"), img[:len(img)-5])
			writeTestFile(t, filepath.Join(d, "t10k-labels-idx1-ubyte.gz"), lab)
		}, ErrCorrupt, "t10k-images-idx3-ubyte.gz"},

		{"cifar10", Options{}, nothing, ErrNotFound, "nothere"},
		{"cifar10", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "batches.meta.txt"), []byte(strings.Join(CIFAR10Classes, "\n")))
		}, ErrNotFound, "test_batch.bin"},
		{"cifar10", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "test_batch.bin"), cifarRecords(1, 2)[:5000])
		}, ErrCorrupt, "test_batch.bin"},
		{"cifar10", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "test_batch.bin"), cifarRecords(1, 2))
			writeTestFile(t, filepath.Join(d, "batches.meta.txt"), []byte("a\nb\n"))
		}, ErrCorrupt, "batches.meta.txt"},

		{"lung-cancer", Options{}, nothing, ErrNotFound, "nothere"},
		{"lung-cancer", Options{}, func(t *testing.T, d string) { os.MkdirAll(d, 0o755) }, ErrNotFound, "lung-cancer.data"},
		{"lung-cancer", Options{}, func(t *testing.T, d string) {
			os.MkdirAll(d, 0o755)
			writeTestFile(t, filepath.Join(d, "lung-cancer.data"), []byte(lungRows+"4,1\n"))
		}, ErrCorrupt, "lung-cancer.data"},

		{"omniglot", Options{Size: 7}, nothing, ErrNotFound, "nothere"},
		{"omniglot", Options{Size: 7, Split: "background,evaluation"}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "images_background", "A", "character01", "x.png"), omniDrawing(t, 3))
		}, ErrNotFound, "images_evaluation"},
		{"omniglot", Options{Size: 7, Split: "background"}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "images_background", "A", "character01", "x.png"), omniDrawing(t, 3)[:40])
		}, ErrCorrupt, "character01/x.png"},

		{"covid-ct", Options{Size: 4}, nothing, ErrNotFound, "nothere"},
		{"covid-ct", Options{Size: 4}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "CT_COVID", "a.png"), pngGrey(t, 5, 5, func(x, y int) uint8 { return 9 }))
		}, ErrNotFound, "CT_NonCOVID"},
		{"covid-ct", Options{Size: 4}, func(t *testing.T, d string) {
			writeCOVIDFixture(t, d)
			writeTestFile(t, filepath.Join(d, "CT_NonCOVID", "z.png"), pngGrey(t, 5, 5, func(x, y int) uint8 { return 9 })[:30])
		}, ErrCorrupt, "CT_NonCOVID/z.png"},

		{"miniimagenet", Options{Split: "test"}, nothing, ErrNotFound, "test.csv"},
		{"miniimagenet", Options{Split: "train"}, func(t *testing.T, d string) {
			writeMiniImageNet(t, d)
			os.Remove(filepath.Join(d, "images", "n0153282900000006.jpg"))
		}, ErrNotFound, "n0153282900000006.jpg"},
		{"miniimagenet", Options{Split: "test"}, func(t *testing.T, d string) {
			writeMiniImageNet(t, d)
			writeTestFile(t, filepath.Join(d, "test.csv"), []byte("file,label\nx.jpg,a\n"))
		}, ErrCorrupt, "test.csv"},

		{"imagefolder", Options{}, nothing, ErrNotFound, "nothere"},
		{"imagefolder", Options{}, func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "notes.txt"), []byte("x")) }, ErrNotFound, "no class folders"},
		{"imagefolder", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "cat", "a.png"), pngGrey(t, 5, 5, func(x, y int) uint8 { return 9 })[:30])
		}, ErrCorrupt, "cat/a.png"},

		{"csv", Options{}, nothing, ErrNotFound, "nothere"},
		{"csv", Options{}, func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "a.txt"), []byte("a,y\n1,2\n")) }, ErrNotFound, "no .csv file"},
		{"csv", Options{}, func(t *testing.T, d string) { writeTestFile(t, filepath.Join(d, "a.csv"), []byte("a,y\nq,2\n")) }, ErrCorrupt, "a.csv"},

		{"npy", Options{}, nothing, ErrNotFound, "nothere"},
		{"npy", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "X.npy"), npyFile("|u1", []int{1, 1}, []byte{1}))
		}, ErrNotFound, "y.npy"},
		{"npy", Options{}, func(t *testing.T, d string) {
			writeTestFile(t, filepath.Join(d, "X.npy"), npyFile("|u1", []int{1, 1}, []byte{1}))
			writeTestFile(t, filepath.Join(d, "y.npy"), []byte("junk"))
		}, ErrCorrupt, "y.npy"},
	}
}

// TestReaderErrorKinds: every reader, through Load, tells "not there" from
// "there but broken" with errors.Is, in one line naming the file; a missing
// built-in data set says how to get it.
func TestReaderErrorKinds(t *testing.T) {
	for i, c := range readerErrorCases(t) {
		t.Run(fmt.Sprintf("%02d-%s", i, c.name), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "nothere")
			c.write(t, dir)
			d, err := Load(c.name, dir, c.opts)
			if err == nil {
				t.Fatalf("no error; %d samples", d.Len())
			}
			other := ErrCorrupt
			if c.kind == ErrCorrupt {
				other = ErrNotFound
			}
			msg := err.Error()
			if !errors.Is(err, c.kind) || errors.Is(err, other) {
				t.Errorf("error %q: errors.Is(%v) = %v, errors.Is(%v) = %v", msg, c.kind, errors.Is(err, c.kind), other, errors.Is(err, other))
			}
			if d != nil || !strings.Contains(msg, c.mention) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %q", msg, c.mention)
			}
			fetchable := c.name != "miniimagenet" && !OwnData(c.name)
			if c.kind == ErrNotFound && fetchable && !strings.Contains(msg, "drknn-data get "+c.name) {
				t.Errorf("error %q does not say how to get %s", msg, c.name)
			}
		})
	}
}

// Errors that are neither: bad options, unknown names.
func TestLoadUsageErrorsAreNeither(t *testing.T) {
	for _, f := range []func() error{
		func() error { _, err := Load("nosuch", t.TempDir(), Options{}); return err },
		func() error { _, err := Load("mnist", "", Options{}); return err },
		func() error { _, err := Load("mnist", t.TempDir(), Options{Split: "val"}); return err },
		func() error { _, err := Load("covid-ct", t.TempDir(), Options{Size: -1}); return err },
	} {
		err := f()
		if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: want an error that is neither ErrNotFound nor ErrCorrupt", err)
		}
	}
}

package datasets

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

// TestVerifyUnlistedFiles: with an MD5SUMS in the folder, a file a present
// set needs whose line was deleted from it is reported (one line naming the
// file), not silently left unchecked — as go.sum or pip's hash-checking mode
// treat a missing entry. Checked for a set with known files (mnist, real
// t10k files) and for a layout set (COVID-CT, 349 + 397 files).
func TestVerifyUnlistedFiles(t *testing.T) {
	src, err := datadir.Require("mnist")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var sums bytes.Buffer
	for _, n := range []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(dir, "mnist", n), b)
		fmt.Fprintf(&sums, "%s  ./mnist/%s\n", md5hex(b), n)
	}
	for i, want := range []int{349, 397} {
		for j := range want {
			name := fmt.Sprintf("covid-ct/%s/img%03d.png", COVIDCTClasses[i], j)
			b := []byte(name) // any bytes: the layout check counts files
			writeTestFile(t, filepath.Join(dir, filepath.FromSlash(name)), b)
			fmt.Fprintf(&sums, "%s  ./%s\n", md5hex(b), name)
		}
	}
	full := sums.String()
	report := func(sums string) (bool, string) {
		t.Helper()
		writeTestFile(t, filepath.Join(dir, "MD5SUMS"), []byte(sums))
		r, err := Verify(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		r.WriteTo(&out)
		return r.OK(), out.String()
	}
	if ok, out := report(full); !ok || !strings.Contains(out, "MD5SUMS      ok, 748 files match") {
		t.Fatalf("complete MD5SUMS:\n%s", out)
	}
	for _, drop := range []string{"mnist/t10k-images-idx3-ubyte.gz", "covid-ct/CT_NonCOVID/img123.png"} {
		var kept []string
		for _, l := range strings.SplitAfter(full, "\n") {
			if !strings.HasSuffix(l, "./"+drop+"\n") {
				kept = append(kept, l)
			}
		}
		if len(kept) != 748 { // 748 lines and the empty string after the last
			t.Fatalf("%d lines kept", len(kept))
		}
		ok, out := report(strings.Join(kept, ""))
		if ok || !strings.Contains(out, "MD5SUMS      BAD: 1 files of the data sets have no line in it") ||
			!strings.Contains(out, "\n  "+drop+": no entry in MD5SUMS\n") || strings.Contains(out, "MD5SUMS      ok") {
			t.Fatalf("MD5SUMS without %s: ok %v\n%s", drop, ok, out)
		}
	}
	// Files the readers do not read (a README, a hidden file) need no line.
	writeTestFile(t, filepath.Join(dir, "covid-ct", "README.txt"), []byte("notes"))
	writeTestFile(t, filepath.Join(dir, "covid-ct", "CT_COVID", ".DS_Store"), []byte("x"))
	if ok, out := report(full); !ok {
		t.Fatalf("extra files outside the layout:\n%s", out)
	}
}

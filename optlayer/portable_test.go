package optlayer

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// solveDigest solves a few benchmark-family problems, forward and backward,
// and returns a digest of every float the solver returns.
func solveDigest(t *testing.T) string {
	h := sha256.New()
	put := func(xs ...float64) { hashFloats(h, xs...) }
	for _, c := range []struct {
		n, M int
		seed int64
	}{{17, 3, 5}, {50, 5, 1}, {83, 4, 9}} {
		p := gaussProblem(c.seed, c.n, c.M, 16, 0.1)
		r, err := Solve(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := r.VJP(benchGrad(c.M, c.n))
		if err != nil {
			t.Fatal(err)
		}
		put(r.P...)
		put(r.PReg...)
		put(g...)
		put(r.Objective, r.LowerBound, float64(r.Iterations))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestPortableDigest prints the digest for TestPortableBitIdentical's child
// process.
func TestPortableDigest(t *testing.T) {
	if os.Getenv("DRKNN_DIGEST_CHILD") != "1" {
		t.Skip("run by TestPortableBitIdentical")
	}
	fmt.Println("digest:" + solveDigest(t))
}

// TestPortableBitIdentical solves the same problems with the vector
// kernels (this process) and with their portable twins (a child process
// with DRKNN_PORTABLE=1) and requires bit-identical answers: a machine
// without AVX2 reproduces every number.
func TestPortableBitIdentical(t *testing.T) {
	want := solveDigest(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestPortableDigest$", "-test.v")
	cmd.Env = append(os.Environ(), "DRKNN_PORTABLE=1", "DRKNN_DIGEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if d, ok := strings.CutPrefix(line, "digest:"); ok {
			if d != want {
				t.Fatalf("portable kernels: digest %s, vector kernels %s", d, want)
			}
			return
		}
	}
	t.Fatalf("child printed no digest:\n%s", out)
}

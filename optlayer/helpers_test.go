package optlayer

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// gaussProblem is the benchmark family: Gaussian embeddings in dim
// dimensions with class-shifted means, Euclidean costs, ϑ = thetaRel ×
// median off-diagonal cost. Every class gets at least one point.
func gaussProblem(seed int64, n, M, dim int, thetaRel float64) *Problem {
	p := gaussShift(seed, n, M, dim, 1.5, Euclidean) // the same random draws
	p.Theta = []float64{thetaRel * medianOffDiag(p.Cost, n)}
	return p
}

func medianOffDiag(c []float64, n int) float64 {
	var v []float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				v = append(v, c[i*n+j])
			}
		}
	}
	if len(v) == 0 {
		return 1
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// exactLP solves the reduced LP of Theorem 1 with gonum's simplex.
func exactLP(t testing.TB, p *Problem) float64 {
	t.Helper()
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	n, M := in.n, in.m
	cnt := make([]int, M)
	for _, y := range in.labels {
		cnt[y]++
	}
	// variables: γ(i,j) n², t_i n, s_{m,i} nM, budget slack M
	nv := n*n + n + n*M + M
	nc := n + n*M + M
	A := mat.NewDense(nc, nv, nil)
	b := make([]float64, nc)
	c := make([]float64, nv)
	for i := 0; i < n; i++ {
		c[n*n+i] = 1
	}
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			A.Set(j, i*n+j, 1)
		}
		b[j] = 1 / float64(cnt[in.labels[j]])
	}
	for m := 0; m < M; m++ {
		for i := 0; i < n; i++ {
			r := n + m*n + i
			A.Set(r, n*n+i, 1)
			for j := 0; j < n; j++ {
				if in.labels[j] == m {
					A.Set(r, i*n+j, -1)
				}
			}
			A.Set(r, n*n+n+m*n+i, -1)
		}
		r := n + n*M + m
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if in.labels[j] == m {
					A.Set(r, i*n+j, in.cost[i*n+j])
				}
			}
		}
		A.Set(r, n*n+n+n*M+m, 1)
		b[r] = in.theta[m]
	}
	v, _, err := lp.Simplex(c, A, b, 1e-10, nil)
	if err != nil {
		t.Fatalf("simplex: %v", err)
	}
	return v
}

func almost(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// hashFloats writes the bits of xs to h, little-endian: the digest tests'
// way of comparing answers bit for bit.
func hashFloats(h io.Writer, xs ...float64) {
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
}

// sizeList parses a comma-separated list of problem sizes (n ≥ 2) given by
// the test flag name: -hard-sizes, -sweep-sizes, -trace-sizes.
func sizeList(name, list string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-%s: %q is not a size", name, f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

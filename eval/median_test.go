package eval

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sort"
	"testing"
)

// medianBySort is MedianDistance as it was written first: every distance,
// sorted. The selection must give its bits.
func medianBySort(x []float64, n, d int) float64 {
	if n < 2 {
		return 1
	}
	var ds []float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			ds = append(ds, math.Sqrt(sqDist(x[i*d:(i+1)*d], x[j*d:(j+1)*d])))
		}
	}
	sort.Float64s(ds)
	l := len(ds)
	med := ds[l/2]
	if l%2 == 0 {
		med = (ds[l/2-1] + ds[l/2]) / 2
	}
	if med == 0 {
		return 1
	}
	return med
}

// TestMedianDistanceSelection: the selection gives the sort's median to the
// bit on random rows with ties (a coarse grid), duplicate rows, NaN and
// ±Inf features and overflowing distances, for n(n−1)/2 odd and even, on
// one goroutine and on several.
func TestMedianDistanceSelection(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for trial := 0; trial < 400; trial++ {
		n, d := 2+r.Intn(60), 1+r.Intn(5)
		if trial%50 == 0 {
			n = 200 + r.Intn(300)
		}
		x := make([]float64, n*d)
		kind := trial % 6
		for i := range x {
			switch kind {
			case 0:
				x[i] = r.NormFloat64()
			case 1: // ties: a coarse grid
				x[i] = float64(r.Intn(3))
			case 2: // duplicate rows
				x[i] = float64(i % d)
			default:
				x[i] = r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
			}
		}
		if kind >= 4 {
			for k := 0; k < 1+r.Intn(n); k++ {
				switch r.Intn(4) {
				case 0:
					x[r.Intn(len(x))] = math.NaN()
				case 1:
					x[r.Intn(len(x))] = math.Inf(1)
				case 2:
					x[r.Intn(len(x))] = math.Inf(-1)
				default:
					x[r.Intn(len(x))] = 1e200
				}
			}
		}
		runtime.GOMAXPROCS(1 + trial%3)
		want := medianBySort(x, n, d)
		got, err := MedianDistance(x, n, d)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("trial %d (n %d, d %d, kind %d): median %v (%#x), sort gives %v (%#x)", trial, n, d, kind, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

// TestSelectNth: v[k] is the sorted slice's k-th element, nothing before it
// is greater and nothing after it is less (NaN counting as the least), on
// slices long enough to partition, with many equal values and adversarial
// orders.
func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.Intn(2000)
		v := make([]float64, n)
		for i := range v {
			switch trial % 5 {
			case 0:
				v[i] = r.Float64()
			case 1:
				v[i] = float64(r.Intn(4))
			case 2:
				v[i] = float64(i) // sorted
			case 3:
				v[i] = float64(n - i) // reversed
			default:
				v[i] = r.Float64()
				if r.Intn(5) == 0 {
					v[i] = math.NaN()
				}
			}
		}
		k := r.Intn(n)
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		selectNth(v, k)
		if math.Float64bits(v[k]) != math.Float64bits(s[k]) && !(math.IsNaN(v[k]) && math.IsNaN(s[k])) {
			t.Fatalf("trial %d: v[%d] = %v, sorted %v", trial, k, v[k], s[k])
		}
		for i := range v {
			if i < k && floatLess(v[k], v[i]) || i > k && floatLess(v[i], v[k]) {
				t.Fatalf("trial %d: v[%d] = %v on the wrong side of v[%d] = %v", trial, i, v[i], k, v[k])
			}
		}
	}
}

// BenchmarkMedianDistance: the median heuristic's bandwidth over n points
// in d dimensions, by selection (MedianDistance) and by the sort it
// replaced.
func BenchmarkMedianDistance(b *testing.B) {
	for _, c := range []struct{ n, d int }{{1000, 64}, {4096, 256}, {5000, 64}} {
		r := rand.New(rand.NewSource(1))
		x := make([]float64, c.n*c.d)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		b.Run(fmt.Sprintf("select/n=%d/d=%d", c.n, c.d), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				MedianDistance(x, c.n, c.d)
			}
		})
		b.Run(fmt.Sprintf("sort/n=%d/d=%d", c.n, c.d), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				medianBySort(x, c.n, c.d)
			}
		})
	}
}

package eval

import (
	"math"
	"testing"
)

// fuzzValue maps a byte to a coordinate, with non-finite and extreme
// values among them.
func fuzzValue(b byte) float64 {
	switch b {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.MaxFloat64
	case 4:
		return -math.MaxFloat64
	case 5:
		return math.SmallestNonzeroFloat64
	}
	return float64(int(b)-128) / 16
}

// fuzzReader hands out the fuzzer's bytes, then zeros.
type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) byte() byte {
	if r.pos >= len(r.data) {
		return 0x80
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

// distribution fills v with the next bytes and, when normalise is set,
// divides them by their sum (uniform if that is 0).
func (r *fuzzReader) distribution(v []float64, normalise bool) {
	s := 0.0
	for i := range v {
		v[i] = float64(r.byte())
		s += v[i]
	}
	for i := range v {
		switch {
		case !normalise:
		case s > 0:
			v[i] /= s
		default:
			v[i] = 1 / float64(len(v))
		}
	}
}

// FuzzClassifiers builds every method from arbitrary sizes, k, τ, labels,
// points (NaN, ±Inf and extremes included), queries and P (sometimes
// malformed: wrong length, negative or non-finite masses, rows not summing
// to 1). Fit, Predict, Votes and Proba must return an error or a valid
// answer — never panic — and a valid answer has labels in [0, M) and
// probability rows in [0, 1] summing to 1.
func FuzzClassifiers(f *testing.F) {
	f.Add([]byte{4, 2, 2, 3, 0, 9, 0, 1, 0, 1, 100, 120, 140, 160, 90, 200, 130, 131})
	f.Add([]byte{8, 3, 3, 5, 1, 200, 1, 0, 2, 0, 1, 2})
	f.Add([]byte{6, 1, 2, 7, 2, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{3, 2, 5, 1, 10, 255, 7, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		n := int(r.byte()%12) + 1
		d := int(r.byte()%5) + 1
		m := int(r.byte()%5) + 1
		k := int(r.byte() % byte(n+2))
		methods := Methods()
		method := methods[int(r.byte())%len(methods)]
		tau := float64(r.byte()) / 200 // up to 1.275: sometimes out of range
		pMode := r.byte() % 8
		y := make([]int, n)
		for i := range y {
			y[i] = int(r.byte()%byte(m+1)) - map[bool]int{true: 1, false: 0}[r.byte() == 7]
		}
		x := make([]float64, n*d)
		for i := range x {
			x[i] = fuzzValue(r.byte())
		}
		nq := int(r.byte() % 6)
		q := make([]float64, nq*d)
		for i := range q {
			q[i] = fuzzValue(r.byte())
		}
		p := make([]float64, m*n)
		for c := 0; c < m; c++ {
			r.distribution(p[c*n:(c+1)*n], true)
		}
		switch pMode {
		case 1:
			p = p[:len(p)-1]
		case 2:
			p[0] = math.NaN()
		case 3:
			p[len(p)-1] = math.Inf(1)
		case 4:
			p[0] = -0.5
		case 5:
			p[0] += 0.5
		}
		c, err := New(method, Settings{K: k, Tau: tau, Norm: EntropyNorm(pMode % 3), Guard: TruncGuard(pMode % 4), OutDim: int(pMode % 3), NCA: NCASettings{MaxIter: 5}}, p)
		if err != nil {
			return
		}
		if err := c.Fit(x, n, d, y, m); err != nil {
			return
		}
		pred, err := c.Predict(q, nq)
		if err != nil {
			return
		}
		if len(pred) != nq {
			t.Fatalf("%s: %d predictions for %d queries", method, len(pred), nq)
		}
		for _, l := range pred {
			if l < 0 || l >= m {
				t.Fatalf("%s: label %d outside [0, %d)", method, l, m)
			}
		}
		if _, err := c.Votes(q, nq); err != nil {
			t.Fatalf("%s: Predict worked but Votes failed: %v", method, err)
		}
		proba, err := c.Proba(q, nq)
		if err != nil {
			t.Fatalf("%s: Predict worked but Proba failed: %v", method, err)
		}
		for j := 0; j < nq; j++ {
			sum := 0.0
			for _, v := range proba[j*m : (j+1)*m] {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("%s: probability %v", method, v)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("%s: probabilities %v sum to %v", method, proba[j*m:(j+1)*m], sum)
			}
		}
		if nq > 0 {
			truth := make([]int, nq)
			if _, err := Score(pred, proba, m, truth); err != nil {
				t.Fatalf("%s: Score of a valid answer: %v", method, err)
			}
		}
	})
}

// FuzzMetrics feeds arbitrary probability tables and predictions to
// LogLoss and ECE: an error or a finite, non-negative value, never a
// panic; ECE ≤ 1.
func FuzzMetrics(f *testing.F) {
	f.Add([]byte{2, 3, 15, 200, 55, 128, 127, 0, 255, 0, 1, 1})
	f.Add([]byte{3, 1, 0, 85, 85, 85, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		m := int(r.byte() % 6)
		nq := int(r.byte() % 8)
		bins := int(r.byte()%20) - 2
		proba := make([]float64, nq*m)
		for j := 0; j < nq; j++ {
			r.distribution(proba[j*m:(j+1)*m], r.byte() != 9)
		}
		if r.byte() == 1 && len(proba) > 0 {
			proba[0] = fuzzValue(r.byte())
		}
		truth := make([]int, nq)
		pred := make([]int, nq)
		for j := range truth {
			truth[j] = int(r.byte()%byte(m+2)) - 1
			pred[j] = int(r.byte()%byte(m+2)) - 1
		}
		if l, err := LogLoss(proba, m, truth, float64(r.byte())/100); err == nil && !(l >= 0 && l < 40) {
			t.Fatalf("log-loss %v", l)
		}
		if e, err := ECE(pred, proba, m, truth, bins); err == nil && !(e >= 0 && e <= 1+1e-12) {
			t.Fatalf("ECE %v", e)
		}
	})
}

// TestExtremeFiniteInputs: coordinates near ±MaxFloat64 are finite and
// accepted, but their distances overflow to +Inf. Every method must then
// still return valid labels and probabilities, or an error.
func TestExtremeFiniteInputs(t *testing.T) {
	big := math.MaxFloat64
	y := []int{0, 1, 0, 1, 0, 1}
	p := []float64{0.5, 0, 0.5, 0, 0, 0, 0, 0.25, 0, 0.25, 0.25, 0.25}
	q := []float64{-big, big, 0, 0, big, big, 1e300, -1e300}
	for _, x := range [][]float64{
		{big, 0, -big, 0, 0, big, 1, 1, 2, 2, -1, 3}, // training distances overflow
		{0, 0, 1, 0, 0, 1, 1, 1, 2, 2, -1, 3},        // only the queries' do
	} {
		extremeInputs(t, x, y, p, q)
	}
}

func extremeInputs(t *testing.T, x []float64, y []int, p, q []float64) {
	for _, name := range Methods() {
		for _, metric := range []string{"euclidean", "cosine", "manhattan"} {
			c, err := New(name, Settings{K: 2, Tau: 0.5, Metric: metric, OutDim: 1}, p)
			if err != nil {
				continue
			}
			if err := c.Fit(x, 6, 2, y, 2); err != nil {
				continue
			}
			pred, perr := c.Predict(q, 4)
			proba, berr := c.Proba(q, 4)
			if perr != nil || berr != nil {
				if (perr == nil) != (berr == nil) {
					t.Errorf("%s/%s: Predict error %v, Proba error %v", name, metric, perr, berr)
				}
				continue
			}
			for j := 0; j < 4; j++ {
				row := proba[j*2 : j*2+2]
				if pred[j] < 0 || pred[j] > 1 || !(row[0] >= 0 && row[1] >= 0) || math.Abs(row[0]+row[1]-1) > 1e-9 {
					t.Errorf("%s/%s: query %d predicted %d with probabilities %v", name, metric, j, pred[j], row)
				}
			}
		}
	}
}

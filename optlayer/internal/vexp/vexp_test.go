package vexp

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestExpAccuracy compares Exp with math.Exp on the solver's domain.
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	worst := 0.0
	for k := 0; k < 200000; k++ {
		x := -700 * rng.Float64()
		if k%2 == 0 {
			x = -50 * rng.Float64()
		}
		got, want := Exp(x), math.Exp(x)
		rel := math.Abs(got-want) / want
		worst = math.Max(worst, rel)
	}
	for _, x := range []float64{0, -1e-300, -0.5 * math.Ln2, 0.5 * math.Ln2, 1, -1, 700, -700, math.Ln2, -math.Ln2} {
		got, want := Exp(x), math.Exp(x)
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	if worst > 4e-16 {
		t.Fatalf("worst relative error %.3g, want ≤ 4e-16 (2 ulp)", worst)
	}
	if Exp(0) != 1 {
		t.Fatalf("Exp(0) = %v", Exp(0))
	}
}

func randVec(rng *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// portable runs f with the assembly switched off.
func portable(f func()) {
	save := useAsm
	useAsm = false
	defer func() { useAsm = save }()
	f()
}

// TestKernelsMatchTwin checks every kernel against its hand-written
// definition and the vector path bit for bit against the portable one, on
// lengths that exercise the tails, with special values in the input.
func TestKernelsMatchTwin(t *testing.T) {
	if !useAsm {
		t.Log("no AVX2+FMA here: only the portable path is checked")
	}
	rng := rand.New(rand.NewSource(2))
	for n := 0; n <= 19; n++ {
		c := randVec(rng, n, 0, 5)
		// AffineMax
		rm0 := randVec(rng, n, -3, 3)
		if n > 2 {
			rm0[1] = math.Inf(-1)
			rm0[2] = math.NaN()
		}
		d1, r1 := make([]float64, n), append([]float64(nil), rm0...)
		AffineMax(d1, c, r1, 1.5, -0.7)
		d2, r2 := make([]float64, n), append([]float64(nil), rm0...)
		portable(func() { AffineMax(d2, c, r2, 1.5, -0.7) })
		for i := 0; i < n; i++ {
			want := 1.5 - 0.7*c[i]
			if math.Abs(d1[i]-want) > 1e-15*math.Abs(want)+1e-15 {
				t.Fatalf("AffineMax n=%d: dst[%d] = %v, want %v", n, i, d1[i], want)
			}
			wr := rm0[i]
			if d1[i] > wr {
				wr = d1[i]
			}
			if math.Float64bits(r1[i]) != math.Float64bits(wr) {
				t.Fatalf("AffineMax n=%d: rm[%d] = %v, want %v", n, i, r1[i], wr)
			}
			if math.Float64bits(d1[i]) != math.Float64bits(d2[i]) || math.Float64bits(r1[i]) != math.Float64bits(r2[i]) {
				t.Fatalf("AffineMax n=%d: vector and portable paths differ at %d", n, i)
			}
		}
		// ExpSubAcc
		k0 := randVec(rng, n, -45, 0)
		rm := make([]float64, n)
		if n > 3 {
			k0[0], rm[0] = math.Inf(-1), math.Inf(-1) // NaN difference → 0
			k0[3] = -40                               // exactly at the cut: kept
		}
		sm0 := randVec(rng, n, 0, 1)
		k1, s1 := append([]float64(nil), k0...), append([]float64(nil), sm0...)
		ExpSubAcc(k1, rm, s1, 40)
		k2, s2 := append([]float64(nil), k0...), append([]float64(nil), sm0...)
		portable(func() { ExpSubAcc(k2, rm, s2, 40) })
		for i := 0; i < n; i++ {
			d := k0[i] - rm[i]
			want := 0.0
			if d >= -40 {
				want = math.Exp(d)
			}
			if math.Abs(k1[i]-want) > 4e-16*want {
				t.Fatalf("ExpSubAcc n=%d: k[%d] = %v, want %v (d = %v)", n, i, k1[i], want, d)
			}
			if math.Abs(s1[i]-(sm0[i]+want)) > 1e-15 {
				t.Fatalf("ExpSubAcc n=%d: sm[%d] = %v, want %v", n, i, s1[i], sm0[i]+want)
			}
			if math.Float64bits(k1[i]) != math.Float64bits(k2[i]) || math.Float64bits(s1[i]) != math.Float64bits(s2[i]) {
				t.Fatalf("ExpSubAcc n=%d: vector and portable paths differ at %d", n, i)
			}
		}
		// ExpMoments
		x := randVec(rng, n, -45, 2)
		if n > 5 {
			x[5] = math.NaN()
		}
		z1, a1, b1 := ExpMoments(x, c, 2, 40)
		var z2, a2, b2 float64
		portable(func() { z2, a2, b2 = ExpMoments(x, c, 2, 40) })
		var zw, aw, bw float64
		for i := 0; i < n; i++ {
			d := x[i] - 2
			if d >= -40 {
				w := math.Exp(d)
				zw += w
				aw += w * c[i]
				bw += w * c[i] * c[i]
			}
		}
		for _, p := range [][2]float64{{z1, zw}, {a1, aw}, {b1, bw}} {
			if math.Abs(p[0]-p[1]) > 1e-14*math.Abs(p[1]) {
				t.Fatalf("ExpMoments n=%d: %v, want %v", n, p[0], p[1])
			}
		}
		if z1 != z2 || a1 != a2 || b1 != b2 {
			t.Fatalf("ExpMoments n=%d: vector (%v %v %v) and portable (%v %v %v) paths differ", n, z1, a1, b1, z2, a2, b2)
		}
		// ExpShiftSum
		xs0 := randVec(rng, n, -45, 3)
		if n > 6 {
			xs0[6] = math.Inf(-1)
		}
		xs1, xs2 := append([]float64(nil), xs0...), append([]float64(nil), xs0...)
		sum1 := ExpShiftSum(xs1, 3, 40)
		var sum2 float64
		portable(func() { sum2 = ExpShiftSum(xs2, 3, 40) })
		var sumw float64
		for i := 0; i < n; i++ {
			want := 0.0
			if d := xs0[i] - 3; d >= -40 {
				want = math.Exp(d)
			}
			sumw += want
			if math.Abs(xs1[i]-want) > 4e-16*want || math.Float64bits(xs1[i]) != math.Float64bits(xs2[i]) {
				t.Fatalf("ExpShiftSum n=%d: x[%d] = %v (portable %v), want %v", n, i, xs1[i], xs2[i], want)
			}
		}
		if math.Abs(sum1-sumw) > 1e-14*sumw || sum1 != sum2 {
			t.Fatalf("ExpShiftSum n=%d: sum %v (portable %v), want %v", n, sum1, sum2, sumw)
		}
		// WeightedMoments
		kk, uu := randVec(rng, n, 0, 1), randVec(rng, n, 0, 2)
		w0, w1, w2 := WeightedMoments(kk, uu, c)
		var v0, v1, v2 float64
		portable(func() { v0, v1, v2 = WeightedMoments(kk, uu, c) })
		var x0, x1, x2 float64
		for i := 0; i < n; i++ {
			w := kk[i] * uu[i]
			x0 += w
			x1 += w * c[i]
			x2 += w * c[i] * c[i]
		}
		for _, p := range [][2]float64{{w0, x0}, {w1, x1}, {w2, x2}} {
			if math.Abs(p[0]-p[1]) > 1e-14*math.Abs(p[1]) {
				t.Fatalf("WeightedMoments n=%d: %v, want %v", n, p[0], p[1])
			}
		}
		if w0 != v0 || w1 != v1 || w2 != v2 {
			t.Fatalf("WeightedMoments n=%d: vector and portable paths differ", n)
		}
	}
}

func BenchmarkExpSubAcc(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	k0 := randVec(rng, 64, -45, 0)
	rm := make([]float64, 64)
	sm := make([]float64, 64)
	k := make([]float64, 64)
	b.Run("vector", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			copy(k, k0)
			ExpSubAcc(k, rm, sm, 40)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			copy(k, k0)
			for j, v := range k {
				e := 0.0
				if v >= -40 {
					e = math.Exp(v)
				}
				k[j] = e
				sm[j] += e
			}
		}
	})
}

// TestPairUpdateMatchesLoop: PairUpdate's vector path gives the plain
// loop's values bit for bit (d = f·(xi − xj), oi += d, oj −= d), tails
// included.
func TestPairUpdateMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for n := 0; n <= 19; n++ {
		xi, xj := randVec(rng, n, -3, 3), randVec(rng, n, -3, 3)
		oi0, oj0 := randVec(rng, n, -1, 1), randVec(rng, n, -1, 1)
		f := 0.1 + rng.Float64()
		want1, want2 := append([]float64(nil), oi0...), append([]float64(nil), oj0...)
		for k := range xi {
			d := f * (xi[k] - xj[k])
			want1[k] += d
			want2[k] -= d
		}
		for _, asm := range []bool{true, false} {
			oi, oj := append([]float64(nil), oi0...), append([]float64(nil), oj0...)
			if asm {
				PairUpdate(f, xi, xj, oi, oj)
			} else {
				portable(func() { PairUpdate(f, xi, xj, oi, oj) })
			}
			for k := range oi {
				if oi[k] != want1[k] || oj[k] != want2[k] {
					t.Fatalf("n=%d asm=%v k=%d: %v %v, want %v %v", n, asm, k, oi[k], oj[k], want1[k], want2[k])
				}
			}
		}
	}
}

func BenchmarkPairUpdate(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	xi, xj, oi, oj := randVec(rng, 400, -1, 1), randVec(rng, 400, -1, 1), make([]float64, 400), make([]float64, 400)
	for _, asm := range []bool{true, false} {
		b.Run(map[bool]string{true: "asm", false: "portable"}[asm], func(b *testing.B) {
			save := useAsm
			useAsm = useAsm && asm
			defer func() { useAsm = save }()
			for b.Loop() {
				PairUpdate(0.3, xi, xj, oi, oj)
			}
		})
	}
}

// LogAdd: within 1 ulp of math.Log on normal x (plus add), −∞ for x ≤ 0
// and NaN, math.Log itself for subnormal and infinite x; the vector and
// portable paths bit for bit, for every length up to 19 and a call with an
// entry outside the kernel's domain.
func TestLogAdd(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var xs []float64
	for k := 0; k < 2000; k++ { // log-uniform over the normal range
		xs = append(xs, math.Exp((rng.Float64()*2-1)*700))
	}
	for k := -60; k <= 60; k++ { // around the powers of 2 and the √2/2 switch
		p := math.Ldexp(1, k)
		xs = append(xs, p, math.Nextafter(p, 0), math.Nextafter(p, 2*p), p*math.Sqrt2/2,
			math.Nextafter(p*math.Sqrt2/2, 0), math.Nextafter(p*math.Sqrt2/2, 2*p))
	}
	xs = append(xs, 1, math.Nextafter(1, 2), math.Nextafter(1, 0), 1+1e-9, 1-1e-9, 0x1p-1022, math.MaxFloat64)
	for len(xs)%4 != 0 {
		xs = append(xs, 2.5)
	}
	add := make([]float64, len(xs))
	for i := range add {
		add[i] = rng.NormFloat64()
		if i%3 == 0 {
			add[i] = 0
		}
	}
	got := make([]float64, len(xs))
	LogAdd(got, xs, add)
	for i, x := range xs {
		want := math.Log(x)
		lg := got[i] - add[i]
		if add[i] == 0 {
			lg = got[i]
		}
		if add[i] == 0 && math.Abs(lg-want) > 1.01*ulp(want) {
			t.Fatalf("LogAdd(%v) = %v, math.Log = %v (%.2f ulp)", x, lg, want, math.Abs(lg-want)/ulp(want))
		}
		if d := math.Abs(got[i] - (want + add[i])); d > 2*ulp(want+add[i])+ulp(want) {
			t.Fatalf("LogAdd(%v) + %v = %v, want %v", x, add[i], got[i], want+add[i])
		}
	}
	check := func(name string, x, a []float64) {
		t.Helper()
		d1, d2 := make([]float64, len(x)), make([]float64, len(x))
		LogAdd(d1, x, a)
		portable(func() { LogAdd(d2, x, a) })
		for i := range d1 {
			if math.Float64bits(d1[i]) != math.Float64bits(d2[i]) {
				t.Fatalf("%s: entry %d (x = %v): vector %v, portable %v", name, i, x[i], d1[i], d2[i])
			}
		}
	}
	check("normal", xs, add)
	for n := 0; n <= 19; n++ {
		check(fmt.Sprint("length ", n), xs[:n], add[:n])
	}
	special := []float64{0, 1, -1, math.NaN(), 0x1p-1030, math.Inf(1), 3, 0, math.Copysign(0, -1), 7}
	check("special", special, make([]float64, len(special)))
	d := make([]float64, len(special))
	LogAdd(d, special, make([]float64, len(special)))
	for i, x := range special {
		want := math.Inf(-1)
		if x > 0 {
			want = math.Log(x)
		}
		if !(d[i] == want || math.Abs(d[i]-want) <= ulp(want)) {
			t.Fatalf("LogAdd(%v) = %v, want %v", x, d[i], want)
		}
	}
	zeros := []float64{0, 0, 5, 0, 1, 0, 0, 2}
	d = make([]float64, len(zeros))
	LogAdd(d, zeros, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	for i, x := range zeros {
		if x == 0 && !math.IsInf(d[i], -1) {
			t.Fatalf("LogAdd(0) + add = %v, want −∞", d[i])
		}
	}
}

func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// goSpecials are the inputs of TestExpGo and TestLogAddGo mixed into the
// random vectors: zeros, subnormals, infinities, NaN, the bounds of
// archExp's paths and of the normal range, √2/2 and 1.
var goSpecials = []float64{
	0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -5e-324, 0x1p-1030, 0x1p-1022, math.Nextafter(0x1p-1022, 0), math.MaxFloat64,
	7.09782712893384e+02, math.Nextafter(7.09782712893384e+02, 1000), math.Nextafter(7.09782712893384e+02, 0),
	709, 709.78, 709.8, 710, -708, -708.39, -708.4, -709, -709.1, -720, -744.4, -745.1, -745.2, -746, -1e10, -1e300, 1e300,
	math.Sqrt2 / 2, math.Nextafter(math.Sqrt2/2, 1), math.Nextafter(math.Sqrt2/2, 0), math.Sqrt2, 2 * math.Sqrt2,
	math.Sqrt2 / 2 * 0x1p-1000, math.Sqrt2 / 2 * 0x1p-500, math.Sqrt2 / 2 * 0x1p-3, math.Sqrt2 / 2 * 0x1p-1, math.Sqrt2 / 2 * 0x1p3,
	math.Sqrt2 / 2 * 0x1p20, math.Sqrt2 / 2 * 0x1p32, // f1 = √2/2: the only binade where ≤ and < differ
	math.Sqrt2 / 2 * 0x1p500, math.Sqrt2 / 2 * 0x1p1000,
	1, math.Nextafter(1, 2), math.Nextafter(1, 0), 0.5, 2, -1, -0.5,
}

// goInput draws the arguments of TestExpGo (exp) or TestLogAddGo (log):
// mostly the solver's domain, a special value one time in 16.
func goInput(rng *rand.Rand, log bool) float64 {
	if rng.Intn(16) == 0 {
		return goSpecials[rng.Intn(len(goSpecials))]
	}
	if !log {
		switch rng.Intn(4) {
		case 0:
			return -745 + 1455*rng.Float64() // [−745, 710]
		case 1:
			return -50 * rng.Float64()
		case 2:
			return -745 + 40*rng.Float64() // the subnormal and underflow bounds
		}
		return 20*rng.Float64() - 10
	}
	switch rng.Intn(4) {
	case 0: // many binades, mantissa anywhere
		return math.Ldexp(0.5+0.5*rng.Float64(), rng.Intn(2046)-1021)
	case 1: // around √2/2 in some binade
		return math.Ldexp(math.Sqrt2/2*(1+1e-12*rng.NormFloat64()), rng.Intn(200)-100)
	case 2: // around 1
		return 1 + 1e-6*rng.NormFloat64()
	}
	return rng.Float64() * 1000 // includes exact zero rarely
}

// TestExpGo checks ExpGo against math.Exp bit for bit on 2·10⁶ entries in
// vectors of every length 0–19 and on longer ones, with and without the
// kernel.
func TestExpGo(t *testing.T) {
	if !useAsm {
		t.Log("no AVX2+FMA here: only the portable path is checked")
	}
	rng := rand.New(rand.NewSource(15))
	total := 0
	for _, port := range []bool{false, true} {
		for rep := 0; total < 1000000*(1+b2i(port)); rep++ {
			n := rep % 20
			if rep%10 == 9 {
				n = 20 + rng.Intn(200)
			}
			x := make([]float64, n)
			for i := range x {
				x[i] = goInput(rng, false)
			}
			got := append([]float64(nil), x...)
			if port {
				portable(func() { ExpGo(got) })
			} else {
				ExpGo(got)
			}
			for i, v := range x {
				if want := math.Exp(v); math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(got[i])) {
					t.Fatalf("portable=%v n=%d: ExpGo(%v)[%d] = %v (%#x), math.Exp %v (%#x)", port, n, v, i, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
				}
			}
			total += n
		}
	}
	// every special value in every lane of a group, the rest plain
	for _, v := range goSpecials {
		for n := 1; n <= 9; n++ {
			for at := 0; at < n; at++ {
				x := randVec(rng, n, -20, 20)
				x[at] = v
				got := append([]float64(nil), x...)
				ExpGo(got)
				for i, v := range x {
					if want := math.Exp(v); math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(got[i])) {
						t.Fatalf("n=%d: ExpGo(%v)[%d] = %v, math.Exp %v", n, v, i, got[i], want)
					}
				}
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLogAddGo checks LogAddGo against evalPhi's branch (math.Log(x) + add
// where x > 0, −∞ elsewhere) bit for bit on 2·10⁶ entries, as TestExpGo.
func TestLogAddGo(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	want1 := func(x, a float64) float64 {
		if x > 0 {
			return math.Log(x) + a
		}
		return math.Inf(-1)
	}
	check := func(port bool, x, add []float64) {
		t.Helper()
		dst := make([]float64, len(x))
		if port {
			portable(func() { LogAddGo(dst, x, add) })
		} else {
			LogAddGo(dst, x, add)
		}
		for i := range x {
			if want := want1(x[i], add[i]); math.Float64bits(dst[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(dst[i])) {
				t.Fatalf("portable=%v n=%d: LogAddGo(%v, %v)[%d] = %v (%#x), want %v (%#x)", port, len(x), x[i], add[i], i, dst[i], math.Float64bits(dst[i]), want, math.Float64bits(want))
			}
		}
	}
	total := 0
	for _, port := range []bool{false, true} {
		for rep := 0; total < 1000000*(1+b2i(port)); rep++ {
			n := rep % 20
			if rep%10 == 9 {
				n = 20 + rng.Intn(200)
			}
			x, add := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i] = goInput(rng, true)
				switch rng.Intn(4) {
				case 0:
					add[i] = 0
				case 1:
					add[i] = math.Inf(-1)
				default:
					add[i] = 100 * rng.NormFloat64()
				}
			}
			check(port, x, add)
			total += n
		}
	}
	for _, v := range goSpecials {
		for n := 1; n <= 9; n++ {
			for at := 0; at < n; at++ {
				x, add := randVec(rng, n, 1e-3, 1e3), randVec(rng, n, -5, 5)
				x[at] = v
				check(false, x, add)
			}
		}
	}
}

func BenchmarkExpGo(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	x0 := randVec(rng, 400, -60, 0)
	x := make([]float64, len(x0))
	for i := 0; i < b.N; i++ {
		copy(x, x0)
		ExpGo(x)
	}
}

func BenchmarkExpMath(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	x0 := randVec(rng, 400, -60, 0)
	x := make([]float64, len(x0))
	for i := 0; i < b.N; i++ {
		copy(x, x0)
		for j, v := range x {
			x[j] = math.Exp(v)
		}
	}
}

func BenchmarkLogAddGo(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	x, add := randVec(rng, 400, 1e-3, 50), randVec(rng, 400, -5, 5)
	dst := make([]float64, len(x))
	for i := 0; i < b.N; i++ {
		LogAddGo(dst, x, add)
	}
}

func BenchmarkLogAddMath(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	x, add := randVec(rng, 400, 1e-3, 50), randVec(rng, 400, -5, 5)
	dst := make([]float64, len(x))
	for i := 0; i < b.N; i++ {
		for j, v := range x {
			dst[j] = math.Log(v) + add[j]
		}
	}
}

// TestSqDist16MatchesLoop: SqDist16's vector and portable paths give the
// plain sums bit for bit (e = a[k] − b_l[k], s += e·e, in order k), from
// non-zero starting sums, on values spread over many magnitudes.
func TestSqDist16MatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, m := range []int{0, 1, 2, 3, 7, 64, 257} {
		a := make([]float64, m)
		b := make([]float64, 16*m)
		for k := range a {
			a[k] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
		}
		for k := range b {
			b[k] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
		}
		var acc0, want [16]float64
		for l := range acc0 {
			acc0[l] = rng.Float64() * 10
			s := acc0[l]
			for k, v := range a {
				e := v - b[16*k+l]
				s += e * e
			}
			want[l] = s
		}
		for _, asm := range []bool{true, false} {
			acc := acc0
			if asm {
				SqDist16(a, b, &acc)
			} else {
				portable(func() { SqDist16(a, b, &acc) })
			}
			for l := range acc {
				if math.Float64bits(acc[l]) != math.Float64bits(want[l]) {
					t.Fatalf("m=%d asm=%v lane %d: %v, want %v", m, asm, l, acc[l], want[l])
				}
			}
		}
	}
}

func BenchmarkSqDist16(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	a, bb := randVec(rng, 256, -1, 1), randVec(rng, 16*256, -1, 1)
	for _, asm := range []bool{true, false} {
		b.Run(map[bool]string{true: "asm", false: "portable"}[asm], func(b *testing.B) {
			save := useAsm
			useAsm = useAsm && asm
			defer func() { useAsm = save }()
			var acc [16]float64
			for b.Loop() {
				SqDist16(a, bb, &acc)
			}
		})
	}
}

package eval

import "math"

// lbfgsStats records how lbfgsMax stopped.
type lbfgsStats struct {
	iterations  int
	evaluations int
	status      string
}

// lbfgsMax maximises f from x0 with limited-memory BFGS (memory 10,
// two-loop recursion) and a backtracking Armijo line search. fg returns
// f(x) and writes ∇f(x) into g. It stops after maxIter iterations, when
// ‖∇f‖∞ < gradTol, when f stops changing (relative 1e-12), or when the line
// search cannot increase f. It never returns a point worse than x0.
//
// gonum/optimize's L-BFGS would serve, but that package pulls modules
// (golang.org/x/exp, golang.org/x/tools) this module does not require.
func lbfgsMax(fg func(x, g []float64) float64, x0 []float64, maxIter int, gradTol float64) ([]float64, lbfgsStats) {
	const mem = 10
	n := len(x0)
	// Minimise h = −f.
	x := append([]float64(nil), x0...)
	g := make([]float64, n)
	st := lbfgsStats{evaluations: 1}
	h := -fg(x, g)
	neg(g)
	if math.IsNaN(h) || math.IsInf(h, 0) {
		st.status = "non-finite objective at the start"
		return x, st
	}
	var ss, ys [][]float64
	var rhos []float64
	d := make([]float64, n)
	alpha := make([]float64, mem)
	xn := make([]float64, n)
	gn := make([]float64, n)
	for st.iterations = 0; st.iterations < maxIter; st.iterations++ {
		if normInf(g) < gradTol {
			st.status = "gradient below tolerance"
			return x, st
		}
		// d = −H g by the two-loop recursion.
		copy(d, g)
		for i := len(ss) - 1; i >= 0; i-- {
			alpha[i] = rhos[i] * dot(ss[i], d)
			axpy(-alpha[i], ys[i], d)
		}
		if k := len(ss) - 1; k >= 0 {
			scale(dot(ss[k], ys[k])/dot(ys[k], ys[k]), d)
		} else {
			scale(1/math.Max(1, normInf(g)), d)
		}
		for i := range ss {
			b := rhos[i] * dot(ys[i], d)
			axpy(alpha[i]-b, ss[i], d)
		}
		neg(d)
		gd := dot(g, d)
		if !(gd < 0) {
			// Not a descent direction: restart from steepest descent.
			ss, ys, rhos = nil, nil, nil
			copy(d, g)
			neg(d)
			scale(1/math.Max(1, normInf(g)), d)
			gd = dot(g, d)
		}
		// Cap the step at half the current norm of x (at least 1): a
		// long quasi-Newton step can jump into a region where the
		// objective is flat (NCA's saturated softmaxes) and stall there.
		t := 1.0
		if dn, cap := math.Sqrt(dot(d, d)), stepCap*math.Max(1, math.Sqrt(dot(x, x))); dn > cap {
			t = cap / dn
		}
		var hn float64
		ok := false
		for try := 0; try < 50; try++ {
			for i := range x {
				xn[i] = x[i] + t*d[i]
			}
			hn = -fg(xn, gn)
			st.evaluations++
			if hn <= h+1e-4*t*gd {
				ok = true
				break
			}
			t /= 2
		}
		if !ok {
			st.status = "line search found no increase"
			return x, st
		}
		neg(gn)
		s := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			s[i] = xn[i] - x[i]
			y[i] = gn[i] - g[i]
		}
		if sy := dot(s, y); sy > 1e-12*math.Sqrt(dot(s, s)*dot(y, y)) {
			if len(ss) == mem {
				ss, ys, rhos = ss[1:], ys[1:], rhos[1:]
			}
			ss, ys, rhos = append(ss, s), append(ys, y), append(rhos, 1/sy)
		}
		changed := math.Abs(hn-h) > 1e-12*math.Max(1, math.Abs(h))
		copy(x, xn)
		copy(g, gn)
		h = hn
		if !changed {
			st.iterations++
			st.status = "objective converged"
			return x, st
		}
	}
	st.status = "iteration limit"
	return x, st
}

const stepCap = 0.5

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

func scale(a float64, x []float64) {
	for i := range x {
		x[i] *= a
	}
}

func neg(x []float64) { scale(-1, x) }

func normInf(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

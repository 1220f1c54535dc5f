package optlayer

import "math"

// The LP-only solve (Settings.LPOnly from a cold start of at most
// lpLargeMin points: what drknn-lfd computes without -grad-p there).
//
// Only the certified LP answer is wanted, so ε is the solver's choice, not
// Settings.Epsilon: the regularised optimum at ε is within roughly 0.1·ε
// (relative) of the LP value on the benchmark family (measured: 7.5e-4 at
// ε = 0.008, 3e-4 at 0.004), so ε ≈ 4·Tol usually certifies, where the
// regularised path needs the target ε (1e-3) to RegTol. The stages are
//
//   - coarse: ε = 0.2, 0.02, … (factor 0.1, never more than 10× at once)
//     down to ε_c = 4·Tol: two sweeps, then Newton to the stage
//     tolerance (at ε ≥ 0.01 only while the residual is above 1);
//   - tight: from ε_c on, Newton until the certificate holds (checked after
//     Newton steps, below) or the residual is ≤ Tol, then ε halves, down
//     to the ε floor.
//
// The certificate is the solver's usual one (upperPhi/upper: a feasible P;
// bestLower: a dual bound), checked after every stage and, once ε ≤ 10·Tol,
// after every Newton step that leaves a residual ≤ 0.2. Measured
// (callgrind, LPOnly solve): n = 200, M = 10 163M → 80M instructions,
// n = 50 17M → 9M; hard instances at
// n = 200 (overlap, ties) −35% to −45%. Nothing else uses this path:
// every solve without LPOnly, with a warm start, with Plans or above
// lpLargeMin (isLarge) runs as before, bit for bit.
const (
	lpEpsStart  = 0.2 // first ε
	lpEpsFactor = 0.1 // ε factor of the coarse stages (0.05 took 7× the work)
	lpEpsCert   = 4.0 // the tight stages start at ε = lpEpsCert·Tol
	lpEpsCheck  = 10  // the certificate after every Newton step once ε ≤ lpEpsCheck·Tol
	// lpCheckResid: ... and only when the step's residual is at most this:
	// the certificate held at residuals of 0.0003–0.064 (once 0.154) on
	// the benchmark and hard kinds at n = 50–300, never above. Skipping
	// the checks above it: callgrind −2.9% on LP-only solves at n = 200,
	// M = 10; iterations over 100 instances at n = 50–500 9354 → 9362, all
	// certified.
	lpCheckResid = 0.2
	// lpCoarseTol is the residual at which a coarse stage at ε ≥
	// lpCoarseEps ends: its sweeps alone mostly get there (measured against
	// the regularised path's 0.1: n = 200 −14%, n = 50 −22% instructions,
	// hard n = 200 overlap +5%, ties +13%). Smaller coarse ε (Tol < 2.5e-3)
	// keep the stage tolerance: with 1 the path was lost by ε = 4e-5.
	lpCoarseTol = 1.0
	lpCoarseEps = 0.01
	// lpStagesMaxIter caps these stages: a solve they have not certified
	// by then starts again, cold, on the regularised path's phases
	// (solveInstance), which stop at the certificate too. The stages took
	// 15–50 iterations on the benchmark family at n ≤ 500 and ≤ 210 on the
	// hard kinds at n ≤ 1000 (dup) when they ran up to n = 1000 (now up to
	// lpLargeMin); in the band where the LP value
	// approaches 1 (overlap, ϑ ≈ 0.45–0.56 × median cost) they took 460 to
	// more than 20,000 (uncertified) where the phases certify in 300–420.
	lpStagesMaxIter = 400
	// lpCoarseSelL is the selection width (e-folds of ε, plus candDelta)
	// for the next stage when that stage is a coarse one: a coarse stage
	// only carries the duals along the path, so entries below e^{−20} of
	// their column's largest at its ε are left out (the tight stages, whose
	// duals make the certificate, keep cutLog + log n + candMargin ≈ 55 at
	// n = 200). At n = 200, M = 10 the stage at ε = 0.02 then holds ≈ 8,000
	// entries instead of ≈ 32,700 of 40,000. Measured (callgrind, LPOnly,
	// n = 200 seeds 1–6 and hard overlap, ties at 200): −20% instructions,
	// the same certified gaps and 15–23 iterations; L = 15 −17%, 25 −13%;
	// the tight stage at 25 as well (a further −6%) made dup up to 4.5×
	// slower (111 → 501 iterations at n = 200). From parMin points on (ten
	// sweeps per stage, two goroutines) 20 e-folds lost the path of the
	// benchmark family (n = 600–1000: 66–94 Newton iterations instead of
	// 41–48, 1.5–3.5× the CPU; 22 and 23 as erratic); 25 keeps it
	// (n = 400–1000, benchmark seeds 1–3, overlap, ties, dup: 41–51
	// iterations, CPU −10% to −15% against ≈ 55).
	lpCoarseSelL    = 20.0
	lpCoarseSelLPar = 25.0 // n ≥ parMin
)

// lpEpsSchedule returns the first ε and the ε of the first tight stage for
// tolerance tol.
func lpEpsSchedule(tol float64) (start, cert float64) {
	cert = math.Max(epsFloor, math.Min(lpEpsStart, lpEpsCert*tol))
	return math.Max(cert, lpEpsStart), cert
}

// lpStages runs the stages above on a fresh solver (candidates selected,
// the result holding the pooled candidate if any) and returns the iteration
// count and the snapshot. stop, certified and cert are solveInstance's: the
// per-step certificate (on the state evalPhi leaves), its test, and the
// certificate on the column-exact state (without Plans).
func (s *solver) lpStages(cfg config, stop, certified func() bool, cert func()) (it int, snap *state) {
	selL := cutLog + math.Log(float64(s.n)) + candMargin
	start, epsC := lpEpsSchedule(cfg.tol)
	s.lateProbe = true // lambdaSolve probes S(0) only when needed (newton.go)
	// newton's budget restores set g from lambdaSolve's last evaluation
	// instead of rebuilding the class's kernel, which the evalPhi after
	// them rebuilds anyway (newton.go restore): callgrind on LP-only
	// solves at n = 200, M = 10 −3.9%, 75 → 46 kernel rebuilds per solve
	// (seed 1); 100 instances at n = 50–500 all certified, 9359 → 8909
	// iterations
	s.lpRestore = true
	s.bz, s.bzLam = make([]float64, s.n), make([]float64, s.M)
	for m := range s.bzLam {
		s.bzLam[m] = math.NaN() // no evaluation yet
	}
	s.setEps(start)
	for it < cfg.maxIter {
		it = s.stageSweeps(cfg.sweeps, it, cfg.maxIter)
		tight := s.eps <= epsC*(1+1e-12)
		tol := cfg.stageTol
		if s.eps >= lpCoarseEps {
			tol = lpCoarseTol
		}
		if tight {
			tol = cfg.tol
		}
		var st func() bool
		if s.eps <= lpEpsCheck*cfg.tol {
			st = func() bool { return s.residual() <= lpCheckResid && stop() }
		}
		steps, failed := s.newton(cfg, cfg.maxIter-it, tol, st)
		it += steps
		if !certified() {
			cert() // the certificate on the column-exact state newton leaves
		}
		if certified() || it >= cfg.maxIter || (tight && s.eps <= epsFloor) {
			break
		}
		if failed {
			// as Phase B of solveInstance: sweeps for a while, same ε
			it = s.sweepFallback(it, cfg.maxIter)
			continue
		}
		s.alphaStep()
		next := math.Max(epsC, s.eps*lpEpsFactor)
		if tight {
			next = math.Max(epsFloor, s.eps/2)
		}
		L := selL
		if next > epsC*(1+1e-12) {
			L = lpCoarseSelL // the next stage is a coarse one
			if s.n >= parMin {
				L = lpCoarseSelLPar
			}
		}
		s.selectCands(selKeys, next, L, candDelta, 0)
		s.setEps(next)
	}
	return it, s.snapshot(cfg, s.residual())
}

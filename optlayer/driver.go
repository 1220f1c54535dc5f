package optlayer

import (
	"context"
	"math"
)

// Solve solves the LFD problem p: the regularised problem at ε =
// Settings.Epsilon (PReg, Dual, the backward pass) and a certified answer to
// the LP itself (P, Objective, LowerBound, Gap). P is always exactly
// feasible. The solve ends when the relative gap is ≤ Settings.Tol and the
// regularised residual is ≤ Settings.RegTol, or after Settings.MaxIter sweeps
// (Status = IterationLimit; the bounds are still valid). If the regularised
// optimum at ε is not within Tol of the LP value, ε is decreased further for
// the certificate only (PReg and Dual stay at Settings.Epsilon).
//
// Solve is SolveContext with context.Background().
func Solve(p *Problem, s *Settings) (*Result, error) {
	return SolveContext(context.Background(), p, s)
}

// SolveContext is Solve, stopped when ctx is done: the solve polls ctx
// before each of its sweeps and Newton steps (none takes more than a
// fraction of a second at n = 10,000) and then returns no Result and an
// error that wraps ctx.Err() and says after how many iterations it
// stopped. A solve that is not stopped returns exactly what Solve does.
// Invalid input is reported before ctx is looked at.
func SolveContext(ctx context.Context, p *Problem, s *Settings) (*Result, error) {
	in, err := p.instance()
	if err != nil {
		return nil, err
	}
	cfg, err := s.config(in)
	if err != nil {
		return nil, err
	}
	return (&stopper{ctx: ctx}).solve(in, cfg)
}

// The ε stages of a target ε below smallEps (a cold start on a problem that
// starts dense): from epsStartSmall = 0.1 by the factor 0.1 (0.1, 0.01,
// 0.001 for the default target), or by 0.3 after a stage that took more than
// slowStage Newton steps (the usual continuation step control: a corrector
// that needed many steps says the path bends). The final stage's exact
// Newton steps (newton.go, densekkt.go) cope with the longer last step; with
// the CG steps of ε ≥ smallEps they did not (a coarse schedule there cost
// more, and would change Table 1's answers). Measured (callgrind, Solve +
// VJP, against the factor-0.2 schedule from 0.2 with the same final stage):
// n = 50, M = 5, seeds 1–8 −17%; n = 200, M = 10, seeds 1–4 −22%; target
// 1e-4 at n = 50 −60%, 3e-3 −15%. The first stage only has to put the duals
// near the path for a stage ten times smaller: it ends at a residual of
// firstStageTolSmall = 0.5 instead of stageTol (n = 50 seeds 1–16 −6%,
// n = 200 seeds 1–8 −6%; up to 0.7 measured the same, 0.85 lost the path
// on hard instances).
const (
	epsStartSmall      = 0.1
	epsFactorSmall     = 0.1
	epsFactorSlow      = 0.3
	slowStage          = 4
	firstStageTolSmall = 0.5
)

const (
	epsFloor = 1e-6
	// lpResTol: the residual at which lpLarge's Phase B and C stages end
	// (instead of RegTol, 1e-6): they exist for the certificate, and on
	// the band below the pooled radius the dual's bound stops moving
	// long before the residual reaches RegTol (`separated` n = 3000 at
	// ϑ = 0.7 × median, ε = 2.5e-4: the bound 1.12344 at a residual of
	// 7.8e-4, 1.12345 at 1.3e-6, 1.6 s later; n = 10,000: 48 of Phase B's
	// 158 s were such tails). Measured (docs/PERFORMANCE.md, session of
	// 2026-11-27): `separated` n = 2000 / 3000 6.9 / 13.6 → 5.6 / 10.6
	// CPU-s, n = 10,000 253 → 219 s; random sweeps of seeds 9, 10, 11
	// all certified in 2395 / 3610 / 1266 → 2322 / 3588 / 1266
	// iterations, their ten trials whose iterations moved 280 → 235 s
	// (one slower: 26.6 → 28.4 s); Phase C alone at 1e-4 gained little
	// (its ten trials 256.8 → 250.9 s). At 1e-3 the rounded plans of the
	// stages are 1e-3 off and the upper bound stops improving (`separated`
	// n = 2000 ran down to ε = 1e-6 uncertified); at 1e-5 less of the gain
	// (`separated` n = 2000 / 3000 6.7 / 11.2 CPU-s). TestLPOnlyLargeResTol.
	lpResTol = 1e-4
	// narrowStall: a narrow Phase C stage that leaves more than this share
	// of the gap it started from ends the narrow stages. The gap is the
	// dense lower bound's: the certified one stays at the trivial 1 until
	// the candidates' own bound is within Tol, so on `separated` n = 3000
	// at ϑ = 0.7 × median (seed 12) a stage that halved the dense gap
	// (0.021 → 0.011) looked stalled, and the full-width unions after it
	// took 11.0 s for 8.8 (TestLPOnlyLargeNarrowC)
	narrowStall = 0.75
	// growFall: a narrow Phase C stage whose dense lower bound ends below
	// where it started, by at most this share of the gap between the
	// bounds it started from, adds the entries within narrowL e-folds at
	// its final duals and runs again (column generation) instead of the
	// rollback (the rollback's comment)
	growFall = 0.5
	// narrowGap: Phase B hands over to the narrow Phase C stages only at a
	// relative gap ≤ narrowGap (separated kind n = 2000: 5.5e-3 at ϑ =
	// 0.7 × median; the restricted problem at 0.8 × had a negative lower
	// bound). 3%, not 5%: on `separated` n = 3000 at 0.7 × the hand-overs
	// come at 0.5–2.4% (seeds 4, 11, 12, 31, 32, 41–52, 61–70) but for
	// seeds 62 (4.1%) and 67 (3.8%), whose first narrow stage at ε = 5e-4
	// then fell far (62: 1.204 → 0.95) and regrew to 1.1 M candidates;
	// validated at the target ε instead, 355 → 279 and 391 → 266
	// iterations (docs/PERFORMANCE.md, session of 2026-11-28, 17:06–
	// UTC). TestLPOnlyLargeHandGap.
	narrowGap = 0.03
	// fewAdded: once Phase B's last validation added at most this share of
	// the candidates and the bounds are within narrowGap, Phase B hands
	// over to Phase C even where the narrow selection would not fit
	// narrowCap (its stages then take the union selections) instead of
	// validating again. Near the pooled radius with per-class radii the
	// selections are dense at every ε, and each further validation added
	// 0.002–0.35% more entries for Newton to re-converge on, 1–5 s each
	// (TestRandomSweep seed 14's trial 10: n = 2500, M = 8, d = 2, per-class
	// radii at 0.23 × median). Measured (docs/PERFORMANCE.md, session of
	// 2026-11-28, 23:08– UTC): that instance 344 → 331 iterations, 30.2 →
	// 26.8 s; seed 25's trial 12 597 → 594, 47.3 → 44.5 s; 16 random
	// sweeps (480 instances) 35,221 → 35,150 iterations, 14 instances
	// moved, 4 up (at most 8: seed 33's trial 24, 334 → 342); BenchmarkHard's
	// kinds at n = 2000 and 3000, seeds 4, 11, 12, unchanged.
	// TestLPOnlyLargeFewAdded.
	fewAdded = 0.1
	// narrowCheck, narrowGapEarly: Phase B's first look at the narrow
	// candidates, at a residual ≤ narrowCheck, gives them up at a relative
	// gap (against the dual's own bound) above narrowGapEarly
	narrowCheck    = 0.1
	narrowGapEarly = 0.25
	// lpStageMax: the most Newton steps of each of lpLarge's stages above
	// the target ε (until the random sweep of TestRandomSweep, the last
	// one's only: seed 9's trial 4 — n = 1500, M = 5, separated classes,
	// per-class radii 4.7–18 — sat at ε = 0.008 with a residual of 3.5e5
	// falling 0.3% a step, and its 20,000 iterations ran out uncertified
	// after 107 s; capped, it is certified in 370 iterations, 2.6 s, and
	// the sweeps of seeds 10 and 11 take the same iterations). A stage
	// above the target only brings the duals near the path, and on
	// capped candidates near the pooled radius it can drift instead (all
	// 10,000 MNIST test images at ϑ = 0.75 × median: 310 steps and 33 s at
	// ε = 0.0016 while the dual's bound fell from −0.18 to −0.77). A cap of
	// 60 (on every stage or on the last) cost a random instance (n = 2500,
	// per-class radii 0.02 × median) 2296 iterations for 226: its last
	// stage needed 116 steps.
	lpStageMax = 150
	// lpOpenSweeps: the sweeps that open lpLarge's Phase B (Phase B's
	// comment)
	lpOpenSweeps = 1
	// stallSteps, stallRise, stallResid: a Newton run of lpLarge's Phase
	// B whose residual, once below stallResid, has not halved in stallSteps
	// successful steps while the dual's own bound rose by at most
	// stallRise (relative) over them ends there (stallStop), and the
	// validation and certificate come as at the stage's residual. On the
	// union candidates near the pooled radius Newton can oscillate at a
	// residual of 1e-2 for hundreds of steps (the random sweep of seed 14,
	// trial 7: n = 2500, M = 5, d = 2, heavy tails, 345 steps at ε = 1e-3
	// with one class's budget 0.6–3% off, its λ creeping, the bound flat;
	// Phase C from there took 30). Measured (docs/PERFORMANCE.md, session
	// of 2026-11-27, 07:45– UTC): random sweeps of seeds 9, 10, 11, 13, 14,
	// 15 15,410 → 14,490 iterations, all certified; that trial 444 → 195
	// iterations (19.5 → 6.0 s). Without the bound's and the residual's
	// conditions the stop also ended Phase B's crawl at n = 10,000
	// (`separated`, seeds 4 and 12: the bound rising over ≈ 300 steps at
	// residuals 0.1–0.6), and the validation at that dual took 2.59 GB
	// (seed 4) or 1.6× the time (seed 12). 25 steps did about as well as
	// 40, 60 kept less of the gain. The bound's read is one dense pass
	// (n² entries) every 20 steps once the residual is below stallResid.
	// TestLPOnlyLargeStall.
	stallSteps       = 40
	stallRise        = 1e-3
	stallResid       = 0.1
	lpDriftEvery     = 10 // driftStop's checks: every this many successful Newton steps
	lpDriftFalls     = 2  // and this many falls of the bound in a row end the stage
	narrowDriftFalls = 4  // the same for Phase B's first narrow Newton run (its comment)
	// wideFall: after a validation a wide run of Phase B ends on a falling
	// bound only if it fell at most this share of the gap between the
	// objective and its best (the narrow run's comment)
	wideFall    = 0.25
	stageSweeps = 10
	// lpStageSweeps: the sweeps that open each of lpLarge's Phase A stages
	// (cfg.sweeps = stageSweeps elsewhere). Ten took the duals the previous
	// stage left far off the path at the new ε (`separated` n = 2000 at ϑ =
	// 0.7 × median: the dual's bound 1.10 → −0.88 over the sweeps into ε =
	// 0.0016, and 110 Newton steps to come back). Measured with two
	// (docs/PERFORMANCE.md): BenchmarkHard's separated n = 2000 / 3000 6.2 /
	// 12.6 → 4.7 / 10.0 s, MNIST n = 3000 at ϑ = 0.6–0.7 × median 5.6–6.2 →
	// 3.4–4.1 s; random sweeps of seeds 9, 10, 11 180 / 210 / 70 → 139 / 209 /
	// 46 s, all certified. One fell apart without the rollback of Phase C
	// (`separated` n = 3000, seed 12: 8002 iterations), none with it; zero
	// drifted on CIFAR-10 n = 3000 at 0.65 × (4.0 → 11.2 s); two did not
	// (6.4 → 6.9 s, and 11.0 → 9.7 s at 0.6 ×). Not faster at n = 10,000
	// (`separated`, seed 4: 282 s either way).
	lpStageSweeps    = 2
	stageSweepsSmall = 2   // sweeps per ε stage for n < parMin
	parMin           = 400 // from this n on a single solve uses two goroutines
)

// SerialMaxN is the largest number of points n for which Solve, the backward
// pass (Result.VJP) and Result.FeatureGrad run on the calling goroutine
// alone; from SerialMaxN+1 points on, one solve splits its passes over the
// classes between two goroutines (SolveBatch with more than one worker keeps
// each solve on one goroutine at every n).
const SerialMaxN = parMin - 1

func solveInstance(in *instance, cfg config) *Result {
	if cfg.lpOnly && cfg.warm == nil && !cfg.plans && !cfg.noDistinct {
		// few distinct points: the LP over their locations (distinct.go)
		if r := solveDistinct(in, cfg); r != nil {
			return r
		}
	}
	s := newSolver(in)
	s.stop = cfg.stop
	// the team before the first selection, whose per-class passes then run
	// on both processors (the same answer: forClasses' comment). At n =
	// 10,000 the first selection alone took 2.1 CPU-s on one.
	s.par = in.n >= parMin && !cfg.serial
	if s.par {
		s.tm = newTeam()
		defer s.tm.close()
	}
	s.init(cfg.warm)
	large := isLarge(in.n, cfg)
	if !cfg.noSlack && large {
		s.markSlack()
	}
	selL := cutLog + math.Log(float64(in.n)) + candMargin // e-folds kept for the next stage
	switch {
	case !large:
		s.selectCands(selAll, 0, 0, 0, 0) // every entry
	case cfg.warm != nil:
		s.selectCands(selKeys, cfg.eps, selL, candDelta, 0)
	default:
		s.selectCands(selCost, 0, 0, 0, candK) // the candK cheapest rows of each column
	}
	// a target ε below smallEps (newton.go), cold, on a problem that starts
	// dense: ε stages of its own (smallEpsStages)
	small := cfg.eps < smallEps && cfg.warm == nil && !large
	s.vecExp = cfg.eps < smallEps
	adaptive := false
	if cfg.epsFactor == 0 {
		cfg.epsFactor = epsFactor
		if small {
			cfg.epsFactor = epsFactorSmall
			adaptive = true
		}
	}
	if cfg.lpSweeps == 0 {
		cfg.lpSweeps = lpStageSweeps
	}
	if cfg.sweeps == 0 {
		cfg.sweeps = stageSweeps
		if in.n < parMin {
			// small problems: Newton needs hardly any sweeps to find its
			// basin, and each sweep costs as much as a Newton step's CG
			cfg.sweeps = stageSweepsSmall
		}
	}
	if cfg.stageTol == 0 {
		cfg.stageTol = stageTol
		if large {
			// the stages of a large problem run on few candidates: a
			// tighter stage leaves fewer damped steps to the target ε
			cfg.stageTol = stageTolLarge
		}
	}
	if cfg.epsStart == 0 {
		cfg.epsStart = epsStart
		if small {
			cfg.epsStart = epsStartSmall
		}
	}
	s.noFullOp = cfg.noFullOp
	s.noShortRows = cfg.noShortRows
	s.rowBlock = cfg.rowBlock
	if cfg.lmReg != 0 {
		s.lmReg = cfg.lmReg
	}
	epsT := cfg.eps
	s.eps = epsT
	if cfg.warm == nil {
		s.eps = math.Max(epsT, cfg.epsStart)
	}
	res := &Result{M: in.m, N: in.n, P: make([]float64, in.m*in.n), Objective: math.Inf(1), LowerBound: 1}
	// the pooled candidate (pooled.go): when it is within every budget the
	// LP value is 1 and the certificate holds before the first iteration
	if !cfg.noPooled {
		s.pooledAnswer(res, cfg.plans, large || cfg.pooledTransport)
	}
	Ptmp := make([]float64, in.m*in.n)
	var snap *state
	certified := func() bool {
		return res.Objective-res.LowerBound <= cfg.tol*res.LowerBound
	}
	cert := func() {
		ub := s.upper(Ptmp)
		if ub < res.Objective {
			res.Objective = ub
			copy(res.P, Ptmp)
			if cfg.plans {
				res.Plans = s.plans(res.Plans)
			}
		}
		if lb := s.bestLower(res.Objective, cfg.tol); lb > res.LowerBound {
			res.LowerBound = lb
		}
	}
	// The certificate on the state evalPhi leaves (rounded exactly like
	// cert's): Phase C checks it after every Newton step and ends a stage as
	// soon as it holds, and so does every stage with LPOnly. With Plans the
	// plans must match P, so cert alone decides.
	var stop func() bool
	if !cfg.plans {
		stop = func() bool {
			if ub := s.upperPhi(Ptmp); ub < res.Objective {
				res.Objective = ub
				copy(res.P, Ptmp)
			}
			if lb := s.bestLower(res.Objective, cfg.tol); lb > res.LowerBound {
				res.LowerBound = lb
			}
			return certified()
		}
	}
	var lpStop func() bool
	if cfg.lpOnly {
		lpStop = stop
	}
	// LPOnly from a cold start above lpLargeMin (lpLarge, what drknn-lfd
	// computes without -grad-p) runs Phases A–C below with two changes,
	// both for radii in the band where the LP value approaches 1 (ϑ ≈
	// 0.45–0.58 × median cost on the overlap instances):
	//
	//   - the candidates stay capped at candK per column at the target ε
	//     (Phase B), not only before it. There λ_m·c spans less than
	//     candDelta and every key of a column is within the selection
	//     width: the candidates went dense (n², 80% of the entries at
	//     n = 3000: 394 MB and most of each Newton step). The certificate
	//     does not rely on them (kernel.go): the upper bound's plan is
	//     feasible for the full LP, the lower bound bounds the rows left
	//     out. Phase B's validation still adds every entry that is not
	//     negligible once the regularised solve converges uncertified.
	//   - holdEps: at ε ≤ lpEpsCert·Tol (by default the stages at ε =
	//     0.0016 and 0.001 and Phase C) Newton does not restore a
	//     budget more than 50% off by the 1-D root find at fixed α when
	//     λ_m > 0 already (the previous stage's λ). At a new ε that root
	//     was far from the joint optimum (λ ≈ 0.12 → 0.037 on the threshold
	//     instance), and the inexact Newton steps took 100+ steps to bring
	//     λ back; the line search on Φ keeps the steps safe without it.
	//     (At every ε it cost overlap at n = 10,000 23 more iterations; a
	//     plan far over its budget is still restored: holdOver.)
	//
	// Measured (drknn-lfd, hard set's threshold kind, ϑ = 0.52 × median):
	// n = 2000 3.4 → 2.1 CPU-s; n = 3000 75 CPU-s / 442 MB (600 iterations;
	// 8.8 CPU-s with ϑ changed in its 15th digit) → 3.0 CPU-s / 118 MB; the
	// band 0.45–0.58 × median ≤ 4.1 CPU-s and ≤ 126 MB at n = 3000; the
	// other hard kinds within noise (docs/PERFORMANCE.md).
	lpLarge := cfg.lpOnly && cfg.warm == nil && stop != nil && large
	vcap := s.validationCap(cfg.valBudget) // lpLarge's validations add at most vcap rows a column (validateMax)
	if lpLarge {
		s.holdEps = lpEpsCert * cfg.tol
		s.cover = true
		// Newton's CG with the class coarse space (coarse.go): on
		// classes with nearly slack budgets the Jacobi preconditioner
		// alone left CG 50–200 iterations a step late in each stage
		s.coarse = !cfg.noCoarse
		// an adaptive LM term at small residuals (lmAdapt's comment)
		s.adaptLM = !cfg.noAdaptLM
	}
	// narrow: at and below the target ε lpLarge selects narrowly (kernel.go,
	// row coverage), skips Phase B's validation and halves ε on fresh narrow
	// selections, until a selection would be dense or a stage stalls. When
	// it gives them up, its validations add only the entries within narrowL
	// e-folds (the certificate never relies on the candidates), and Phase C
	// returns to them once the bounds are close. Its last stage above the
	// target ε takes at most lpStageMax Newton steps and ends when the
	// dual's bound drifts down (driftStop).
	narrow := lpLarge
	// narrowCap: the most entries of a narrow selection; narrowReady: the
	// dual's own bound (res.LowerBound may be the pooled bound 1, which
	// says nothing of the dual) is within narrowGap of the objective and
	// the next stage's narrow selection fits narrowCap
	narrowCap := int(narrowMax * float64(in.n) * float64(in.n))
	// closeTo: a dual bound lb within narrowGap of the objective (narrowReady's
	// first half; Phase B's hand-overs read lowerDense once for both tests)
	closeTo := func(lb float64) bool {
		gap := narrowGap
		if cfg.handGap > 0 {
			gap = cfg.handGap
		}
		return res.Objective-lb <= gap*lb
	}
	narrowReady := func() bool {
		return closeTo(s.lowerDense()) && s.narrowCount(s.eps/2) <= narrowCap
	}
	// lastAdded: the share of the candidates that Phase B's last
	// validation added (0 before the first); wide: Phase B handed over to
	// Phase C's union stages (fewAdded's comment)
	lastAdded, wide := 0.0, false
	validated := false // Phase B has validated its candidates at least once
	it := 0
	if cfg.lpOnly && cfg.warm == nil && stop != nil && !large && !cfg.noLPStages {
		// LPOnly from a cold start: its own ε stages (lpstages.go); the
		// phases below then have nothing left to do
		lcfg := cfg
		lcfg.maxIter = min(cfg.maxIter, lpStagesMaxIter)
		it, snap = s.lpStages(lcfg, stop, certified, cert)
		if !certified() && it < cfg.maxIter {
			// not certified within lpStagesMaxIter: solve again from a
			// cold start by the phases below (the regularised path's,
			// stopping at the certificate), keeping the better bounds
			fcfg := cfg
			fcfg.noLPStages = true
			fcfg.maxIter = cfg.maxIter - it
			r := solveInstance(in, fcfg)
			r.mergeBounds(res, cfg.tol)
			r.Iterations += it
			return r
		}
	}
	// Phase A: ε-scaling (cold start only): a few cheap sweeps, then Newton
	// to a loose tolerance at every ε.
	for s.eps > epsT && it < cfg.maxIter && snap == nil {
		sweeps := cfg.sweeps
		if lpLarge {
			sweeps = cfg.lpSweeps // lpStageSweeps' comment
		}
		it = s.stageSweeps(sweeps, it, cfg.maxIter)
		stol := cfg.stageTol
		if adaptive && s.eps == cfg.epsStart {
			stol = firstStageTolSmall
		}
		budget := cfg.maxIter - it
		stageStop := lpStop
		if lpLarge {
			// every stage above the target only brings the duals near
			// the path (lpStageMax's comment); the last one also ends
			// on a drifting bound
			budget = min(budget, lpStageMax)
			if s.eps*cfg.epsFactor <= epsT {
				stageStop = driftStop(lpStop, s.lowerDense, lpDriftFalls)
			}
		}
		steps, _ := s.newton(cfg, budget, stol, stageStop)
		it += steps
		if cfg.lpOnly && certified() {
			snap = s.snapshot(cfg, s.residual()) // LPOnly: done at this ε
			break
		}
		s.alphaStep()
		f := cfg.epsFactor
		if adaptive && steps > slowStage {
			f = epsFactorSlow // a slow stage: a shorter step to the next
		}
		next := math.Max(epsT, s.eps*f)
		if small && next < epsT*(1+1e-9) {
			next = epsT // not a stage a rounding error above the target
		}
		kmax := 0
		if large && (next > epsT || lpLarge) {
			kmax = candK
			if lpLarge && next > epsT && next*f <= epsT {
				if k := s.n / candLastDiv; k >= 2*candK {
					kmax = k // candLastDiv's comment
				}
			}
		}
		if narrow && next <= epsT && s.narrowCount(next) > 2*candK*s.n {
			narrow, s.cover = false, false // a narrow selection would hold more than the cap
		}
		if narrow && next <= epsT {
			s.selectCands(selKeys, next, narrowL, 0, 0)
		} else {
			s.selectCands(selKeys, next, selL, candDelta, kmax)
		}
		s.setEps(next)
	}
	// Phase B: Newton at the target ε, then the certificate. lpLarge opens
	// it with lpOpenSweeps = 1 sweep (the columns made exact at the new ε
	// and candidates), not cfg.sweeps: more took the duals Phase A left near
	// the path far off it (separated n = 2000 at ϑ = 0.7 × median: the
	// dual's bound 1.23 → −0.95 over ten sweeps, and 180 Newton steps to
	// come back). Measured with one (none, two, four on the first): that
	// instance 486 → 261 iterations (267, 317, 431), 5.0 → 2.7 s; a random
	// sweep of 30 instances (n = 1100–3000, M = 2–10) 6055 → 5043
	// iterations, all certified (none: 5084, but all 10,000 MNIST test
	// images at 0.75 × median then took 2.07 GB for 1.47, its validation
	// adding 21 M candidates at the dual the sweepless first look left;
	// one: 1.44 GB); real pixels (MNIST, CIFAR-10 at n = 2000 / 3000, ϑ =
	// 0.05–1 × median) never slower beyond noise, CIFAR-10 n = 2000 at 0.6 ×
	// 3.6 → 2.4 s; slower on separated n = 10,000 at 0.7 × (737 iterations
	// for 703; docs/PERFORMANCE.md). The opening sweeps of Phase A's stages
	// stay: without them Newton drifted on CIFAR-10 n = 3000 at 0.65 × (λ →
	// 0 over 150 steps at ε = 0.0016; 4.0 → 11.2 s). TestLPOnlyLargeNarrow
	// checks that Phase B starts near the bound Phase A reached.
	sweeps := cfg.sweeps
	if lpLarge {
		sweeps = lpOpenSweeps
	}
	for k := 0; k < sweeps && it < cfg.maxIter && snap == nil; k++ {
		s.stop.step()
		s.gStep()
		it++
		s.alphaStep()
	}
	// Newton measures the residual on the evalPhi state, the snapshot on the
	// column-exact state after the final column step; when the two disagree
	// around RegTol (Newton sees nothing to do but the column-exact residual
	// is still above RegTol), Newton's tolerance is tightened so that it
	// takes another step instead of returning at once forever.
	// btol: the residual at which Phases B and C end a stage. lpLarge
	// wants the certificate only, not the regularised answer: its stages
	// end at lpResTol (lpResTol's comment), every other solve's at RegTol.
	btol := cfg.regTol
	if lpLarge {
		btol = math.Max(cfg.regTol, lpResTol)
		if cfg.lpResTol > 0 {
			btol = cfg.lpResTol
		}
	}
	ntol := btol
	early := narrow  // the narrow candidates' first look, at a residual of narrowCheck
	givenUp := false // the narrow candidates were just given up: the validation below opens with a sweep
	for it < cfg.maxIter && snap == nil {
		tol := ntol
		if early {
			tol = narrowCheck
		}
		bstop := lpStop
		if early {
			// the first look also comes when the dual's bound drifts
			// down (narrowDriftFalls falls in a row, checked every
			// lpDriftEvery steps, once it has been positive) before the
			// residual reaches narrowCheck: on the narrow candidates
			// near the pooled radius Newton can wander at residuals 0.1–1
			// while the bound falls (`separated` n = 2000 at ϑ = 0.8 ×
			// median, seed 4: 161 steps, the bound 0.55 → 0.02).
			// Measured (docs/PERFORMANCE.md): that family at 0.8 ×
			// (seeds 4, 11, 12; n = 2000 / 3000) 288 / 196 / 268 and
			// 234 / 283 / 266 → 192 / 196 / 188 and 187 / 211 / 202
			// iterations, at 0.7 × n = 10,000 737 → 542 (219 → 142 s);
			// all 10,000 MNIST images at 0.75 × 523 → 322; random sweeps
			// of 30 and 20 instances 4659 → 4293 and 2948 → 2910
			// iterations, all certified, none slower. Two falls instead
			// of four cost two random instances 82 and 208 iterations
			// (their unions came at a dual that added too few entries),
			// three left one uncertified.
			bstop = driftStop(lpStop, s.lowerDense, narrowDriftFalls)
		}
		// bound: the dual's dense bound, one pass per Newton step at most
		// (stallStop reads it every 20 steps and the drift stop below
		// every 10: both at the same step otherwise)
		step, boundStep, boundAt := 0, -1, 0.0
		bound := func() float64 {
			if boundStep != step {
				boundStep, boundAt = step, s.lowerDense()
			}
			return boundAt
		}
		var stalled *bool
		if lpLarge && !early && !cfg.noStall {
			bstop, stalled = stallStop(bstop, s.residual, bound)
		}
		var drifted *bool
		if lpLarge && !early && (narrow && !cfg.noBDrift || !narrow && !cfg.noWideDrift) {
			// the narrow candidates' run after the first look ends when
			// the dual's own bound falls (lpDriftFalls falls in a row,
			// checked every lpDriftEvery steps): the restricted problem
			// then converges away from the full one's optimum, and the
			// validation below comes at a better dual. On `separated` n =
			// 3000 at 0.7 × median, seed 66, the bound fell 1.182 →
			// 1.148 over the run's last 70 steps, and the validation at
			// its end (a gap of 9%) sent Newton's residual to 1.47 and
			// the bound to 0.69 (130 steps to come back).
			// TestLPOnlyLargeNarrowB.
			//
			// Runs on wider candidates end so too. Before Phase B's
			// first validation they are Phase A's candidates, capped at
			// candK a column, and the restricted problem's dual drifts
			// the same way at residuals of 0.1–0.5, which stallStop
			// never counts as a stall (TestRandomSweep seed 54's trial
			// 26: the bound 3.03 → 2.70 over 90 steps before the
			// validation). After a validation only a fall within
			// wideFall of the gap ends the run: a larger one is Newton
			// coming back from the entries just added (`separated` n =
			// 10,000, seed 4: 1.07 → 0.95 from a gap of 0.34; stopped
			// there, the next validation took the candidates from 9.3
			// to 13.7 M). Measured (docs/PERFORMANCE.md, session of
			// 2026-11-29, 08:09– UTC): seed 54's trial 26 436 → 286
			// iterations, 14.4 → 7.7 s; 480 sweep instances 30,630 →
			// 30,127 iterations, 14 moved, one of them up.
			// TestLPOnlyLargeWideDrift.
			afterValidation := !narrow && validated
			best, last := math.Inf(-1), math.Inf(-1)
			fell := driftStop(nil, func() float64 {
				last = bound()
				best = max(best, last)
				return last
			}, lpDriftFalls)
			drifted = new(bool)
			inner := bstop
			bstop = func() bool {
				if inner != nil && inner() {
					return true
				}
				*drifted = fell() && (!afterValidation || best-last <= wideFall*(res.Objective-best))
				return *drifted
			}
		}
		if counted := bstop; counted != nil {
			bstop = func() bool {
				step++ // a new dual: bound reads it afresh
				return counted()
			}
		}
		steps, failed := s.newton(cfg, cfg.maxIter-it, tol, bstop)
		it += steps + 1
		r := s.residual()
		// done: the stage's residual reached, or Newton stalled above it
		// (stallStop), or the narrow run drifted: the validation and the
		// certificate as at btol
		done := r <= btol || (stalled != nil && *stalled) || (drifted != nil && *drifted)
		if cfg.lpOnly && certified() {
			snap = s.snapshot(cfg, r)
			break
		}
		if early {
			// the narrow candidates miss entries the full problem needs
			// when the dual's own bound is far below the primal one (on
			// MNIST n = 3000 at ϑ = 0.8 × median it stayed near 0.1 for
			// an LP value of 1, and converging the restricted problem took
			// 6 s before the validation found out; separated n = 2000 at
			// 0.7 × was within 2% at this residual): a validation now,
			// over the entries within narrowL e-folds of their column's
			// least at this dual, keeping the row coverage (the
			// certificate never relies on the candidates; the full
			// validation's 46 e-folds took all 10,000 MNIST images at
			// 0.7 × to 15 M candidates in Phase B and 64 M in Phase C)
			early = false
			cert()
			if lb := s.lowerDense(); res.Objective-lb > narrowGapEarly*lb {
				narrow, validated = false, true
				s.selectCands(selUnion, s.eps, narrowL, 0, vcap)
			}
			continue
		}
		if steps == 0 && !failed {
			if lpLarge && !cfg.noZeroDone {
				// lpLarge: Newton found its own residual within the
				// stage's (lpResTol: for the certificate only) and the
				// column-exact one is a hair above it: done, not another
				// run to a tenfold tighter tolerance. On a random
				// instance near the pooled radius (TestRandomSweep seed
				// 25, trial 12: 1.09e-4 against 1e-4) that run took 42
				// steps of ≈ 200 CG iterations each (13 s) while the
				// dual's bound fell 0.95 → 0.77, before the same
				// validation. Measured (docs/PERFORMANCE.md, session of
				// 2026-11-28, 23:08– UTC): that instance 616 → 597
				// iterations, 49.1 → 46.2 s; 16 random sweeps (480
				// instances) 35,255 → 35,221 iterations, 8 instances
				// moved, one up (seed 25's trial 28, 144 → 148,
				// 2.9 → 2.7 s); BenchmarkHard's kinds at n = 2000 and
				// 3000, seeds 4, 11, 12, unchanged. TestLPOnlyLargeZeroDone.
				done = true
			} else {
				ntol /= 10
			}
		}
		if done && it < cfg.maxIter && narrow {
			// the regularised answer is not wanted, only the certificate:
			// on to Phase C's narrow stages if the bounds are already
			// close (else the narrow candidates missed entries the full
			// problem needs: the validation below) and the next selection
			// would not be dense
			cert()
			if narrowReady() {
				snap = s.snapshot(cfg, r)
				break
			}
			narrow, s.cover = false, false
			givenUp = true
		}
		if done && it < cfg.maxIter && lpLarge && !narrow && !givenUp && !cfg.noBHand {
			// validated candidates whose bounds are already close: on to
			// Phase C's narrow stages now, as after the last validation
			// below, instead of validating again. Near the pooled radius
			// each validation added 0.003–0.7% more entries and Newton
			// re-converged on 4.5 M of them for 2–3 s, five times over
			// (TestRandomSweep seed 10's trial 0, from a gap of 2.4%:
			// 40.7 → 28.3 s; docs/PERFORMANCE.md)
			cert()
			if certified() {
				snap = s.snapshot(cfg, r)
				break
			}
			near := closeTo(s.lowerDense())
			if near && s.narrowCount(s.eps/2) <= narrowCap {
				// narrow here, not in the test after the loop: that
				// would take the dense bound's pass again
				snap = s.snapshot(cfg, r)
				narrow, s.cover = true, true
				break
			}
			if near && lastAdded > 0 && lastAdded <= fewAdded && !cfg.noFewHand {
				// on to Phase C's union stages (fewAdded's comment)
				snap = s.snapshot(cfg, r)
				wide = true
				break
			}
		}
		if done && it < cfg.maxIter {
			// validation: every entry outside the candidates must be
			// negligible at this dual; add those that are not and go on
			// (lpLarge: those within narrowL e-folds, as above)
			if lpLarge {
				before := len(s.kk)
				validated = true
				if added := s.selectCands(selUnion, s.eps, narrowL, 0, vcap); added != 0 {
					lastAdded = float64(added) / float64(before+added)
					ntol = btol
					if givenUp && !cfg.noBSweep && it < cfg.maxIter {
						// the first validation after the narrow
						// candidates were given up adds the entries
						// they missed, many far above their column's
						// level at this dual: one sweep (columns
						// exact, then α) before Newton, as Phase C's
						// stages open (seed 66 above: the residual
						// 0.245 and the bound 1.19 after it, not 1.47
						// and 0.69). After every validation it cost a
						// random instance (TestRandomSweep seed 9,
						// trial 5) 590 → 667 iterations.
						s.stop.step()
						s.gStep()
						it++
						s.alphaStep()
					}
					givenUp = false
					continue
				}
			} else if !s.validateCands() {
				ntol = btol
				continue
			}
		}
		if done || it >= cfg.maxIter || ntol < 1e-16 {
			snap = s.snapshot(cfg, r)
			cert()
			break
		}
		if failed {
			it = s.sweepFallback(it, cfg.maxIter)
		}
	}
	if snap == nil {
		s.gStep()
		snap = s.snapshot(cfg, s.residual())
		cert()
	}
	// lpLarge after validated candidates: the narrow stages after all when
	// the bounds are already close (the test at Phase B's end above)
	if lpLarge && !narrow && !wide && !certified() {
		if narrowReady() {
			narrow, s.cover = true, true
		}
	}
	// Phase C: the regularised optimum is not within Tol of the LP value;
	// keep decreasing ε for the certificate only.
	redo, grown, regrew := false, false, false
	var saved []float64
	var lb0, ub0 float64
	for !certified() && it < cfg.maxIter && (s.eps > epsFloor || redo) {
		next := math.Max(epsFloor, s.eps/2)
		if redo {
			next = s.eps
		}
		if narrow && !grown && s.narrowCount(next) > narrowCap {
			narrow, s.cover = false, false
		}
		s.setEps(next)
		if !grown {
			lb0 = math.Inf(-1)
			if narrow {
				saved = s.saveDuals(saved) // for the rollback below
				lb0, ub0 = s.lowerDense(), res.Objective
			}
		}
		redo = false
		regrown := grown // this stage reruns an ε on the candidates grown below
		grown = false
		lbEnd := math.Inf(-1)
		switch {
		case regrown:
			// the candidates of the column generation below are set
		case narrow && regrew:
			// after the regrowth below: keep its candidates
			s.selectCands(selUnion, s.eps, narrowL, 0, vcap)
		case narrow:
			s.selectCands(selKeys, s.eps, narrowL, 0, 0)
		default:
			// the LP's support may include entries negligible at the
			// target ε (uncapped with lpLarge too: capped at candK the
			// union dropped entries the target ε's validation had added,
			// and the dual bound of the restricted problem stalled short
			// of the certificate — Gaussian classes n = 1100–1500, ϑ =
			// 0.6–0.7 × median: uncertified after 695–8018 iterations, all
			// certified in 378–773 uncapped). Without candDelta under
			// lpLarge `separated` n = 3000 at ϑ = 0.7 × median (seed 11)
			// took 5.6 s for 8.0, but a random instance (n = 1500, M =
			// 10, d = 2, rounded features) ended uncertified after 3474
			// iterations (certified in 3608 with it): docs/PERFORMANCE.md
			s.selectCands(selUnion, s.eps, selL, candDelta, 0)
		}
		if lpLarge && !regrown && !cfg.noCSweep && it < cfg.maxIter {
			// each stage opens with a sweep, as Phase B does: the
			// columns made exact at the new ε and the rows' α before
			// Newton's first step. Without it the halved ε squares the
			// kernel of every entry the duals left above its column's
			// level, and Newton spent its first 20–40 steps coming
			// back (`separated` n = 3000 at ϑ = 0.7 × median, seed 12:
			// a residual of 7·10²² at ε = 5·10⁻⁴'s first step).
			// Measured (docs/PERFORMANCE.md, session of 2026-11-27,
			// 05:17– UTC): `separated` at 0.7 × n = 2000 seeds 4 / 12
			// 187 / 220 → 185 / 170 iterations, n = 3000 seeds 4 / 11 /
			// 12 211 / 272 / 362 → 178 / 240 / 303. TestLPOnlyLargeCSweep.
			s.stop.step()
			s.gStep()
			it++
			s.alphaStep()
		}
		cstop := stop
		if narrow {
			cstop = driftStop(stop, s.lowerDense, narrowDriftFalls)
		}
		steps, _ := s.newton(cfg, cfg.maxIter-it, btol, cstop)
		it += steps + 1
		cert()
		if narrow && !certified() {
			// the rollback: a narrow stage whose dual bound ends below
			// the one it started from has drifted (its candidates miss
			// entries the full problem needs, and Newton converges the
			// restricted problem away from the full one's optimum):
			// back to the duals it started from, and the same ε again
			// on the union selections. Measured: `separated` n = 3000
			// at ϑ = 0.7 × median, seed 12, with one opening sweep per
			// Phase A stage: the bound fell 1.15 → 0.46 over 312 narrow
			// steps at ε = 5e-4, and the union stages from there took
			// 8002 iterations (617 s); with the rollback (drift stop
			// at 0.98) 311. It never fired on the random sweeps of
			// seeds 9–11, with ten opening sweeps (the same iterations in
			// every trial as without it) or two.
			lb := s.lowerDense()
			lbEnd = lb
			if lb < lb0 && lb0-lb <= growFall*(ub0-lb0) && !regrown {
				// a small fall: the restricted problem converged a
				// little away from the full one's optimum because a few
				// entries it needs are not candidates. Column
				// generation at these duals: the entries within
				// narrowL e-folds join the candidates and the same ε
				// runs again, still narrow, once; a second fall rolls
				// back. Measured on `separated` n = 3000 at ϑ = 0.7 ×
				// median, seed 11: the bound fell 1.1186 → 1.1174 at
				// ε = 5e-4 (the gap 0.022), and the rollback's union
				// took 6.75 M of the 9 M entries (16.5 s, 311
				// iterations); grown, 0.77 M at most (5.7 s, 272).
				// The instance the rollback was made for (a fall 1.15
				// → 0.97 from a gap of 0.037) still rolls back.
				s.selectCands(selUnion, s.eps, narrowL, 0, vcap)
				redo, grown = true, true
				continue
			}
			if lb < lb0 && !regrown && !cfg.noRegrow && !regrew {
				// a larger fall, the first: column generation at the
				// drifted duals (the entries they need join the
				// candidates), then back to the duals the stage started
				// from and the same ε again, still narrow, on those
				// candidates; a second fall rolls back, and once the
				// stage ends without one the next selects narrowly
				// again (below). Measured on `separated` n =
				// 3000 at ϑ = 0.7 × median (the default settings), seeds
				// 41 and 50: the bound fell 6.3 and 6.1 times the
				// stage's gap at ε = 5e-4, and the rollback's unions
				// took 6.2 / 5.6 M of the 9 M entries: 11.7 / 13.5 s →
				// 6.4 / 8.1 s, at most 0.96 M candidates. On the rollback's
				// own instance (seed 12 with one opening sweep, a fall
				// of 4.6 times the gap) 262 → 414 iterations, 11.9 →
				// 10.3 s. The random sweeps never get here.
				s.selectCands(selUnion, s.eps, narrowL, 0, vcap)
				s.restoreDuals(saved)
				redo, grown, regrew = true, true, true
				continue
			}
			if lb < lb0 {
				s.restoreDuals(saved)
				narrow, s.cover, redo = false, false, true
				continue
			}
		}
		if narrow && res.Objective-lbEnd > narrowStall*(ub0-lb0) {
			narrow, s.cover = false, false // stalled: the union selections from here
		}
		if narrow && regrew && !redo && !grown && !cfg.noRenarrow {
			// the regrown stage ended without a fall: the next stage
			// selects narrowly again at its ε instead of keeping the
			// regrowth's candidates (which only grow from stage to
			// stage). Measured (docs/PERFORMANCE.md, session of
			// 2026-11-29, 17:15– UTC): `separated` n = 10,000, seed 10,
			// kept 9.1 M candidates through Phase C's last two stages
			// (26 s); narrow again 3.5 and 2.8 M (11 s), 83.5 → 66.6 s.
			// The other eight seeds (4–9, 11, 12) the same iterations;
			// at n = 3000 seeds 41 and 50 277 and 253 either way.
			regrew = false
		}
	}

	res.Iterations = it
	res.Gap = math.Max(0, res.Objective-res.LowerBound)
	res.RelGap = res.Gap / res.LowerBound
	if certified() {
		res.Status = Optimal
	} else {
		res.Status = IterationLimit
	}
	snap.fill(res)
	return res
}

// driftStop extends stop (nil: none) for lpLarge's last stage above the
// target ε, which only has to bring the duals near the path (and for Phase
// B's first narrow Newton run, its later runs, narrow or wide, and Phase
// C's narrow stages): every lpDriftEvery calls (Newton calls stop after
// each step whose line search succeeds) it reads the dual's own bound
// (bound: the dense lower bound) and ends the stage after falls falls in a
// row (lpDriftFalls for that stage), once the bound has been positive in
// the stage. On capped candidates near the pooled radius that stage
// drifts: on `separated` n = 3000 at ϑ = 0.8 ×
// median the bound rose to 0.29 in 30 steps, then fell for the rest of the
// stage's 100+ steps. Measured (docs/PERFORMANCE.md): that family at 0.8 ×
// n = 3000 (seeds 4, 11, 12) 378 / 387 / 444 → 234 / 283 / 266 iterations,
// 5.2–10.7 → 4.2–5.0 s; a random sweep of 30 instances (n = 1100–3000)
// 5043 → 4655 iterations, all certified; real pixels at n = 2000 / 3000
// the same iterations but CIFAR-10 n = 3000 at 0.65 × (183 → 201). Without
// the positive-bound condition a random instance whose bound was still
// negative and noisy (n = 2000, M = 5) took 743 iterations for 598; three
// falls instead of two cost CIFAR-10 at 0.65 × 274.
func driftStop(stop func() bool, bound func() float64, falls int) func() bool {
	k, fell, prev, best := 0, 0, math.Inf(-1), math.Inf(-1)
	return func() bool {
		if stop != nil && stop() {
			return true
		}
		k++
		if k%lpDriftEvery != 0 {
			return false
		}
		lb := bound()
		best = max(best, lb)
		switch {
		case best <= 0:
			fell = 0 // still on its way in
		case lb < prev:
			fell++
		default:
			fell = 0
		}
		prev = lb
		return fell >= falls
	}
}

// stallStop wraps stop for a Newton run of lpLarge's Phase B: it also
// stops (and sets *stalled) when the residual has not halved from its
// anchor (the residual at its last halving, at most stallResid) within
// stallSteps successful steps and the dual's own bound (bound: the dense
// lower bound, read every stallSteps/2 steps) has not risen by stallRise
// (relative) over the last stallSteps.
func stallStop(stop func() bool, resid, bound func() float64) (func() bool, *bool) {
	stalled := new(bool)
	k, k0, anchor := 0, 0, math.Inf(1)
	var lbs [3]float64 // the bound at the last three reads, oldest first
	for i := range lbs {
		lbs[i] = math.NaN()
	}
	return func() bool {
		if stop != nil && stop() {
			return true
		}
		k++
		if r := resid(); r <= anchor/2 {
			anchor, k0 = r, k
		}
		if k%(stallSteps/2) != 0 {
			return false
		}
		// the bound (a dense pass) only where a stall can use it: a read
		// at an anchor above stallResid is never part of one (the anchor
		// moves only at a halving, which restarts the count)
		lb := math.NaN()
		if anchor <= stallResid {
			lb = bound()
		}
		lbs[0], lbs[1], lbs[2] = lbs[1], lbs[2], lb
		// lbs[0] is NaN until the third read (step 3·stallSteps/2, the
		// earliest stall): the rise is then over the last stallSteps
		*stalled = k-k0 >= stallSteps && anchor <= stallResid && lbs[2]-lbs[0] <= stallRise*math.Abs(lbs[2])
		return *stalled
	}, stalled
}

// mergeBounds takes o's certificate where it is better than r's (both bound
// the same LP: o's feasible P if its objective is lower, o's lower bound if
// higher) and recomputes the gap and the status (Optimal at a relative gap
// ≤ tol). Only for results without Plans (a plan must match its P).
func (r *Result) mergeBounds(o *Result, tol float64) {
	if o.Objective < r.Objective {
		r.Objective = o.Objective
		copy(r.P, o.P)
	}
	r.LowerBound = max(r.LowerBound, o.LowerBound)
	r.Gap = math.Max(0, r.Objective-r.LowerBound)
	r.RelGap = r.Gap / r.LowerBound
	if r.Gap <= tol*r.LowerBound {
		r.Status = Optimal
	}
}

func (s *solver) setEps(eps float64) {
	s.eps = eps
	for m := range s.need {
		s.need[m] = true
	}
}

// plans materialises the feasible (shrunk) plans of the current
// column-exact state in the original n×n layout.
func (s *solver) plans(dst [][]float64) [][]float64 {
	n, M := s.n, s.M
	if dst == nil {
		dst = make([][]float64, M)
		for m := range dst {
			dst[m] = make([]float64, n*n)
		}
	}
	for m := 0; m < M; m++ {
		t := s.shrink(m)
		pm := dst[m]
		for k := range pm {
			pm[k] = 0
		}
		um := s.u[m*n : (m+1)*n]
		if s.slack[m] {
			a := s.sa[m*n : (m+1)*n]
			for q := s.off[m]; q < s.off[m+1]; q++ {
				j := s.order[q]
				w := s.sb[q] * s.v[q]
				for i, x := range a {
					pm[i*n+j] = w * x * um[i]
				}
			}
			continue
		}
		for q := s.off[m]; q < s.off[m+1]; q++ {
			j := s.order[q]
			kr, rows := s.colKern(q), s.colRows(q)
			w := t * s.v[q]
			for k, x := range kr {
				i := k
				if rows != nil {
					i = int(rows[k])
				}
				pm[i*n+j] = w * x * um[i]
			}
			pm[j*n+j] += (1 - t) * s.ninv[m]
		}
	}
	return dst
}

// sweepFallback is what a failed Newton step falls back to: the budget
// multipliers solved exactly, then 20 sweeps at the same ε (fewer if the
// iteration cap it/maxIter is reached). It returns the iteration count.
func (s *solver) sweepFallback(it, maxIter int) int {
	for m := 0; m < s.M; m++ {
		if !s.fixedLam(m) {
			s.lambdaSolve(m)
		}
	}
	for k := 0; k < 20 && it < maxIter; k++ {
		s.stop.step()
		s.alphaStep()
		s.gStep()
		it++
	}
	return it
}

// stageSweeps runs the sweeps that open an ε stage (at most sweeps of them,
// stopping at the iteration cap) and returns the iteration count.
func (s *solver) stageSweeps(sweeps, it, maxIter int) int {
	for k := 0; k < sweeps && it < maxIter; k++ {
		s.stop.step()
		s.gStep()
		it++
		s.alphaStep()
		if s.sweepLambda {
			s.lambdaStep(math.Max(stageTol/2, 2*s.resid/float64(s.M)))
		}
	}
	return it
}

// saveDuals copies α, λ and g into dst (grown when short).
func (s *solver) saveDuals(dst []float64) []float64 {
	dst = append(dst[:0], s.alpha...)
	dst = append(dst, s.lam...)
	return append(dst, s.g...)
}

// restoreDuals sets α, λ and g from saveDuals' copy; every class's kernel is
// rebuilt at the next use.
func (s *solver) restoreDuals(src []float64) {
	k := copy(s.alpha, src)
	k += copy(s.lam, src[k:])
	copy(s.g, src[k:])
	for m := range s.need {
		s.need[m] = true
	}
}

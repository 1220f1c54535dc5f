package experiment

import (
	"context"
	"fmt"
	"math/rand"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/train"
)

// StratifiedFolds assigns each of the points with labels y (0…m−1) to one
// of folds folds: each class's points are shuffled (a generator seeded by
// seed) and dealt round-robin, continuing from one class to the next, so
// every fold holds about 1/folds of each class.
func StratifiedFolds(y []int, m, folds int, seed int64) []int {
	rng := rand.New(rand.NewSource(seed ^ 0x5eed))
	fold := make([]int, len(y))
	next := 0
	for c := 0; c < m; c++ {
		var idx []int
		for i, l := range y {
			if l == c {
				idx = append(idx, i)
			}
		}
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		for _, i := range idx {
			fold[i] = next % folds
			next++
		}
	}
	return fold
}

// ChooseTheta returns the radii for a repeat: train.theta, or — when
// train.theta_grid is set — the grid value (one radius for all classes)
// with the best cross-validated Dr.k-NN accuracy on the episode's training
// samples alone (stratified k-fold, or leave-one-out when cv_folds = 0).
// For each candidate and fold a fresh network is trained on the other folds
// exactly as in the run and classifies the held-out fold. Ties go to the
// smaller radius. Query samples are never looked at. The fits' steps are
// reported as StepDone events with CV set.
func ChooseTheta(ctx context.Context, cfg Config, ep *Episode, notify Observer) ([]float64, error) {
	return chooseTheta(ctx, cfg, ep, notify, fmt.Sprintf("repeat %d", ep.Repeat+1), nil)
}

// chooseTheta is ChooseTheta recording each finished fit in cv (nil:
// none) and reusing the fits cv already holds (a -resume); who names the
// training in the log ("repeat 2", "fit").
func chooseTheta(ctx context.Context, cfg Config, ep *Episode, notify Observer, who string, cv *cvProgress) ([]float64, error) {
	grid := cfg.Train.ThetaGrid
	if len(grid) == 0 {
		return cfg.Train.Theta, nil
	}
	shape, x, y, seed, r := ep.Train.Shape, ep.Train.X, ep.TrainLabels, ep.Seed, ep.Repeat
	n := len(y)
	folds := cfg.Train.CVFolds
	if folds == 0 || folds > n {
		folds = n
	}
	fold := StratifiedFolds(y, cfg.Ways, folds, seed)
	size := len(x) / n
	if cv != nil {
		reused := 0
		for _, theta := range grid {
			for f := 0; f < folds; f++ {
				if _, ok := cv.done(theta, f); ok {
					reused++
				}
			}
		}
		if reused > 0 {
			notify(TrainingResumed{Repeat: r, CV: true, Step: reused * cfg.fitSteps(), Steps: cfg.cvSteps()})
			notify(Message{fmt.Sprintf("%s: %d of %d cross-validation fits finished before the stop, reused from %s (their %d steps not run again)",
				who, reused, len(grid)*folds, cv.path, reused*cfg.fitSteps())})
		}
	}
	best, bestCorrect := 0.0, -1
	for _, theta := range grid {
		correct, total := 0, 0
		for f := 0; f < folds; f++ {
			var trX []float32
			var trY, hoIdx []int
			for i := 0; i < n; i++ {
				if fold[i] == f {
					hoIdx = append(hoIdx, i)
				} else {
					trX = append(trX, x[i*size:(i+1)*size]...)
					trY = append(trY, y[i])
				}
			}
			if len(hoIdx) == 0 {
				continue
			}
			if x, ok := cv.done(theta, f); ok {
				correct += x.Correct
				total += x.Total
				continue
			}
			present := map[int]bool{}
			for _, l := range trY {
				present[l] = true
			}
			if len(present) < cfg.Ways {
				return nil, fmt.Errorf("cross-validation: fold %d leaves a class without training points (shots too small for cv_folds = %d)", f, folds)
			}
			th := []float64{theta}
			net, _, _, err := Fit(ctx, cfg, shape, trX, trY, th, seed, Checkpointing{},
				func(st train.StepStats) { notify(StepDone{Repeat: r, CV: true, Stats: st}) })
			if err != nil {
				return nil, fmt.Errorf("cross-validation ϑ = %g, fold %d: %w", theta, f, err)
			}
			et, err := net.Embed(trX, len(trY))
			if err != nil {
				return nil, err
			}
			var hoX []float32
			for _, i := range hoIdx {
				hoX = append(hoX, x[i*size:(i+1)*size]...)
			}
			eh, err := net.Embed(hoX, len(hoIdx))
			if err != nil {
				return nil, err
			}
			lfd, err := SolveLFD(cfg, et, len(trY), net.Dim(), trY, th)
			if err != nil {
				return nil, fmt.Errorf("cross-validation ϑ = %g, fold %d: %w", theta, f, err)
			}
			k := min(cfg.Eval.K, len(trY))
			c, err := eval.New("drknn", eval.Settings{K: k, Workers: 1}, lfd.P)
			if err != nil {
				return nil, err
			}
			if err := c.Fit(et, len(trY), net.Dim(), trY, cfg.Ways); err != nil {
				return nil, err
			}
			pred, err := c.Predict(eh, len(hoIdx))
			if err != nil {
				return nil, err
			}
			fc := 0
			for j, i := range hoIdx {
				if pred[j] == y[i] {
					fc++
				}
			}
			correct += fc
			total += len(hoIdx)
			if err := cv.add(cvFit{Theta: theta, Fold: f, Correct: fc, Total: len(hoIdx)}); err != nil {
				return nil, fmt.Errorf("cross-validation: %w", err)
			}
		}
		acc := float64(correct) / float64(total)
		notify(Message{fmt.Sprintf("repeat %d: cross-validation ϑ = %g: accuracy %.4f (%d folds)", r+1, theta, acc, folds)})
		// Every radius is scored on the same held-out points: compare the
		// counts, and break ties by the radius, not by the grid's order.
		if correct > bestCorrect || correct == bestCorrect && theta < best {
			best, bestCorrect = theta, correct
		}
	}
	notify(Message{fmt.Sprintf("repeat %d: chose ϑ = %g by cross-validation", r+1, best)})
	return []float64{best}, nil
}

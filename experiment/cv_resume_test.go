package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// cvStopper cancels a run at its stopAt-th cross-validation step and
// records what the run reported.
type cvStopper struct {
	mu      sync.Mutex
	stopAt  int
	cancel  func()
	cv      int // cross-validation steps seen
	main    int // steps of the networks
	resumed []TrainingResumed
	log     []string
}

func (s *cvStopper) observe(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := e.(type) {
	case StepDone:
		if !e.CV {
			s.main++
			return
		}
		s.cv++
		if s.cv == s.stopAt && s.cancel != nil {
			s.cancel() // Ctrl-C
		}
	case TrainingResumed:
		s.resumed = append(s.resumed, e)
	case Message:
		s.log = append(s.log, e.Text)
	}
}

// A run stopped during ϑ's cross-validation (train.theta_grid), before its
// network's first checkpoint, keeps the cross-validation fits it finished
// in cv.json beside where the checkpoint goes; -resume trains only the
// others, counts the reused fits' steps as restored (TrainingResumed with
// CV) and logs so, and ends with the uninterrupted run's ϑ, results and
// model.bin; cv.json is removed with the checkpoints at the end. Before,
// a stop there lost every finished fit and -resume trained them all again.
func TestResumeReusesFinishedCVFits(t *testing.T) {
	csv := fixtureCSV(t)
	for _, tc := range []struct {
		name     string
		cfg      Config
		dir      func(run string) string // the folder of the checkpoint and cv.json
		model    func(run string) string // the exported model.bin
		who      string
		fitSteps int
		cvAfter  int // cross-validation steps after ϑ's (protocol fit's accuracy folds)
	}{
		{"episodes", synthConfig(t, "repeats=1", "train.steps=6", "queries=20", "train.theta_grid=[0.1,0.5]", "train.cv_folds=2",
			"train.checkpoint_every=0", "eval.methods=[drknn,embedding_knn]"),
			func(run string) string { return filepath.Join(run, "repeats", "01") },
			func(run string) string { return filepath.Join(run, "repeats", "01", "export", "model.bin") }, "repeat 1", 6, 0},
		{"fit", fitConfig(t, "csv", csv, "data.label=kind", "data.missing=mean", "train.theta_grid=[0.1,0.5]", "train.cv_folds=2",
			"train.checkpoint_every=0", "workers=1"),
			func(run string) string { return run },
			func(run string) string { return filepath.Join(run, "export", "model.bin") }, "fit", 15, 2 * 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantDir := t.TempDir()
			want, err := Run(t.Context(), tc.cfg, Options{OutDir: wantDir})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			const finished, fits = 2, 2 * 2 // of grid × folds
			stopped := &cvStopper{stopAt: finished*tc.fitSteps + 2, cancel: cancel}
			if _, err := Run(ctx, tc.cfg, Options{OutDir: dir, Observer: stopped.observe}); !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped run: %v", err)
			}
			if stopped.main != 0 {
				t.Fatalf("the stop came after %d steps of the network, want during the cross-validation", stopped.main)
			}
			cvFile := filepath.Join(tc.dir(dir), "cv.json")
			note := "the finished cross-validation fits are kept in " + cvFile + "; continue with -resume"
			if !strings.Contains(strings.Join(stopped.log, "\n"), note) {
				t.Errorf("the stopped run's log has no %q:\n%s", note, strings.Join(stopped.log, "\n"))
			}

			resumed := &cvStopper{}
			got, err := Run(t.Context(), tc.cfg, Options{OutDir: dir, Resume: true, Observer: resumed.observe})
			if err != nil {
				t.Fatal(err)
			}
			if wantCV := (fits-finished)*tc.fitSteps + tc.cvAfter; resumed.cv != wantCV {
				t.Errorf("-resume ran %d cross-validation steps, want %d", resumed.cv, wantCV)
			}
			wantEv := []TrainingResumed{{Repeat: 0, CV: true, Step: finished * tc.fitSteps, Steps: fits * tc.fitSteps}}
			if !reflect.DeepEqual(resumed.resumed, wantEv) {
				t.Errorf("resume events %+v, want %+v", resumed.resumed, wantEv)
			}
			line := fmt.Sprintf("%s: %d of %d cross-validation fits finished before the stop, reused from %s (their %d steps not run again)",
				tc.who, finished, fits, cvFile, finished*tc.fitSteps)
			if !strings.Contains(strings.Join(resumed.log, "\n"), line) {
				t.Errorf("the resumed log has no %q:\n%s", line, strings.Join(resumed.log, "\n"))
			}
			sameResumed(t, got, want, tc.model(dir), tc.model(wantDir))
			if _, err := os.Stat(cvFile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("cv.json left after the run: %v", err)
			}
		})
	}
}

// A -resume whose settings differ from those the cv.json records (here
// eval.k, which the choice depends on) trains every fit again.
func TestResumeRetrainsCVFitsOfOtherSettings(t *testing.T) {
	sets := []string{"repeats=1", "train.steps=6", "queries=20", "train.theta_grid=[0.1,0.5]", "train.cv_folds=2", "train.checkpoint_every=0", "eval.methods=[drknn]"}
	cfg := synthConfig(t, sets...)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: (&cvStopper{stopAt: 2*6 + 2, cancel: cancel}).observe}); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	other := synthConfig(t, append(sets, fmt.Sprintf("eval.k=%d", cfg.Eval.K-1))...)
	resumed := &cvStopper{}
	if _, err := Run(t.Context(), other, Options{OutDir: dir, Resume: true, Observer: resumed.observe}); err != nil {
		t.Fatal(err)
	}
	if resumed.cv != 2*2*6 || len(resumed.resumed) != 0 {
		t.Fatalf("-resume with another eval.k ran %d cross-validation steps (want all %d), resume events %+v", resumed.cv, 2*2*6, resumed.resumed)
	}
}

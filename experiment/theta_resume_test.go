package experiment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// With train.theta_grid the radius is chosen by cross-validation before
// the network's training (ChooseTheta: grid × folds fresh fits, which keep
// no checkpoint). A run stopped during the training and resumed reuses
// the ϑ its checkpoint's settings.json records instead of training those
// fits again; their steps count as restored (TrainingResumed with CV), so
// the progress still adds up to Started's, and the log says so. The
// results and the exported model.bin are the uninterrupted run's. Before,
// -resume ran the whole cross-validation again.
func TestResumeReusesThetaChosenByCV(t *testing.T) {
	csv := fixtureCSV(t)
	for _, tc := range []struct {
		name    string
		cfg     Config
		model   func(dir string) string // the exported model.bin
		ck      func(dir string) string // the checkpoint resumed from
		who     string
		cvTheta int // steps of ϑ's cross-validation: grid × folds × steps
		cvLeft  int // cross-validation steps still to run on -resume (protocol fit's accuracy folds)
	}{
		{"episodes", synthConfig(t, "repeats=1", "train.steps=6", "queries=20", "train.theta_grid=[0.1,0.5]", "train.cv_folds=2",
			"train.checkpoint_every=0", "eval.methods=[drknn,embedding_knn]"),
			func(dir string) string { return filepath.Join(dir, "repeats", "01", "export", "model.bin") },
			func(dir string) string { return filepath.Join(dir, "repeats", "01", "checkpoint.bin") }, "repeat 1", 2 * 2 * 6, 0},
		{"fit", fitConfig(t, "csv", csv, "data.label=kind", "data.missing=mean", "train.theta_grid=[0.1,0.5]", "train.cv_folds=2",
			"train.checkpoint_every=0", "workers=1"),
			func(dir string) string { return filepath.Join(dir, "export", "model.bin") },
			func(dir string) string { return filepath.Join(dir, "checkpoint.bin") }, "fit", 2 * 2 * 15, 2 * 15},
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
			stopped := newSession(4, cancel) // Ctrl-C after the network's 4th step
			if _, err := Run(ctx, tc.cfg, Options{OutDir: dir, Observer: stopped.observe}); !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped run: %v", err)
			}
			resumed := newSession(0, nil)
			got, err := Run(t.Context(), tc.cfg, Options{OutDir: dir, Resume: true, Observer: resumed.observe})
			if err != nil {
				t.Fatal(err)
			}
			cvSteps, restored := resumed.steps-resumed.main[0], 0
			for _, e := range resumed.resumed {
				restored += e.Step
			}
			planned := resumed.started.Steps + resumed.started.CVSteps
			if cvSteps != tc.cvLeft || restored+resumed.steps != planned {
				t.Fatalf("-resume ran %d cross-validation steps (want %d) and %d of the network, restored %d (%+v): %d of the %d planned",
					cvSteps, tc.cvLeft, resumed.main[0], restored, resumed.resumed, restored+resumed.steps, planned)
			}
			chose := fmt.Sprintf("%s: ϑ = %g chosen by cross-validation before the stop, reused from %s (its %d steps not run again)",
				tc.who, theta(want)[0], filepath.Join(filepath.Dir(tc.ck(dir)), "settings.json"), tc.cvTheta)
			if !resumed.logged(chose) {
				t.Errorf("the resumed log has no %q:\n%s", chose, strings.Join(resumed.log, "\n"))
			}
			sameResumed(t, got, want, tc.model(dir), tc.model(wantDir))
		})
	}
}

// sameResumed fails t unless a resumed run's ϑ, per-repeat accuracies and
// exported model.bin (gotModel) are the uninterrupted run's.
func sameResumed(t *testing.T, got, want *Results, gotModel, wantModel string) {
	t.Helper()
	if !reflect.DeepEqual(theta(got), theta(want)) {
		t.Fatalf("ϑ %v, uninterrupted %v", theta(got), theta(want))
	}
	for m, w := range want.Methods {
		if !reflect.DeepEqual(got.Methods[m].PerRepeat, w.PerRepeat) {
			t.Fatalf("%s: resumed %v, uninterrupted %v", m, got.Methods[m].PerRepeat, w.PerRepeat)
		}
	}
	sameFile(t, gotModel, wantModel)
}

// theta is the radius a run's results record.
func theta(r *Results) []float64 {
	if r.Fit != nil {
		return r.Fit.Theta
	}
	return r.Episodes[0].Theta
}

// A -resume whose eval.k differs (the choice of ϑ depends on it, the
// network's checkpoint does not) chooses ϑ again rather than reuse the
// stopped run's.
func TestResumeRechoosesThetaWhenEvalChanged(t *testing.T) {
	sets := []string{"repeats=1", "train.steps=6", "queries=20", "train.theta_grid=[0.1,0.5]", "train.cv_folds=2", "train.checkpoint_every=0", "eval.methods=[drknn]"}
	cfg := synthConfig(t, sets...)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: newSession(4, cancel).observe}); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	other := synthConfig(t, append(sets, fmt.Sprintf("eval.k=%d", cfg.Eval.K-1))...)
	resumed := newSession(0, nil)
	_, err := Run(t.Context(), other, Options{OutDir: dir, Resume: true, Observer: resumed.observe})
	if resumed.steps-resumed.main[0] != 2*2*6 || resumed.logged("reused from") {
		t.Fatalf("-resume with another eval.k ran %d cross-validation steps, want them all (%d) (err %v); log:\n%s",
			resumed.steps-resumed.main[0], 2*2*6, err, strings.Join(resumed.log, "\n"))
	}
}

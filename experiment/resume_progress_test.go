package experiment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// session is the events of one Run, collected from its observer.
type session struct {
	mu      sync.Mutex
	started Started
	resumed []TrainingResumed
	steps   int         // StepDone events (networks and cross-validation fits)
	first   map[int]int // index of each repeat's first StepDone
	at      map[int]int // index of each repeat's TrainingResumed
	n       int         // events seen
	log     []string    // Message texts
	stopAt  int         // cancel after this many non-CV StepDone events (0: never)
	cancel  func()      // cancels the run
	main    map[int]int // non-CV StepDone events per repeat
}

func newSession(stopAt int, cancel func()) *session {
	return &session{stopAt: stopAt, cancel: cancel, first: map[int]int{}, at: map[int]int{}, main: map[int]int{}}
}

func (s *session) observe(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	switch e := e.(type) {
	case Started:
		s.started = e
	case TrainingResumed:
		s.resumed = append(s.resumed, e)
		s.at[e.Repeat] = s.n
	case StepDone:
		s.steps++
		if !e.CV {
			if _, ok := s.first[e.Repeat]; !ok {
				s.first[e.Repeat] = s.n
			}
			s.main[e.Repeat]++
			total := 0
			for _, k := range s.main {
				total += k
			}
			if total == s.stopAt {
				s.cancel() // Ctrl-C
			}
		}
	case Message:
		s.log = append(s.log, e.Text)
	}
}

func (s *session) logged(sub string) bool {
	return strings.Contains(strings.Join(s.log, "\n"), sub)
}

// checkResumed asserts that a resumed session reported every planned
// step: those run (StepDone) and those restored from checkpoints
// (TrainingResumed, before the repeat's first step) add up to the work
// Started announced, so a progress bar over it ends at exactly 100%; and
// that its log names each resume's step and checkpoint.
func (s *session) checkResumed(t *testing.T, ckPath func(r int) string) {
	t.Helper()
	planned := s.started.Repeats * (s.started.Steps + s.started.CVSteps)
	restored := 0
	for _, e := range s.resumed {
		restored += e.Step
		if e.Objective != "" || e.Steps != s.started.Steps || e.Step <= 0 || e.Step > e.Steps {
			t.Errorf("resume event %+v (steps %d planned)", e, s.started.Steps)
		}
		if f, ok := s.first[e.Repeat]; ok && f < s.at[e.Repeat] {
			t.Errorf("repeat %d: TrainingResumed after its first step", e.Repeat+1)
		}
		want := fmt.Sprintf(": resumed at step %d of %d from %s", e.Step, e.Steps, ckPath(e.Repeat))
		if !s.logged(want) {
			t.Errorf("log has no %q:\n%s", want, strings.Join(s.log, "\n"))
		}
	}
	if restored == 0 {
		t.Fatalf("the resumed run reported no restored step (%d events %+v); log:\n%s", len(s.resumed), s.resumed, strings.Join(s.log, "\n"))
	}
	if restored+s.steps != planned {
		t.Fatalf("resumed run: %d steps run + %d restored = %d, Started planned %d: a bar over them ends at %.0f%%",
			s.steps, restored, restored+s.steps, planned, 100*float64(s.steps)/float64(planned))
	}
}

// TestEventsCoverTheWork for a resumed run: a resumed episodes run reports
// the steps each repeat restores from its checkpoint (TrainingResumed), so
// that the steps it runs and those it restores add up to the work Started
// announced, whatever the worker count; the log records the interruption
// (the step, the checkpoint kept) and each resume (its step and
// checkpoint); the results are the uninterrupted run's. Before, no event
// said so: the bar's total kept the restored steps and ended short of 100%.
func TestResumedEpisodesReportRestoredSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		stop int
	}{
		{"one worker, automatic checkpoints", []string{"workers=1", "train.checkpoint_every=0"}, 4},
		{"two workers, every 2 steps", []string{"workers=2", "train.checkpoint_every=2"}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synthConfig(t, append([]string{"repeats=3", "train.steps=6", "queries=20", "eval.methods=[drknn,embedding_knn]"}, tc.sets...)...)
			want, err := Run(t.Context(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stopped := newSession(tc.stop, cancel)
			if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: stopped.observe}); !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped run: %v", err)
			}
			ck := func(r int) string { return filepath.Join(dir, "repeats", fmt.Sprintf("%02d", r+1), "checkpoint.bin") }
			if !stopped.logged("repeat 1 interrupted: stopped after step ") || !stopped.logged("checkpoint "+ck(0)+" kept") ||
				!stopped.logged("interrupted: ") || !stopped.logged("continue with -resume") {
				t.Errorf("the stopped run's log does not record the interruption:\n%s", strings.Join(stopped.log, "\n"))
			}
			resumed := newSession(0, nil)
			got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: resumed.observe})
			if err != nil {
				t.Fatal(err)
			}
			resumed.checkResumed(t, ck)
			for m, w := range want.Methods {
				if !reflect.DeepEqual(got.Methods[m].PerRepeat, w.PerRepeat) {
					t.Fatalf("%s: resumed %v, uninterrupted %v", m, got.Methods[m].PerRepeat, w.PerRepeat)
				}
			}
			for r := range want.Episodes {
				if got.Episodes[r].FinalRisk != want.Episodes[r].FinalRisk {
					t.Fatalf("repeat %d: final risk %v, uninterrupted %v", r+1, got.Episodes[r].FinalRisk, want.Episodes[r].FinalRisk)
				}
			}
		})
	}
}

// The same for protocol fit: its model's training, stopped mid-way and
// resumed, reports the steps restored; with its cross-validation folds
// (trained again, they keep no checkpoint) the steps add up to Started's.
func TestResumedFitReportsRestoredSteps(t *testing.T) {
	path := fixtureCSV(t)
	cfg := fitConfig(t, "csv", path, "data.label=kind", "data.missing=mean", "train.cv_folds=3", "train.checkpoint_every=0")
	want, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stopped := newSession(7, cancel)
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: stopped.observe}); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	ck := filepath.Join(dir, "checkpoint.bin")
	if !stopped.logged("interrupted: stopped after step 7 of 15") || !stopped.logged(ck) {
		t.Errorf("the stopped fit's log does not record the interruption:\n%s", strings.Join(stopped.log, "\n"))
	}
	resumed := newSession(0, nil)
	got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: resumed.observe})
	if err != nil {
		t.Fatal(err)
	}
	resumed.checkResumed(t, func(int) string { return ck })
	if len(resumed.resumed) != 1 || resumed.resumed[0].Step != 7 {
		t.Fatalf("resume events %+v, want one at step 7", resumed.resumed)
	}
	if !reflect.DeepEqual(got.Fit.Scores, want.Fit.Scores) || got.Fit.FinalRisk != want.Fit.FinalRisk {
		t.Fatalf("resumed fit %+v (risk %v), uninterrupted %+v (risk %v)", got.Fit.Scores, got.Fit.FinalRisk, want.Fit.Scores, want.Fit.FinalRisk)
	}
}

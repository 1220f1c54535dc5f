package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/drknn/drknn/train"
)

// logOf collects the Message texts of a run (its train.log lines).
type logOf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logOf) add(e Event) {
	if m, ok := e.(Message); ok {
		l.mu.Lock()
		l.lines = append(l.lines, m.Text)
		l.mu.Unlock()
	}
}

func (l *logOf) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(strings.Join(l.lines, "\n"), sub)
}

func (l *logOf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// A transfer run's train.log records a Ctrl-C as an episodes or fit run's
// does — the stopped training's step and its checkpoint kept, then the
// run's interrupted line naming the checkpoints (as the terminal's) — and
// the resumed session's log names the step and the checkpoint each
// training continues from; the resumed run ends bit-identical to an
// uninterrupted one (results, exported model.bin). Before, the stop wrote
// no line and the resume's ("drknn: resumed at step 7 of 12") named no
// checkpoint.
func TestTransferStopAndResumeLogged(t *testing.T) {
	cfg := transferConfig(t, "repeats=4", "train.checkpoint_every=5")
	wantDir := t.TempDir()
	want, err := Run(t.Context(), cfg, Options{OutDir: wantDir})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stopped logOf
	_, err = Run(ctx, cfg, Options{OutDir: dir, Observer: func(e Event) {
		stopped.add(e)
		if s, ok := e.(TransferStep); ok && s.Objective == train.ObjectiveDrKNN && s.Stats.Step == 7 {
			cancel() // Ctrl-C
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	ck := filepath.Join(dir, "train", train.ObjectiveDrKNN, "checkpoint.bin")
	for _, line := range []string{
		"drknn interrupted: stopped after step 7 of 12: context canceled; checkpoint " + ck + " kept",
		"interrupted: drknn: stopped after step 7 of 12: context canceled; checkpoints kept in " + ck + "; continue with -resume",
	} {
		if !stopped.has(line) {
			t.Errorf("the stopped run's log has no %q:\n%s", line, stopped.String())
		}
	}
	var resumed logOf
	got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: resumed.add})
	if err != nil {
		t.Fatal(err)
	}
	if line := "drknn: resumed at step 7 of 12 from " + ck; !resumed.has(line) {
		t.Errorf("the resumed run's log has no %q:\n%s", line, resumed.String())
	}
	for m, r := range want.Methods {
		if !reflect.DeepEqual(r.PerRepeat, got.Methods[m].PerRepeat) {
			t.Fatalf("%s: resumed %v, uninterrupted %v", m, got.Methods[m].PerRepeat, r.PerRepeat)
		}
	}
	sameFile(t, filepath.Join(dir, "export", "model.bin"), filepath.Join(wantDir, "export", "model.bin"))
}

// The same when the stop comes during the evaluation of the novel-class
// tasks, after both trainings: the interrupted line names both
// checkpoints, kept for -resume.
func TestTransferStopDuringEvaluationLogged(t *testing.T) {
	cfg := transferConfig(t, "repeats=4")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stopped logOf
	_, err := Run(ctx, cfg, Options{OutDir: dir, Observer: func(e Event) {
		stopped.add(e)
		if _, ok := e.(UnitDone); ok {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	line := "interrupted during evaluation: context canceled; checkpoints kept in " +
		filepath.Join(dir, "train", train.ObjectiveDrKNN, "checkpoint.bin") + ", " + filepath.Join(dir, "train", train.ObjectiveProto, "checkpoint.bin")
	if !stopped.has(line) {
		t.Errorf("the stopped run's log has no %q:\n%s", line, stopped.String())
	}
}

// A transfer table's cell trains in a folder its cells share (not its own
// train/): its interrupted line names the checkpoints there.
func TestTransferInterruptedTextSharedTrainDir(t *testing.T) {
	out, shared := t.TempDir(), t.TempDir()
	stop := errors.New("drknn: stopped after step 3 of 12: context canceled")
	if got, want := transferInterruptedText(stop, out, shared), "interrupted: drknn: stopped after step 3 of 12: context canceled; no checkpoint was written in "+shared; !strings.HasPrefix(got, want) {
		t.Fatalf("got %q, want it to start with %q", got, want)
	}
	ck := filepath.Join(shared, train.ObjectiveDrKNN, "checkpoint.bin")
	if err := os.MkdirAll(filepath.Dir(ck), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ck, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := transferInterruptedText(stop, out, shared), "interrupted: drknn: stopped after step 3 of 12: context canceled; checkpoints kept in "+ck+"; continue with -resume"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

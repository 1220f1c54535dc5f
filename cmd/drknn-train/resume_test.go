package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/fixtures"
)

// ctrlC is a stderr that presses Ctrl-C (cancels the run) when the first
// plain progress line past 0% is written: the reporter writes it from the
// run's observer, so the run stops after the training step that crossed
// 10% of the work.
type ctrlC struct {
	bytes.Buffer
	cancel func()
}

func (w *ctrlC) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("progress ")) && !bytes.HasPrefix(p, []byte("progress 0%")) {
		w.cancel()
	}
	return w.Buffer.Write(p)
}

// A run stopped with Ctrl-C mid-training and continued with -resume: the
// progress of the resumed session counts only the steps it runs, so its
// last line is 100% with every step and unit done (it ended at about 86%,
// "steps 15/18", the restored steps still in its total), for episodes on
// two workers and for protocol fit; train.log records the interruption
// (the step, the checkpoints kept) and the resume (its step and
// checkpoint).
func TestResumeProgressAndLog(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "t.csv")
	if _, _, err := fixtures.CSV(csv, 10, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		ck   string // the resumed checkpoint under the run folder, a regexp
	}{
		{"episodes", []string{"-config", synthetic, "-set", "repeats=3", "-set", "workers=2", "-set", "train.steps=6", "-set", "queries=20",
			"-set", "eval.methods=[drknn,embedding_knn]"}, regexp.QuoteMeta(string(filepath.Separator)) + `repeats.\d\d.checkpoint\.bin`},
		{"fit", []string{"-config", "synthetic.yaml", "-set", "dataset=csv", "-set", "data_dir=" + csv, "-set", "protocol=fit", "-set", "model.kind=",
			"-set", "data.label=kind", "-set", "data.missing=mode", "-set", "train.steps=15", "-set", "train.cv_folds=2"}, regexp.QuoteMeta(string(filepath.Separator)) + `checkpoint\.bin`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append(tc.args, "-set", "train.checkpoint_every=0", "-out", out)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stopped := &ctrlC{cancel: cancel}
			err := run(ctx, args, &bytes.Buffer{}, stopped)
			if code := cli.Code(err, experiment.ErrConfig); code != 130 {
				t.Fatalf("stopped run: exit %d (%v)\n%s", code, err, stopped.String())
			}
			var so, se bytes.Buffer
			code := cli.Report(&se, "drknn-train", run(t.Context(), append(args, "-resume"), &so, &se), experiment.ErrConfig)
			if code != 0 {
				t.Fatalf("-resume: exit %d\n%s", code, se.String())
			}
			var last string
			for l := range strings.Lines(se.String()) {
				if strings.HasPrefix(l, "progress ") {
					last = strings.TrimSpace(l)
				}
			}
			m := regexp.MustCompile(`^progress 100%, 0s left \(steps (\d+)/(\d+) eval (\d+)/(\d+)\)$`).FindStringSubmatch(last)
			if m == nil || m[1] != m[2] || m[3] != m[4] {
				t.Errorf("the resumed run's last progress line is %q, want 100%% with every step and unit done\n%s", last, se.String())
			}
			b, err := os.ReadFile(filepath.Join(out, "train.log"))
			if err != nil {
				t.Fatal(err)
			}
			log := string(b)
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`interrupted: .*stopped after step \d+ of \d+.*; checkpoints kept in ` + regexp.QuoteMeta(out)),
				regexp.MustCompile(`: resumed at step [1-9]\d* of \d+ from ` + regexp.QuoteMeta(out) + tc.ck + "\n"),
			} {
				if !want.MatchString(log) {
					t.Errorf("train.log has no line matching %s:\n%s", want, log)
				}
			}
		})
	}
}

// Command drknn-train trains and evaluates Dr.k-NN from a YAML experiment
// configuration and exports embeddings, LFD weights and model weights.
//
//	drknn-train -config configs/mnist.yaml [-set key=value …] [-out DIR] [-resume | -force] [-keep-checkpoints] [-quiet]
//	drknn-train -list-configs | -print-config NAME
//
// -config takes a file, or the name of a config shipped in the binary
// ("mnist.yaml", "mnist"): a file that exists on disk wins, so
// `drknn-train -config mnist.yaml` works from any directory once installed
// (go install ./cmd/...). -list-configs lists the shipped configs;
// -print-config writes one (or the file of that name) to standard output.
//
// The run folder must be missing or empty: one that holds anything is
// refused unless -resume (continue the run in it) or -force (replace its
// run files: they are set aside in DIR/.replaced-run and put back if the
// new run fails, deleted once it finishes; experiment.ReplaceRunDir). Stale temporaries of writes a kill interrupted are removed on
// start. Ctrl-C stops the run after the current training step of each
// repeat, keeps the checkpoints and writes no results.json, and says where
// they are (repeats/NN/ for episodes, train/<objective>/ for transfer, the
// run folder for fit) or that none was written yet; -resume continues it.
// train.log records the stop and, for each training -resume continues, its
// step and checkpoint; the progress line then counts only the steps still
// to run. A run that fails (exit 1) ends its train.log with the error; when
// every repeat failed, each repeat's line has its cause and the run's line
// says only that all N repeats failed (the terminal's line gives each
// cause once). A finished run deletes its checkpoints (the exports hold the
// weights) unless -keep-checkpoints.
//
// A method that fails on a repeat (or a repeat that fails as a whole) is
// recorded in results.json — its error, no accuracy — and the rest of the
// run completes; the failures are printed and the exit status is 3.
//
// Exit status: 0 done; 1 failed (no results.json); 2 bad usage, config or
// run folder; 3 done, but some methods or repeats failed (results.json
// lists them under "errors"); 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/configs"
	"github.com/drknn/drknn/experiment"
)

const usage = "usage: drknn-train -config FILE.yaml|NAME [-set key=value …] [-out DIR] [-resume | -force] [-keep-checkpoints] [-quiet]; drknn-train -list-configs | -print-config NAME"

func main() { cli.Main("drknn-train", run, experiment.ErrConfig) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-train", flag.ContinueOnError)
	config := fs.String("config", "", "experiment configuration (YAML): a file, or a shipped config's name (mnist.yaml)")
	list := fs.Bool("list-configs", false, "list the configs shipped in the binary")
	show := fs.String("print-config", "", "print a config (file or shipped name) and exit")
	out := fs.String("out", "", "run folder (default runs/<config name>)")
	resume := fs.Bool("resume", false, "continue a stopped run from the checkpoints in the run folder")
	force := fs.Bool("force", false, "replace the run in a run folder that is not empty (its results.json, train.log, repeats/, export/ …)")
	keep := fs.Bool("keep-checkpoints", false, "keep the repeats' checkpoint.bin files after the run (default: deleted; the exports hold the weights)")
	quiet := fs.Bool("quiet", false, "no progress bar or results on the terminal (the log file is still written)")
	var sets cli.MultiFlag
	fs.Var(&sets, "set", "override a config key: -set train.steps=200 (repeatable)")
	if err := cli.Parse(fs, args, usage, stderr); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return cli.Usagef("unexpected argument %q; %s", fs.Arg(0), usage)
	case (*list || *show != "") && (*config != "" || len(sets) > 0 || (*list && *show != "")):
		// each prints and exits: a -set or -config beside them would be
		// ignored without a word
		return cli.Usagef("-list-configs and -print-config take no -config, -set or each other (-print-config prints the file as written); %s", usage)
	case *list:
		width := 0
		for _, name := range configs.Names() {
			width = max(width, len(name))
		}
		for _, name := range configs.Names() {
			fmt.Fprintf(stdout, "%-*s  %s\n", width, name, configs.Summary(name))
		}
		return nil
	case *show != "":
		b, _, err := experiment.ReadConfigSource(*show)
		if err != nil {
			return cli.Usage(err)
		}
		_, err = stdout.Write(b)
		return err
	case *config == "":
		return cli.Usagef("%s", usage)
	}
	cfg, err := experiment.LoadConfig(*config, sets)
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", strings.TrimSuffix(filepath.Base(*config), filepath.Ext(*config)))
	}
	if *resume && *force {
		return cli.Usagef("-resume and -force exclude each other; %s", usage)
	}
	if err := experiment.CheckRunDirData(dir, cfg.DataDir); err != nil {
		return cli.Usage(err)
	}
	// -force sets the earlier run aside until the new one has finished
	replaced := experiment.ResumedRunDir(dir)
	if *force {
		replaced, err = experiment.ReplaceRunDir(dir)
	} else {
		err = experiment.PrepareRunDir(dir, *resume, false)
	}
	if err != nil {
		return cli.Usage(err)
	}
	rep := &cli.Reporter{Bar: true}
	if !*quiet {
		rep.Term = stderr
	}
	res, err := experiment.Run(ctx, cfg, experiment.Options{OutDir: dir, Resume: *resume, KeepCheckpoints: *keep, Observer: rep.Observe})
	if errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w; %s", err, experiment.InterruptedNote(dir))
	}
	err = replaced.Settle(err)
	if errors.Is(err, context.Canceled) {
		return err
	}
	if err == nil {
		err = rep.Err()
	}
	if err == nil && res == nil {
		err = errors.New("no results and no error (a bug)")
	}
	if err != nil {
		return err
	}
	if f := res.Fit; f != nil {
		fmt.Fprintf(stdout, "%s fit: %d training samples, %d classes, %.1fs → %s; model for drknn-predict -model %s\n", res.Dataset, f.Train, len(f.Classes), res.Seconds, filepath.Join(dir, "results.json"), f.Export)
		if f.FoldsNote != "" {
			fmt.Fprintf(stderr, "drknn-train: warning: %s\n", f.FoldsNote)
		}
		for _, m := range res.Config.Eval.Methods {
			s, ok := f.Scores[m]
			if !ok {
				fmt.Fprintf(stdout, "  %-18s failed: %s\n", m, f.MethodErrors[m])
				continue
			}
			fmt.Fprintf(stdout, "  %-18s accuracy %.4f  log-loss %.4f  ECE %.4f (%s)\n", m, s.Accuracy, s.LogLoss, s.ECE, f.Evaluation)
		}
		return failures(res, dir, stderr)
	}
	fmt.Fprintf(stdout, "%s %d-way %d-shot, %d repeats, %.1fs → %s\n", res.Dataset, res.Ways, res.Shots, res.Repeats, res.Seconds, filepath.Join(dir, "results.json"))
	if !*quiet {
		for _, m := range res.MethodOrder() {
			r, ci := res.Methods[m], "n/a"
			if !math.IsNaN(r.CI95) {
				ci = fmt.Sprintf("%.4f", r.CI95)
			}
			switch {
			case len(r.Completed()) == 0:
				fmt.Fprintf(stdout, "  %-18s failed: %s\n", m, r.Error)
			case r.Error != "":
				fmt.Fprintf(stdout, "  %-18s %.4f ± %s over %d of %d repeats; failed on %s\n", m, r.Mean, ci, len(r.Completed()), len(r.PerRepeat), r.Error)
			default:
				fmt.Fprintf(stdout, "  %-18s %.4f ± %s\n", m, r.Mean, ci)
			}
		}
	}
	return failures(res, dir, stderr)
}

// failures prints the run's recorded failures on stderr and returns the
// exit-3 error when there are any.
func failures(res *experiment.Results, dir string, stderr io.Writer) error {
	if len(res.Errors) == 0 {
		return nil
	}
	for _, e := range res.Errors {
		fmt.Fprintf(stderr, "drknn-train: failed: %s\n", e)
	}
	return cli.Incomplete{N: len(res.Errors), Path: filepath.Join(dir, "results.json"),
		Note: "their methods have no accuracy there", Done: "the rest of the run completed"}
}

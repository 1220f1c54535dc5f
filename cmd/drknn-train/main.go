// Command drknn-train trains and evaluates Dr.k-NN from a YAML experiment
// configuration and exports embeddings, LFD weights and model weights.
//
//	drknn-train -config configs/mnist.yaml [-set key=value …] [-out DIR] [-resume] [-quiet]
//	drknn-train -list-configs | -print-config NAME
//
// -config takes a file, or the name of a config shipped in the binary
// ("mnist.yaml", "mnist"): a file that exists on disk wins, so
// `drknn-train -config mnist.yaml` works from any directory once installed
// (go install ./cmd/...). -list-configs lists the shipped configs;
// -print-config writes one (or the file of that name) to standard output.
//
// Ctrl-C stops the run after the current training step of each repeat,
// keeps the checkpoints and writes no results.json; -resume continues it.
// Exit status: 0 done, 1 failed, 2 bad usage or config, 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/configs"
	"github.com/drknn/drknn/experiment"
)

const usage = "usage: drknn-train -config FILE.yaml|NAME [-set key=value …] [-out DIR] [-resume] [-quiet]; drknn-train -list-configs | -print-config NAME"

func main() { cli.Main("drknn-train", run, experiment.ErrConfig) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-train", flag.ContinueOnError)
	config := fs.String("config", "", "experiment configuration (YAML): a file, or a shipped config's name (mnist.yaml)")
	list := fs.Bool("list-configs", false, "list the configs shipped in the binary")
	show := fs.String("print-config", "", "print a config (file or shipped name) and exit")
	out := fs.String("out", "", "run folder (default runs/<config name>)")
	resume := fs.Bool("resume", false, "continue a stopped run from the checkpoints in the run folder")
	quiet := fs.Bool("quiet", false, "no progress bar or results on the terminal (the log file is still written)")
	var sets cli.MultiFlag
	fs.Var(&sets, "set", "override a config key: -set train.steps=200 (repeatable)")
	if err := cli.Parse(fs, args, usage, stderr); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return cli.Usagef("unexpected argument %q; %s", fs.Arg(0), usage)
	case *list:
		for _, name := range configs.Names() {
			fmt.Fprintf(stdout, "%-18s %s\n", name, configs.Summary(name))
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
	if !*resume {
		if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
			return cli.Usagef("%s already holds a finished run; choose another -out or delete it", dir)
		}
	}
	rep := &cli.Reporter{Bar: true}
	if !*quiet {
		rep.Term = stderr
	}
	res, err := experiment.Run(ctx, cfg, experiment.Options{OutDir: dir, Resume: *resume, Observer: rep.Observe})
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w; checkpoints kept in %s, continue with -resume", err, filepath.Join(dir, "repeats"))
	}
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		return err
	}
	if f := res.Fit; f != nil {
		fmt.Fprintf(stdout, "%s fit: %d training samples, %d classes, %.1fs → %s; model for drknn-predict -model %s\n", res.Dataset, f.Train, len(f.Classes), res.Seconds, filepath.Join(dir, "results.json"), f.Export)
		for _, m := range res.Config.Eval.Methods {
			s := f.Scores[m]
			fmt.Fprintf(stdout, "  %-18s accuracy %.4f  log-loss %.4f  ECE %.4f (%s)\n", m, s.Accuracy, s.LogLoss, s.ECE, f.Evaluation)
		}
		return nil
	}
	fmt.Fprintf(stdout, "%s %d-way %d-shot, %d repeats, %.1fs → %s\n", res.Dataset, res.Ways, res.Shots, res.Repeats, res.Seconds, filepath.Join(dir, "results.json"))
	if !*quiet {
		for _, m := range res.MethodOrder() {
			r, ci := res.Methods[m], "n/a"
			if !math.IsNaN(r.CI95) {
				ci = fmt.Sprintf("%.4f", r.CI95)
			}
			fmt.Fprintf(stdout, "  %-18s %.4f ± %s\n", m, r.Mean, ci)
		}
	}
	return nil
}

// Command drknn-train trains and evaluates Dr.k-NN from a YAML experiment
// configuration and exports embeddings, LFD weights and model weights.
//
//	drknn-train -config configs/mnist.yaml [-set key=value …] [-out DIR] [-resume] [-quiet]
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
	"github.com/drknn/drknn/experiment"
)

const usage = "usage: drknn-train -config FILE.yaml [-set key=value …] [-out DIR] [-resume] [-quiet]"

func main() { cli.Main("drknn-train", run, experiment.ErrConfig) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-train", flag.ContinueOnError)
	config := fs.String("config", "", "experiment configuration (YAML), e.g. configs/mnist.yaml")
	out := fs.String("out", "", "run folder (default runs/<config name>)")
	resume := fs.Bool("resume", false, "continue a stopped run from the checkpoints in the run folder")
	quiet := fs.Bool("quiet", false, "no progress bar or results on the terminal (the log file is still written)")
	var sets cli.MultiFlag
	fs.Var(&sets, "set", "override a config key: -set train.steps=200 (repeatable)")
	if err := cli.Parse(fs, args, usage, stderr); err != nil {
		return err
	}
	if *config == "" || fs.NArg() > 0 {
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
	fmt.Fprintf(stdout, "%s %d-way %d-shot, %d repeats, %.1fs → %s\n", res.Dataset, res.Ways, res.Shots, res.Repeats, res.Seconds, filepath.Join(dir, "results.json"))
	if !*quiet {
		for _, m := range experiment.Methods() {
			if r, ok := res.Methods[m]; ok {
				ci := "n/a"
				if !math.IsNaN(r.CI95) {
					ci = fmt.Sprintf("%.4f", r.CI95)
				}
				fmt.Fprintf(stdout, "  %-18s %.4f ± %s\n", m, r.Mean, ci)
			}
		}
	}
	return nil
}

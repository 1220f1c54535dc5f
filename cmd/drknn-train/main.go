// Command drknn-train trains and evaluates Dr.k-NN from a YAML experiment
// configuration and exports embeddings, LFD weights and model weights.
//
//	drknn-train -config configs/mnist.yaml [-set key=value …] [-out DIR] [-resume] [-quiet]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/drknn/drknn/experiment"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("drknn-train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "experiment configuration (YAML), e.g. configs/mnist.yaml")
	out := fs.String("out", "", "run folder (default runs/<config name>)")
	resume := fs.Bool("resume", false, "continue a stopped run from the checkpoints in the run folder")
	quiet := fs.Bool("quiet", false, "no progress bar or log on the terminal (the log file is still written)")
	var sets multiFlag
	fs.Var(&sets, "set", "override a config key: -set train.steps=200 (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "drknn-train: usage: drknn-train -config FILE.yaml [-set key=value …] [-out DIR] [-resume] [-quiet]")
		return 2
	}
	cfg, err := experiment.LoadConfig(*config, sets)
	if err != nil {
		fmt.Fprintln(stderr, "drknn-train:", err)
		return 2
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", strings.TrimSuffix(filepath.Base(*config), filepath.Ext(*config)))
	}
	if !*resume {
		if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
			fmt.Fprintf(stderr, "drknn-train: %s already holds a finished run; choose another -out or delete it\n", dir)
			return 2
		}
	}
	opts := experiment.Options{OutDir: dir, Resume: *resume}
	if !*quiet {
		opts.Progress = stderr
	}
	res, err := experiment.Run(cfg, opts)
	if err != nil {
		fmt.Fprintln(stderr, "drknn-train:", oneLine(err))
		return 1
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
	return 0
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

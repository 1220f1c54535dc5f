// Command drknn-figures draws the paper's figures as PNG, SVG, PDF or EPS
// files: the format is -out's extension (.png, .svg, .pdf, .eps; any other
// is refused).
//
//	drknn-figures lfd     -out fig3.png [-per-class 15] [-noise 0.8] [-theta 0.3] [-k 5] [-bandwidth 0] [-seed 1]
//	drknn-figures regions -config configs/mnist.yaml [-set key=value …] [-repeat 0] -out fig5.png
//	drknn-figures regions -export DIR -out regions.png
//	drknn-figures sweep   -export DIR -out appendix-c.png [-absolute]
//	drknn-figures curves  -run DIR -out curves.png
//
// lfd is Figure 3 (a 3-class 2-D Gaussian set, its least-favourable
// distributions and the Dr.k-NN decision regions); regions -config is
// Figure 5 (one repeat of the config run by the experiment pipeline with
// embedding width d = 2 — the same training, and the same Dr.k-NN
// accuracy, as drknn-train with -set model.dim=2 — beside 2-D PCA, SVD and
// NCA projections); regions -export draws the embedding methods of an export
// with d = 2; sweep is Appendix C (accuracy against k and against the
// kernel bandwidth; the y axis fitted to the accuracies); curves draws each
// repeat's training risk with the mean over the repeats, and the LFD gaps'
// mean and maximum.
// The figures are package figures; experiment.Figure wires them. -out's
// format and folder are checked before any work: a folder that does not
// exist is one line naming it (exit 2).
//
// curves -run reads an episodes run's repeats/NN/history.json, or a
// transfer run's train/<objective>/history.json (one line per objective),
// or a fit run's history.json (its one model);
// a history file that cannot be read is left out, the rest drawn, and the
// file named on stderr (exit status 3).
//
// Exit status: 0 done, 1 failed, 2 bad usage or input, 3 drawn without
// some parts (named on stderr), 130 interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/figures"
	"github.com/drknn/drknn/predict"
)

const usage = `usage:
  drknn-figures lfd     -out fig3.png [-per-class 15] [-noise 0.8] [-theta 0.3] [-k 5] [-bandwidth 0] [-seed 1]
  drknn-figures regions -config FILE.yaml [-set key=value …] [-repeat 0] -out fig5.png
  drknn-figures regions -export DIR -out regions.png
  drknn-figures sweep   -export DIR -out appendix-c.png [-absolute]
  drknn-figures curves  -run DIR -out curves.png
common flags: -width PX -height PX`

// badInput are the errors that mean bad input (exit status 2).
var badInput = []error{experiment.ErrConfig, figures.ErrInput, predict.ErrInput}

func main() { cli.Main("drknn-figures", run, badInput...) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("no sub-command; %s", usage)
	}
	req := experiment.FigureRequest{Kind: args[0], LFD: figures.DefaultLFDSettings()}
	fs := flag.NewFlagSet("drknn-figures "+req.Kind, flag.ContinueOnError)
	fs.StringVar(&req.Out, "out", "", "output file: .png, .svg, .pdf or .eps")
	w, h := 1100, 420
	var sets cli.MultiFlag
	switch req.Kind {
	case "lfd":
		w, h = 1600, 420
		l := &req.LFD
		fs.IntVar(&l.PerClass, "per-class", l.PerClass, "training points per class")
		fs.IntVar(&l.Queries, "queries", l.Queries, "query points per class (drawn with seed+1)")
		fs.Float64Var(&l.Noise, "noise", l.Noise, "standard deviation of each Gaussian class (means on a circle of radius 2)")
		fs.Float64Var(&l.Theta, "theta", l.Theta, "Wasserstein radius ϑ for every class, Euclidean cost")
		fs.IntVar(&l.K, "k", l.K, "neighbours of the Dr.k-NN panel")
		fs.Float64Var(&l.Bandwidth, "bandwidth", l.Bandwidth, "kernel bandwidth h of the shading (0: a quarter of the median training distance)")
		fs.Int64Var(&l.Seed, "seed", l.Seed, "seed of the training draw")
	case "regions":
		w, h = 1600, 420
		fs.StringVar(&req.Config, "config", "", "experiment configuration (YAML): train a d = 2 embedding on one episode")
		fs.StringVar(&req.Export, "export", "", "export folder with 2-D embeddings")
		fs.IntVar(&req.Repeat, "repeat", 0, "with -config: which repeat's episode and seed (0-based)")
		fs.Var(&sets, "set", "override a config key, e.g. -set train.steps=200 (repeatable)")
	case "sweep":
		fs.StringVar(&req.Export, "export", "", "export folder (…/repeats/NN/export)")
		fs.BoolVar(&req.Absolute, "absolute", false, "bandwidths in embedding units instead of multiples of the median training distance")
	case "curves":
		fs.StringVar(&req.Run, "run", "", "run folder written by drknn-train (holds repeats/NN/history.json, or a transfer run's train/<objective>/history.json)")
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, usage)
		return flag.ErrHelp
	default:
		return cli.Usagef("unknown sub-command %q; %s", req.Kind, usage)
	}
	fs.IntVar(&req.Width, "width", w, "width in pixels")
	fs.IntVar(&req.Height, "height", h, "height in pixels")
	if err := cli.Parse(fs, args[1:], usage, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s: unexpected argument %q", req.Kind, fs.Arg(0))
	}
	req.Sets = sets
	rep := &cli.Reporter{Term: stderr, Bar: true}
	req.Observer = rep.Observe
	summary, err := experiment.Figure(ctx, req)
	if summary != "" { // also of a figure drawn without some parts (err a *figures.Incomplete: exit 3)
		fmt.Fprintln(stdout, summary)
	}
	if err != nil {
		return err
	}
	return rep.Err()
}

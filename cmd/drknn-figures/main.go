// Command drknn-figures draws the paper's figures as PNG files.
//
//	drknn-figures lfd     -out fig3.png [-per-class 15] [-noise 0.8] [-theta 0.3] [-k 5] [-bandwidth 0] [-seed 1]
//	drknn-figures regions -config configs/mnist.yaml [-set key=value …] -out fig5.png
//	drknn-figures regions -export DIR -out regions.png
//	drknn-figures sweep   -export DIR -out appendix-c.png [-absolute]
//	drknn-figures curves  -run DIR -out curves.png
//
// lfd is Figure 3: a 3-class 2-D Gaussian set (datasets.SyntheticGauss),
// its least-favourable distributions P*_1…P*_3 with kernel-smoothed shading
// (eq. 15) and the Dr.k-NN decision regions with queries from the same
// distribution.
//
// regions -config is Figure 5: it draws one episode of the configured data
// set (M-way K-shot, as in the config), trains the network with embedding
// width d = 2 by Algorithm 1 on the M·K training samples, solves the LFD on
// them and draws the decision regions of Dr.k-NN in the learned plane next
// to those of PCA+k-NN, SVD+k-NN and NCA+k-NN (each a 2-D projection of the
// raw pixels learned on the same training samples), with the queries as
// small dots. regions -export draws the embedding-space methods of an
// export folder whose embeddings are 2-D.
//
// sweep is Appendix C: query accuracy of Dr.k-NN (and vanilla k-NN on the
// same embedding) against k = 1…8, and of kernel smoothing of P* against
// the bandwidth h (10⁻³…10³ times the median training distance, or
// absolute with -absolute), from an export folder.
//
// curves draws the worst-case training risk and the certified LFD gap
// against the step for every repeat of a run folder
// (DIR/repeats/NN/history.json).
//
// Errors give one line on standard error and exit status 2 (bad input) or 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/figures"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
	"github.com/drknn/drknn/predict"
	"github.com/drknn/drknn/train"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  drknn-figures lfd     -out fig3.png [-per-class 15] [-noise 0.8] [-theta 0.3] [-k 5] [-bandwidth 0] [-seed 1]
  drknn-figures regions -config FILE.yaml [-set key=value …] -out fig5.png
  drknn-figures regions -export DIR -out regions.png
  drknn-figures sweep   -export DIR -out appendix-c.png [-absolute]
  drknn-figures curves  -run DIR -out curves.png
common flags: -width PX -height PX`

// usageError marks bad input (exit status 2).
type usageError struct{ error }

func bad(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	fmt.Fprintln(stderr, "drknn-figures: "+msg)
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, figures.ErrInput) || errors.Is(err, predict.ErrInput) {
		return 2
	}
	return 1
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// common holds the flags every sub-command has.
type common struct {
	out           string
	width, height int
}

func newFlags(name string, c *common, w, h int) *flag.FlagSet {
	fs := flag.NewFlagSet("drknn-figures "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.out, "out", "", "output PNG file")
	fs.IntVar(&c.width, "width", w, "width in pixels")
	fs.IntVar(&c.height, "height", h, "height in pixels")
	return fs
}

func parse(fs *flag.FlagSet, args []string, c *common, stderr io.Writer) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return err
		}
		return bad("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return bad("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	if c.out == "" {
		return bad("%s: -out is required", fs.Name())
	}
	if c.width < figures.MinPixels || c.height < figures.MinPixels || c.width > figures.MaxPixels || c.height > figures.MaxPixels {
		return bad("%s: -width %d -height %d: each must be in %d…%d", fs.Name(), c.width, c.height, figures.MinPixels, figures.MaxPixels)
	}
	return nil
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return bad("no sub-command; %s", usage)
	}
	switch args[0] {
	case "lfd":
		return lfdCmd(args[1:], stdout, stderr)
	case "regions":
		return regionsCmd(args[1:], stdout, stderr)
	case "sweep":
		return sweepCmd(args[1:], stdout, stderr)
	case "curves":
		return curvesCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, usage)
		return flag.ErrHelp
	default:
		return bad("unknown sub-command %q; %s", args[0], usage)
	}
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func lfdCmd(args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("lfd", &c, 1600, 420)
	perClass := fs.Int("per-class", 15, "training points per class")
	queries := fs.Int("queries", 40, "query points per class (drawn with seed+1)")
	noise := fs.Float64("noise", 0.8, "standard deviation of each Gaussian class (means on a circle of radius 2)")
	theta := fs.Float64("theta", 0.3, "Wasserstein radius ϑ for every class, Euclidean cost")
	k := fs.Int("k", 5, "neighbours of the Dr.k-NN panel")
	bw := fs.Float64("bandwidth", 0, "kernel bandwidth h of the shading (0: a quarter of the median training distance)")
	seed := fs.Int64("seed", 1, "seed of the training draw")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	switch {
	case *perClass < 1 || *perClass > 500:
		return bad("lfd: -per-class %d, want 1…500", *perClass)
	case *queries < 0 || *queries > 5000:
		return bad("lfd: -queries %d, want 0…5000", *queries)
	case !(*noise > 0) || math.IsInf(*noise, 0):
		return bad("lfd: -noise %v, want > 0", *noise)
	case !(*theta >= 0) || math.IsInf(*theta, 0):
		return bad("lfd: -theta %v, want ≥ 0", *theta)
	case *k < 1 || *k > 3**perClass:
		return bad("lfd: -k %d, want 1…%d", *k, 3**perClass)
	case !(*bw >= 0) || math.IsInf(*bw, 0):
		return bad("lfd: -bandwidth %v, want ≥ 0", *bw)
	}
	tr, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: *perClass, Noise: *noise, Seed: *seed})
	if err != nil {
		return err
	}
	x := toF64(tr.X)
	res, err := optlayer.Solve(&optlayer.Problem{N: tr.Len(), Features: x, Dim: 2, Labels: tr.Labels, Theta: []float64{*theta}}, nil)
	if err != nil {
		return err
	}
	data := figures.LFDData{Train: x, TrainLabels: tr.Labels, M: 3, P: res.P, K: *k, Bandwidth: *bw}
	if *queries > 0 {
		q, err := datasets.SyntheticGauss(datasets.SyntheticSettings{Classes: 3, PerClass: *queries, Noise: *noise, Seed: *seed + 1})
		if err != nil {
			return err
		}
		data.Query, data.QueryLabels = toF64(q.X), q.Labels
	}
	if err := figures.Save(c.out, func(w io.Writer) error { return figures.LFDWeights(w, data, c.width, c.height) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: LFD of %d points, objective %.4f (certified gap %.1e)\n", c.out, tr.Len(), res.Objective, res.RelGap)
	return nil
}

func regionsCmd(args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("regions", &c, 1600, 420)
	config := fs.String("config", "", "experiment configuration (YAML): train a d = 2 embedding on one episode")
	exportDir := fs.String("export", "", "export folder with 2-D embeddings")
	repeat := fs.Int("repeat", 0, "with -config: which repeat's episode and seed (0-based)")
	var sets multiFlag
	fs.Var(&sets, "set", "override a config key, e.g. -set train.steps=200 (repeatable)")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	if (*config == "") == (*exportDir == "") {
		return bad("regions: give exactly one of -config and -export")
	}
	if *exportDir != "" {
		if len(sets) > 0 {
			return bad("regions: -set applies only with -config")
		}
		return regionsFromExport(*exportDir, c, stdout)
	}
	if *repeat < 0 {
		return bad("regions: -repeat %d, want ≥ 0", *repeat)
	}
	cfg, err := experiment.LoadConfig(*config, append(append([]string(nil), sets...), "model.dim=2"))
	if err != nil {
		return usageError{err}
	}
	panels, summary, err := trainRegions(cfg, *repeat)
	if err != nil {
		return err
	}
	if err := figures.Save(c.out, func(w io.Writer) error { return figures.DecisionRegions(w, panels, c.width, c.height) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", c.out, summary)
	return nil
}

// trainRegions trains a d = 2 embedding on one episode and returns the
// four panels of Figure 5.
func trainRegions(cfg experiment.Config, r int) ([]figures.Panel, string, error) {
	d, err := experiment.LoadData(cfg)
	if err != nil {
		return nil, "", err
	}
	seed := experiment.RepeatSeed(cfg, r)
	ep, err := datasets.NewEpisode(d, datasets.EpisodeSettings{Ways: cfg.Ways, Shots: cfg.Shots, Queries: cfg.Queries, Seed: seed})
	if err != nil {
		return nil, "", err
	}
	trainSet, querySet := d.Subset(ep.TrainIndex), d.Subset(ep.QueryIndex)
	n, nq := len(ep.TrainIndex), len(ep.QueryIndex)
	net, err := model.New(cfg.NetConfig(d.Shape), seed)
	if err != nil {
		return nil, "", err
	}
	size := cfg.Train.MinisetSize
	if size > n || size == 0 {
		size = n
	}
	metric := optlayer.Euclidean
	if cfg.Train.Metric == "sqeuclidean" {
		metric = optlayer.SqEuclidean
	}
	tr, err := train.NewTrainer(net, trainSet.X, ep.TrainLabels, train.Settings{Steps: cfg.Train.Steps, LR: cfg.Train.LR,
		Minisets: cfg.Train.Minisets, MinisetSize: size, Seed: seed,
		Ways: cfg.Ways, LFD: gop.Settings{Metric: metric, Theta: cfg.Train.Theta, Normalize: cfg.Train.ThetaRelative,
			Solver: optlayer.Settings{Epsilon: cfg.Train.Epsilon, Tol: cfg.Train.Tol}}})
	if err != nil {
		return nil, "", err
	}
	for !tr.Done() {
		if _, err := tr.Step(); err != nil {
			return nil, "", err
		}
	}
	et, err := net.Embed(trainSet.X, n)
	if err != nil {
		return nil, "", err
	}
	eq, err := net.Embed(querySet.X, nq)
	if err != nil {
		return nil, "", err
	}
	lfd, err := experiment.SolveLFD(cfg, et, n, 2, ep.TrainLabels, cfg.Train.Theta)
	if err != nil {
		return nil, "", err
	}
	k := min(cfg.Eval.K, n)
	set := eval.Settings{K: k}
	panels := []figures.Panel{{Title: fmt.Sprintf("Dr.k-NN (learned, d = 2), k = %d", k), Train: et, TrainLabels: ep.TrainLabels,
		Query: eq, QueryLabels: ep.QueryLabels, M: cfg.Ways, Method: eval.MethodDrKNN, Settings: set, P: lfd.P}}
	for _, c := range ep.Classes {
		panels[0].ClassNames = append(panels[0].ClassNames, d.Classes[c])
	}
	accs := []string{}
	acc, _, err := eval.Evaluate(mustNew(eval.MethodDrKNN, set, lfd.P), et, n, 2, ep.TrainLabels, cfg.Ways, eq, nq, ep.QueryLabels)
	if err != nil {
		return nil, "", err
	}
	accs = append(accs, fmt.Sprintf("drknn %.3f", acc))
	raw, rawQ := toF64(trainSet.X), toF64(querySet.X)
	for _, m := range []struct{ method, title string }{
		{eval.MethodPCAKNN, "PCA + k-NN"}, {eval.MethodSVDKNN, "SVD + k-NN"}, {eval.MethodNCAKNN, "NCA + k-NN"},
	} {
		t2, q2, err := figures.Project2D(m.method, raw, n, d.SampleSize(), ep.TrainLabels, cfg.Ways, rawQ, nq, seed)
		if err != nil {
			return nil, "", err
		}
		panels = append(panels, figures.Panel{Title: fmt.Sprintf("%s, k = %d", m.title, k), Train: t2, TrainLabels: ep.TrainLabels,
			Query: q2, QueryLabels: ep.QueryLabels, M: cfg.Ways, Method: eval.MethodEmbeddingKNN, Settings: set})
		acc, _, err := eval.Evaluate(mustNew(eval.MethodEmbeddingKNN, set, nil), t2, n, 2, ep.TrainLabels, cfg.Ways, q2, nq, ep.QueryLabels)
		if err != nil {
			return nil, "", err
		}
		accs = append(accs, fmt.Sprintf("%s %.3f", m.method, acc))
	}
	h := tr.History()
	return panels, fmt.Sprintf("%s %d-way %d-shot, %d queries, %d steps (risk %.3f → %.3f); query accuracy in the plane: %s",
		cfg.Dataset, cfg.Ways, cfg.Shots, nq, len(h), h[0].Risk, h[len(h)-1].Risk, strings.Join(accs, ", ")), nil
}

func mustNew(method string, s eval.Settings, p []float64) eval.Voter {
	c, err := eval.New(method, s, p)
	if err != nil {
		panic(err) // the method names are constants of this file
	}
	return c
}

// loadEpisode reads an export folder with its queries.
func loadEpisode(dir string) (*predict.Export, *figures.Episode, error) {
	e, err := predict.Load(dir)
	if err != nil {
		return nil, nil, usageError{err}
	}
	q, _, ql, err := e.Queries()
	if err != nil {
		return nil, nil, usageError{err}
	}
	return e, &figures.Episode{Train: e.TrainEmb, TrainLabels: e.TrainLabels, N: e.N, D: e.D, M: e.M, P: e.P,
		Query: q, QueryLabels: ql}, nil
}

func regionsFromExport(dir string, c common, stdout io.Writer) error {
	e, ep, err := loadEpisode(dir)
	if err != nil {
		return err
	}
	if e.D != 2 {
		return bad("regions: %s holds %d-dimensional embeddings; decision regions need d = 2 (train with -set model.dim=2)", dir, e.D)
	}
	k := e.Manifest.K
	if k < 1 || k > e.N {
		k = min(5, e.N)
	}
	base := figures.Panel{Train: ep.Train, TrainLabels: ep.TrainLabels, Query: ep.Query, QueryLabels: ep.QueryLabels, M: e.M, P: e.P}
	var panels []figures.Panel
	for _, m := range []struct{ method, title string }{
		{eval.MethodDrKNN, "Dr.k-NN"}, {eval.MethodDrKNNTruncated, "truncated Dr.k-NN"},
		{eval.MethodEmbeddingKNN, "embedding + k-NN"}, {eval.MethodKernelSmoothing, "kernel smoothing"},
	} {
		p := base
		p.Method, p.Title = m.method, m.title
		p.Settings = eval.Settings{K: k, Tau: e.Manifest.Config.Eval.Tau, Bandwidth: e.Manifest.Config.Eval.Bandwidth}
		if m.method != eval.MethodKernelSmoothing {
			p.Title += fmt.Sprintf(", k = %d", k)
		}
		panels = append(panels, p)
	}
	panels[0].ClassNames = e.ClassNames
	if err := figures.Save(c.out, func(w io.Writer) error { return figures.DecisionRegions(w, panels, c.width, c.height) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: decision regions of %d training and %d query points\n", c.out, e.N, len(ep.QueryLabels))
	return nil
}

func sweepCmd(args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("sweep", &c, 1100, 420)
	exportDir := fs.String("export", "", "export folder (…/repeats/NN/export)")
	absolute := fs.Bool("absolute", false, "bandwidths in embedding units instead of multiples of the median training distance")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	if *exportDir == "" {
		return bad("sweep: -export is required")
	}
	e, ep, err := loadEpisode(*exportDir)
	if err != nil {
		return err
	}
	var ks []int
	for _, k := range figures.DefaultKs {
		if k <= e.N {
			ks = append(ks, k)
		}
	}
	kRef := e.Manifest.K
	if kRef < 1 || kRef > e.N {
		kRef = ks[len(ks)-1]
	}
	if err := figures.Save(c.out, func(w io.Writer) error {
		return figures.AccuracySweep(w, ep, ks, figures.DefaultBandwidths, kRef, !*absolute, c.width, c.height)
	}); err != nil {
		return err
	}
	accK, err := figures.AccuracyVsK(ep, eval.MethodDrKNN, ks)
	if err != nil {
		return err
	}
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("k=%d %.3f", k, accK[i])
	}
	fmt.Fprintf(stdout, "%s: Dr.k-NN accuracy %s\n", c.out, strings.Join(parts, ", "))
	return nil
}

func curvesCmd(args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlags("curves", &c, 1100, 420)
	runDir := fs.String("run", "", "run folder written by drknn-train (holds repeats/NN/history.json)")
	if err := parse(fs, args, &c, stderr); err != nil {
		return err
	}
	if *runDir == "" {
		return bad("curves: -run is required")
	}
	names, hs, err := figures.RunHistories(*runDir)
	if err != nil {
		return usageError{err}
	}
	if err := figures.Save(c.out, func(w io.Writer) error { return figures.TrainingCurves(w, names, hs, c.width, c.height) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: training curves of %d repeats\n", c.out, len(hs))
	return nil
}

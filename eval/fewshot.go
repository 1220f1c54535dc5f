package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/drknn/drknn/internal/diverge"
	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/internal/lossop"
	"github.com/drknn/drknn/internal/vmerr"
	"github.com/drknn/drknn/model"
)

// Few-shot network baselines of the paper's Table 1. Each trains the same
// body as Dr.k-NN (package model) on the episode's M·K training samples
// alone and classifies raw samples, so they are fitted with FewShot, not
// New.
const (
	// MethodProtoNet is the prototypical network (Snell et al. 2017):
	// class prototypes are mean embeddings, logits −‖q − c‖².
	MethodProtoNet = "proto_net"
	// MethodMatchingNet is the matching network (Vinyals et al. 2016) in
	// its simple form, without full-context embeddings: attention softmax
	// over cosine similarities to the support samples.
	MethodMatchingNet = "matching_net"
	// MethodMetaOptNet is MetaOptNet (Lee et al. 2019) with its
	// Crammer–Singer SVM base learner (MetaOptNet-SVM): the dual QP is
	// solved to machine precision and differentiated implicitly.
	MethodMetaOptNet = "metaoptnet"
	// MethodMetaOptNetRR is MetaOptNet with its ridge-regression base
	// learner (MetaOptNet-RR), differentiable in closed form.
	MethodMetaOptNetRR = "metaoptnet_rr"
)

// FewShotMethods lists the method names NewFewShot accepts.
func FewShotMethods() []string {
	return []string{MethodMatchingNet, MethodProtoNet, MethodMetaOptNet, MethodMetaOptNetRR}
}

// IsFewShot reports whether method is a few-shot network baseline (fitted
// with FewShot on raw samples).
func IsFewShot(method string) bool {
	switch method {
	case MethodMatchingNet, MethodProtoNet, MethodMetaOptNet, MethodMetaOptNetRR:
		return true
	}
	return false
}

// Defaults of FewShotSettings.
const (
	DefaultFewShotSteps    = 100
	DefaultFewShotLR       = 1e-2
	DefaultFewShotEpisodes = 4
	DefaultRidgeLambda     = 1.0
	DefaultMatchingScale   = 1.0
	DefaultSVMC            = 0.1 // MetaOptNet's C_reg
	DefaultSVMEps          = 1.0 // MetaOptNet's ridge on the dual's kernel
)

// FewShotSettings configure a few-shot network baseline. Zero fields take
// the defaults, except Steps (0 leaves the network untrained) and Seed.
type FewShotSettings struct {
	// Model is the body. Fit sets InShape to the samples' shape; an empty
	// Kind means CNN for [C, H, W] samples and MLP for [F].
	Model model.Config
	// Steps is the number of Adam steps; each averages the loss of
	// Episodes pseudo-episodes drawn from the training samples.
	Steps    int
	LR       float64 // Adam learning rate (default 1e-2, as in the paper)
	Episodes int     // pseudo-episodes per step (default 4)
	// Lambda is the ridge regulariser λ of metaoptnet_rr (default 1).
	Lambda float64
	// SVMC is the SVM's C and SVMEps the ε added to the dual's Gram
	// matrix, of metaoptnet (defaults 0.1 and 1, as in MetaOptNet's code).
	SVMC, SVMEps float64
	// MatchingScale is the factor τ on the cosine similarities of
	// matching_net before the attention softmax (default 1, the original).
	MatchingScale float64
	// Seed fixes the initial weights and every pseudo-episode draw.
	Seed int64
	// Workers bounds the goroutines Predict uses (0 = GOMAXPROCS). The
	// results do not depend on it.
	Workers int
}

// DefaultFewShotSettings are the settings used for the paper's table: 100
// Adam steps at learning rate 1e-2, 4 pseudo-episodes per step, the model
// package's default body.
func DefaultFewShotSettings() FewShotSettings {
	return FewShotSettings{Steps: DefaultFewShotSteps, LR: DefaultFewShotLR, Episodes: DefaultFewShotEpisodes,
		Lambda: DefaultRidgeLambda, MatchingScale: DefaultMatchingScale, SVMC: DefaultSVMC, SVMEps: DefaultSVMEps}
}

func (s FewShotSettings) withDefaults() FewShotSettings {
	orDefault(&s.LR, DefaultFewShotLR)
	orDefault(&s.Episodes, DefaultFewShotEpisodes)
	orDefault(&s.Lambda, DefaultRidgeLambda)
	orDefault(&s.MatchingScale, DefaultMatchingScale)
	orDefault(&s.SVMC, DefaultSVMC)
	orDefault(&s.SVMEps, DefaultSVMEps)
	return s
}

// orDefault sets *v to def when it is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

func (s FewShotSettings) validate() error {
	switch {
	case s.Steps < 0:
		return fmt.Errorf("eval: few-shot steps = %d, want ≥ 0", s.Steps)
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return fmt.Errorf("eval: few-shot learning rate %v, want a finite value > 0", s.LR)
	case s.Episodes < 1:
		return fmt.Errorf("eval: few-shot episodes per step = %d, want ≥ 1", s.Episodes)
	case !(s.Lambda > 0) || math.IsInf(s.Lambda, 0):
		return fmt.Errorf("eval: ridge λ = %v, want a finite value > 0", s.Lambda)
	case !(s.MatchingScale > 0) || math.IsInf(s.MatchingScale, 0):
		return fmt.Errorf("eval: matching scale τ = %v, want a finite value > 0", s.MatchingScale)
	case !(s.SVMC > 0) || math.IsInf(s.SVMC, 0):
		return fmt.Errorf("eval: SVM C = %v, want a finite value > 0", s.SVMC)
	case !(s.SVMEps > 0) || math.IsInf(s.SVMEps, 0):
		return fmt.Errorf("eval: SVM ε = %v, want a finite value > 0", s.SVMEps)
	}
	return nil
}

// FewShot is a few-shot network baseline: a body from package model and a
// few-shot head (prototypes, matching attention, or MetaOptNet's SVM or
// ridge-regression base learner).
//
// Fit trains a freshly initialised body on pseudo-episodes drawn from the
// training samples alone (there is no meta-training set in the paper's
// protocol): each class's samples are shuffled and split into ⌈n_c/2⌉
// supports and the rest queries, the head classifies the queries from the
// supports, and Adam takes a step on the mean cross-entropy. The episodic
// loss and its gradient with respect to the embeddings are computed in
// plain Go and enter the Gorgonia graph through a custom op. After
// training, every training sample is a support: Predict embeds the queries
// and applies the head against all of them.
//
// The same settings and data give the same weights and predictions.
type FewShot struct {
	method string
	s      FewShotSettings

	net     *model.Net
	m, d    int
	support []float64 // n×d embeddings of the training samples
	ys      []int
	rho     float64 // metaoptnet, metaoptnet_rr: learned log-scale of the logits
	losses  []float64
}

// NewFewShot returns an unfitted baseline of the named method.
func NewFewShot(method string, s FewShotSettings) (*FewShot, error) {
	if !IsFewShot(method) {
		return nil, fmt.Errorf("eval: unknown few-shot method %q (want one of %v)", method, FewShotMethods())
	}
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%w (method %s)", err, method)
	}
	return &FewShot{method: method, s: s}, nil
}

// TrainFewShot is NewFewShot followed by Fit.
func TrainFewShot(method string, s FewShotSettings, shape []int, x []float32, y []int, m int) (*FewShot, error) {
	f, err := NewFewShot(method, s)
	if err != nil {
		return nil, err
	}
	if err := f.Fit(x, shape, y, m); err != nil {
		return nil, err
	}
	return f, nil
}

// Method is the method name.
func (f *FewShot) Method() string { return f.method }

// Settings are the settings in use (defaults applied).
func (f *FewShot) Settings() FewShotSettings { return f.s }

// Net is the trained body (nil before Fit).
func (f *FewShot) Net() *model.Net { return f.net }

// Losses returns the mean pseudo-episode loss of every training step,
// measured before that step's update.
func (f *FewShot) Losses() []float64 { return append([]float64(nil), f.losses...) }

func (f *FewShot) head(rho float64) fewShotHead {
	switch f.method {
	case MethodProtoNet:
		return protoHead{}
	case MethodMatchingNet:
		return matchingHead{scale: f.s.MatchingScale}
	case MethodMetaOptNet:
		return svmHead{c: f.s.SVMC, eps: f.s.SVMEps, rho: rho}
	}
	return ridgeHead{lambda: f.s.Lambda, rho: rho}
}

// Fit trains the baseline on n = len(y) samples x (n × prod(shape) values,
// row-major, pixels scaled to [0, 1]) of shape [C, H, W] or [F], with
// labels in [0, m). Every class needs a sample, and two when Steps > 0 (a
// support and a query). On error the baseline is left unfitted.
func (f *FewShot) Fit(x []float32, shape []int, y []int, m int) error {
	f.net, f.support, f.ys, f.losses, f.rho = nil, nil, nil, nil, 0
	n := len(y)
	if err := checkSamples(x, shape, n, "training"); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("eval: %s: no training samples", f.method)
	}
	if m < 1 {
		return fmt.Errorf("eval: %s: m = %d classes, want ≥ 1", f.method, m)
	}
	byClass := make([][]int, m)
	for i, c := range y {
		if c < 0 || c >= m {
			return fmt.Errorf("eval: %s: label y[%d] = %d outside [0, %d)", f.method, i, c, m)
		}
		byClass[c] = append(byClass[c], i)
	}
	need := 1
	if f.s.Steps > 0 {
		need = 2
	}
	for c, idx := range byClass {
		if len(idx) < need {
			return fmt.Errorf("eval: %s: class %d has %d training samples, want ≥ %d (a support and a query for the pseudo-episodes)", f.method, c, len(idx), need)
		}
	}
	cfg := f.s.Model
	cfg.InShape = append([]int(nil), shape...)
	if cfg.Kind == "" {
		cfg.Kind = model.CNN
		if len(shape) == 1 {
			cfg.Kind = model.MLP
		}
	}
	net, err := model.New(cfg, f.s.Seed)
	if err != nil {
		return fmt.Errorf("eval: %s: %w", f.method, err)
	}
	var losses []float64
	var rho float64
	if f.s.Steps > 0 {
		if losses, rho, err = f.train(net, x, shape, y, m, byClass); err != nil {
			return err
		}
	}
	emb, err := net.Embed(x, n)
	if err != nil {
		return fmt.Errorf("eval: %s: %w", f.method, err)
	}
	for i, v := range emb {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if f.s.Steps == 0 {
				return fmt.Errorf("eval: %s: embedding of training sample %d is %v", f.method, i/net.Dim(), v)
			}
			// The last step's update made the network's output non-finite.
			return f.diverged(&diverge.Error{Step: f.s.Steps, Loss: "embedding",
				Detail: fmt.Sprintf("training sample %d is %v", i/net.Dim(), v)})
		}
	}
	f.net, f.m, f.d, f.support, f.ys, f.losses, f.rho = net, m, net.Dim(), emb, append([]int(nil), y...), losses, rho
	return nil
}

// checkSamples validates n samples of the given shape.
func checkSamples(x []float32, shape []int, n int, what string) error {
	if len(shape) != 1 && len(shape) != 3 {
		return fmt.Errorf("eval: %s sample shape %v, want [C, H, W] or [F]", what, shape)
	}
	size := 1
	for _, s := range shape {
		if s < 1 || size > math.MaxInt/s {
			return fmt.Errorf("eval: %s sample shape %v has a bad dimension", what, shape)
		}
		size *= s
	}
	if n < 0 || n > 0 && n > math.MaxInt/size || len(x) != n*size {
		return fmt.Errorf("eval: %s data has %d values, want %d samples × %d (shape %v)", what, len(x), n, size, shape)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("eval: %s sample %d holds a non-finite value %v at %d", what, i/size, v, i%size)
		}
	}
	return nil
}

// drawEpisode splits every class at random into ⌈n_c/2⌉ supports and
// the remaining queries.
func drawEpisode(byClass [][]int, rng *rand.Rand) (sup, qry []int) {
	for _, idx := range byClass {
		perm := rng.Perm(len(idx))
		ns := (len(idx) + 1) / 2
		for k, p := range perm {
			if k < ns {
				sup = append(sup, idx[p])
			} else {
				qry = append(qry, idx[p])
			}
		}
	}
	return sup, qry
}

// stepRand is the generator of training step step: a function of the seed
// and the step alone.
func stepRand(seed int64, step int) *rand.Rand {
	return rand.New(rand.NewSource(seed*1_000_003 + int64(step)*7_919 + 29))
}

// train runs the Adam steps on net in place and returns the loss history
// and, for metaoptnet and metaoptnet_rr, the learned log-scale.
func (f *FewShot) train(net *model.Net, x []float32, shape []int, y []int, m int, byClass [][]int) ([]float64, float64, error) {
	n := len(y)
	g := G.NewGraph()
	in, err := net.NewInput(g, "fewshot.x", n, x)
	if err != nil {
		return nil, 0, fmt.Errorf("eval: %s: %w", f.method, err)
	}
	emb, learn, err := net.Build(g, in.Node)
	if err != nil {
		return nil, 0, fmt.Errorf("eval: %s: %w", f.method, err)
	}
	spec := lossop.New("FewShotLoss", nil)
	// Drop the last loss closure when done, so that nothing the graph holds
	// reaches back to this fit (Gorgonia's tape machine has a finaliser, and
	// a cycle through it is never collected).
	defer spec.SetFunc(nil)
	loss, err := spec.Apply(emb)
	if err != nil {
		return nil, 0, fmt.Errorf("eval: %s: %w", f.method, err)
	}
	vm, adam, err := model.NewMinimiser(g, loss, learn, model.AdamSettings{LR: f.s.LR})
	if err != nil {
		return nil, 0, fmt.Errorf("eval: %s: %w", f.method, err)
	}
	defer vm.Close()
	learnScale := f.method == MethodMetaOptNetRR || f.method == MethodMetaOptNet
	rhoOpt := scalarAdam{lr: f.s.LR}
	var rho float64
	losses := make([]float64, 0, f.s.Steps)
	for step := 0; step < f.s.Steps; step++ {
		rng := stepRand(f.s.Seed, step)
		eps := make([][2][]int, f.s.Episodes)
		for k := range eps {
			eps[k][0], eps[k][1] = drawEpisode(byClass, rng)
		}
		var drho float64
		h := f.head(rho)
		spec.SetFunc(func(e []float64, n, d int) (float64, []float64, error) {
			return meanEpisodeLoss(h, e, n, d, m, y, eps, &drho)
		})
		if err := vm.RunAll(); err != nil {
			vm.Reset()
			return nil, 0, f.stepError(step, err, true, learn, emb)
		}
		vm.Reset()
		l, _ := spec.Last()
		if err := adam.Step(); err != nil {
			return nil, 0, f.stepError(step, err, false, learn, nil)
		}
		if learnScale {
			rho = rhoOpt.step(rho, drho)
		}
		losses = append(losses, l)
	}
	return losses, rho, nil
}

// stepError is the error of training step step (0-based) that failed in
// the machine's run of the graph (run) or in Adam's update: when a value
// went non-finite, a *diverge.Error in the trainer's words ("eval:
// proto_net: training diverged at step 19 of 50: non-finite gradient of
// "model.conv.weight"; lower the learning rate (now 10) or check the data
// for NaN/Inf"), else "eval: METHOD: step N: …" with the machine's report
// of the failing instruction kept out of the message (vmerr.Clean). Either
// way errors.Unwrap reaches the step's error.
func (f *FewShot) stepError(step int, err error, run bool, learn G.Nodes, emb *G.Node) error {
	d := diverge.Find(run, learn, emb)
	if d == nil && run {
		// The loss op refused a value the network made non-finite.
		var nf *nonFinite
		if _, op, ok := vmerr.Find(err); ok && errors.As(op, &nf) {
			d = &diverge.Error{Detail: nf.detail}
		}
	}
	if d == nil {
		return fmt.Errorf("eval: %s: step %d: %w", f.method, step+1, vmerr.Clean(err))
	}
	d.Step, d.Loss, d.Err = step+1, "loss", err
	return f.diverged(d)
}

// diverged is d with the baseline's name, steps and learning rate.
func (f *FewShot) diverged(d *diverge.Error) *diverge.Error {
	d.Op, d.Steps, d.LR = "eval: "+f.method, f.s.Steps, f.s.LR
	return d
}

// nonFinite is the error of a pseudo-episode loss that a value gone NaN or
// ±Inf kept from being computed; detail says which, for the message of the
// diverged training (stepError). Its own message is msg.
type nonFinite struct{ msg, detail string }

func (e *nonFinite) Error() string { return e.msg }

// notFinite returns a *nonFinite with message msg and detail.
func notFinite(detail, msg string, args ...any) error {
	return &nonFinite{msg: fmt.Sprintf(msg, args...), detail: detail}
}

// meanEpisodeLoss is the mean loss of the pseudo-episodes eps (support,
// query index lists) over the n×d embedding e, with its gradient; it
// stores the gradient with respect to the head's log-scale in drho.
func meanEpisodeLoss(h fewShotHead, e []float64, n, d, m int, y []int, eps [][2][]int, drho *float64) (float64, []float64, error) {
	for i, v := range e {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, nil, notFinite(fmt.Sprintf("the embedding of training sample %d is %v", i/d, v),
				"eval: embedding of training sample %d is %v (training diverged)", i/d, v)
		}
	}
	grad := make([]float64, n*d)
	w := 1 / float64(len(eps))
	var loss, dr float64
	for _, ep := range eps {
		l, r, err := episodeLoss(h, e, d, m, y, ep[0], ep[1], grad, w)
		if err != nil {
			return 0, nil, err
		}
		loss += w * l
		dr += r
	}
	*drho = dr
	return loss, grad, nil
}

// scalarAdam is Adam (default β's) for one scalar parameter.
type scalarAdam struct {
	lr   float64
	m, v float64
	t    int
}

func (a *scalarAdam) step(x, g float64) float64 {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	if math.IsNaN(g) || math.IsInf(g, 0) {
		return x
	}
	a.t++
	a.m = b1*a.m + (1-b1)*g
	a.v = b2*a.v + (1-b2)*g*g
	mh := a.m / (1 - math.Pow(b1, float64(a.t)))
	vh := a.v / (1 - math.Pow(b2, float64(a.t)))
	return x - a.lr*mh/(math.Sqrt(vh)+eps)
}

// fewShotChunk is the number of queries embedded at a time; chunks are
// fixed so results do not depend on Workers.
const fewShotChunk = 128

// Votes embeds nq query samples q (nq × InSize values, scaled as the
// training samples) and returns each query's class probabilities (nq rows
// of m values) under the head with every training sample as a support.
func (f *FewShot) Votes(q []float32, nq int) ([]float64, error) {
	if f.net == nil {
		return nil, ErrNotFitted
	}
	if err := checkSamples(q, f.net.Config().InShape, nq, "query"); err != nil {
		return nil, err
	}
	in, m := f.net.Config().InSize(), f.m
	votes := make([]float64, nq*m)
	chunks := (nq + fewShotChunk - 1) / fewShotChunk
	h := f.head(f.rho)
	err := parallel(chunks, f.s.Workers, func(lo, hi int) error {
		for c := lo; c < hi; c++ {
			a, b := c*fewShotChunk, min((c+1)*fewShotChunk, nq)
			e, err := f.net.Embed(q[a*in:b*in], b-a)
			if err != nil {
				return err
			}
			z, _, err := h.apply(f.support, f.ys, e, f.d, m)
			if err != nil {
				return err
			}
			softmaxRows(z, m)
			copy(votes[a*m:b*m], z)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", f.method, err)
	}
	return votes, nil
}

// Proba returns the head's softmax class probabilities for each query
// (nq rows of m values summing to 1): the same values as Votes.
func (f *FewShot) Proba(q []float32, nq int) ([]float64, error) { return f.Votes(q, nq) }

// Predict returns the most probable class of each query (ties to the
// lowest class index).
func (f *FewShot) Predict(q []float32, nq int) ([]int, error) {
	return argmaxOf(f.m)(f.Votes(q, nq))
}

// Score classifies the nq queries q with one pass of the head (Votes) and
// scores them against yq: the accuracy of Predict's labels, the log-loss
// and ECE of Proba's probabilities (the same values as Votes). It returns
// the predictions and probabilities too.
func (f *FewShot) Score(q []float32, nq int, yq []int) (Scores, []int, []float64, error) {
	if f.net == nil {
		return Scores{}, nil, nil, ErrNotFitted
	}
	proba, err := f.Votes(q, nq)
	if err != nil {
		return Scores{}, nil, nil, err
	}
	pred := predictFromVotes(proba, nq, f.m, nil)
	s, err := Score(pred, proba, f.m, yq)
	return s, pred, proba, err
}

// EvaluateFewShot fits f on the training samples and returns its accuracy
// on the nq queries q with labels yq, with the predictions.
func EvaluateFewShot(f *FewShot, x []float32, shape []int, y []int, m int, q []float32, nq int, yq []int) (float64, []int, error) {
	return evaluate(func() error { return f.Fit(x, shape, y, m) }, func() ([]int, error) { return f.Predict(q, nq) }, yq)
}

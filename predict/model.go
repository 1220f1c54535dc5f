package predict

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/model"
)

// Settings are how a Model turns inputs into votes: the classifier's
// settings as the experiment evaluated it, and the preprocessing of new
// inputs.
type Settings struct {
	K         int     // neighbours (eval.k)
	Tau       float64 // truncation threshold of drknn_truncated (eval.tau)
	Bandwidth float64 // kernel smoothing h (eval.bandwidth; 0 = median heuristic)
	// Standardize is the input standardisation the network was trained
	// with (data.standardize); nil or mode "none" when off.
	Standardize *Standardize
	// Dataset names the data set the model was trained on; its reader's
	// conventions apply to new images (Omniglot's are inverted: 1 = stroke).
	Dataset string
	// Impute fills missing feature values of new samples as the run filled
	// its own (data.missing mean or mode); nil when off.
	Impute *Impute
	// Input describes the raw inputs the model takes (images or feature
	// rows, their shape, a CSV's feature columns); nil for exports written
	// before it was recorded (the network's input shape is used then).
	Input *Input
}

// Input describes the raw inputs a model takes and how they become
// network inputs: samples of Shape as the data set's reader (Reader)
// produced them — images ([C, H, W]) or feature rows ([F], from a CSV
// whose feature columns are Features, in order). A network on flattened
// images (an MLP on [C·H·W]) still takes images of Shape.
type Input struct {
	Kind     string   `json:"kind"`               // InputImages or InputFeatures
	Reader   string   `json:"reader"`             // the data set kind: imagefolder, csv, npy, mnist, …
	Shape    []int    `json:"shape"`              // one sample as the reader gives it
	Features []string `json:"features,omitempty"` // csv: the feature columns, in order
}

// Kinds of input (Input.Kind).
const (
	InputImages   = "images"
	InputFeatures = "features"
)

// Model is a trained Dr.k-NN classifier: the embedding network, the
// embeddings of its training samples with their labels, the least-favourable
// distributions P* solved on them, the class names and Settings. Build it in
// memory with NewModel (package experiment does, from the pipeline's
// parts) or read an export folder with Load; either way every consumer
// classifies through the same methods.
type Model struct {
	TrainEmb    []float64 // N×D row-major
	N, D        int
	TrainLabels []int     // length N, values 0…M−1
	P           []float64 // M×N, row m = P*_m
	M           int
	ClassNames  []string // length M
	Settings    Settings

	net     *model.Net
	loadNet func() (*model.Net, error) // reads the network on first use (exports)
	// imageInvert is the polarity the support images of a model fitted
	// by FitFolder were given when chosen explicitly (nil: the reader's);
	// query images get the same.
	imageInvert *bool
}

// NewModel checks and assembles a model in memory. net may be nil for a
// model that classifies embeddings only; the slices are kept, not copied.
// Class names default to "0"…"M−1".
func NewModel(net *model.Net, trainEmb []float64, n, d int, labels []int, p []float64, classNames []string, s Settings) (*Model, error) {
	m := &Model{TrainEmb: trainEmb, N: n, D: d, TrainLabels: labels, P: p, ClassNames: classNames, Settings: s, net: net}
	if n < 1 || d < 1 || len(trainEmb) != n*d {
		return nil, fmt.Errorf("model: %d embedding values for %d training points of width %d", len(trainEmb), n, d)
	}
	if len(labels) != n {
		return nil, fmt.Errorf("model: %d labels for %d training points", len(labels), n)
	}
	if len(p) == 0 || len(p)%n != 0 {
		return nil, fmt.Errorf("model: %d LFD weights for %d training points", len(p), n)
	}
	m.M = len(p) / n
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if net != nil && net.Dim() != d {
		return nil, fmt.Errorf("model: the network embeds to width %d, the training embeddings have %d", net.Dim(), d)
	}
	return m, nil
}

// check validates labels, names, values and settings against N, D and M.
func (m *Model) check() error {
	for i, v := range m.TrainLabels {
		if v < 0 || v >= m.M {
			return fmt.Errorf("label[%d] = %d outside 0…%d", i, v, m.M-1)
		}
	}
	for i, v := range m.TrainEmb {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("training embedding %d, coordinate %d is %v", i/m.D, i%m.D, v)
		}
	}
	for i, v := range m.P {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("P*[%d][%d] is %v", i/m.N, i%m.N, v)
		}
	}
	if len(m.ClassNames) == 0 {
		for c := 0; c < m.M; c++ {
			m.ClassNames = append(m.ClassNames, fmt.Sprint(c))
		}
	}
	if len(m.ClassNames) != m.M {
		return fmt.Errorf("%d class names for %d classes", len(m.ClassNames), m.M)
	}
	if m.Settings.K < 0 {
		return fmt.Errorf("k = %d", m.Settings.K)
	}
	return nil
}

// Classes returns the class names, in the order of the votes.
func (m *Model) Classes() []string { return slices.Clone(m.ClassNames) }

// Net returns the embedding network (read from the export on first use) and
// checks that its embedding width is that of the training embeddings.
func (m *Model) Net() (*model.Net, error) {
	if m.net != nil {
		return m.net, nil
	}
	if m.loadNet == nil {
		return nil, errors.New("this model has no network: it classifies embeddings only")
	}
	net, err := m.loadNet()
	if err != nil {
		return nil, err
	}
	m.net = net
	return net, nil
}

// Options choose the classifier.
type Options struct {
	Method string // eval.MethodDrKNN (default), MethodDrKNNTruncated, MethodEmbeddingKNN or MethodKernelSmoothing
	K      int    // neighbours; 0 means the model's
}

// Methods lists the methods Classify accepts: those that vote on the
// embeddings (the pixel baselines need raw training samples, which a model
// does not hold).
func Methods() []string {
	return []string{eval.MethodDrKNN, eval.MethodDrKNNTruncated, eval.MethodEmbeddingKNN, eval.MethodKernelSmoothing}
}

// Prediction is the answer for one input. An input that could not be
// classified (an unreadable file, a bad row) has Error set, Class −1 and
// no name, votes or probabilities; the others are still classified.
type Prediction struct {
	Input string    `json:"input"`
	Class int       `json:"class"`
	Name  string    `json:"name"`
	Votes []float64 `json:"votes"` // p̃_m for m = 0…M−1
	Proba []float64 `json:"proba"` // class probabilities, summing to 1, in the order of Classes
	Error string    `json:"error,omitempty"`
	// Warning notes an input that was classified but may not fit the
	// model (an image much smaller than the network's input).
	Warning string `json:"warning,omitempty"`
}

// Classifier returns the fitted classifier the options select, configured
// as the experiment evaluated it (k, τ and bandwidth from Settings).
func (m *Model) Classifier(o Options) (eval.Voter, error) {
	method := o.Method
	if method == "" {
		method = eval.MethodDrKNN
	}
	if !slices.Contains(Methods(), method) {
		return nil, fmt.Errorf("method %q: want one of %v", method, Methods())
	}
	k := o.K
	if k == 0 {
		k = m.Settings.K
	}
	if k < 1 || k > m.N {
		return nil, fmt.Errorf("k = %d: want 1…%d (the number of training points)", k, m.N)
	}
	c, err := eval.New(method, eval.Settings{K: k, Tau: m.Settings.Tau, Bandwidth: m.Settings.Bandwidth, Workers: 1}, m.P)
	if err != nil {
		return nil, err
	}
	if err := c.Fit(m.TrainEmb, m.N, m.D, m.TrainLabels, m.M); err != nil {
		return nil, fmt.Errorf("%s on the training set: %w", method, err)
	}
	return c, nil
}

// checkEmbeddings reports embeddings that do not fit the model.
func (m *Model) checkEmbeddings(q []float64, nq int) error {
	if nq < 1 {
		return fmt.Errorf("%w: no inputs", ErrInput)
	}
	if len(q) != nq*m.D {
		return fmt.Errorf("%w: %d values for %d embeddings of width %d", ErrInput, len(q), nq, m.D)
	}
	for i, v := range q {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: embedding %d, coordinate %d is %v", ErrInput, i/m.D, i%m.D, v)
		}
	}
	return nil
}

// Proba returns the class probabilities of nq embeddings q (nq×D) under
// the classifier o selects: nq rows of M values, each non-negative and
// summing to 1, in the order of Classes (eval.Voter.Proba; for Dr.k-NN the
// LFD-weighted vote normalised over the classes).
func (m *Model) Proba(q []float64, nq int, o Options) ([]float64, error) {
	if err := m.checkEmbeddings(q, nq); err != nil {
		return nil, err
	}
	c, err := m.Classifier(o)
	if err != nil {
		return nil, err
	}
	return c.Proba(q, nq)
}

// Classify votes for nq embeddings q (nq×D). names labels the inputs in
// the result (row numbers when nil).
func (m *Model) Classify(q []float64, nq int, names []string, o Options) ([]Prediction, error) {
	if err := m.checkBatch(q, nq, names); err != nil {
		return nil, err
	}
	c, err := m.Classifier(o)
	if err != nil {
		return nil, err
	}
	return m.vote(c, q, nq, names)
}

// classifyCheckWork is about how many coordinate differences (queries ×
// training points × width) are voted on between checks of the context: a
// few milliseconds of work.
const classifyCheckWork = 1 << 22

// classifyContext is Classify with the classifier c (Classifier's) already
// built — PredictFiles builds it once, before reading any input — and
// stopped by ctx, checked before each chunk of queries (each about
// classifyCheckWork of distances). Each query's votes depend on it alone,
// so the chunks do not change them.
func (m *Model) classifyContext(ctx context.Context, c eval.Voter, q []float64, nq int, names []string) ([]Prediction, error) {
	if err := m.checkBatch(q, nq, names); err != nil {
		return nil, err
	}
	if names == nil {
		names = make([]string, nq)
		for i := range names {
			names[i] = fmt.Sprint(i)
		}
	}
	chunk := max(1, classifyCheckWork/max(1, m.N*m.D))
	out := make([]Prediction, 0, nq)
	for lo := 0; lo < nq; lo += chunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(nq, lo+chunk)
		p, err := m.vote(c, q[lo*m.D:hi*m.D], hi-lo, names[lo:hi])
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}

// checkBatch reports embeddings that do not fit the model, or names that
// do not fit them.
func (m *Model) checkBatch(q []float64, nq int, names []string) error {
	if err := m.checkEmbeddings(q, nq); err != nil {
		return err
	}
	if names != nil && len(names) != nq {
		return fmt.Errorf("%d names for %d inputs", len(names), nq)
	}
	return nil
}

// vote classifies nq checked embeddings q with c.
func (m *Model) vote(c eval.Voter, q []float64, nq int, names []string) ([]Prediction, error) {
	votes, err := c.Votes(q, nq)
	if err != nil {
		return nil, err
	}
	pred, err := c.Predict(q, nq)
	if err != nil {
		return nil, err
	}
	proba, err := c.Proba(q, nq)
	if err != nil {
		return nil, err
	}
	out := make([]Prediction, nq)
	for i := range out {
		name := fmt.Sprint(i)
		if names != nil {
			name = names[i]
		}
		out[i] = Prediction{Input: name, Class: pred[i], Name: m.ClassNames[pred[i]],
			Votes: append([]float64(nil), votes[i*m.M:(i+1)*m.M]...),
			Proba: append([]float64(nil), proba[i*m.M:(i+1)*m.M]...)}
	}
	return out, nil
}

// Embed maps n preprocessed samples x (n×InSize of the network) to their
// embeddings with the model's network, after the input standardisation
// the model was trained with (x itself is not modified).
func (m *Model) Embed(x []float32, n int) ([]float64, error) {
	net, x, err := m.netInput(x, n)
	if err != nil {
		return nil, err
	}
	return net.Embed(x, n)
}

// embedContext is net.Embed of n samples x stopped by ctx, checked before
// each of the network's batches (net.EmbedChunk samples): the batches are
// those of one call, so are the embeddings, bit for bit.
func embedContext(ctx context.Context, net *model.Net, x []float32, n int) ([]float64, error) {
	in := net.Config().InSize()
	if len(x) != n*in || nonFinite32(x) >= 0 {
		return net.Embed(x, n) // its error, naming the sample
	}
	chunk := max(1, net.EmbedChunk())
	d := net.Dim()
	out := make([]float64, 0, n*d)
	for lo := 0; lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(n, lo+chunk)
		e, err := net.Embed(x[lo*in:hi*in], hi-lo)
		if err != nil {
			return nil, err
		}
		out = append(out, e...)
	}
	return out, nil
}

// netInput returns the network and n samples x as it takes them: their
// size checked, standardised as in training (standardize).
func (m *Model) netInput(x []float32, n int) (*model.Net, []float32, error) {
	net, err := m.Net()
	if err != nil {
		return nil, nil, err
	}
	if want := net.Config().InSize(); len(x) != n*want {
		return nil, nil, fmt.Errorf("%w: %d values for %d samples of %d", ErrInput, len(x), n, want)
	}
	if x, err = m.standardize(x, n, net.Config().InShape); err != nil {
		return nil, nil, err
	}
	return net, x, nil
}

// standardize returns n samples x of the network's input shape after the
// input standardisation the model was trained with: a copy, or x itself
// when there is none.
func (m *Model) standardize(x []float32, n int, shape []int) ([]float32, error) {
	if st := m.Settings.Standardize; st != nil && st.Mode != "" && st.Mode != "none" {
		x = append([]float32(nil), x...)
		if err := st.apply(x, n, shape); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	return x, nil
}

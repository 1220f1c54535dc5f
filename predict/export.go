// Package predict classifies new inputs with a model exported by
// drknn-train: it reads an export folder (training embeddings and labels,
// the least-favourable distributions P*, the network weights and
// manifest.json), turns images, feature rows or embeddings into embeddings
// with the exported network, and votes with package eval.
//
// Images are decoded by content (PNG or JPEG), converted to the network's
// channel count (BT.601 luma for one channel, R, G, B planes for three),
// stretched to its H×W by exact area averaging and scaled to [0, 1] — the
// preprocessing of the package datasets readers. Omniglot models also invert
// the polarity (1 = stroke), as the Omniglot reader does by default.
package predict

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
)

// ErrInput is wrapped by every error about inputs that do not fit the
// exported model (wrong shapes, channels, values).
var ErrInput = errors.New("input does not fit the model")

// Manifest is the part of an export folder's manifest.json that prediction
// reads. Field names match the JSON written by package experiment (the
// embedded training configuration uses Go field names, matched
// case-insensitively).
type Manifest struct {
	Format int `json:"format"`
	Config struct {
		Dataset string
		Data    struct {
			Grey bool
			Size int
		}
		Train struct {
			Metric string
		}
		Eval struct {
			K         int
			Tau       float64
			Bandwidth float64
		}
	} `json:"config"`
	// Episode.Standardize is the input standardisation the model was
	// trained with (data.standardize); nil or mode "none" when off.
	Episode struct {
		Standardize *Standardize `json:"standardize"`
	} `json:"episode"`
	Model      model.Config      `json:"model"`
	Theta      []float64         `json:"theta"`
	K          int               `json:"k"`
	Metric     string            `json:"metric"`
	Ways       int               `json:"ways"`
	ClassNames []string          `json:"class_names"`
	Files      map[string]string `json:"files"`
}

// Standardize is an export's input standardisation: "sample" rescales
// each sample to mean 0 and standard deviation 1; "channel" subtracts Mean
// and divides by SD per channel (per feature for feature rows), with the
// statistics of the episode's training samples.
type Standardize struct {
	Mode string    `json:"mode"`
	Mean []float64 `json:"mean"`
	SD   []float64 `json:"sd"`
}

// check validates s against the model's input shape.
func (s *Standardize) check(shape []int) error {
	if s == nil {
		return nil
	}
	switch s.Mode {
	case "", "none", "sample":
		return nil
	case "channel":
		c := 0
		if len(shape) > 0 {
			c = shape[0]
		}
		if len(s.Mean) != c || len(s.SD) != c {
			return fmt.Errorf("episode.standardize: %d means and %d deviations for %d channels (input shape %v)", len(s.Mean), len(s.SD), c, shape)
		}
		for ch := range s.Mean {
			if m, d := s.Mean[ch], s.SD[ch]; math.IsNaN(m) || math.IsInf(m, 0) || !(d > 0) || math.IsInf(d, 0) {
				return fmt.Errorf("episode.standardize: channel %d has mean %v and deviation %v", ch, m, d)
			}
		}
		return nil
	}
	return fmt.Errorf("episode.standardize: mode %q, want none, sample or channel", s.Mode)
}

// apply standardises n samples x of the given shape in place.
func (s *Standardize) apply(x []float32, n int, shape []int) error {
	if s == nil {
		return nil
	}
	switch s.Mode {
	case "sample":
		size := 1
		for _, v := range shape {
			size *= v
		}
		return datasets.StandardizeSamples(x, n, size)
	case "channel":
		return datasets.StandardizeChannels(x, n, shape, s.Mean, s.SD)
	}
	return nil
}

// Export is a loaded export folder.
type Export struct {
	Dir         string
	Manifest    Manifest
	TrainEmb    []float64 // N×D row-major
	N, D        int
	TrainLabels []int     // length N, values 0…M−1
	P           []float64 // M×N, row m = P*_m
	M           int
	ClassNames  []string // length M

	net *model.Net
}

// file returns the path of a file of the export, by its manifest key.
func (e *Export) file(key, def string) string {
	if name, ok := e.Manifest.Files[key]; ok && name != "" && filepath.Base(name) == name {
		return filepath.Join(e.Dir, name)
	}
	return filepath.Join(e.Dir, def)
}

// Load reads and cross-checks the export folder dir: the arrays must agree
// in size with each other and with the manifest. The network weights are
// read later, by Net, only when needed.
func Load(dir string) (*Export, error) {
	e := &Export{Dir: dir}
	mpath := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(mpath)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", dir, err)
	}
	if e.Manifest, err = parseManifest(b); err != nil {
		return nil, fmt.Errorf("export %s: %w", mpath, err)
	}
	emb := e.file("train_embeddings", "train_embeddings.npy")
	e.TrainEmb, e.N, e.D, err = npy.ReadMatrix(emb, true)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	lpath := e.file("train_labels", "train_labels.npy")
	raw, err := npy.ReadInt64(lpath)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if len(raw) != e.N {
		return nil, fmt.Errorf("export: %s has %d labels, %s has %d rows", lpath, len(raw), emb, e.N)
	}
	ppath := e.file("lfd_weights", "lfd_weights.npy")
	p, pm, pn, err := npy.ReadMatrix(ppath, true)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if pn != e.N {
		return nil, fmt.Errorf("export: %s is %d×%d, want M×n with n = %d training points", ppath, pm, pn, e.N)
	}
	e.P, e.M = p, pm
	e.TrainLabels = make([]int, e.N)
	for i, v := range raw {
		if v < 0 || v >= int64(e.M) {
			return nil, fmt.Errorf("export: %s: label[%d] = %d outside 0…%d (M from %s)", lpath, i, v, e.M-1, ppath)
		}
		e.TrainLabels[i] = int(v)
	}
	if e.Manifest.Ways != 0 && e.Manifest.Ways != e.M {
		return nil, fmt.Errorf("export: manifest says %d ways, %s has %d rows", e.Manifest.Ways, ppath, e.M)
	}
	e.ClassNames = e.Manifest.ClassNames
	if len(e.ClassNames) == 0 {
		for m := 0; m < e.M; m++ {
			e.ClassNames = append(e.ClassNames, fmt.Sprint(m))
		}
	}
	if len(e.ClassNames) != e.M {
		return nil, fmt.Errorf("export: manifest names %d classes, %s has %d rows", len(e.ClassNames), ppath, e.M)
	}
	return e, nil
}

// parseManifest decodes manifest.json and checks what prediction relies on
// before any array is read: the format and the input standardisation.
func parseManifest(b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, err
	}
	if m.Format != 1 {
		return Manifest{}, fmt.Errorf("format %d, this build reads format 1", m.Format)
	}
	if err := m.Episode.Standardize.check(m.Model.InShape); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// Net loads the exported network (once) and checks that its embedding
// width is that of the training embeddings.
func (e *Export) Net() (*model.Net, error) {
	if e.net != nil {
		return e.net, nil
	}
	path := e.file("model", "model.bin")
	net, err := model.Load(path)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if net.Dim() != e.D {
		return nil, fmt.Errorf("export: %s embeds to width %d, the training embeddings have %d", path, net.Dim(), e.D)
	}
	e.net = net
	return net, nil
}

// Options choose the classifier.
type Options struct {
	Method string // eval.MethodDrKNN (default), MethodDrKNNTruncated, MethodEmbeddingKNN or MethodKernelSmoothing
	K      int    // neighbours; 0 means the manifest's k
}

// Methods lists the methods Classify accepts: those that vote on the
// embeddings (the pixel baselines need raw training samples, which an
// export does not hold).
func Methods() []string {
	return []string{eval.MethodDrKNN, eval.MethodDrKNNTruncated, eval.MethodEmbeddingKNN, eval.MethodKernelSmoothing}
}

// Prediction is the answer for one input.
type Prediction struct {
	Input string    `json:"input"`
	Class int       `json:"class"`
	Name  string    `json:"name"`
	Votes []float64 `json:"votes"` // p̃_m for m = 0…M−1
}

// Classifier returns the fitted classifier the options select, configured
// as the experiment evaluated it (k, τ and bandwidth from the manifest).
func (e *Export) Classifier(o Options) (eval.Voter, error) {
	method := o.Method
	if method == "" {
		method = eval.MethodDrKNN
	}
	ok := false
	for _, m := range Methods() {
		ok = ok || m == method
	}
	if !ok {
		return nil, fmt.Errorf("method %q: want one of %v", method, Methods())
	}
	k := o.K
	if k == 0 {
		k = e.Manifest.K
		if k == 0 {
			k = e.Manifest.Config.Eval.K
		}
	}
	if k < 1 || k > e.N {
		return nil, fmt.Errorf("k = %d: want 1…%d (the number of training points)", k, e.N)
	}
	c, err := eval.New(method, eval.Settings{K: k, Tau: e.Manifest.Config.Eval.Tau,
		Bandwidth: e.Manifest.Config.Eval.Bandwidth, Workers: 1}, e.P)
	if err != nil {
		return nil, err
	}
	if err := c.Fit(e.TrainEmb, e.N, e.D, e.TrainLabels, e.M); err != nil {
		return nil, fmt.Errorf("%s on the exported training set: %w", method, err)
	}
	return c, nil
}

// Classify votes for nq embeddings q (nq×D). names labels the inputs in
// the result (row numbers when nil).
func (e *Export) Classify(q []float64, nq int, names []string, o Options) ([]Prediction, error) {
	if nq < 1 {
		return nil, fmt.Errorf("%w: no inputs", ErrInput)
	}
	if len(q) != nq*e.D {
		return nil, fmt.Errorf("%w: %d values for %d embeddings of width %d", ErrInput, len(q), nq, e.D)
	}
	for i, v := range q {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: embedding %d, coordinate %d is %v", ErrInput, i/e.D, i%e.D, v)
		}
	}
	if names != nil && len(names) != nq {
		return nil, fmt.Errorf("%d names for %d inputs", len(names), nq)
	}
	c, err := e.Classifier(o)
	if err != nil {
		return nil, err
	}
	votes, err := c.Votes(q, nq)
	if err != nil {
		return nil, err
	}
	pred, err := c.Predict(q, nq)
	if err != nil {
		return nil, err
	}
	out := make([]Prediction, nq)
	for i := range out {
		name := fmt.Sprint(i)
		if names != nil {
			name = names[i]
		}
		out[i] = Prediction{Input: name, Class: pred[i], Name: e.ClassNames[pred[i]],
			Votes: append([]float64(nil), votes[i*e.M:(i+1)*e.M]...)}
	}
	return out, nil
}

// Embed maps n preprocessed samples x (n×InSize of the network) to their
// embeddings with the exported network, after the input standardisation
// the model was trained with (x itself is not modified).
func (e *Export) Embed(x []float32, n int) ([]float64, error) {
	net, err := e.Net()
	if err != nil {
		return nil, err
	}
	if want := net.Config().InSize(); len(x) != n*want {
		return nil, fmt.Errorf("%w: %d values for %d samples of %d", ErrInput, len(x), n, want)
	}
	if st := e.Manifest.Episode.Standardize; st != nil && st.Mode != "" && st.Mode != "none" {
		x = append([]float32(nil), x...)
		if err := st.apply(x, n, net.Config().InShape); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
	}
	return net.Embed(x, n)
}

// Queries reads the export's query embeddings (nq×D) and their labels, the
// episode's held-out samples as drknn-train embedded them.
func (e *Export) Queries() (q []float64, nq int, labels []int, err error) {
	qpath := e.file("query_embeddings", "query_embeddings.npy")
	q, nq, d, err := npy.ReadMatrix(qpath, true)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("export: %w", err)
	}
	if d != e.D {
		return nil, 0, nil, fmt.Errorf("export: %s has width %d, the training embeddings %d", qpath, d, e.D)
	}
	lpath := e.file("query_labels", "query_labels.npy")
	raw, err := npy.ReadInt64(lpath)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("export: %w", err)
	}
	if len(raw) != nq {
		return nil, 0, nil, fmt.Errorf("export: %s has %d labels for %d query embeddings", lpath, len(raw), nq)
	}
	labels = make([]int, nq)
	for i, v := range raw {
		if v < 0 || v >= int64(e.M) {
			return nil, 0, nil, fmt.Errorf("export: %s: label[%d] = %d outside 0…%d", lpath, i, v, e.M-1)
		}
		labels[i] = int(v)
	}
	return q, nq, labels, nil
}

// Package predict is what every consumer of a trained Dr.k-NN model calls.
// A Model (the network, its input preprocessing, the training embeddings
// and labels, the least-favourable distributions P* and the voting
// settings) is built in memory with NewModel or read from an export folder
// with Load; it turns images, feature rows or embeddings into embeddings
// with the network and votes with package eval. The package owns the export
// folder's format: the Manifest type, WriteExport and Load.
//
// Images are decoded by content (PNG or JPEG), converted to the network's
// channel count (BT.601 luma for one channel, R, G, B planes for three),
// stretched to its H×W by exact area averaging and scaled to [0, 1] — the
// preprocessing of the package datasets readers. Omniglot models also invert
// the polarity (1 = stroke), as the Omniglot reader does by default.
package predict

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/model"
)

// ErrInput is wrapped by every error about inputs that do not fit the
// exported model (wrong shapes, channels, values).
var ErrInput = errors.New("input does not fit the model")

// ExportFormat is the version of the export folder layout this build
// writes and reads.
const ExportFormat = 1

// Manifest is an export folder's manifest.json: what the model is, how it
// was made and which files hold it. Package experiment fills it and
// WriteExport writes it; Load reads it. The experiment configuration and
// the episode are recorded whole (RecordedConfig, RecordedEpisode), with the
// settings prediction reads decoded.
type Manifest struct {
	Format        int               `json:"format"`
	Config        RecordedConfig    `json:"config"`
	Model         model.Config      `json:"model"`
	Theta         []float64         `json:"theta"`
	ThetaRelative bool              `json:"theta_relative"`
	CostScale     string            `json:"cost_scale"`
	K             int               `json:"k"`
	Metric        string            `json:"metric"`
	Ways          int               `json:"ways"`
	ClassNames    []string          `json:"class_names"`
	Episode       RecordedEpisode   `json:"episode"`
	LFD           LFDBounds         `json:"lfd"`
	Files         map[string]string `json:"files"`
	// SHA256 holds the SHA-256 of each file WriteExport wrote, by manifest
	// key: Load refuses a file that does not match (a model.bin copied from
	// another run or repeat), or whose key the map lacks. Exports written
	// before it was recorded have no map and are not checked.
	SHA256   map[string]string `json:"sha256,omitempty"`
	Input    *Input            `json:"input,omitempty"`
	Versions map[string]string `json:"versions"`
}

// LFDBounds are the certificate of the LFD solved on the training set.
type LFDBounds struct {
	Objective  float64 `json:"objective"`
	LowerBound float64 `json:"lower_bound"`
	RelGap     float64 `json:"rel_gap"`
	// Blocks is the number of blocks a large training set's LFD was solved
	// in (0 or 1: the whole set at once); then Objective and LowerBound
	// are the sums of the blocks' and RelGap the largest block's.
	Blocks int `json:"blocks,omitempty"`
}

// RecordedConfig is the experiment configuration an export was made with
// (package experiment's Config), kept verbatim, with the settings that
// prediction reads decoded (Go field names, matched case-insensitively).
type RecordedConfig struct {
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
	Raw json.RawMessage `json:"-"` // the whole record
}

// RecordedEpisode is the record of the episode an export was trained on
// (package experiment's EpisodeRecord), kept verbatim, with its input
// standardisation decoded: nil or mode "none" when off.
type RecordedEpisode struct {
	Standardize *Standardize    `json:"standardize"`
	Impute      *Impute         `json:"impute"`
	Raw         json.RawMessage `json:"-"` // the whole record
}

// Record returns v (any JSON-encodable value) as a recorded configuration.
func Record(v any) (RecordedConfig, error) {
	var r RecordedConfig
	return r, recordInto(v, &r)
}

// RecordEpisode returns v as a recorded episode.
func RecordEpisode(v any) (RecordedEpisode, error) {
	var r RecordedEpisode
	return r, recordInto(v, &r)
}

func recordInto(v any, into json.Unmarshaler) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return into.UnmarshalJSON(b)
}

// MarshalJSON writes the whole record.
func (c RecordedConfig) MarshalJSON() ([]byte, error) {
	type view RecordedConfig
	return marshalRecord(c.Raw, view(c))
}

// UnmarshalJSON keeps the record and decodes the settings prediction reads.
func (c *RecordedConfig) UnmarshalJSON(b []byte) error {
	type view RecordedConfig
	return unmarshalRecord(b, (*view)(c), &c.Raw)
}

// MarshalJSON writes the whole record.
func (e RecordedEpisode) MarshalJSON() ([]byte, error) {
	type view RecordedEpisode
	return marshalRecord(e.Raw, view(e))
}

// UnmarshalJSON keeps the record and decodes the standardisation.
func (e *RecordedEpisode) UnmarshalJSON(b []byte) error {
	type view RecordedEpisode
	return unmarshalRecord(b, (*view)(e), &e.Raw)
}

// marshalRecord writes the kept record, or the decoded view of a record
// made in memory.
func marshalRecord(raw json.RawMessage, view any) ([]byte, error) {
	if raw != nil {
		return raw, nil
	}
	return json.Marshal(view)
}

// unmarshalRecord decodes b into view and keeps a copy of b in raw.
func unmarshalRecord(b []byte, view any, raw *json.RawMessage) error {
	if err := json.Unmarshal(b, view); err != nil {
		return err
	}
	*raw = append(json.RawMessage(nil), b...)
	return nil
}

// Standardize is an export's input standardisation: "sample" rescales
// each sample to mean 0 and standard deviation 1; "channel" subtracts Mean
// and divides by SD per channel (per feature for feature rows), with the
// statistics of the episode's training samples; "relevance" multiplies
// value position j of a sample (feature j of a row) by Weight[j], the
// relevance weights of the episode's training samples
// (datasets.RelevanceWeights).
type Standardize struct {
	Mode   string    `json:"mode"`
	Mean   []float64 `json:"mean"`
	SD     []float64 `json:"sd"`
	Weight []float64 `json:"weight,omitempty"`
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
		if len(shape) == 0 || shape[0] < 1 {
			return fmt.Errorf("episode.standardize: channel statistics need the model's input shape (channels first), got %v", shape)
		}
		c := shape[0]
		if len(s.Mean) != c || len(s.SD) != c {
			return fmt.Errorf("episode.standardize: %d means and %d deviations for %d channels (input shape %v)", len(s.Mean), len(s.SD), c, shape)
		}
		for ch := range s.Mean {
			if m, d := s.Mean[ch], s.SD[ch]; math.IsNaN(m) || math.IsInf(m, 0) || !(d > 0) || math.IsInf(d, 0) {
				return fmt.Errorf("episode.standardize: channel %d has mean %v and deviation %v", ch, m, d)
			}
		}
		return nil
	case "relevance":
		if size := prod(shape); len(s.Weight) != size {
			return fmt.Errorf("episode.standardize: %d relevance weights for samples of %d values (input shape %v)", len(s.Weight), size, shape)
		}
		for j, w := range s.Weight {
			if !(w >= 0 && w <= 1) {
				return fmt.Errorf("episode.standardize: relevance weight %d is %v, want 0…1", j, w)
			}
		}
		return nil
	}
	return fmt.Errorf("episode.standardize: mode %q, want none, sample, channel or relevance", s.Mode)
}

// apply standardises n samples x of the given shape in place.
func (s *Standardize) apply(x []float32, n int, shape []int) error {
	if s == nil {
		return nil
	}
	switch s.Mode {
	case "sample":
		return datasets.StandardizeSamples(x, n, prod(shape))
	case "channel":
		return datasets.StandardizeChannels(x, n, shape, s.Mean, s.SD)
	case "relevance":
		return datasets.ScaleValues(x, n, s.Weight)
	}
	return nil
}

// Impute is an export's fill of missing feature values (data.missing mean
// or mode): a missing value at feature position j of a new sample becomes
// Values[j], the statistic of the training samples, before any
// standardisation — as the run filled its own samples.
type Impute struct {
	Mode   string    `json:"mode"`
	Values []float64 `json:"values"`
}

// Export is a loaded export folder: its manifest and the Model it holds.
type Export struct {
	Dir      string
	Manifest Manifest
	*Model
}

// files are the export's files by manifest key.
var files = map[string]string{
	"train_embeddings": "train_embeddings.npy", "train_labels": "train_labels.npy",
	"lfd_weights": "lfd_weights.npy", "query_embeddings": "query_embeddings.npy",
	"query_labels": "query_labels.npy", "model": "model.bin",
}

// file returns the path of a file of the export, by its manifest key.
func (e *Export) file(key string) string {
	if name, ok := e.Manifest.Files[key]; ok && name != "" && filepath.Base(name) == name {
		return filepath.Join(e.Dir, name)
	}
	return filepath.Join(e.Dir, files[key])
}

// Load reads and cross-checks the export folder dir: the arrays must agree
// in size with each other and with the manifest. The network weights are
// read later, by Net, only when needed.
func Load(dir string) (*Export, error) {
	e := &Export{Dir: dir}
	mpath := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(mpath)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w%s", dir, err, exportHint(dir, "manifest.json"))
	}
	if e.Manifest, err = parseManifest(b); err != nil {
		return nil, fmt.Errorf("export %s: %w", mpath, err)
	}
	for _, key := range []string{"train_embeddings", "train_labels", "lfd_weights"} {
		if err := e.verify(key); err != nil {
			return nil, err
		}
	}
	m := &Model{}
	emb := e.file("train_embeddings")
	m.TrainEmb, m.N, m.D, err = npy.ReadMatrix(emb, true)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	lpath := e.file("train_labels")
	raw, err := npy.ReadInt64(lpath)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if len(raw) != m.N {
		return nil, fmt.Errorf("export: %s has %d labels, %s has %d rows", lpath, len(raw), emb, m.N)
	}
	ppath := e.file("lfd_weights")
	p, pm, pn, err := npy.ReadMatrix(ppath, true)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if pn != m.N {
		return nil, fmt.Errorf("export: %s is %d×%d, want M×n with n = %d training points", ppath, pm, pn, m.N)
	}
	m.P, m.M = p, pm
	m.TrainLabels = make([]int, m.N)
	for i, v := range raw {
		if v < 0 || v >= int64(m.M) {
			return nil, fmt.Errorf("export: %s: label[%d] = %d outside 0…%d (M from %s)", lpath, i, v, m.M-1, ppath)
		}
		m.TrainLabels[i] = int(v)
	}
	man := &e.Manifest
	if man.Ways != 0 && man.Ways != m.M {
		return nil, fmt.Errorf("export: manifest says %d ways, %s has %d rows", man.Ways, ppath, m.M)
	}
	m.ClassNames = man.ClassNames
	if len(m.ClassNames) != 0 && len(m.ClassNames) != m.M {
		return nil, fmt.Errorf("export: manifest names %d classes, %s has %d rows", len(m.ClassNames), ppath, m.M)
	}
	m.Settings = Settings{K: man.K, Tau: man.Config.Eval.Tau, Bandwidth: man.Config.Eval.Bandwidth,
		Standardize: man.Episode.Standardize, Dataset: man.Config.Dataset, Impute: man.Episode.Impute, Input: man.Input}
	if m.Settings.K == 0 {
		m.Settings.K = man.Config.Eval.K
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("export %s: %w", dir, err)
	}
	path := e.file("model")
	m.loadNet = func() (*model.Net, error) {
		if err := e.verify("model"); err != nil {
			return nil, err
		}
		net, err := model.Load(path)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if net.Dim() != m.D {
			return nil, fmt.Errorf("export: %s embeds to width %d, the training embeddings have %d", path, net.Dim(), m.D)
		}
		// Without a sha256 map nothing ties model.bin to this export: a
		// foreign network would make every input "not fit the model".
		if got, want := net.Config().InShape, man.Model.InShape; len(want) > 0 && !slices.Equal(got, want) {
			return nil, fmt.Errorf("export %s is inconsistent: model.bin takes inputs of shape %v, manifest.json records %v (was model.bin copied from another run?)", dir, got, want)
		}
		if in := man.Input; in != nil && prod(in.Shape) != net.Config().InSize() {
			return nil, fmt.Errorf("export %s is inconsistent: model.bin takes %d values a sample, manifest.json's input.shape %v holds %d (was model.bin copied from another run?)", dir, net.Config().InSize(), in.Shape, prod(in.Shape))
		}
		return net, nil
	}
	e.Model = m
	return e, nil
}

// verify checks the file of an export against the SHA-256 the manifest
// records for it. A manifest without a sha256 map (an export written
// before it was recorded) checks nothing; one with a sha256 map must
// record the file's key, since WriteExport records every file it writes:
// a missing key would otherwise silently turn the file's check off.
func (e *Export) verify(key string) error {
	path := e.file(key)
	want, err := recordedSHA256(e.Manifest.SHA256, key, path, "export "+e.Dir+": manifest.json")
	if err != nil || want == "" {
		return err
	}
	got, err := fileSHA256(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if got != want {
		return fmt.Errorf("export %s: %s: was it copied from another run or repeat?", e.Dir, notThisExport(path, got, want))
	}
	return nil
}

// recordedSHA256 returns the SHA-256 a manifest's sha256 map (sums)
// records for the file at path (manifest key key): "" when the manifest
// has no sha256 map at all (written before it was recorded: no check), an
// error naming the file and the key when the map lacks the key.
func recordedSHA256(sums map[string]string, key, path, manifest string) (string, error) {
	if sums == nil {
		return "", nil
	}
	want, ok := sums[key]
	if !ok || want == "" {
		return "", fmt.Errorf("%s records no SHA-256 for %s (key %q missing from its sha256 map); refusing to read it unchecked", manifest, filepath.Base(path), key)
	}
	return want, nil
}

// notThisExport says that the file at path, of SHA-256 got, is not the
// file whose SHA-256 (want) its export's manifest records.
func notThisExport(path, got, want string) string {
	return fmt.Sprintf("%s does not belong to this export (SHA-256 %.12s…, the manifest records %.12s…)", filepath.Base(path), got, want)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// parseManifest decodes manifest.json and checks what prediction relies on
// before any array is read: the format and the input standardisation.
func parseManifest(b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, err
	}
	if m.Format != ExportFormat {
		return Manifest{}, fmt.Errorf("format %d, this build reads format %d", m.Format, ExportFormat)
	}
	if err := m.Episode.Standardize.check(m.Model.InShape); err != nil {
		return Manifest{}, err
	}
	if err := m.Episode.Impute.check(m.Model.InSize()); err != nil {
		return Manifest{}, err
	}
	if err := m.Input.check(m.Model.InSize()); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// check validates a fill of missing values against the network's input
// size.
func (im *Impute) check(size int) error {
	if im == nil {
		return nil
	}
	if im.Mode != "mean" && im.Mode != "mode" {
		return fmt.Errorf("episode.impute: mode %q, want mean or mode", im.Mode)
	}
	if len(im.Values) != size {
		return fmt.Errorf("episode.impute: %d values for inputs of %d", len(im.Values), size)
	}
	for j, v := range im.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("episode.impute: value %d is %v", j, v)
		}
	}
	return nil
}

// check validates an input description against the network's input size.
func (in *Input) check(size int) error {
	if in == nil {
		return nil
	}
	if in.Kind != InputImages && in.Kind != InputFeatures {
		return fmt.Errorf("input.kind %q, want %s or %s", in.Kind, InputImages, InputFeatures)
	}
	n := 1
	for _, v := range in.Shape {
		if v < 1 || n > math.MaxInt32/v {
			return fmt.Errorf("input.shape %v", in.Shape)
		}
		n *= v
	}
	if len(in.Shape) == 0 || n != size {
		return fmt.Errorf("input.shape %v holds %d values, the network takes %d", in.Shape, n, size)
	}
	if in.Kind == InputImages && len(in.Shape) != 3 || in.Kind == InputFeatures && len(in.Shape) != 1 {
		return fmt.Errorf("input.shape %v does not fit input.kind %s", in.Shape, in.Kind)
	}
	if in.Features != nil && len(in.Features) != n {
		return fmt.Errorf("input.features names %d columns for %d features", len(in.Features), n)
	}
	return nil
}

// Queries reads the export's query embeddings (nq×D) and their labels, the
// episode's held-out samples as drknn-train embedded them.
// Both files are checked against the SHA-256 the manifest records, as the
// other files of the export are.
func (e *Export) Queries() (q []float64, nq int, labels []int, err error) {
	for _, key := range []string{"query_embeddings", "query_labels"} {
		if _, listed := e.Manifest.Files[key]; e.Manifest.Files != nil && e.Manifest.SHA256 != nil && !listed {
			// WriteExport lists no query files when there were no queries.
			return nil, 0, nil, fmt.Errorf("export %s holds no query samples (manifest.json lists no %s file)", e.Dir, key)
		}
		if err := e.verify(key); err != nil {
			return nil, 0, nil, err
		}
	}
	qpath := e.file("query_embeddings")
	q, nq, d, err := npy.ReadMatrix(qpath, true)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("export: %w", err)
	}
	if d != e.D {
		return nil, 0, nil, fmt.Errorf("export: %s has width %d, the training embeddings %d", qpath, d, e.D)
	}
	lpath := e.file("query_labels")
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

// WriteExport writes model m to the folder dir (which must exist) as an
// export: the training embeddings, labels and LFD weights, the query
// embeddings q (nq×D) and their labels when there are queries (nq > 0),
// the network's weights and manifest.json. The manifest's format, model,
// k, ways, class names, files and versions are filled from m and this
// build; the rest (the recorded configuration and episode, ϑ, the cost
// scale, the metric, the LFD's bounds) is the caller's. Every file is
// written through a temporary name and a rename.
func WriteExport(dir string, m *Model, man Manifest, q []float64, nq int, queryLabels []int) error {
	net, err := m.Net()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if nq < 0 || len(q) != nq*m.D || len(queryLabels) != nq {
		return fmt.Errorf("export: %d query values and %d labels for %d queries of width %d", len(q), len(queryLabels), nq, m.D)
	}
	man.Files = maps.Clone(files)
	if nq == 0 {
		delete(man.Files, "query_embeddings")
		delete(man.Files, "query_labels")
	}
	path := func(key string) string { return filepath.Join(dir, files[key]) }
	steps := []func() error{
		func() error { return npy.WriteFloat64(path("train_embeddings"), m.TrainEmb, m.N, m.D) },
		func() error { return npy.WriteInt64(path("train_labels"), int64s(m.TrainLabels)) },
		func() error { return npy.WriteFloat64(path("lfd_weights"), m.P, m.M, m.N) },
		func() error { return npy.WriteFloat64(path("query_embeddings"), q, nq, m.D) },
		func() error { return npy.WriteInt64(path("query_labels"), int64s(queryLabels)) },
		func() error { return net.Save(path("model")) },
	}
	if nq == 0 {
		steps = append(steps[:3], steps[5])
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	man.Format, man.Model, man.K, man.Ways, man.ClassNames = ExportFormat, net.Config(), m.Settings.K, m.M, m.ClassNames
	man.Input = m.Settings.Input
	man.SHA256 = map[string]string{}
	for key := range man.Files {
		if man.SHA256[key], err = fileSHA256(path(key)); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	man.Versions = versions()
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return atomicfile.WriteBytes(filepath.Join(dir, "manifest.json"), append(b, '\n'))
}

func int64s(x []int) []int64 {
	out := make([]int64, len(x))
	for i, v := range x {
		out[i] = int64(v)
	}
	return out
}

// versions names what produced an export.
func versions() map[string]string {
	v := map[string]string{"go": runtime.Version(), "blas": model.BLAS,
		"model_format": fmt.Sprint(model.FormatVersion), "export_format": fmt.Sprint(ExportFormat)}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v["drknn"] = bi.Main.Version
		for _, dep := range bi.Deps {
			switch dep.Path {
			case "github.com/drknn/drknn/internal/gorgonia", "gonum.org/v1/gonum":
				v[dep.Path] = dep.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v["commit"] = s.Value
			}
		}
	}
	return v
}

// exportHint is what a folder without the export's file is, when it is a
// run folder or another kind of export: " (… use …)", or "".
func exportHint(dir, file string) string {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	switch {
	case exists(filepath.Join(dir, "export", file)):
		return fmt.Sprintf(" (%s is a run folder: its model is %s)", dir, filepath.Join(dir, "export"))
	case exists(filepath.Join(dir, "repeats", "01", "export", file)):
		return fmt.Sprintf(" (%s is an episodes run: each repeat has its model, e.g. %s)", dir, filepath.Join(dir, "repeats", "01", "export"))
	case file == "manifest.json" && exists(filepath.Join(dir, EmbeddingFile)):
		return " (an embedding exported by a transfer run: give a new task's support set with -support DIR)"
	case file == EmbeddingFile && exists(filepath.Join(dir, "manifest.json")):
		return " (a trained model, not a transfer run's embedding: leave out -support)"
	}
	return ""
}

package predict

// A trained embedding reused on new tasks (the transfer protocol): the
// network with its preprocessing and the settings that turn a support set
// of a new task into a Dr.k-NN classifier. Fit embeds the support set,
// solves the least-favourable distributions on it and returns a Model.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
)

// EmbeddingSettings say how a support set becomes a classifier: Dr.k-NN's
// k (capped at the smallest class of the support set), τ and bandwidth,
// the LFD's radius, cost scale, metric, regularisation and certified gap,
// and the data set whose reader conventions apply to new images.
type EmbeddingSettings struct {
	K             int       `json:"k"`
	Tau           float64   `json:"tau"`
	Bandwidth     float64   `json:"bandwidth"`
	Theta         []float64 `json:"theta"`          // one radius, or one per class of the support set
	ThetaRelative bool      `json:"theta_relative"` // radius in units of the support set's mean cost
	Metric        string    `json:"metric"`         // euclidean or sqeuclidean
	Epsilon       float64   `json:"epsilon"`
	Tol           float64   `json:"tol"`
	Dataset       string    `json:"dataset"`
	// Input describes the raw inputs (the data set's reader and sample
	// shape); support and query images are prepared as that reader
	// prepared the training images.
	Input *Input `json:"input,omitempty"`
}

func (s EmbeddingSettings) check() error {
	if s.K < 1 {
		return fmt.Errorf("k = %d, want ≥ 1", s.K)
	}
	if s.Metric != "euclidean" && s.Metric != "sqeuclidean" {
		return fmt.Errorf("metric %q, want euclidean or sqeuclidean", s.Metric)
	}
	if len(s.Theta) == 0 {
		return fmt.Errorf("no LFD radius")
	}
	for _, v := range s.Theta {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("LFD radius %v, want finite and ≥ 0", v)
		}
	}
	if !(s.Epsilon > 0) || !(s.Tol > 0 && s.Tol < 1) {
		return fmt.Errorf("LFD ε = %v and tolerance %v, want ε > 0 and 0 < tol < 1", s.Epsilon, s.Tol)
	}
	return nil
}

func (s EmbeddingSettings) metric() optlayer.Metric {
	if s.Metric == "sqeuclidean" {
		return optlayer.SqEuclidean
	}
	return optlayer.Euclidean
}

// Embedding is a trained embedding network with the settings of the
// classifiers it builds from support sets.
type Embedding struct {
	net      *model.Net
	Settings EmbeddingSettings
	Manifest EmbeddingManifest // as read by LoadEmbedding (zero when built in memory)
}

// NewEmbedding checks and assembles an embedding in memory.
func NewEmbedding(net *model.Net, s EmbeddingSettings) (*Embedding, error) {
	if net == nil {
		return nil, fmt.Errorf("embedding: no network")
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	return &Embedding{net: net, Settings: s}, nil
}

// Net returns the embedding network.
func (e *Embedding) Net() *model.Net { return e.net }

// Fit builds the classifier of a new task from its support set: the n
// preprocessed samples x (n × the network's input size) with labels
// 0…M−1 (every class present) and optional class names. It embeds them
// (inference mode), solves the LFD on the support embedding with the
// settings' radius (costs divided by their mean when ThetaRelative, as in
// training) and returns the Model that votes with it, k capped at the
// smallest class's size.
func (e *Embedding) Fit(x []float32, n int, labels []int, names []string) (*Model, error) {
	return e.FitContext(context.Background(), x, n, labels, names)
}

// FitContext is Fit stopped by ctx: it is checked between the network's
// batches of support samples, between the phases (embedding, costs, LFD)
// and by the LFD's solve between its iterations (optlayer.SolveContext;
// each a fraction of a second at 10,000 samples). A cancelled fit returns
// an error wrapping ctx's (errors.Is(err, context.Canceled)) and no Model.
func (e *Embedding) FitContext(ctx context.Context, x []float32, n int, labels []int, names []string) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n < 2 || len(labels) != n {
		return nil, fmt.Errorf("%w: %d labels for %d support samples (want ≥ 2)", ErrInput, len(labels), n)
	}
	m := 0
	for _, y := range labels {
		if y < 0 {
			return nil, fmt.Errorf("%w: negative label %d", ErrInput, y)
		}
		m = max(m, y+1)
	}
	count := make([]int, m)
	for _, y := range labels {
		count[y]++
	}
	for c, k := range count {
		if k == 0 {
			return nil, fmt.Errorf("%w: class %d has no support sample", ErrInput, c)
		}
	}
	if m < 2 {
		return nil, fmt.Errorf("%w: the support set has one class; a classifier needs at least 2", ErrInput)
	}
	if names != nil && len(names) != m {
		return nil, fmt.Errorf("%w: %d class names for %d classes", ErrInput, len(names), m)
	}
	if len(e.Settings.Theta) != 1 && len(e.Settings.Theta) != m {
		return nil, fmt.Errorf("%w: %d LFD radii for %d classes", ErrInput, len(e.Settings.Theta), m)
	}
	if want := e.net.Config().InSize(); len(x) != n*want {
		return nil, fmt.Errorf("%w: %d values for %d support samples of %d", ErrInput, len(x), n, want)
	}
	emb, err := embedContext(ctx, e.net, x, n)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := e.net.Dim()
	c, err := optlayer.Costs(emb, n, d, e.Settings.metric())
	if err != nil {
		return nil, err
	}
	if e.Settings.ThetaRelative {
		if _, err := optlayer.NormalizeCosts(c); err != nil {
			return nil, fmt.Errorf("LFD on the support set: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := optlayer.SolveContext(ctx, &optlayer.Problem{N: n, Cost: c, Labels: labels, Theta: e.Settings.Theta},
		&optlayer.Settings{Epsilon: e.Settings.Epsilon, Tol: e.Settings.Tol})
	if err != nil {
		return nil, fmt.Errorf("LFD on the support set: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := Settings{K: min(e.Settings.K, slices.Min(count)), Tau: e.Settings.Tau, Bandwidth: e.Settings.Bandwidth, Dataset: e.Settings.Dataset,
		Input: e.Settings.Input}
	return NewModel(e.net, emb, n, d, labels, res.P, names, s)
}

// SupportOptions say how FitFolder reads a support folder.
type SupportOptions struct {
	// Invert overrides the polarity of the support images as
	// Inputs.Invert does for queries (nil: the reader's, inverted for
	// Omniglot). The Model returned prepares its query images the same
	// way: PredictFiles refuses a different Inputs.Invert.
	Invert *bool
	// Classes are the class folders' names in label order: the order of
	// the Model's classes (and of the probability columns), which decides
	// class ties — every method breaks an exact tie of votes towards the
	// lowest class index (drknn after the count of neighbours). nil: the
	// folders sorted by name. To reproduce a transfer run's predictions on
	// one of its tasks give that task's drawn order, recorded in the run's
	// results.json as episodes[t].class_names. Every class folder must be
	// named exactly once.
	Classes []string
}

// FitFolder is Fit on a support folder: one sub-folder per class, named
// by the class, holding its images, read with the image-folder reader's
// file rule (ExpandImages: nested folders belong to their class; hidden
// entries (".x", "__MACOSX") and files that are not images — a notes.txt
// — are skipped; a file named as an image must decode; files beside the
// class folders are skipped, as the reader skips them). The images are
// decoded by content and prepared exactly as the training images were and
// as PredictFiles prepares queries, with the polarity o.Invert chooses.
// Classes are sorted by name unless o.Classes orders them; within a class,
// files are in the reader's natural order.
func (e *Embedding) FitFolder(dir string, o SupportOptions) (*Model, error) {
	return e.FitFolderContext(context.Background(), dir, o)
}

// FitFolderContext is FitFolder stopped by ctx: it is checked between the
// support images as they are read, then as FitContext checks it. A
// cancelled fit returns ctx's error and no Model.
func (e *Embedding) FitFolderContext(ctx context.Context, dir string, o SupportOptions) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	classes, err := classFolders(dir)
	if err != nil {
		return nil, err
	}
	if o.Classes != nil {
		if classes, err = orderClasses(dir, classes, o.Classes); err != nil {
			return nil, err
		}
	}
	if len(classes) < 2 {
		return nil, fmt.Errorf("%w: support folder %s has %d class folder; a classifier needs at least 2", ErrInput, dir, len(classes))
	}
	var paths []string
	var labels []int
	for c, name := range classes {
		files, err := ExpandImages([]string{filepath.Join(dir, name) + string(filepath.Separator)})
		if err != nil {
			return nil, fmt.Errorf("%w: support set: %w", ErrInput, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%w: support set: class folder %s holds no image files", ErrInput, filepath.Join(dir, name))
		}
		for _, f := range files {
			paths = append(paths, filepath.Clean(f))
			labels = append(labels, c)
		}
	}
	// A model shell with the embedding's preprocessing reads the images.
	shell := &Model{net: e.net, Settings: Settings{Dataset: e.Settings.Dataset, Input: e.Settings.Input}}
	samples, err := shell.imageSamples(ctx, paths, o.Invert)
	if err != nil {
		return nil, err
	}
	var x []float32
	for _, sm := range samples {
		if sm.err != nil {
			return nil, fmt.Errorf("%w: support image %w", ErrInput, sm.err)
		}
		x = append(x, sm.x...)
	}
	m, err := e.FitContext(ctx, x, len(labels), labels, classes)
	if err != nil {
		return nil, err
	}
	if o.Invert != nil {
		v := *o.Invert
		m.imageInvert = &v
	}
	return m, nil
}

// classFolders lists the class folders of a support folder, sorted:
// its sub-folders (or links to folders) that are not hidden; files beside
// them are skipped, as the image-folder reader skips them.
func classFolders(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: support set: %w", ErrInput, err)
	}
	var out []string
	for _, en := range ents {
		name := en.Name()
		if datasets.SkipName(name) {
			continue
		}
		isDir := en.IsDir()
		if en.Type()&os.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(dir, name))
			isDir = err == nil && fi.IsDir()
		}
		if isDir {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: support set: %s holds no class folders; want DIR/<class>/<image files>", ErrInput, dir)
	}
	sort.Strings(out)
	return out, nil
}

// orderClasses returns the class folders (sorted) in the order given,
// which must name each of them exactly once.
func orderClasses(dir string, folders, order []string) ([]string, error) {
	seen := map[string]bool{}
	for _, c := range order {
		switch {
		case seen[c]:
			return nil, fmt.Errorf("%w: class order: %q is named twice", ErrInput, c)
		case !slices.Contains(folders, c):
			return nil, fmt.Errorf("%w: class order: %q is not a class folder of %s (its classes: %s)", ErrInput, c, dir, strings.Join(folders, ", "))
		}
		seen[c] = true
	}
	for _, c := range folders {
		if !seen[c] {
			return nil, fmt.Errorf("%w: class order: class folder %s is not named (give every class of %s: %s)", ErrInput, filepath.Join(dir, c), dir, strings.Join(folders, ", "))
		}
	}
	return slices.Clone(order), nil
}

// ClassSplit records the classes an embedding was trained on (base),
// selected on (validation) and evaluated on (novel), by name.
type ClassSplit struct {
	Base    []string `json:"base"`
	Val     []string `json:"val"`
	Novel   []string `json:"novel"`
	HeldOut string   `json:"held_out"` // classes, samples or split
}

// EmbeddingManifest is an embedding export's embedding.json.
type EmbeddingManifest struct {
	Format   int               `json:"format"`
	Kind     string            `json:"kind"` // "embedding"
	Config   RecordedConfig    `json:"config"`
	Model    model.Config      `json:"model"`
	Settings EmbeddingSettings `json:"settings"`
	Split    ClassSplit        `json:"split"`
	Files    map[string]string `json:"files"`
	// SHA256 holds the SHA-256 of each file WriteEmbedding wrote (model.bin),
	// by manifest key: LoadEmbedding refuses a file that does not match (a
	// model.bin copied from another run, or damaged), or whose key the map
	// lacks. Exports written before it was recorded have no map and are
	// not checked.
	SHA256   map[string]string `json:"sha256,omitempty"`
	Versions map[string]string `json:"versions"`
}

// EmbeddingFile is the manifest of an embedding export.
const EmbeddingFile = "embedding.json"

// WriteEmbedding writes e to the folder dir (which must exist): the
// network's weights (model.bin) and embedding.json (man with the format,
// model, settings, files, their SHA-256 and versions filled in).
func WriteEmbedding(dir string, e *Embedding, man EmbeddingManifest) error {
	weights := filepath.Join(dir, files["model"])
	if err := e.net.Save(weights); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	sum, err := fileSHA256(weights)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	man.Format, man.Kind, man.Model, man.Settings = ExportFormat, "embedding", e.net.Config(), e.Settings
	man.Files, man.Versions = map[string]string{"model": files["model"]}, versions()
	man.SHA256 = map[string]string{"model": sum}
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return atomicfile.WriteBytes(filepath.Join(dir, EmbeddingFile), append(b, '\n'))
}

// LoadEmbedding reads an embedding export written by WriteEmbedding and
// checks the network against the manifest: its file against the SHA-256
// the manifest records (a manifest without a sha256 map, as in exports
// written before it was recorded: no check; a sha256 map without the
// "model" key: refused), then its configuration.
func LoadEmbedding(dir string) (*Embedding, error) {
	mpath := filepath.Join(dir, EmbeddingFile)
	b, err := os.ReadFile(mpath)
	if err != nil {
		return nil, fmt.Errorf("embedding export %s: %w%s", dir, err, exportHint(dir, EmbeddingFile))
	}
	var man EmbeddingManifest
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, fmt.Errorf("embedding export %s: %w", mpath, err)
	}
	if man.Format != ExportFormat || man.Kind != "embedding" {
		return nil, fmt.Errorf("embedding export %s: format %d kind %q, this build reads format %d kind \"embedding\"", mpath, man.Format, man.Kind, ExportFormat)
	}
	name := man.Files["model"]
	if name == "" || filepath.Base(name) != name {
		name = files["model"]
	}
	weights := filepath.Join(dir, name)
	want, err := recordedSHA256(man.SHA256, "model", weights, "embedding export "+dir+": "+EmbeddingFile)
	if err != nil {
		return nil, err
	}
	if want != "" {
		got, err := fileSHA256(weights)
		if err != nil {
			return nil, fmt.Errorf("embedding export: %w", err)
		}
		if got != want {
			return nil, fmt.Errorf("embedding export %s: %s: was it copied from another run, or damaged?", dir, notThisExport(weights, got, want))
		}
	}
	net, err := model.Load(weights)
	if err != nil {
		return nil, fmt.Errorf("embedding export: %w", err)
	}
	if net.Config().String() != man.Model.WithDefaults().String() {
		return nil, fmt.Errorf("embedding export %s: the weights are of network %s, the manifest says %s", dir, net.Config(), man.Model)
	}
	e, err := NewEmbedding(net, man.Settings)
	if err != nil {
		return nil, fmt.Errorf("embedding export %s: %w", mpath, err)
	}
	e.Manifest = man
	return e, nil
}

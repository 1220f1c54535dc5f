package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/drknn/drknn/configs"
	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/errkind"
	"github.com/drknn/drknn/internal/filekind"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"gopkg.in/yaml.v3"
)

// Config is one experiment: the data, the protocol, the network, the
// training of Algorithm 1 and the evaluation. It is read from YAML with
// strict validation (see LoadConfig); Default gives the values a file
// starts from. Package train sees only the part Algorithm 1 needs
// (Config.TrainSettings).
type Config struct {
	Dataset string `yaml:"dataset" json:"dataset"`   // mnist, cifar10, omniglot, lung-cancer, covid-ct, miniimagenet, synthetic-*, or your own data: imagefolder, csv, npy
	DataDir string `yaml:"data_dir" json:"data_dir"` // folder (csv: file) of the data set; "" = $DRKNN_DATA/<dataset> or ../shared/data/<dataset>; required for imagefolder, csv and npy; relative in a config file = to the file's folder (LoadConfig)
	Ways    int    `yaml:"ways" json:"ways"`         // M, classes per episode
	Shots   int    `yaml:"shots" json:"shots"`       // K, training samples per class
	Queries int    `yaml:"queries" json:"queries"`   // query samples per episode (fewer if fewer remain)
	Repeats int    `yaml:"repeats" json:"repeats"`   // episodes
	Seed    int64  `yaml:"seed" json:"seed"`
	Workers int    `yaml:"workers" json:"workers"` // goroutines; 0 = number of CPUs. Never changes results.
	// Protocol is how the labelled data are used. "episodes" (the paper's;
	// "" means it): each repeat draws an M-way K-shot episode, trains a
	// fresh network on its M·K samples and classifies unseen queries.
	// "paper-lung" (lung-cancer only; docs/medical-rows.md) is the same but
	// draws the queries with replacement from all rows of the episode's
	// classes, training rows included: the protocol that reproduces the
	// paper's Lung Cancer figures. Table 1 never uses it. "fit": one network
	// trained on every labelled sample of the training part, evaluated on
	// the test part of a split folder or by k-fold cross-validation, and
	// exported for drknn-predict (RunFit; ways, shots, queries and repeats
	// do not apply).
	Protocol string `yaml:"protocol" json:"protocol,omitempty"`

	Data  DataConfig  `yaml:"data" json:"data"`
	Model ModelConfig `yaml:"model" json:"model"`
	Train TrainConfig `yaml:"train" json:"train"`
	Eval  EvalConfig  `yaml:"eval" json:"eval"`
	// Transfer is the base-class training of protocol transfer
	// (TransferConfig, experiment/transfer.go).
	Transfer TransferConfig `yaml:"transfer" json:"transfer,omitzero"`
}

// DataConfig controls how the data set is read.
type DataConfig struct {
	Grey     bool   `yaml:"grey" json:"grey"`         // CIFAR-10, miniImageNet, image folders: convert to grey (image folders: false = automatic)
	Size     int    `yaml:"size" json:"size"`         // square resize for Omniglot, COVID-CT, miniImageNet, image folders (0 = reader default)
	Omniglot string `yaml:"omniglot" json:"omniglot"` // "characters" (default) or "alphabets" as classes
	// Split is the part of the data set to read: miniimagenet train, val
	// or test ("" = test); mnist test, train or all ("" = test when its
	// files are there, else train); imagefolder train or test of a split
	// folder ("" = both; protocol fit trains on train/ and tests on test/);
	// omniglot a comma-separated list of sets ("" = background,evaluation).
	Split     string `yaml:"split" json:"split"`
	Synthetic int    `yaml:"synthetic" json:"synthetic"` // samples per class for synthetic data sets (0 = default)
	// Label names the label column of a csv data set ("" = the last).
	Label string `yaml:"label" json:"label,omitempty"`
	// Missing is what to do with missing cells of a csv data set (empty,
	// NA, N/A, NaN, ?): "error" (or "", the default: loading fails naming
	// the row and column), "mean" or "mode" (filled per episode with the
	// statistic of that episode's training samples only).
	Missing string `yaml:"missing" json:"missing,omitempty"`
	// Standardize rescales every method's input per episode: "none" (or ""),
	// "sample" (each sample to mean 0, standard deviation 1 over its own
	// values), "channel" (each image channel, or each feature of a row, to
	// mean 0, standard deviation 1 over the episode's M·K training samples
	// only; queries use the training statistics) or "relevance" (each
	// feature, or pixel, multiplied by √η², its correlation ratio with the
	// labels over the episode's training samples: the share of its
	// variance the class means explain, datasets.RelevanceWeights).
	Standardize string `yaml:"standardize" json:"standardize"`
	// OneHot encodes Lung Cancer's 56 nominal attributes (values 0…3) as
	// 4 indicator features each (224 features) instead of value/3.
	OneHot bool `yaml:"onehot" json:"onehot"`
	// LabelNoise flips this fraction of each episode's support labels,
	// round(rate·M·K) of them, each to another class uniformly (FlipLabels,
	// seeded by the repeat's seed); query labels stay true. 0 = off.
	LabelNoise float64 `yaml:"label_noise" json:"label_noise,omitempty"`
	// Features: covid-ct "histogram" gives each image as the 64-bin
	// histogram of its full-resolution luma instead of its pixels
	// (datasets.ReadCOVIDCTHistogram; use model.kind identity). "" = pixels.
	Features string `yaml:"features" json:"features,omitempty"`
	// Protocol transfer: the base classes (names or 0-based indices; the
	// rest are novel) of data sets without a standard split, rotated
	// copies of the base classes as extra training classes, and the
	// validation part: ValClasses whole base classes (Omniglot: whole
	// alphabets, drawn until at least ValClasses characters are held out)
	// or ValFraction of every base class's samples.
	BaseClasses   []string `yaml:"base_classes" json:"base_classes,omitempty"`
	RotateClasses bool     `yaml:"rotate_classes" json:"rotate_classes,omitempty"`
	ValClasses    int      `yaml:"val_classes" json:"val_classes,omitempty"`
	ValFraction   float64  `yaml:"val_fraction" json:"val_fraction,omitempty"`
}

// ModelConfig is the feature extractor.
type ModelConfig struct {
	Kind     string `yaml:"kind" json:"kind"`         // cnn (images), mlp (feature rows) or identity (no network: the input is the embedding; nothing is trained); "" = chosen by the data: images → cnn, feature rows → mlp
	Channels int    `yaml:"channels" json:"channels"` // conv channels
	Hidden   int    `yaml:"hidden" json:"hidden"`     // MLP hidden width
	Dim      int    `yaml:"dim" json:"dim"`           // embedding width d
	DType    string `yaml:"dtype" json:"dtype"`       // float32 or float64
}

// TrainConfig is Algorithm 1.
type TrainConfig struct {
	Steps           int       `yaml:"steps" json:"steps"`                       // Adam steps
	LR              float64   `yaml:"lr" json:"lr"`                             // Adam learning rate (paper: 1e-2)
	Minisets        int       `yaml:"minisets" json:"minisets"`                 // mini-sets per step (paper's batch: 32)
	MinisetSize     int       `yaml:"miniset_size" json:"miniset_size"`         // n′, points per mini-set (0 = all M·K)
	Metric          string    `yaml:"metric" json:"metric"`                     // euclidean or sqeuclidean
	Theta           []float64 `yaml:"theta" json:"theta"`                       // one radius for all classes or one per class
	ThetaRelative   bool      `yaml:"theta_relative" json:"theta_relative"`     // ϑ in units of the mini-set's mean cost: costs divided by their mean over the n×n matrix (optlayer.NormalizeCosts; scale-free)
	ThetaGrid       []float64 `yaml:"theta_grid" json:"theta_grid"`             // candidates for cross-validation; empty = use Theta
	CVFolds         int       `yaml:"cv_folds" json:"cv_folds"`                 // 0 = leave-one-out (protocol fit: ParseConfig gives DefaultFitFolds when the key is absent)
	Epsilon         float64   `yaml:"epsilon" json:"epsilon"`                   // LFD entropic regularisation
	Tol             float64   `yaml:"tol" json:"tol"`                           // LFD certified relative gap
	CheckpointEvery int       `yaml:"checkpoint_every" json:"checkpoint_every"` // steps between checkpoints, and one at the end; 0 = automatic, ≤ 2% of the training time (Checkpointing.Every)
	Augment         Augment   `yaml:"augment" json:"augment"`                   // random transformations of the training images at each step
}

// Augment is the data augmentation of Dr.k-NN's training: at every step
// each of the M·K training images is moved by a random offset and, with
// Flip, mirrored with probability 1/2; the draws come from the step's seeded
// generator. Queries and the final embedding of the training samples are
// never augmented. Zero values = off.
type Augment struct {
	Shift int  `yaml:"shift" json:"shift"` // largest shift in pixels (zero padding), 0 = none
	Flip  bool `yaml:"flip" json:"flip"`   // random left–right mirror (not for digits or characters)
}

// EvalConfig is the evaluation.
type EvalConfig struct {
	K         int      `yaml:"k" json:"k"`                 // neighbours (paper: 5)
	Tau       float64  `yaml:"tau" json:"tau"`             // truncation threshold for drknn_truncated (paper: 0.9)
	Bandwidth float64  `yaml:"bandwidth" json:"bandwidth"` // kernel smoothing h (0 = median heuristic)
	Methods   []string `yaml:"methods" json:"methods"`     // result keys to compute; empty = all available
	// LFDBlock is the largest training set whose test-time LFD is solved
	// whole; a larger one (protocol fit) is solved in class-stratified
	// random blocks of at most LFDBlock points (SolveLFD). 0 = always whole.
	LFDBlock int `yaml:"lfd_block" json:"lfd_block"`
	// FewShotSteps are the Adam steps of the network baselines (matching_net,
	// proto_net, metaoptnet, metaoptnet_rr); 0 = train.steps.
	FewShotSteps int `yaml:"fewshot_steps" json:"fewshot_steps"`
	// ThetaLOO, when not empty, adds the method drknn_loo: Dr.k-NN with the
	// test-time radius chosen from these candidates by leave-one-out on the
	// episode's support set (ChooseThetaLOO; ties keep train.theta). A
	// single value fixes the test-time radius.
	ThetaLOO []float64 `yaml:"theta_loo" json:"theta_loo,omitempty"`
}

// ErrConfig is wrapped by every error about a configuration: an unreadable
// file, an unknown key, a value of the wrong type or an impossible setting,
// and a reader setting the data on disk cannot honour (data.split on an
// image folder that is not split): it is datasets.ErrConfig, the same
// error value, which the readers attach to those.
var ErrConfig = datasets.ErrConfig

// configErr marks err with ErrConfig without changing its message.
func configErr(err error) error { return errkind.Mark(ErrConfig, err) }

// Default returns the defaults every config file starts from.
func Default() Config {
	return Config{
		Dataset: "synthetic-images", Ways: 2, Shots: 5, Queries: 1000, Repeats: 10, Seed: 1,
		Data:  DataConfig{Omniglot: "characters"},
		Model: ModelConfig{Channels: 32, Hidden: 64, Dim: 400, DType: "float64"},
		Train: TrainConfig{Steps: 100, LR: 1e-2, Minisets: 8, Metric: "euclidean",
			Theta: []float64{0.1}, ThetaRelative: true, Epsilon: 1e-2, Tol: 1e-3},
		Eval: EvalConfig{K: 5, Tau: 0.9, LFDBlock: DefaultLFDBlock},
	}
}

// LoadConfig reads a YAML file over Default(), applies overrides of the form
// "key=value" (nested keys with dots: "train.steps=200"; values in YAML
// syntax, e.g. "train.theta=[0.1,0.2]"), and validates the result. Unknown
// keys, wrong types and impossible values give one error naming the file and
// the key; so do a number that is not a YAML integer for an integer key
// (shots: 4.9 is refused, never truncated) and a null for a scalar key (a
// null list is empty).
// Errors wrap ErrConfig.
//
// A file on disk wins; when there is none at path and path names a shipped
// config ("mnist.yaml", "mnist" or "configs/mnist.yaml"), the copy embedded
// in the binary is read (ReadConfigSource), so the commands work from any
// directory once installed.
//
// A relative data_dir written in a config file on disk is relative to the
// file's folder, not to the working directory, so a config and its data
// can move together and be used from anywhere: data_dir: data/t.csv in
// /p/cfg/x.yaml is /p/cfg/data/t.csv (cfg/data/t.csv when path is
// cfg/x.yaml). A data_dir given by -set stays relative to the working
// directory, as any command-line path; absolute and empty ones ("" = the
// data root's sub-folder) are kept, and so is the data_dir of a shipped
// config read from the binary (ParseConfig never rewrites data_dir).
func LoadConfig(path string, overrides []string) (Config, error) {
	data, name, onDisk, err := readConfigSource(path)
	if err != nil {
		return Config{}, configErr(err)
	}
	cfg, err := ParseConfig(name, data, overrides)
	if err != nil {
		return cfg, err
	}
	if onDisk && !setsKey(overrides, "data_dir") {
		cfg.DataDir = fileRelative(path, cfg.DataDir)
	}
	return cfg, nil
}

// setsKey reports whether one of the -set arguments sets key.
func setsKey(overrides []string, key string) bool {
	for _, o := range overrides {
		if k, _, ok := strings.Cut(o, "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// fileRelative is dir, a path written in the config file at path, as a
// path from the working directory: relative ones are joined to the file's
// folder; absolute and blank ones are returned as they are.
func fileRelative(path, dir string) string {
	if strings.TrimSpace(dir) == "" || filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(filepath.Dir(path), dir)
}

// ReadConfigSource returns the bytes of the config path: the file at path
// when it exists, else the shipped config it names (package configs), with
// the name to use in messages.
func ReadConfigSource(path string) (data []byte, name string, err error) {
	data, name, _, err = readConfigSource(path)
	return data, name, err
}

// readConfigSource is ReadConfigSource; onDisk reports that the bytes are
// the file at path, not a shipped config.
func readConfigSource(path string) (data []byte, name string, onDisk bool, err error) {
	data, err = readConfigFile(path)
	if err == nil {
		return data, path, true, nil
	}
	if errors.Is(err, errNotConfigFile) {
		return nil, "", false, err
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", false, fmt.Errorf("config: %w", err)
	}
	base, ok := configs.Name(path)
	if !ok {
		return nil, "", false, missingConfig(path)
	}
	data, err = configs.Read(base)
	if err != nil {
		return nil, "", false, fmt.Errorf("config: %w", err)
	}
	return data, base + " (shipped)", false, nil
}

// MaxConfigBytes is the largest config file LoadConfig reads. Configs are
// a few KB (the shipped ones at most 3 KB); 1 MiB leaves room for any
// comments while a mistaken -config (a data file, a log) is refused at
// once instead of being read whole.
const MaxConfigBytes = 1 << 20

// errNotConfigFile marks a path that exists but cannot be a config: not a
// regular file (a device such as /dev/zero, a fifo, a folder) or larger
// than MaxConfigBytes.
var errNotConfigFile = errors.New("not a config file")

// readConfigFile reads the regular file at path, at most MaxConfigBytes of
// it. Anything else is refused before it is opened (a fifo would block,
// /dev/zero never ends), and a longer file is refused after reading one
// byte past the limit: nothing is read without bound.
func readConfigFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notConfigFile(path, fi.Mode())
	}
	tooBig := errkind.Mark(errNotConfigFile, fmt.Errorf("config: %s is larger than 1 MiB (%d bytes), the limit for a config file (configs are a few KB)", path, MaxConfigBytes))
	if fi.Size() > MaxConfigBytes {
		return nil, tooBig
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() { // replaced between Stat and Open
		return nil, notConfigFile(path, fi.Mode())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(data) > MaxConfigBytes {
		return nil, tooBig
	}
	return data, nil
}

func notConfigFile(path string, m fs.FileMode) error {
	return errkind.Mark(errNotConfigFile, fmt.Errorf("config: %s is not a regular file (%s); a config is a YAML file of a few KB", path, filekind.Of(m)))
}

// missingConfig is the error of a config that is neither a file nor a
// shipped config: a path (it holds a folder separator or ends in .yaml or
// .yml) is a file that does not exist; a bare name is not shipped, and the
// shipped names are listed.
func missingConfig(path string) error {
	shipped := strings.Join(configs.Names(), ", ")
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case strings.ContainsAny(path, `/\`):
		return fmt.Errorf("config: the file %s does not exist", path)
	case ext == ".yaml" || ext == ".yml":
		return fmt.Errorf("config: the file %s does not exist, nor is it a shipped config (shipped: %s)", path, shipped)
	}
	return fmt.Errorf("config: no shipped config %q, nor a file of that name (shipped: %s)", path, shipped)
}

// ParseConfig is LoadConfig on bytes; name is used in error messages.
func ParseConfig(name string, data []byte, overrides []string) (Config, error) {
	cfg, err := parseConfig(name, data, overrides)
	return cfg, configErr(err)
}

func parseConfig(name string, data []byte, overrides []string) (Config, error) {
	cfg := Default()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%s: %v", name, cleanYAMLErr(err))
	}
	if err := oneDocument(dec); err != nil {
		return cfg, fmt.Errorf("%s: %w", name, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == 0 {
		// An empty file (or only comments) is refused: it is almost always
		// a mistake (wrong file, truncated copy). "{}" asks for all defaults.
		return cfg, fmt.Errorf("%s: the file is empty (no keys); write {} for all defaults, or start from a shipped config: drknn-train -print-config synthetic", name)
	}
	if root.Kind != yaml.MappingNode {
		return cfg, fmt.Errorf("%s: the top level must be a mapping of keys to values", name)
	}
	// The file's own errors (an unknown key, a section that is not a
	// mapping, a null) are the file's, reported with their lines before any
	// -set touches the tree: never blamed on an unrelated -set argument.
	lines := map[int]string{}
	if err := checkKeys(root, reflect.TypeOf(cfg), "", lines); err != nil {
		return cfg, fmt.Errorf("%s: %w", name, err)
	}
	for _, o := range overrides {
		if err := applyOverride(root, o, reflect.TypeOf(cfg)); err != nil {
			return cfg, fmt.Errorf("%s: -set %q: %w", name, o, err)
		}
	}
	if err := checkKeys(root, reflect.TypeOf(cfg), "", lines); err != nil {
		return cfg, fmt.Errorf("%s: %w", name, err)
	}
	if err := root.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s: %s", name, explainTypeErr(err, lines))
	}
	if cfg.Protocol == ProtocolTransfer {
		cfg.transferDefaults(func(key string) bool { return hasKey(root, key) })
	}
	if cfg.Protocol == ProtocolFit && !hasKey(root, "train.cv_folds") {
		cfg.Train.CVFolds = DefaultFitFolds // an explicit 0 stays: leave-one-out
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s: %s%w", name, setFor(err, overrides), err)
	}
	return cfg, nil
}

// oneDocument reads what follows a config's first YAML document: a
// second document ("---" then keys) would be dropped without a word by
// Decode, so one with any content is an error naming the line of its
// "---". Empty documents (a trailing "---", comments only) are allowed.
func oneDocument(dec *yaml.Decoder) error {
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errors.New(cleanYAMLErr(err))
		}
		if len(doc.Content) == 1 && doc.Content[0].ShortTag() == "!!null" && doc.Content[0].Value == "" {
			continue // nothing but "---" and comments
		}
		return fmt.Errorf("a second YAML document starts at line %d (\"---\"); a config is one document: remove the \"---\" line to merge its keys into the first, or move them to another file", doc.Line)
	}
}

// KeyError is a setting Validate refuses: the key, its value and why.
type KeyError struct {
	Key   string // dotted, as in -set: "train.lr"
	Value any
	Why   string
}

func (e *KeyError) Error() string { return fmt.Sprintf("key %s = %v: %s", e.Key, e.Value, e.Why) }

func badKey(key string, v any, why string) error { return &KeyError{Key: key, Value: v, Why: why} }

// setFor names the -set argument that gave the key an error is about
// (`-set "ways=1": `), or "" when the file gave it or the error names no
// key.
func setFor(err error, overrides []string) string {
	var ke *KeyError
	if !errors.As(err, &ke) {
		return ""
	}
	for i := len(overrides) - 1; i >= 0; i-- { // the last one wins
		if k, _, ok := strings.Cut(overrides[i], "="); ok && strings.TrimSpace(k) == ke.Key {
			return fmt.Sprintf("-set %q: ", overrides[i])
		}
	}
	return ""
}

func cleanYAMLErr(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

// explainTypeErr rewrites yaml.v3's "line N: cannot unmarshal …" into a
// message that names the key at that line.
func explainTypeErr(err error, lines map[int]string) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return cleanYAMLErr(err)
	}
	msg := te.Errors[0]
	var line int
	if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
		if key, ok := lines[line]; ok {
			rest := msg[strings.Index(msg, ":")+1:]
			return fmt.Sprintf("key %s (line %d):%s", key, line, rest)
		}
	}
	if line == 0 {
		// An override has no line; name the first key without a line.
		if key, ok := lines[0]; ok {
			return fmt.Sprintf("key %s: %s", key, msg)
		}
	}
	return msg
}

// checkKeys walks a mapping node against a struct type and reports the
// first key that the struct does not have. It also records, for each line,
// the dotted key whose value starts there (for type-error messages).
func checkKeys(n *yaml.Node, t reflect.Type, prefix string, lines map[int]string) error {
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil
	}
	fields, known := yamlFields(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		ft, ok := fields[k.Value]
		if !ok {
			where := ""
			if k.Line > 0 {
				where = fmt.Sprintf(" (line %d)", k.Line)
			}
			return fmt.Errorf("unknown key %q%s; known keys%s: %s", key, where, atPrefix(prefix), strings.Join(known, ", "))
		}
		if seen[k.Value] {
			if k.Line == 0 { // a -set mapping has no lines
				return fmt.Errorf("key %q given twice", key)
			}
			return fmt.Errorf("key %q given twice (line %d)", key, k.Line)
		}
		seen[k.Value] = true
		if v = seqForScalar(v, ft); v != n.Content[i+1] {
			n.Content[i+1] = v
		}
		lines[v.Line] = key // deeper keys, visited later, win
		if why := valueProblem(v, ft); why != "" {
			if v.Line == 0 {
				return fmt.Errorf("key %s: %s", key, why)
			}
			return fmt.Errorf("key %s (line %d): %s", key, v.Line, why)
		}
		if ft.Kind() == reflect.Struct {
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("key %q (line %d) must be a mapping of keys to values", key, v.Line)
			}
			if err := checkKeys(v, ft, key+".", lines); err != nil {
				return err
			}
		}
	}
	return nil
}

func atPrefix(prefix string) string {
	if prefix == "" {
		return ""
	}
	return " under " + strings.TrimSuffix(prefix, ".")
}

// valueProblem reports, for the value v of a key of type ft, what yaml.v3
// would read without complaint but not as written (else ""):
//
//   - null ("steps:" with no value, "~", "-set train.steps=") for a scalar
//     key: yaml.v3 leaves the field as it was, Default()'s value, not the
//     file's. A list (or map) reads null as empty, and a pointer
//     (transfer.anchor) as not given (automatic); those stay accepted. (A
//     -set with nothing after "=" gives a string key "", applyOverride.)
//   - a number outside YAML's integer syntax for an integer key (4.9, 5.0,
//     1e3, .inf): yaml.v3 truncates 4.9 to 4. 5.0 is refused too: the
//     integer keys take integers as YAML writes them (5, -3, 0x10).
//
// Other wrong types are left to yaml.v3's decoder, whose error names them.
// Elements of a list are checked likewise ("element 2: …"); a mapping is
// checked key by key by checkKeys.
func valueProblem(v *yaml.Node, ft reflect.Type) string {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	null := v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null"
	switch ft.Kind() {
	case reflect.Pointer:
		if null {
			return ""
		}
		return valueProblem(v, ft.Elem())
	case reflect.Slice, reflect.Array:
		if null || v.Kind != yaml.SequenceNode {
			return ""
		}
		for i, e := range v.Content {
			if why := valueProblem(e, ft.Elem()); why != "" {
				return fmt.Sprintf("element %d: %s", i+1, why)
			}
		}
		return ""
	case reflect.Map, reflect.Struct, reflect.Interface:
		return ""
	}
	if null {
		if ft.Kind() == reflect.String {
			return `null (no value); write "" for an empty string, or leave the key out for its default`
		}
		return "null (no value); give a value, or leave the key out for its default"
	}
	if v.Kind != yaml.ScalarNode {
		return ""
	}
	switch ft.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.ShortTag() != "!!float" {
			return "" // an integer, or a type error yaml.v3 reports
		}
		var f float64
		if err := v.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return fmt.Sprintf("%s is not a whole number in YAML's integer syntax; write %d", v.Value, int64(f))
		}
		return fmt.Sprintf("%s is not a whole number", v.Value)
	}
	return ""
}

// seqForScalar returns v as a one-element sequence when the field type ft
// is a slice and v a non-null scalar ("theta: 0.1" reads as [0.1]), else v.
func seqForScalar(v *yaml.Node, ft reflect.Type) *yaml.Node {
	if ft.Kind() != reflect.Slice || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return v
	}
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: v.Line, Column: v.Column, Content: []*yaml.Node{v}}
}

// applyOverride sets key=value in the mapping tree, creating nested
// mappings as needed. The value is parsed as YAML (a scalar or flow
// sequence, or a flow mapping for a section: "train={steps: 5, lr: 0.1}"
// sets those keys of the section and keeps its others, as
// "train.steps=5" and "train.lr=0.1" would — never resetting the rest of
// the section to Default's values). The key is checked against the config type t and the value
// decoded into the key's type here, so an unknown key or a value of the
// wrong type is reported against this -set argument (it has no line in
// the file).
func applyOverride(root *yaml.Node, kv string, t reflect.Type) error {
	eq := strings.IndexByte(kv, '=')
	if eq <= 0 {
		return errors.New("want key=value")
	}
	name := strings.TrimSpace(kv[:eq])
	path := strings.Split(name, ".")
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(kv[eq+1:]), &val); err != nil {
		return fmt.Errorf("value %q: %s", kv[eq+1:], stripLine(cleanYAMLErr(err)))
	}
	var v *yaml.Node
	if val.Kind == yaml.DocumentNode && len(val.Content) == 1 {
		v = val.Content[0]
	} else {
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	}
	zeroLines(v)
	ft := t
	for i, key := range path {
		if key == "" {
			return fmt.Errorf("empty key segment in %q", kv[:eq])
		}
		if ft.Kind() != reflect.Struct {
			return fmt.Errorf("%q is not a mapping", strings.Join(path[:i], "."))
		}
		fields, known := yamlFields(ft)
		f, ok := fields[key]
		if !ok {
			prefix := strings.Join(path[:i], ".")
			if prefix != "" {
				prefix += "."
			}
			return fmt.Errorf("unknown key %q; known keys%s: %s", prefix+key, atPrefix(prefix), strings.Join(known, ", "))
		}
		ft = f
	}
	if ft.Kind() == reflect.Struct && v.Kind != yaml.MappingNode {
		return fmt.Errorf("key %s must be a mapping of keys to values", name)
	}
	if ft.Kind() == reflect.String && strings.TrimSpace(kv[eq+1:]) == "" {
		// "-set model.kind=": nothing after "=" is the empty string for a
		// string key, as a command line reads it (YAML would say null)
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	}
	v = seqForScalar(v, ft)
	if ft.Kind() == reflect.Struct {
		if err := checkKeys(v, ft, name+".", map[int]string{}); err != nil {
			return err
		}
	} else if why := valueProblem(v, ft); why != "" {
		return fmt.Errorf("key %s: %s", name, why)
	}
	if err := v.Decode(reflect.New(ft).Interface()); err != nil {
		return fmt.Errorf("key %s: %s", name, stripLine(cleanYAMLErr(err)))
	}
	n := root
	for i, key := range path {
		var child *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == key {
				child = n.Content[j+1]
				if i == len(path)-1 {
					if ft.Kind() == reflect.Struct && child.Kind == yaml.MappingNode {
						mergeMapping(child, v, ft) // a section: its other keys stay
					} else {
						n.Content[j+1] = v
					}
				}
				break
			}
		}
		if i == len(path)-1 {
			if child == nil {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
			}
			return nil
		}
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, child)
		}
		if child.Kind != yaml.MappingNode {
			return fmt.Errorf("%q is not a mapping", strings.Join(path[:i+1], "."))
		}
		n = child
	}
	return nil
}

// mergeMapping sets the keys of the mapping src (checked against the
// struct type t) in the mapping dst, key by key as a -set of each would: a
// key dst lacks is added, a sub-section present in both is merged the same
// way, any other value (a scalar, a list) replaced whole.
func mergeMapping(dst, src *yaml.Node, t reflect.Type) {
	fields, _ := yamlFields(t)
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		found := false
		for j := 0; j+1 < len(dst.Content); j += 2 {
			if dst.Content[j].Value != k.Value {
				continue
			}
			if ft := fields[k.Value]; ft != nil && ft.Kind() == reflect.Struct && v.Kind == yaml.MappingNode && dst.Content[j+1].Kind == yaml.MappingNode {
				mergeMapping(dst.Content[j+1], v, ft)
			} else {
				dst.Content[j+1] = v
			}
			found = true
			break
		}
		if !found {
			dst.Content = append(dst.Content, k, v)
		}
	}
}

// yamlFields maps the yaml tags of struct type t to their field types and
// lists the tags sorted (the known keys of an error message).
func yamlFields(t reflect.Type) (map[string]reflect.Type, []string) {
	fields := map[string]reflect.Type{}
	var known []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = t.Field(i).Type
		known = append(known, tag)
	}
	sort.Strings(known)
	return fields, known
}

// stripLine drops yaml.v3's "line N: " from a message about a -set value,
// which has no line in any file.
func stripLine(msg string) string {
	for _, part := range []string{"unmarshal errors:\n  ", ""} {
		m := strings.TrimPrefix(msg, part)
		var line int
		if _, err := fmt.Sscanf(m, "line %d:", &line); err == nil {
			m = strings.TrimSpace(m[strings.Index(m, ":")+1:])
			// yaml.v3 lists one error per bad element, a line each
			// ("[A,A]"): the first is enough, and the message stays one line
			if first, _, more := strings.Cut(m, "\n"); more {
				m = strings.TrimSpace(first)
			}
			return m
		}
	}
	return msg
}

func zeroLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		zeroLines(c)
	}
}

// Validate checks that the settings are possible. Errors name the key and
// wrap ErrConfig.
func (c *Config) Validate() error { return configErr(c.validate()) }

func (c *Config) validate() error {
	bad := badKey
	switch c.Dataset {
	case "mnist", "cifar10", "omniglot", "lung-cancer", "covid-ct", "miniimagenet",
		"synthetic-images", "synthetic-gauss", "synthetic-swissroll", "imagefolder", "csv", "npy":
	default:
		return bad("dataset", fmt.Sprintf("%q", c.Dataset), "unknown; want mnist, cifar10, omniglot, lung-cancer, covid-ct, miniimagenet, synthetic-images, synthetic-gauss, synthetic-swissroll, or for your own data imagefolder, csv or npy")
	}
	if datasets.OwnData(c.Dataset) && strings.TrimSpace(c.DataDir) == "" {
		return bad("data_dir", `""`, fmt.Sprintf("dataset %s reads your own files: give the folder (csv: the .csv file) in data_dir", c.Dataset))
	}
	switch c.Protocol {
	case "", ProtocolEpisodes, ProtocolFit, ProtocolTransfer:
	case ProtocolPaperLung:
		if c.Dataset != "lung-cancer" {
			return bad("protocol", c.Protocol, "draws Lung Cancer queries from all rows; dataset is "+c.Dataset)
		}
	default:
		return bad("protocol", fmt.Sprintf("%q", c.Protocol), "unknown; want episodes, fit, paper-lung or transfer")
	}
	if c.Protocol != ProtocolTransfer && (len(c.Data.BaseClasses) > 0 || c.Data.RotateClasses || c.Data.ValClasses != 0 || c.Data.ValFraction != 0 || !reflect.ValueOf(c.Transfer).IsZero()) {
		return bad("protocol", fmt.Sprintf("%q", c.Protocol), "data.base_classes, data.rotate_classes, data.val_classes, data.val_fraction and the transfer section are for protocol transfer")
	}
	fit := c.Protocol == ProtocolFit
	if err := c.validateLimits(); err != nil {
		return err
	}
	if c.Ways < 2 {
		return bad("ways", c.Ways, "need at least 2 classes")
	}
	if c.Shots < 1 {
		return bad("shots", c.Shots, "need at least 1 training sample per class")
	}
	if c.Queries < 1 {
		return bad("queries", c.Queries, "need at least 1 query")
	}
	if c.Repeats < 1 {
		return bad("repeats", c.Repeats, "need at least 1 repeat")
	}
	if c.Workers < 0 {
		return bad("workers", c.Workers, "must be ≥ 0 (0 = all CPUs)")
	}
	if c.Data.Size < 0 {
		return bad("data.size", c.Data.Size, "must be ≥ 0")
	}
	if c.Data.Omniglot != "characters" && c.Data.Omniglot != "alphabets" {
		return bad("data.omniglot", c.Data.Omniglot, "want characters or alphabets")
	}
	if err := c.validateSplit(); err != nil {
		return err
	}
	if c.Data.Label != "" && c.Dataset != "csv" {
		return bad("data.label", fmt.Sprintf("%q", c.Data.Label), "names the label column of a csv data set; dataset is "+c.Dataset)
	}
	switch c.Data.Missing {
	case "", datasets.ImputeError, datasets.ImputeMean, datasets.ImputeMode:
	default:
		return bad("data.missing", fmt.Sprintf("%q", c.Data.Missing), "want error, mean or mode")
	}
	if c.Data.Synthetic < 0 {
		return bad("data.synthetic", c.Data.Synthetic, "must be ≥ 0")
	}
	switch c.Data.Standardize {
	case "", "none", "sample", "channel", "relevance":
	default:
		return bad("data.standardize", fmt.Sprintf("%q", c.Data.Standardize), "want none, sample, channel or relevance")
	}
	if c.Data.OneHot && c.Dataset != "lung-cancer" {
		return bad("data.onehot", c.Data.OneHot, "only the lung-cancer data set has nominal attributes to encode")
	}
	if !(c.Data.LabelNoise >= 0 && c.Data.LabelNoise < 1) {
		return bad("data.label_noise", c.Data.LabelNoise, "a fraction of the support labels: want 0 ≤ rate < 1")
	}
	switch c.Data.Features {
	case "":
	case datasets.FeaturesHistogram:
		if c.Dataset != "covid-ct" {
			return bad("data.features", c.Data.Features, "only covid-ct has histogram features; dataset is "+c.Dataset)
		}
	default:
		return bad("data.features", fmt.Sprintf("%q", c.Data.Features), "want histogram or none")
	}
	switch c.Model.Kind {
	case "", "cnn", "mlp", "conv4":
	case "identity": // no weights: Fit returns the untrained net whatever train.steps says
	default:
		return bad("model.kind", c.Model.Kind, `want cnn, mlp, conv4, identity or "" (images → cnn, feature rows → mlp)`)
	}
	if c.Model.Channels < 1 {
		return bad("model.channels", c.Model.Channels, "must be ≥ 1")
	}
	if c.Model.Hidden < 1 {
		return bad("model.hidden", c.Model.Hidden, "must be ≥ 1")
	}
	if c.Model.Dim < 1 && !(c.Model.Kind == "conv4" && c.Model.Dim == 0) {
		return bad("model.dim", c.Model.Dim, "must be ≥ 1 (conv4: 0 = the flattened body)")
	}
	if c.Model.DType != "float32" && c.Model.DType != "float64" {
		return bad("model.dtype", c.Model.DType, "want float32 or float64")
	}
	if c.Protocol == ProtocolTransfer {
		if err := c.validateTransfer(); err != nil {
			return err
		}
	}
	if err := c.validateDataKeys(); err != nil {
		return err
	}
	t := &c.Train
	if t.Steps < 1 && !(t.Steps == 0 && c.Model.Kind == "identity") {
		return bad("train.steps", t.Steps, "must be ≥ 1 (0 only with model.kind identity, which has nothing to train)")
	}
	if !(t.LR > 0) || math.IsInf(t.LR, 0) {
		return bad("train.lr", t.LR, "must be a positive finite number")
	}
	if t.Minisets < 1 {
		return bad("train.minisets", t.Minisets, "must be ≥ 1")
	}
	if t.MinisetSize != 0 && t.MinisetSize < c.Ways {
		return bad("train.miniset_size", t.MinisetSize, fmt.Sprintf("must hold at least one point per class (ways = %d), or be 0 for all", c.Ways))
	}
	if t.MinisetSize > c.Ways*c.Shots && !fit && c.Protocol != ProtocolTransfer {
		return bad("train.miniset_size", t.MinisetSize, fmt.Sprintf("larger than the %d training samples (ways × shots)", c.Ways*c.Shots))
	}
	if t.Metric != "euclidean" && t.Metric != "sqeuclidean" {
		return bad("train.metric", t.Metric, "want euclidean or sqeuclidean")
	}
	if len(t.Theta) != 1 && len(t.Theta) != c.Ways && !fit { // fit: checked against the data's classes
		return bad("train.theta", t.Theta, fmt.Sprintf("give one radius or one per class (ways = %d)", c.Ways))
	}
	for _, v := range t.Theta {
		if !(v >= 0) || math.IsInf(v, 0) {
			return bad("train.theta", t.Theta, "radii must be finite and ≥ 0")
		}
	}
	for _, v := range t.ThetaGrid {
		if !(v >= 0) || math.IsInf(v, 0) {
			return bad("train.theta_grid", t.ThetaGrid, "radii must be finite and ≥ 0")
		}
	}
	if t.CVFolds < 0 || t.CVFolds == 1 {
		return bad("train.cv_folds", t.CVFolds, "want 0 (leave-one-out) or ≥ 2")
	}
	if !(t.Epsilon > 0) || math.IsInf(t.Epsilon, 0) {
		return bad("train.epsilon", t.Epsilon, "must be a positive finite number")
	}
	if !(t.Tol > 0) || t.Tol >= 1 {
		return bad("train.tol", t.Tol, "must be in (0, 1)")
	}
	if err := solverRange("train.epsilon", t.Epsilon, optlayer.Settings{Epsilon: t.Epsilon}); err != nil {
		return err
	}
	if err := solverRange("train.tol", t.Tol, optlayer.Settings{Tol: t.Tol}); err != nil {
		return err
	}
	if t.CheckpointEvery < 0 {
		return bad("train.checkpoint_every", t.CheckpointEvery, "must be ≥ 0")
	}
	if t.Augment.Shift < 0 || t.Augment.Shift > maxAugmentShift {
		return bad("train.augment.shift", t.Augment.Shift, fmt.Sprintf("must be in 0…%d pixels", maxAugmentShift))
	}
	if (t.Augment.Shift > 0 || t.Augment.Flip) && (c.Model.Kind == "mlp" || c.Model.Kind == "identity") {
		return bad("train.augment", fmt.Sprintf("{shift: %d, flip: %v}", t.Augment.Shift, t.Augment.Flip),
			"augmentation transforms images; model.kind is "+c.Model.Kind)
	}
	e := &c.Eval
	if e.K < 1 {
		return bad("eval.k", e.K, "must be ≥ 1")
	}
	if e.K > c.Ways*c.Shots && !fit { // fit: checked against the training samples
		return bad("eval.k", e.K, fmt.Sprintf("more neighbours than the %d training samples", c.Ways*c.Shots))
	}
	if !(e.Tau >= 0 && e.Tau <= 1) {
		return bad("eval.tau", e.Tau, "must be in [0, 1]")
	}
	if !(e.Bandwidth >= 0) || math.IsInf(e.Bandwidth, 0) {
		return bad("eval.bandwidth", e.Bandwidth, "must be ≥ 0 (0 = median heuristic)")
	}
	if e.LFDBlock < 0 || e.LFDBlock == 1 {
		return bad("eval.lfd_block", e.LFDBlock, "want 0 (always the whole training set) or ≥ 2 points per block")
	}
	if e.FewShotSteps < 0 {
		return bad("eval.fewshot_steps", e.FewShotSteps, "must be ≥ 0 (0 = train.steps)")
	}
	for _, v := range e.ThetaLOO {
		if !(v >= 0) || math.IsInf(v, 0) {
			return bad("eval.theta_loo", e.ThetaLOO, "radii must be finite and ≥ 0")
		}
	}
	if len(e.ThetaLOO) > 0 && len(t.Theta) != 1 {
		return bad("eval.theta_loo", e.ThetaLOO, "chooses one radius for all classes; train.theta has one per class")
	}
	for _, m := range e.Methods {
		if !KnownMethod(m) {
			return bad("eval.methods", m, "unknown method; known: "+strings.Join(knownMethods(), ", "))
		}
		if m == MethodDrKNNLOO && len(e.ThetaLOO) == 0 {
			return bad("eval.methods", m, "needs the candidate radii in eval.theta_loo")
		}
	}
	return nil
}

// Upper bounds of the integer settings (validateLimits). None is reached
// by a real run — the shipped configs and the README use at most 600
// repeats, 3000 steps, 32 mini-sets, 1000 queries, 20 ways and 400
// embedding dimensions —, but each keeps what the setting allocates (a
// result per repeat, a mini-set per step, a loss per step, a weight per
// unit) far from exhausting memory, so an absurd value is one line at
// validation instead of an out-of-memory crash at run time.
const (
	maxRepeats   = 10_000     // the paper's 600 episodes ×16; one result (and one seed) each
	maxSteps     = 10_000_000 // Adam steps (train.steps, eval.fewshot_steps, …): the longest shipped run has 3000; a loss is kept per step
	maxMinisets  = 100_000    // the paper's batch is 32; Trainer.Step allocates one mini-set each
	maxStepRows  = 1_000_000  // train.minisets × points per mini-set: the rows a step embeds and its LFDs' size (paper: 32 × 10)
	maxClasses   = 100_000    // ways: Omniglot, the largest data set, has 1623 classes
	maxPerClass  = 1_000_000  // shots, data.synthetic: samples per class
	maxQueries   = 10_000_000 // queries per episode (fewer if fewer remain)
	maxSize      = 1024       // data.size: a square resize target; 1024² RGB float32 is 12 MB per sample
	maxChannels  = 4096       // model.channels: 64 in the shipped configs
	maxWidth     = 65_536     // model.hidden, model.dim: at most 400 in the shipped configs
	maxNeighbors = 100_000    // eval.k
	maxBlock     = 1_000_000  // eval.lfd_block: a whole block's cost matrix is block² numbers
	maxFolds     = 1_000_000  // train.cv_folds (a fold holds at least one sample per class)
	maxTasks     = 1_000_000  // transfer.val_tasks and episodes per step
)

// validateLimits refuses integer settings above the bounds above, naming
// the key, the value and the range, before anything is allocated.
func (c *Config) validateLimits() error {
	t, tr := &c.Train, &c.Transfer
	for _, f := range []struct {
		key         string
		v, min, max int
		why         string
	}{
		{"repeats", c.Repeats, 1, maxRepeats, "episodes of the run"},
		{"ways", c.Ways, 2, maxClasses, "classes per episode"},
		{"shots", c.Shots, 1, maxPerClass, "training samples per class"},
		{"queries", c.Queries, 1, maxQueries, "queries per episode"},
		{"data.size", c.Data.Size, 0, maxSize, "pixels of the square resize; 0 = the reader's default"},
		{"data.synthetic", c.Data.Synthetic, 0, maxPerClass, "samples per class; 0 = the default"},
		{"data.val_classes", c.Data.ValClasses, 0, maxClasses, "base classes held out"},
		{"model.channels", c.Model.Channels, 1, maxChannels, "convolution channels"},
		{"model.hidden", c.Model.Hidden, 1, maxWidth, "hidden units"},
		{"model.dim", c.Model.Dim, 0, maxWidth, "embedding width"},
		{"train.steps", t.Steps, 0, maxSteps, "Adam steps"},
		{"train.minisets", t.Minisets, 1, maxMinisets, "mini-sets per step"},
		{"train.miniset_size", t.MinisetSize, 0, maxStepRows, "points per mini-set; 0 = all"},
		{"train.cv_folds", t.CVFolds, 0, maxFolds, "0 = leave-one-out"},
		{"train.checkpoint_every", t.CheckpointEvery, 0, maxSteps, "steps between checkpoints; 0 = automatic"},
		{"eval.k", c.Eval.K, 1, maxNeighbors, "neighbours"},
		{"eval.lfd_block", c.Eval.LFDBlock, 0, maxBlock, "points per LFD block; 0 = whole"},
		{"eval.fewshot_steps", c.Eval.FewShotSteps, 0, maxSteps, "Adam steps of the network baselines; 0 = train.steps"},
		{"transfer.ways", tr.Ways, 2, maxClasses, "classes per training episode"},
		{"transfer.shots", tr.Shots, 1, maxPerClass, "supports per class"},
		{"transfer.queries", tr.Queries, 0, maxPerClass, "queries per class"},
		{"transfer.episodes", tr.Episodes, 1, maxTasks, "episodes per step"},
		{"transfer.miniset_ways", tr.MinisetWays, 0, maxClasses, "classes per mini-set"},
		{"transfer.decay_every", tr.DecayEvery, 0, maxSteps, "steps between learning-rate decays"},
		{"transfer.validate_every", tr.ValidateEvery, 0, maxSteps, "steps between validations"},
		{"transfer.val_tasks", tr.ValTasks, 1, maxTasks, "validation tasks"},
		{"transfer.val_ways", tr.ValWays, 2, maxClasses, "classes per validation task"},
		{"transfer.val_shots", tr.ValShots, 1, maxPerClass, "supports per class of a validation task"},
	} {
		if f.key == "data.size" && c.Dataset == "synthetic-images" {
			continue // 8…256, validateDataKeys
		}
		if f.v > f.max {
			return badKey(f.key, f.v, fmt.Sprintf("too large: want %d…%d (%s)", f.min, f.max, f.why))
		}
	}
	// A step embeds train.minisets mini-sets of n′ points and solves an
	// LFD on each: bound their product where n′ is known before the data
	// (protocol episodes: train.miniset_size, or 0 = ways × shots).
	if c.Protocol == "" || c.Protocol == ProtocolEpisodes || c.Protocol == ProtocolPaperLung {
		n := t.MinisetSize
		if n == 0 {
			n = c.Ways * c.Shots
		}
		if n > 0 && t.Minisets > maxStepRows/n {
			return badKey("train.minisets", t.Minisets, fmt.Sprintf("%d mini-sets of %d points (train.miniset_size %d, 0 = ways × shots = %d×%d) are %d points per step; want at most %d: lower train.minisets or train.miniset_size",
				t.Minisets, n, t.MinisetSize, c.Ways, c.Shots, t.Minisets*n, maxStepRows))
		}
	}
	return nil
}

// validateDataKeys refuses a data.* reader setting the data set kind does
// not read (it would be ignored without a word), naming the key and the
// kind, and a data.size outside synthetic-images' range.
func (c *Config) validateDataKeys() error {
	d, kind := &c.Data, c.Dataset
	// data.grey converts colour images; the grey data sets (mnist,
	// omniglot, covid-ct, synthetic-images) already are what it asks for.
	if d.Grey {
		switch kind {
		case "cifar10", "miniimagenet", "imagefolder", "mnist", "omniglot", "covid-ct", "synthetic-images":
		default:
			return badKey("data.grey", d.Grey, "converts colour images to grey (cifar10, miniimagenet, imagefolder); dataset is "+kind)
		}
	}
	if d.Size != 0 {
		switch kind {
		case "imagefolder", "omniglot", "covid-ct", "miniimagenet":
		case "synthetic-images":
			if d.Size < 8 || d.Size > 256 {
				return badKey("data.size", d.Size, "synthetic-images draws 8…256-pixel images (0 = 28)")
			}
		default:
			return badKey("data.size", d.Size, "resizes the images of imagefolder, omniglot, covid-ct, miniimagenet and synthetic-images; dataset is "+kind)
		}
		if kind == "covid-ct" && d.Features == datasets.FeaturesHistogram {
			return badKey("data.size", d.Size, "covid-ct's histogram features are computed at full resolution (data.features histogram)")
		}
	}
	if d.Synthetic != 0 && !datasets.Synthetic(kind) {
		return badKey("data.synthetic", d.Synthetic, "is the samples per class of the synthetic-* data sets; dataset is "+kind)
	}
	if d.Omniglot != "characters" && kind != "omniglot" {
		return badKey("data.omniglot", d.Omniglot, "chooses Omniglot's classes; dataset is "+kind)
	}
	if (d.Missing == datasets.ImputeMean || d.Missing == datasets.ImputeMode) && kind != "csv" {
		return badKey("data.missing", d.Missing, "fills the missing cells of a csv data set; dataset is "+kind)
	}
	return nil
}

// solverRange refuses the value v of key when the LFD solver refuses the
// settings s that carry it (optlayer.Settings.Validate: the solver's own
// supported ranges, e.g. Epsilon ≥ 1e-6), naming the key instead of the
// solver's field.
func solverRange(key string, v float64, s optlayer.Settings) error {
	err := s.Validate()
	if err == nil {
		return nil
	}
	why := strings.TrimPrefix(err.Error(), optlayer.ErrInvalid.Error()+": ")
	if _, rest, ok := strings.Cut(why, " is "); ok && strings.HasPrefix(why, "Settings.") {
		why = rest // "below the supported minimum 1e-6"
	}
	return badKey(key, v, why+" of the LFD solver")
}

// validateSplit checks data.split against the data set.
func (c *Config) validateSplit() error {
	var want []string
	switch c.Dataset {
	case "miniimagenet":
		want = []string{"train", "val", "test"}
	case "mnist":
		want = []string{"test", "train", "all"}
	case "imagefolder":
		want = []string{"train", "test"}
	case "omniglot":
		return nil // a list of sets, checked by the reader
	}
	if c.Data.Split == "" || slices.Contains(want, c.Data.Split) {
		return nil
	}
	if want == nil {
		return fmt.Errorf("key data.split = %s: %s has no parts to choose from (data.split applies to mnist, miniimagenet, omniglot and imagefolder)", c.Data.Split, c.Dataset)
	}
	return fmt.Errorf("key data.split = %s: want %s for %s (or \"\")", c.Data.Split, strings.Join(want, ", "), c.Dataset)
}

// ModelKind is model.kind for samples of the given shape: as configured,
// or when it is "" the CNN for images ([C, H, W]) and the MLP for anything
// else (feature rows).
func (c *Config) ModelKind(shape []int) string {
	if c.Model.Kind != "" {
		return c.Model.Kind
	}
	if len(shape) == 3 {
		return "cnn"
	}
	return "mlp"
}

// NetConfig is the network of the config for samples of the given shape.
func (c *Config) NetConfig(shape []int) model.Config {
	mc := model.Config{Kind: model.Kind(c.ModelKind(shape)), InShape: shape, Dim: c.Model.Dim, DType: model.DType(c.Model.DType)}
	if mc.Kind == model.Identity {
		mc.Dim = 0 // the input is the embedding
		return mc
	}
	if mc.Kind == model.CNN || mc.Kind == model.Conv4 {
		mc.Channels = c.Model.Channels
	} else {
		mc.Hidden = c.Model.Hidden
	}
	return mc
}

// Metric is train.metric as the solver's cost.
func (c *Config) Metric() optlayer.Metric {
	if c.Train.Metric == "sqeuclidean" {
		return optlayer.SqEuclidean
	}
	return optlayer.Euclidean
}

// The protocols (Config.Protocol).
const (
	ProtocolEpisodes = "episodes" // the paper's: M-way K-shot episodes
	ProtocolFit      = "fit"      // one model on every labelled sample (RunFit)
)

// ProtocolPaperLung draws Lung Cancer queries with replacement from all
// rows of the episode's classes, training rows included (Config.Protocol).
const ProtocolPaperLung = "paper-lung"

// MethodDrKNNLOO is Dr.k-NN with the test-time radius chosen by
// leave-one-out on the support set (eval.theta_loo).
const MethodDrKNNLOO = "drknn_loo"

// maxAugmentShift bounds train.augment.shift; the trainer also checks it
// against the image size.
const maxAugmentShift = 16

// Methods returns the methods a run may evaluate when eval.methods is
// empty, in table order: the rows of the paper's Table 1 (Dr.k-NN, then
// drknn_loo — run only with eval.theta_loo —, its variants, the embedding
// and pixel baselines, the few-shot network baselines). Other methods of
// package eval (e.g. nearest_centroid) run only when eval.methods names
// them, so a method added to eval changes no run.
func Methods() []string {
	return []string{eval.MethodDrKNN, MethodDrKNNLOO, eval.MethodDrKNNTruncated, eval.MethodKernelSmoothing, eval.MethodEmbeddingKNN,
		eval.MethodPCAKNN, eval.MethodSVDKNN, eval.MethodNCAKNN,
		eval.MethodMatchingNet, eval.MethodProtoNet, eval.MethodMetaOptNet, eval.MethodMetaOptNetRR}
}

// KnownMethod reports whether m is a method a run can evaluate: eval.New's
// methods, drknn_loo and the few-shot network baselines.
func KnownMethod(m string) bool { return slices.Contains(knownMethods(), m) }

// knownMethods lists them.
func knownMethods() []string {
	return append(append(eval.Methods(), MethodDrKNNLOO), eval.FewShotMethods()...)
}

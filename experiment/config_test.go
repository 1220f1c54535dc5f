package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
)

func TestParseConfigOverrides(t *testing.T) {
	src := "dataset: mnist\nways: 5\nshots: 10\ntrain:\n  steps: 50\n  theta: [0.2]\n"
	cfg, err := ParseConfig("x.yaml", []byte(src), []string{"train.steps=200", "eval.k=3", "seed=7", "train.theta=[0.1,0.2,0.3,0.4,0.5]"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dataset != "mnist" || cfg.Ways != 5 || cfg.Shots != 10 || cfg.Train.Steps != 200 || cfg.Eval.K != 3 || cfg.Seed != 7 {
		t.Fatalf("got %+v", cfg)
	}
	if len(cfg.Train.Theta) != 5 || cfg.Train.Theta[4] != 0.5 {
		t.Fatalf("theta = %v", cfg.Train.Theta)
	}
	if cfg.Protocol != "" {
		t.Fatalf("protocol %q, want empty (episodes) by default", cfg.Protocol)
	}
	if c2, err := ParseConfig("x.yaml", []byte(src), []string{"protocol=episodes"}); err != nil || c2.Protocol != ProtocolEpisodes {
		t.Fatalf("protocol: episodes: %+v, %v", c2.Protocol, err)
	}
	// Keys the file does not set keep their defaults.
	if cfg.Model.Dim != 400 || cfg.Train.LR != 1e-2 {
		t.Fatalf("defaults lost: %+v", cfg)
	}
}

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		src, set, want string
	}{
		{"dataset: mnist\ntrain:\n  stpes: 3\n", "", `unknown key "train.stpes" (line 3)`},
		{"datset: mnist\n", "", `unknown key "datset" (line 1)`},
		{"dataset: mnist\nways: two\n", "", "key ways (line 2)"},
		{"dataset: mnist\ntrain:\n  lr: fast\n", "", "key train.lr (line 3)"},
		{"dataset: mnist\n", "train.steps=abc", "key train.steps"},
		{"dataset: mnist\n", "train.nope=1", `unknown key "train.nope"`},
		{"dataset: mnist\n", "ways", "want key=value"},
		{"dataset: imagenet22k\n", "", "key dataset"},
		{"dataset: mnist\nways: 1\n", "", "key ways = 1"},
		{"dataset: mnist\ntrain:\n  lr: -1\n", "", "key train.lr"},
		{"dataset: mnist\ntrain:\n  lr: .nan\n", "", "key train.lr"},
		{"dataset: mnist\nways: 3\ntrain:\n  theta: [0.1, 0.2]\n", "", "key train.theta"},
		{"dataset: mnist\neval:\n  k: 11\n", "", "key eval.k = 11"},
		{"dataset: mnist\ntrain: 3\n", "", `key "train" (line 2) must be a mapping`},
		{"dataset: mnist\nways: 2\nways: 3\n", "", "ways"},
		{"- a\n- b\n", "", "top level must be a mapping"},
		{"dataset: [unclosed\n", "", "x.yaml"},
		{"dataset: mnist\neval:\n  methods: [drknn, magic]\n", "", "key eval.methods = magic"},
		{"dataset: mnist\nprotocol: fitt\n", "", `key protocol = "fitt"`},
		{"", "", "the file is empty"},
		{"# only a comment\n", "", "the file is empty"},
		{"dataset: mnist\ntrain:\n  steps: 0\n", "", "key train.steps = 0"},
		{"dataset: mnist\n", "train.steps=0", `-set "train.steps=0": key train.steps = 0`},
		{"dataset: mnist\n", "ways=1", `-set "ways=1": key ways = 1`},
		{"dataset: mnist\nmodel: {kind: cnn}\ntrain: {steps: -1}\n", "", "key train.steps = -1"},
		{"dataset: mnist\n", "train.lr=abc", `-set "train.lr=abc": key train.lr: cannot unmarshal`},
		{"dataset: mnist\n", "train.theta=[a]", `-set "train.theta=[a]": key train.theta`},
		{"dataset: mnist\n", "train.nope=1", `-set "train.nope=1": unknown key "train.nope"`},
		{"dataset: mnist\n", "nope=1", `-set "nope=1": unknown key "nope"`},
		{"dataset: mnist\n", "train=3", `-set "train=3": key train must be a mapping`},
		{"dataset: mnist\n", "ways.x=3", `-set "ways.x=3": "ways" is not a mapping`},
		{"dataset: mnist\n", "ways=[", `-set "ways=["`},
		{"dataset: mnist\ntrain:\n  theta: .nan\n", "", "key train.theta"},
		{"dataset: mnist\ntrain:\n  theta: abc\n", "", "key train.theta (line 3)"},
	}
	for _, c := range cases {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		_, err := ParseConfig("x.yaml", []byte(c.src), sets)
		if err == nil {
			t.Errorf("%q %q: no error", c.src, c.set)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "x.yaml: ") || strings.Contains(msg, "\n") || strings.Contains(msg, "line 0") {
			t.Errorf("%q %q: error %q, want one line starting with the file and containing %q", c.src, c.set, msg, c.want)
		}
	}
	// A refused setting is a *KeyError naming the key, whatever its text.
	_, err := ParseConfig("x.yaml", []byte("dataset: mnist\n"), []string{"ways=3", "train.lr=-1"})
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "train.lr" || ke.Value != -1.0 || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `-set "train.lr=-1": key train.lr = -1`) {
		t.Fatalf("error %v (%+v), want a KeyError for train.lr naming its -set", err, ke)
	}
}

// TestConfigAcceptsScalarRadius: a list key given one value (theta: 0.1)
// reads as that one-element list, in the file and in -set; train.steps 0
// is accepted with model.kind identity; {} is all defaults.
func TestConfigAcceptsScalarRadius(t *testing.T) {
	for _, c := range []struct{ src, set string }{
		{"dataset: mnist\ntrain:\n  theta: 0.1\n", ""},
		{"dataset: mnist\ntrain:\n  theta: [0.1]\n", ""},
		{"dataset: mnist\n", "train.theta=0.1"},
		{"dataset: mnist\n", "train.theta=[0.1]"},
	} {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		cfg, err := ParseConfig("x.yaml", []byte(c.src), sets)
		if err != nil || !slices.Equal(cfg.Train.Theta, []float64{0.1}) {
			t.Errorf("%q %q: theta %v, err %v", c.src, c.set, cfg.Train.Theta, err)
		}
	}
	cfg, err := ParseConfig("x.yaml", []byte("dataset: mnist\neval:\n  methods: drknn\n  theta_loo: 0.2\n"), []string{"train.theta_grid=0.3"})
	if err != nil || !slices.Equal(cfg.Eval.Methods, []string{"drknn"}) || !slices.Equal(cfg.Eval.ThetaLOO, []float64{0.2}) || !slices.Equal(cfg.Train.ThetaGrid, []float64{0.3}) {
		t.Errorf("scalar lists: %+v %+v, err %v", cfg.Eval, cfg.Train.ThetaGrid, err)
	}
	if _, err := ParseConfig("x.yaml", []byte("dataset: mnist\nmodel: {kind: identity}\ntrain: {steps: 0}\n"), nil); err != nil {
		t.Errorf("identity with 0 steps: %v", err)
	}
	if cfg, err := ParseConfig("x.yaml", []byte("{}\n"), nil); err != nil || cfg.Dataset != Default().Dataset {
		t.Errorf("{}: %v", err)
	}
}

func TestShippedConfigsAreValid(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 7 {
		t.Fatalf("want one config per experiment (≥ 7), found %d", len(files))
	}
	for _, f := range files {
		cfg, err := LoadConfig(f, nil)
		if err != nil && strings.Contains(err.Error(), "key data_dir") {
			// A template for your own data: valid once data_dir is given.
			if cfg, err = LoadConfig(f, []string{"data_dir=/your/data"}); err == nil && !datasets.OwnData(cfg.Dataset) {
				t.Errorf("%s: needs data_dir but reads %s", f, cfg.Dataset)
			}
		}
		if err != nil {
			t.Error(err)
		}
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("err = %v", err)
	}
	_ = os.ErrNotExist
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("dataset: mnist\nways: 2\n"), "train.steps=3")
	f.Add([]byte("train:\n  theta: [0.1]\n"), "eval.k=1")
	f.Add([]byte("{"), "a.b.c=[")
	f.Add([]byte("dataset: cifar10\ntrain:\n  augment: {shift: 2, flip: true}\n"), "data.standardize=channel")
	f.Add([]byte("dataset: lung-cancer\nways: 3\nmodel: {kind: mlp}\n"), "data.onehot=true")
	f.Add([]byte("protocol: episodes\n"), "protocol=fit")
	f.Add([]byte("dataset: lung-cancer\nways: 3\nprotocol: paper-lung\nmodel: {kind: identity}\ntrain: {steps: 0}\n"), "eval.theta_loo=[0,0.1]")
	f.Add([]byte("dataset: covid-ct\ndata: {features: histogram, label_noise: 0.3}\n"), "eval.methods=[drknn_loo]")
	f.Add([]byte(""), "train.steps=3")
	f.Add([]byte("# nothing\n"), "")
	f.Add([]byte("{}"), "train.steps=0")
	f.Add([]byte("train:\n  theta: 0.1\n"), "train.theta=0.2")
	f.Add([]byte("model: {kind: identity}\ntrain: {steps: 0}\n"), "train.theta_grid=0.1")
	f.Add([]byte("dataset: mnist\n"), "train.lr=abc")
	f.Add([]byte("dataset: mnist\n"), "train.nope.x=1")
	f.Add([]byte("dataset: mnist\n"), "eval=1")
	f.Add([]byte("train:\n  lr: 0.05\n  augment: {shift: 1}\n"), "train={steps: 3, augment: {flip: true}}")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		cfg, err := ParseConfig("f.yaml", data, []string{set})
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("accepted an invalid config: %v", verr)
			}
		} else if strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	})
}

func TestParseConfigAugmentAndStandardize(t *testing.T) {
	src := "dataset: cifar10\ntrain:\n  augment: {shift: 2, flip: true}\ndata:\n  standardize: channel\n"
	cfg, err := ParseConfig("x.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Train.Augment != (Augment{Shift: 2, Flip: true}) || cfg.Data.Standardize != "channel" {
		t.Fatalf("augment %+v standardize %q", cfg.Train.Augment, cfg.Data.Standardize)
	}
	cfg, err = ParseConfig("x.yaml", []byte("dataset: lung-cancer\nways: 3\nmodel:\n  kind: mlp\n"), []string{"data.onehot=true", "data.standardize=sample"})
	if err != nil || !cfg.Data.OneHot || cfg.Data.Standardize != "sample" {
		t.Fatalf("onehot: %+v, %v", cfg.Data, err)
	}
	if d := Default(); d.Train.Augment != (Augment{}) || d.Data.Standardize != "" || d.Data.OneHot {
		t.Fatalf("defaults must be off: %+v %+v", d.Train.Augment, d.Data)
	}
	bad := []struct{ src, set, want string }{
		{"dataset: mnist\n", "train.augment.shift=-1", "key train.augment.shift = -1"},
		{"dataset: mnist\n", "train.augment.shift=17", "key train.augment.shift = 17"},
		{"dataset: mnist\n", "train.augment.flip=maybe", "key train.augment.flip"},
		{"dataset: mnist\ntrain:\n  augment:\n    shfit: 2\n", "", `unknown key "train.augment.shfit" (line 4)`},
		{"dataset: mnist\ntrain:\n  augment: 2\n", "", `key "train.augment" (line 3) must be a mapping`},
		{"dataset: lung-cancer\nways: 3\nmodel:\n  kind: mlp\n", "train.augment.flip=true", "key train.augment = {shift: 0, flip: true}"},
		{"dataset: cifar10\n", "data.standardize=global", `key data.standardize = "global"`},
		{"dataset: mnist\n", "data.onehot=true", "key data.onehot"},
	}
	for _, c := range bad {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		_, err := ParseConfig("x.yaml", []byte(c.src), sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x.yaml: ") {
			t.Errorf("%q %q: error %v, want one containing %q", c.src, c.set, err, c.want)
		}
	}
}

// Your own data: data_dir is required (an empty one must not become the
// shared data root), data.label/missing/split are checked against the data
// set, and model.kind "" is chosen by the samples' shape.
func TestParseConfigOwnData(t *testing.T) {
	for _, src := range []string{
		"dataset: imagefolder\ndata_dir: /x\nprotocol: fit\ndata: {grey: true, size: 32, split: test}\n",
		"dataset: csv\ndata_dir: t.csv\ndata: {label: species, missing: mean}\n",
		"dataset: npy\ndata_dir: /x\nmodel: {kind: mlp}\n",
		"dataset: mnist\ndata: {split: all}\n",
		"dataset: miniimagenet\ndata: {split: val}\n",
	} {
		if _, err := ParseConfig("x.yaml", []byte(src), nil); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	bad := []struct{ src, want string }{
		{"dataset: imagefolder\n", "key data_dir"},
		{"dataset: csv\ndata_dir: '  '\n", "key data_dir"},
		{"dataset: npy\ndata_dir: \"\"\n", "key data_dir"},
		{"dataset: csv\ndata_dir: t.csv\ndata: {missing: median}\n", `key data.missing = "median"`},
		{"dataset: mnist\ndata: {label: y}\n", `key data.label = "y"`},
		{"dataset: imagefolder\ndata_dir: /x\ndata: {split: val}\n", "key data.split = val: want train, test for imagefolder"},
		{"dataset: mnist\ndata: {split: val}\n", "key data.split = val: want test, train, all for mnist"},
		{"dataset: cifar10\ndata: {split: test}\n", "key data.split = test: cifar10 has no parts"},
		{"dataset: csv\ndata_dir: t.csv\nmodel: {kind: resnet}\n", "key model.kind = resnet"},
	}
	for _, c := range bad {
		_, err := ParseConfig("x.yaml", []byte(c.src), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x.yaml: ") {
			t.Errorf("%q: error %v, want one containing %q", c.src, err, c.want)
		}
	}
	cfg := Default()
	if cfg.Model.Kind != "" {
		t.Fatalf("default model.kind %q, want \"\" (chosen by the data)", cfg.Model.Kind)
	}
	if k := cfg.ModelKind([]int{3, 8, 8}); k != "cnn" {
		t.Errorf("images → %s, want cnn", k)
	}
	if k := cfg.ModelKind([]int{5}); k != "mlp" {
		t.Errorf("feature rows → %s, want mlp", k)
	}
	cfg.Model.Kind = "mlp"
	if k := cfg.ModelKind([]int{3, 8, 8}); k != "mlp" {
		t.Errorf("model.kind mlp on images → %s, want mlp (configured kinds win)", k)
	}
	// LoadData refuses an own data kind without data_dir even when the
	// config was not validated (a Config built in code).
	c := Default()
	c.Dataset = "imagefolder"
	if _, err := LoadData(c); err == nil || !strings.Contains(err.Error(), "data_dir") {
		t.Fatalf("LoadData without data_dir: %v", err)
	}
}

// TestMethods: the default methods are the paper's table rows, all known
// to eval; other eval methods are accepted in eval.methods but never run
// by default, so adding a method to eval changes no run.
func TestMethods(t *testing.T) {
	if len(Methods()) != 12 || Methods()[0] != "drknn" || Methods()[11] != "metaoptnet_rr" {
		t.Fatalf("Methods() = %v", Methods())
	}
	for _, m := range Methods() {
		if !KnownMethod(m) {
			t.Errorf("default method %q unknown to eval", m)
		}
	}
	for _, m := range eval.Methods() {
		if _, err := ParseConfig("x.yaml", []byte("dataset: mnist\n"), []string{"eval.methods=[" + m + "]"}); err != nil {
			t.Errorf("eval method %q refused: %v", m, err)
		}
	}
	cfg := Default()
	if got := cfg.methods(); len(got) != 11 || slices.Contains(got, MethodDrKNNLOO) || slices.Contains(got, "nearest_centroid") {
		t.Fatalf("default run evaluates %v", got)
	}
}

// mustParseConfig is ParseConfig of the YAML src named name with the -set
// arguments sets; a parse error fails the test.
func mustParseConfig(t *testing.T, name, src string, sets ...string) Config {
	t.Helper()
	cfg, err := ParseConfig(name, []byte(src), sets)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestConfigRefusesNonIntegerAndNull: yaml.v3 truncates a decimal given
// for an integer key (shots: 5.9 read as 5) and leaves a key given null as
// it was (Default()'s value, not the file's); both are refused with one
// line naming the key and the value, in the file and in -set. Lists (and
// transfer.anchor, a pointer: automatic) keep reading null as empty.
func TestConfigRefusesNonIntegerAndNull(t *testing.T) {
	cases := []struct{ src, set, want string }{
		{"dataset: mnist\nshots: 5.9\n", "", "x.yaml: key shots (line 2): 5.9 is not a whole number"},
		{"dataset: mnist\n", "shots=4.9", `x.yaml: -set "shots=4.9": key shots: 4.9 is not a whole number`},
		{"dataset: mnist\nseed: 7.5\n", "", "x.yaml: key seed (line 2): 7.5 is not a whole number"},
		{"dataset: mnist\nworkers: -0.5\n", "", "x.yaml: key workers (line 2): -0.5 is not a whole number"},
		{"dataset: mnist\ntrain:\n  augment:\n    shift: 2.9\n", "", "x.yaml: key train.augment.shift (line 4): 2.9 is not a whole number"},
		{"dataset: mnist\n", "train.augment.shift=2.9", `x.yaml: -set "train.augment.shift=2.9": key train.augment.shift: 2.9 is not a whole number`},
		{"dataset: mnist\n", "train.augment={shift: 2.9}", `x.yaml: -set "train.augment={shift: 2.9}": key train.augment.shift: 2.9 is not a whole number`},
		{"dataset: mnist\nshots: 5.0\n", "", "x.yaml: key shots (line 2): 5.0 is not a whole number in YAML's integer syntax; write 5"},
		{"dataset: mnist\n", "train.steps=1e3", `x.yaml: -set "train.steps=1e3": key train.steps: 1e3 is not a whole number in YAML's integer syntax; write 1000`},
		{"dataset: mnist\nshots: .inf\n", "", "x.yaml: key shots (line 2): .inf is not a whole number"},
		{"dataset: omniglot\nprotocol: transfer\ndata:\n  val_classes: 1.5\n", "", "x.yaml: key data.val_classes (line 4): 1.5 is not a whole number"},
		{"dataset: mnist\ntrain:\n  steps:\n", "", "x.yaml: key train.steps (line 3): null (no value); give a value, or leave the key out for its default"},
		{"dataset: mnist\ntrain:\n  steps: 50\n", "train.steps=~", `x.yaml: -set "train.steps=~": key train.steps: null (no value); give a value, or leave the key out for its default`},
		{"dataset: mnist\n", "train.steps=", `x.yaml: -set "train.steps=": key train.steps: null (no value)`},
		{"dataset: mnist\ntrain:\n  lr: null\n", "", "x.yaml: key train.lr (line 3): null (no value)"},
		{"dataset: mnist\ndata:\n  grey: ~\n", "", "x.yaml: key data.grey (line 3): null (no value)"},
		{"dataset: mnist\ndata_dir:\n", "", `x.yaml: key data_dir (line 2): null (no value); write "" for an empty string`},
		{"dataset: mnist\n", "data.split=~", `x.yaml: -set "data.split=~": key data.split: null (no value); write "" for an empty string`},
		{"dataset: mnist\ndata:\n  split: train\n", "data.split=null", `x.yaml: -set "data.split=null": key data.split: null (no value)`},
		{"dataset: mnist\ntrain:\n  theta: [0.1, ~]\n", "", "x.yaml: key train.theta (line 3): element 2: null (no value)"},
		{"dataset: omniglot\nprotocol: transfer\ndata: {val_classes: 5}\ntransfer:\n  ways: 2.5\n", "", "x.yaml: key transfer.ways (line 5): 2.5 is not a whole number"},
	}
	for _, c := range cases {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		_, err := ParseConfig("x.yaml", []byte(c.src), sets)
		if err == nil || !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %q: error %v, want one line starting %q", c.src, c.set, err, c.want)
		}
	}
	// Whole numbers in YAML's integer syntax still read; null lists are empty.
	cfg, err := ParseConfig("x.yaml", []byte("dataset: mnist\nshots: 6\nseed: -3\ntrain:\n  steps: 0x10\n  theta_grid: ~\neval:\n  methods:\n"),
		[]string{"workers=+2", "eval.theta_loo=", "train.augment.shift=3"})
	if err != nil || cfg.Shots != 6 || cfg.Seed != -3 || cfg.Train.Steps != 16 || cfg.Workers != 2 || cfg.Train.Augment.Shift != 3 ||
		cfg.Train.ThetaGrid != nil || cfg.Eval.Methods != nil || cfg.Eval.ThetaLOO != nil {
		t.Fatalf("whole numbers and null lists: %+v, %v", cfg, err)
	}
	// -set with nothing after "=" is "" for a string key (the file's
	// value replaced, not Default()'s restored).
	cfg, err = ParseConfig("x.yaml", []byte("dataset: mnist\ndata:\n  split: train\nmodel:\n  kind: cnn\n"), []string{"data.split=", "model.kind= "})
	if err != nil || cfg.Data.Split != "" || cfg.Model.Kind != "" {
		t.Fatalf("-set key= for strings: split %q kind %q, %v", cfg.Data.Split, cfg.Model.Kind, err)
	}
	// transfer.anchor: ~ is automatic (as if not given): proto_net is
	// among the methods, so the anchor is trained.
	cfg, err = ParseConfig("x.yaml", []byte("dataset: omniglot\nprotocol: transfer\ndata: {val_classes: 5}\nmodel: {kind: conv4}\ntransfer:\n  anchor: ~\n"), nil)
	if err != nil || cfg.Transfer.Anchor == nil || !*cfg.Transfer.Anchor {
		t.Fatalf("anchor ~: %+v, %v", cfg.Transfer, err)
	}
}

// TestLoadConfigDataDirRelativeToFile: a relative data_dir in a config
// file is relative to the file's folder, whatever the working directory;
// -set data_dir stays relative to the working directory; absolute and
// empty ones, and shipped configs, are unchanged.
func TestLoadConfigDataDirRelativeToFile(t *testing.T) {
	root := t.TempDir()
	cfgDir := filepath.Join(root, "project", "cfg")
	if err := os.MkdirAll(filepath.Join(cfgDir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	csv := "x,y,label\n0,0,a\n0,1,a\n1,0,a\n5,5,b\n5,6,b\n6,5,b\n"
	if err := os.WriteFile(filepath.Join(cfgDir, "data", "t.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(cfgDir, "x.yaml")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("dataset: csv\ndata_dir: data/t.csv\nshots: 1\nqueries: 1\neval: {k: 1}\n")
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)

	cfg, err := LoadConfig(file, nil)
	if want := filepath.Join(cfgDir, "data", "t.csv"); err != nil || cfg.DataDir != want {
		t.Fatalf("data_dir %q, %v; want %q (relative to the config file)", cfg.DataDir, err, want)
	}
	if ds, err := LoadData(cfg); err != nil || ds.Len() != 6 || len(ds.ClassCounts()) != 2 {
		t.Fatalf("LoadData from another directory: %v", err)
	}
	// A relative config path: the result is relative to the working
	// directory, through the file's folder.
	t.Chdir(root)
	if cfg, err := LoadConfig(filepath.Join("project", "cfg", "x.yaml"), nil); err != nil || cfg.DataDir != filepath.Join("project", "cfg", "data", "t.csv") {
		t.Fatalf("relative config path: data_dir %q, %v", cfg.DataDir, err)
	}
	t.Chdir(elsewhere)
	write("dataset: csv\ndata_dir: ../cfg/data/../data/t.csv\n")
	if cfg, err := LoadConfig(file, nil); err != nil || cfg.DataDir != filepath.Join(cfgDir, "data", "t.csv") {
		t.Fatalf("data_dir with ..: %q, %v", cfg.DataDir, err)
	}
	// -set data_dir is a command-line path: relative to the working directory.
	if cfg, err := LoadConfig(file, []string{"data_dir=mine.csv"}); err != nil || cfg.DataDir != "mine.csv" {
		t.Fatalf("-set data_dir: %q, %v", cfg.DataDir, err)
	}
	if cfg, err := LoadConfig(file, []string{" data_dir =mine.csv"}); err != nil || cfg.DataDir != "mine.csv" {
		t.Fatalf("-set ' data_dir ': %q, %v", cfg.DataDir, err)
	}
	abs := filepath.Join(root, "abs.csv")
	write("dataset: csv\ndata_dir: " + abs + "\n")
	if cfg, err := LoadConfig(file, nil); err != nil || cfg.DataDir != abs {
		t.Fatalf("absolute data_dir: %q, %v", cfg.DataDir, err)
	}
	write("dataset: mnist\ndata_dir: \"\"\n")
	if cfg, err := LoadConfig(file, nil); err != nil || cfg.DataDir != "" {
		t.Fatalf(`data_dir "": %q, %v (want "" = the data root's sub-folder)`, cfg.DataDir, err)
	}
	// ParseConfig (bytes, no file) and shipped configs never rewrite it.
	if cfg := mustParseConfig(t, "x.yaml", "dataset: csv\ndata_dir: data/t.csv\n"); cfg.DataDir != "data/t.csv" {
		t.Fatalf("ParseConfig: data_dir %q", cfg.DataDir)
	}
	for _, name := range []string{"mnist.yaml", "fit-csv"} {
		cfg, err := LoadConfig(name, []string{"data_dir=rel/t.csv"})
		if err != nil || cfg.DataDir != "rel/t.csv" {
			t.Fatalf("shipped %s: data_dir %q, %v", name, cfg.DataDir, err)
		}
		if cfg, err := LoadConfig(name, nil); name == "mnist.yaml" && (err != nil || cfg.DataDir != "") {
			t.Fatalf("shipped %s: data_dir %q, %v", name, cfg.DataDir, err)
		}
	}
}

// A -set of a whole section (-set 'train={…}') sets the keys it gives and
// keeps the section's others as the file (or Default) has them, exactly as
// the same keys given one by one (-set train.lr=…) do: nested sections
// merge too; a list is a value, replaced whole.
func TestSetWholeSectionMerges(t *testing.T) {
	src := "dataset: mnist\ntrain:\n  steps: 7\n  lr: 0.05\n  theta: [0.1, 0.3]\n  augment: {shift: 2}\neval:\n  k: 3\n"
	cases := []struct {
		whole []string // whole-section -set arguments
		keys  []string // the same settings key by key
	}{
		{[]string{"train={minisets: 3}"}, []string{"train.minisets=3"}},
		{[]string{"train={augment: {flip: true}, theta: [0.2]}"}, []string{"train.augment.flip=true", "train.theta=[0.2]"}},
		{[]string{"train={}"}, nil},
		{[]string{"train={steps: 9}", "train={lr: 0.2}"}, []string{"train.steps=9", "train.lr=0.2"}},
		{[]string{"eval={tau: 0.5}", "data={grey: true}"}, []string{"eval.tau=0.5", "data.grey=true"}},
	}
	for _, c := range cases {
		whole, err := ParseConfig("x.yaml", []byte(src), c.whole)
		if err != nil {
			t.Fatalf("%q: %v", c.whole, err)
		}
		keys, err := ParseConfig("x.yaml", []byte(src), c.keys)
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		if diff := configDiff(whole, keys); diff != "" {
			t.Errorf("-set %q differs from -set %q: %s", c.whole, c.keys, diff)
		}
	}
	cfg, err := ParseConfig("x.yaml", []byte(src), []string{"train={augment: {flip: true}, theta: [0.2]}"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Train.Steps != 7 || cfg.Train.LR != 0.05 || cfg.Train.Augment != (Augment{Shift: 2, Flip: true}) ||
		!slices.Equal(cfg.Train.Theta, []float64{0.2}) || cfg.Eval.K != 3 || cfg.Train.Minisets != Default().Train.Minisets {
		t.Fatalf("train %+v eval.k %d: want the file's steps 7, lr 0.05, augment.shift 2 kept beside flip and theta [0.2]", cfg.Train, cfg.Eval.K)
	}
	// A key of the section that does not exist is still named.
	if _, err := ParseConfig("x.yaml", []byte(src), []string{"train={stpes: 3}"}); err == nil || !strings.Contains(err.Error(), `unknown key "train.stpes"`) {
		t.Fatalf("-set train={stpes: 3}: %v", err)
	}
}

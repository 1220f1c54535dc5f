package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
	"github.com/drknn/drknn/train"
)

// transferYAML is a small transfer experiment on the built-in synthetic
// images: shapes 0…5 are base classes, 6…9 novel; validation on a fifth
// of every base class's samples.
const transferYAML = `
protocol: transfer
dataset: synthetic-images
ways: 3
shots: 2
queries: 5
repeats: 12
seed: 3
data:
  synthetic: 30
  base_classes: ["0", "1", "2", "3", "4", "5"]
  val_fraction: 0.2
model:
  kind: conv4
  channels: 6
  dim: 0
  dtype: float32
train:
  steps: 12
  lr: 0.003
  minisets: 2
  miniset_size: 8
  theta: [0.5]
  checkpoint_every: 0
transfer:
  ways: 3
  shots: 2
  queries: 2
  episodes: 2
  decay_every: 6
  validate_every: 4
  val_tasks: 6
  val_ways: 3
  val_shots: 1
  theta: [0.1]
`

func transferConfig(t *testing.T, sets ...string) Config {
	t.Helper()
	return mustParseConfig(t, "transfer.yaml", transferYAML, sets...)
}

func transferData(t *testing.T, cfg Config) *datasets.Dataset {
	t.Helper()
	d, err := LoadTransferData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTransferConfigDefaultsAndErrors(t *testing.T) {
	cfg := transferConfig(t)
	if cfg.Repeats != 12 || cfg.Queries != 5 || *cfg.Transfer.Anchor != true || cfg.Transfer.DecayFactor != 0.5 {
		t.Fatalf("repeats %d queries %d anchor %v decay %v", cfg.Repeats, cfg.Queries, *cfg.Transfer.Anchor, cfg.Transfer.DecayFactor)
	}
	// Keys the transfer section leaves out take their defaults.
	cfg = mustParseConfig(t, "t.yaml", "protocol: transfer\ndataset: mnist\nways: 5\nmodel: {kind: conv4, dim: 0}\n"+
		"data: {base_classes: [\"0\", \"1\"], val_fraction: 0.1}\ntrain: {theta: [0.5]}\ntransfer: {val_ways: 2}\n")
	if tr := cfg.Transfer; tr.Ways != 20 || tr.Shots != 5 || tr.Queries != 5 || tr.Episodes != 1 || tr.ValTasks != 200 || tr.ValWays != 2 ||
		tr.ValShots != 1 || tr.DecayFactor != 0.5 {
		t.Fatalf("transfer defaults: %+v", tr)
	}
	// Without repeats and queries in the file: 600 tasks of 15 queries per class.
	y := strings.Replace(strings.Replace(transferYAML, "repeats: 12\n", "", 1), "queries: 5\n", "", 1)
	cfg = mustParseConfig(t, "t.yaml", y)
	if cfg.Repeats != DefaultTransferRepeats || cfg.Queries != DefaultTransferQueries {
		t.Fatalf("defaults: repeats %d queries %d", cfg.Repeats, cfg.Queries)
	}
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"data.base_classes=[]"}, "data.base_classes"},
		{[]string{"data.val_classes=2"}, "exactly one of data.val_classes"},
		{[]string{"data.val_fraction=0"}, "exactly one of data.val_classes"},
		{[]string{"dataset=omniglot"}, "standard split"},
		{[]string{"train.theta=[0.1,0.2,0.3]"}, "one radius"},
		{[]string{"transfer.theta=[0.1,0.2]"}, "transfer.theta"},
		{[]string{"train.miniset_size=2"}, "train.miniset_size"},
		{[]string{"eval.methods=[pca_knn]"}, "eval.methods"},
		{[]string{"transfer.anchor=false", "eval.methods=[drknn,proto_net]"}, "transfer.anchor"},
		{[]string{"transfer.queries=-1"}, "transfer.queries"},
		{[]string{"model.kind=mlp", "model.dim=8"}, "model.kind"},
		{[]string{"protocol=episodes"}, "for protocol transfer"},
		{[]string{"transfer.decay_factor=1.5"}, "transfer.decay_factor"},
		{[]string{"data.standardize=relevance"}, "does not standardise"},
		{[]string{"transfer.miniset_ways=1"}, "transfer.miniset_ways"},
		{[]string{"transfer.miniset_ways=4"}, "transfer.miniset_ways"},
		{[]string{"transfer.miniset_ways=2", "train.miniset_size=9"}, "train.miniset_size"},
		// An explicit 0 is refused, not replaced by the default.
		{[]string{"transfer.decay_factor=0"}, "key transfer.decay_factor = 0: must be in (0, 1]"},
		{[]string{"transfer.episodes=0"}, "key transfer.episodes = 0: must be ≥ 1"},
		{[]string{"transfer={ways: 0}"}, "key transfer.ways = 0"},
		{[]string{"transfer.shots=0"}, "key transfer.shots = 0"},
		{[]string{"transfer.val_tasks=0"}, "key transfer.val_tasks = 0"},
		{[]string{"transfer.val_shots=0"}, "key transfer.val_shots = 0"},
		{[]string{"transfer.val_ways=0"}, "key transfer.val_ways = 0"},
		{[]string{"transfer.val_ways=1"}, "key transfer.val_ways = 1: validation tasks need at least 2 classes"},
		{[]string{"transfer.queries=0"}, "key transfer.queries = 0"},
	} {
		_, err := ParseConfig("t.yaml", []byte(transferYAML), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrConfig) {
			t.Errorf("%v: error %v, want one naming %q", c.sets, err, c.want)
		}
	}
}

// TestTransferMinisetWays: transfer.miniset_ways reaches Dr.k-NN's
// mini-sets only (the anchor's settings, and so its episodes, are those of
// the full episode), and the training key names it only when it is set, so
// the keys of trainings from before the setting stay valid.
func TestTransferMinisetWays(t *testing.T) {
	cfg := transferConfig(t, "transfer.miniset_ways=2")
	if s := cfg.EpisodicSettings(train.ObjectiveDrKNN); s.MinisetWays != 2 || s.Ways != 3 {
		t.Fatalf("drknn settings: miniset ways %d, ways %d", s.MinisetWays, s.Ways)
	}
	if s := cfg.EpisodicSettings(train.ObjectiveProto); s.MinisetWays != 0 || s.Ways != 3 {
		t.Fatalf("anchor settings: miniset ways %d, ways %d", s.MinisetWays, s.Ways)
	}
	if k := transferConfig(t).Transfer.key(); strings.Contains(k, "miniset") {
		t.Fatalf("key without the setting names it: %q", k)
	}
	if k := cfg.Transfer.key(); !strings.Contains(k, "miniset ways 2") {
		t.Fatalf("key %q does not name miniset ways 2", k)
	}
}

// TestTransferSaturatedRiskWarning: with a radius that lets the adversary
// spread every class over all the points (ϑ = 5 × the mean cost) the risk
// is M − 1 at every step and the training says so once; at the config's
// ϑ = 0.5 it does not.
func TestTransferSaturatedRiskWarning(t *testing.T) {
	for _, c := range []struct {
		theta string
		warn  bool
	}{{"train.theta=[5]", true}, {"train.theta=[0.5]", false}} {
		cfg := transferConfig(t, c.theta, fmt.Sprintf("train.steps=%d", SaturatedRiskSteps+2), "transfer.validate_every=0")
		d := transferData(t, cfg)
		split, err := TransferSplitOf(cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		var warnings int
		_, rec, err := TrainEmbedding(t.Context(), cfg, d, split, train.ObjectiveDrKNN, EmbeddingOptions{Observer: func(e Event) {
			if m, ok := e.(Message); ok && strings.Contains(m.Text, "largest value") {
				warnings++
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1}[c.warn]; warnings != want {
			t.Errorf("%s: %d warnings, want %d (loss %v → %v)", c.theta, warnings, want, rec.FirstLoss, rec.FinalLoss)
		}
	}
}

// TestTransferEndToEnd: a small transfer run trains the Dr.k-NN embedding
// and the anchor on the base classes, evaluates every method on the same
// novel tasks, records every task's samples (novel classes only, indices
// into the natural order) and exports an embedding that reproduces the
// run's Dr.k-NN accuracy through predict. (Accuracy above chance is
// TestTransferMNIST's: a dozen steps on six synthetic shapes do not
// transfer to four others.)
func TestTransferEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := transferConfig(t)
	var steps, vals, units, tasks, announced int
	res, err := Run(t.Context(), cfg, Options{OutDir: dir, Observer: func(e Event) {
		switch e := e.(type) {
		case Started:
			announced = e.Evaluations() * len(e.Methods)
		case TransferStep:
			steps++
		case Validated:
			vals++
		case UnitDone:
			units++
		case RepeatDone:
			tasks++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if steps != 2*cfg.Train.Steps || vals != 2*3 {
		t.Fatalf("%d step events, %d validations; want %d and 6", steps, vals, 2*cfg.Train.Steps)
	}
	// The progress bar's evaluation work: one unit per method and task,
	// announced up front and reported as it is done.
	if want := cfg.Repeats * len(TransferMethods()); units != want || announced != want || tasks != cfg.Repeats {
		t.Fatalf("%d unit events of %d announced, %d tasks done; want %d units and %d tasks", units, announced, tasks, want, cfg.Repeats)
	}
	for _, m := range TransferMethods() {
		r, ok := res.Methods[m]
		if !ok || len(r.PerRepeat) != cfg.Repeats {
			t.Fatalf("method %s: %+v", m, r)
		}
	}
	d := transferData(t, cfg)
	for r, ep := range res.Episodes {
		if len(ep.TrainIndex) != 6 || len(ep.QueryIndex) != 15 || ep.Seed != cfg.Seed+int64(r) {
			t.Fatalf("task %d: %d supports, %d queries, seed %d", r, len(ep.TrainIndex), len(ep.QueryIndex), ep.Seed)
		}
		for _, i := range append(slices.Clone(ep.TrainIndex), ep.QueryIndex...) {
			if d.Labels[i] < 6 || !slices.Contains(ep.Classes, d.Labels[i]) {
				t.Fatalf("task %d uses sample %d of class %d (classes %v)", r, i, d.Labels[i], ep.Classes)
			}
		}
		if !(ep.LFDRelGap <= cfg.Train.Tol) {
			t.Fatalf("task %d: LFD gap %v", r, ep.LFDRelGap)
		}
	}
	info := res.Transfer
	if info == nil || info.Training["drknn"] == nil || info.Training["proto"] == nil || len(info.Split.Novel) != 4 || info.K != 2 {
		t.Fatalf("transfer info %+v", info)
	}
	for obj, tr := range info.Training {
		if len(tr.Validations) != 3 || tr.BestStep == 0 || tr.Steps != 12 || tr.BatchSize != 2*3*4 {
			t.Fatalf("%s: %+v", obj, tr)
		}
	}
	onDisk := readResults(t, dir)
	if onDisk.Methods["drknn"].Mean != res.Methods["drknn"].Mean || onDisk.Transfer.Training["drknn"].BestStep != info.Training["drknn"].BestStep {
		t.Fatal("results.json differs from the returned results")
	}

	// The export classifies a new task: task 1's supports as a support
	// folder of PNG files, its queries as images.
	e, err := predict.LoadEmbedding(filepath.Join(dir, "export"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Manifest.Split.Novel, info.Split.Novel) || e.Manifest.Config.Dataset != "synthetic-images" {
		t.Fatalf("manifest split %v, config %+v", e.Manifest.Split, e.Manifest.Config)
	}
	ep := res.Episodes[0]
	x := d.Subset(ep.TrainIndex).X
	labels := make([]int, len(ep.TrainIndex))
	for k := range labels {
		labels[k] = k / cfg.Shots
	}
	m, err := e.Fit(x, len(labels), labels, ep.ClassNames)
	if err != nil {
		t.Fatal(err)
	}
	q := d.Subset(ep.QueryIndex)
	emb, err := m.Embed(q.X, q.Len())
	if err != nil {
		t.Fatal(err)
	}
	preds, err := m.Classify(emb, q.Len(), nil, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for k, p := range preds {
		if ep.ClassNames[p.Class] == d.Classes[q.Labels[k]] {
			correct++
		}
	}
	// The same task, the same embedding and settings: Dr.k-NN's accuracy.
	if acc := float64(correct) / float64(len(preds)); math.Abs(acc-res.Methods["drknn"].PerRepeat[0]) > 1e-12 {
		t.Fatalf("the exported embedding scores %v on task 1, the run %v", acc, res.Methods["drknn"].PerRepeat[0])
	}
}

// TestTransferNovelNeverSeen: training and checkpoint selection never read
// a novel sample: with the novel classes' pixels replaced (by NaN, which
// would poison any network that saw them, or by noise), both objectives
// train to bit-identical weights with identical validation records.
func TestTransferNovelNeverSeen(t *testing.T) {
	cfg := transferConfig(t, "train.steps=6", "transfer.validate_every=3")
	d := transferData(t, cfg)
	split, err := TransferSplitOf(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []string{train.ObjectiveDrKNN, train.ObjectiveProto} {
		netA, recA, err := TrainEmbedding(t.Context(), cfg, d, split, obj, EmbeddingOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, fill := range []float32{float32(math.NaN()), 0.5} {
			p := *d
			p.X = slices.Clone(d.X)
			for _, i := range split.NovelIndex {
				for k := range p.Sample(i) {
					p.Sample(i)[k] = fill
				}
			}
			netB, recB, err := TrainEmbedding(t.Context(), cfg, &p, split, obj, EmbeddingOptions{})
			if err != nil {
				t.Fatalf("%s, novel samples = %v: %v", obj, fill, err)
			}
			if !reflect.DeepEqual(weights(netA), weights(netB)) || !reflect.DeepEqual(recA.Validations, recB.Validations) {
				t.Fatalf("%s: novel samples = %v changed training: validations %v vs %v", obj, fill, recA.Validations, recB.Validations)
			}
		}
	}
}

func weights(net *model.Net) []uint64 {
	var out []uint64
	for _, p := range append(slices.Clone(net.Params()), net.Buffers()...) {
		for j := 0; j < p.Len(); j++ {
			out = append(out, math.Float64bits(p.At(j)))
		}
	}
	return out
}

// TestTransferResume: a run cancelled during the anchor's training keeps
// both checkpoints; -resume reuses the finished Dr.k-NN training, completes
// the anchor's and ends with exactly the results of an uninterrupted run.
func TestTransferResume(t *testing.T) {
	cfg := transferConfig(t, "repeats=4", "train.checkpoint_every=5")
	want, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	_, err = Run(ctx, cfg, Options{OutDir: dir, Observer: func(e Event) {
		if s, ok := e.(TransferStep); ok && s.Objective == train.ObjectiveProto && s.Stats.Step == 7 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
		t.Fatal("a cancelled run wrote results.json")
	}
	var drknnSteps int
	got, err := Run(t.Context(), cfg, Options{OutDir: dir, Resume: true, Observer: func(e Event) {
		if s, ok := e.(TransferStep); ok && s.Objective == train.ObjectiveDrKNN {
			drknnSteps++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if drknnSteps != 0 {
		t.Fatalf("the finished Dr.k-NN training took %d more steps", drknnSteps)
	}
	for m, r := range want.Methods {
		if !reflect.DeepEqual(r.PerRepeat, got.Methods[m].PerRepeat) {
			t.Fatalf("%s: resumed %v, uninterrupted %v", m, got.Methods[m].PerRepeat, r.PerRepeat)
		}
	}
	for obj, tr := range want.Transfer.Training {
		if !reflect.DeepEqual(tr.Validations, got.Transfer.Training[obj].Validations) || tr.FinalLoss != got.Transfer.Training[obj].FinalLoss {
			t.Fatalf("%s: validations %v vs %v", obj, got.Transfer.Training[obj].Validations, tr.Validations)
		}
	}
}

// TestTransferMNIST: the real MNIST digits 0–4 as base classes, 60 Conv-4
// steps, 5-way 1-shot tasks of the digits 5–9 well above chance (0.2) and
// above the untrained network (0.33 on these tasks).
func TestTransferMNIST(t *testing.T) {
	cfg, err := ParseConfig("mnist-transfer.yaml", []byte(`
protocol: transfer
dataset: mnist
ways: 5
shots: 1
queries: 10
repeats: 30
data: {base_classes: ["0", "1", "2", "3", "4"], val_fraction: 0.1}
model: {kind: conv4, channels: 16, dim: 0, dtype: float32}
train: {steps: 60, lr: 0.003, minisets: 1, theta: [0.5]}
transfer: {ways: 5, shots: 3, queries: 3, validate_every: 0, val_tasks: 20, theta: [0.1]}
eval: {methods: [drknn, nearest_centroid, proto_net]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for m, r := range res.Methods {
		if r.Mean < 0.38 {
			t.Errorf("%s: %.3f on 5-way 1-shot tasks of unseen digits (chance 0.2)", m, r.Mean)
		}
	}
	if n := len(res.Transfer.Split.Novel); n != 5 || res.Transfer.Split.Novel[0] != "5" {
		t.Fatalf("novel classes %v", res.Transfer.Split.Novel)
	}
}

// TestTransferAnchorAlone: eval.methods [proto_net] trains the anchor
// only (no Dr.k-NN embedding, no export); a full run that resumes from its
// train/proto folder reuses that training as is (the drknn embedding is
// trained fresh) and scores proto_net exactly as the anchor-only run did
// on the same tasks.
func TestTransferAnchorAlone(t *testing.T) {
	alone, full := t.TempDir(), t.TempDir()
	cfg := transferConfig(t, "eval.methods=[proto_net]")
	a, err := Run(t.Context(), cfg, Options{OutDir: alone})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Transfer.Training["drknn"]; ok || a.Transfer.Training["proto"] == nil || len(a.Methods) != 1 {
		t.Fatalf("trainings %v, methods %v", a.Transfer.Training, a.Methods)
	}
	if _, err := os.Stat(filepath.Join(alone, "export")); !os.IsNotExist(err) {
		t.Fatalf("an anchor-only run wrote an export (%v)", err)
	}
	// Its results.json is written all the same, with proto_net's scores.
	saved := readResults(t, alone)
	if len(saved.Methods) != 1 || !slices.Equal(saved.Methods["proto_net"].PerRepeat, a.Methods["proto_net"].PerRepeat) ||
		saved.Transfer == nil || saved.Transfer.Training["proto"] == nil {
		t.Fatalf("results.json of an anchor-only run: methods %v, transfer %+v", saved.Methods, saved.Transfer)
	}
	if err := os.CopyFS(filepath.Join(full, "train", "proto"), os.DirFS(filepath.Join(alone, "train", "proto"))); err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{}
	b, err := Run(t.Context(), transferConfig(t), Options{OutDir: full, Resume: true, Observer: func(e Event) {
		if s, ok := e.(TransferStep); ok {
			steps[s.Objective]++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if steps["proto"] != 0 || steps["drknn"] != cfg.Train.Steps {
		t.Fatalf("steps taken by the resumed full run: %v", steps)
	}
	if !slices.Equal(a.Methods["proto_net"].PerRepeat, b.Methods["proto_net"].PerRepeat) ||
		!reflect.DeepEqual(a.Transfer.Training["proto"].Validations, b.Transfer.Training["proto"].Validations) {
		t.Fatalf("proto_net %v alone, %v in the full run", a.Methods["proto_net"].PerRepeat, b.Methods["proto_net"].PerRepeat)
	}
	if _, err := os.Stat(filepath.Join(full, "export", "embedding.json")); err != nil {
		t.Fatal(err)
	}
}

// TestShippedTransferConfigs: the transfer configs shipped in the binaries
// load by name from any directory and run the protocol: 600 novel
// tasks of 15 queries per class, Conv-4, rotations for Omniglot.
func TestShippedTransferConfigs(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range []string{"omniglot-transfer", "mnist-transfer", "cifar10-transfer"} {
		cfg, err := LoadConfig(name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.Protocol != ProtocolTransfer || cfg.Repeats != 600 || cfg.Queries != 15 || cfg.Model.Kind != "conv4" ||
			cfg.Data.RotateClasses != (cfg.Dataset == "omniglot") || *cfg.Transfer.Anchor != true || len(cfg.transferMethods()) != 5 {
			t.Fatalf("%s: %+v", name, cfg)
		}
	}
}

// TestTransferResumeOtherSteps: the number of steps is not part of a
// training's key, so a finished training can be resumed with more steps
// (losses step by step those of the run that went there at once) or
// reused as is with its own step count (no step taken).
func TestTransferResumeOtherSteps(t *testing.T) {
	cfg := transferConfig(t, "train.steps=10", "transfer.validate_every=0")
	d := transferData(t, cfg)
	split, err := TransferSplitOf(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	history := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "history.json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	whole, parts, again := t.TempDir(), t.TempDir(), t.TempDir()
	if _, _, err := TrainEmbedding(t.Context(), cfg, d, split, train.ObjectiveDrKNN, EmbeddingOptions{Dir: whole}); err != nil {
		t.Fatal(err)
	}
	six := cfg
	six.Train.Steps = 6
	_, rec6, err := TrainEmbedding(t.Context(), six, d, split, train.ObjectiveDrKNN, EmbeddingOptions{Dir: parts})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(again, os.DirFS(parts)); err != nil {
		t.Fatal(err)
	}
	steps := 0
	count := func(e Event) {
		if _, ok := e.(TransferStep); ok {
			steps++
		}
	}
	_, rec, err := TrainEmbedding(t.Context(), six, d, split, train.ObjectiveDrKNN, EmbeddingOptions{Dir: again, Resume: true, Observer: count})
	if err != nil {
		t.Fatal(err)
	}
	if steps != 0 || !reflect.DeepEqual(rec.Validations, rec6.Validations) {
		t.Fatalf("reusing a finished 6-step training took %d steps; validations %v, want %v", steps, rec.Validations, rec6.Validations)
	}
	if _, _, err := TrainEmbedding(t.Context(), cfg, d, split, train.ObjectiveDrKNN, EmbeddingOptions{Dir: parts, Resume: true, Observer: count}); err != nil {
		t.Fatal(err)
	}
	if steps != 4 || history(parts) != history(whole) {
		t.Fatalf("6 steps resumed to 10 took %d steps; losses\n%s\nwant\n%s", steps, history(parts), history(whole))
	}
}

// TestTransferMethodFailureRecorded: a method failing on a novel task is
// recorded (the task's method_errors, NaN accuracy, the method's error and
// failed tasks, the run's errors) while every other method and the export
// complete, as in the episodes protocol.
func TestTransferMethodFailureRecorded(t *testing.T) {
	failHook = func(r int, m string) error {
		if m == eval.MethodEmbeddingKNN && r == 1 {
			return errors.New("broken")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	out := t.TempDir()
	cfg := transferConfig(t, "transfer.anchor=false", "repeats=4", "train.steps=2", "eval.methods=[drknn,embedding_knn]")
	res, err := Run(t.Context(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	ek := res.Methods[eval.MethodEmbeddingKNN]
	if ek.Error != "task 2: broken" || !slices.Equal(ek.Failed, []int{2}) || !math.IsNaN(ek.PerRepeat[1]) || math.IsNaN(ek.Mean) {
		t.Fatalf("embedding_knn %+v", ek)
	}
	if dk := res.Methods[eval.MethodDrKNN]; dk.Error != "" || len(dk.Completed()) != 4 {
		t.Fatalf("drknn %+v", dk)
	}
	if len(res.Errors) != 1 || res.Episodes[1].MethodErrors[eval.MethodEmbeddingKNN] != "broken" {
		t.Fatalf("errors %q, task 2 %+v", res.Errors, res.Episodes[1].MethodErrors)
	}
	if got := fmtAcc(ek, true); !strings.HasSuffix(got, " [3 of 4 tasks]") {
		t.Fatalf("transfer.md cell %q does not say it is over 3 of 4 tasks", got)
	}
	for _, f := range []string{"results.json", "export/embedding.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTransferAnchorFailureRecorded: a failing anchor training is recorded
// (proto_net failed on every task with the training's error, one line in
// the run's errors) while the Dr.k-NN embedding's methods and the export
// complete.
func TestTransferAnchorFailureRecorded(t *testing.T) {
	failHook = func(_ int, m string) error {
		if m == "train:proto" {
			return errors.New("loss is NaN")
		}
		return nil
	}
	t.Cleanup(func() { failHook = nil })
	out := t.TempDir()
	res, err := Run(t.Context(), transferConfig(t, "repeats=3", "train.steps=2"), Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	pn := res.Methods[eval.MethodProtoNet]
	if !math.IsNaN(pn.Mean) || len(pn.Failed) != 3 || pn.Error != "training the proto anchor: loss is NaN" {
		t.Fatalf("proto_net %+v", pn)
	}
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "proto_net: training the proto anchor") {
		t.Fatalf("errors %q", res.Errors)
	}
	if dk := res.Methods[eval.MethodDrKNN]; dk.Error != "" || len(dk.Completed()) != 3 {
		t.Fatalf("drknn %+v", dk)
	}
	if _, err := os.Stat(filepath.Join(out, "export", "embedding.json")); err != nil {
		t.Fatal(err)
	}
}

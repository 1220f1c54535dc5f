package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/internal/fixtures"
)

func runCmd(ctx context.Context, args ...string) (int, string, string) {
	var so, se bytes.Buffer
	code := cli.Report(&se, "drknn-train", run(ctx, args, &so, &se), experiment.ErrConfig)
	return code, so.String(), se.String()
}

var synthetic = filepath.Join("..", "..", "configs", "synthetic.yaml")

func TestTrainWritesResultsAndLog(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, so, se := runCmd(t.Context(), "-config", synthetic, "-set", "train.steps=2", "-set", "repeats=1", "-out", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	if !strings.Contains(so, filepath.Join(out, "results.json")) || se != "" {
		t.Fatalf("stdout %q stderr %q", so, se)
	}
	var res experiment.Results
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil || json.Unmarshal(b, &res) != nil || len(res.Episodes) != 1 {
		t.Fatalf("results.json: %v %+v", err, res)
	}
	log, err := os.ReadFile(filepath.Join(out, "train.log"))
	if err != nil || !strings.Contains(string(log), "drknn-train: synthetic-images 2-way 5-shot") || !strings.Contains(string(log), "repeat 1: drknn") {
		t.Fatalf("train.log: %v\n%s", err, log)
	}
	// A second run into the same folder is refused without -resume.
	if code, _, se := runCmd(t.Context(), "-config", synthetic, "-out", out, "-quiet"); code != 2 || !strings.Contains(se, "is not empty") || !strings.Contains(se, out) {
		t.Fatalf("rerun: exit %d, %q", code, se)
	}
}

// TestInterrupted: a run whose context is cancelled (Ctrl-C) exits with
// status 130 and one line saying where the checkpoints are — here, stopped
// before its first step, that none was written (it named a repeats folder
// that did not exist) — and writes no results.json.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := filepath.Join(t.TempDir(), "run")
	code, so, se := runCmd(ctx, "-config", synthetic, "-set", "repeats=1", "-out", out, "-quiet")
	if code != 130 || so != "" || strings.Count(se, "\n") != 1 || !strings.Contains(se, "no checkpoint was written in "+out) ||
		strings.Contains(se, "repeats") {
		t.Fatalf("exit %d stdout %q stderr %q", code, so, se)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); !os.IsNotExist(err) {
		t.Fatal("an interrupted run wrote results.json")
	}
}

func TestBadUsage(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"no config":     {},
		"missing file":  {"-config", filepath.Join(dir, "none.yaml")},
		"unknown key":   {"-config", synthetic, "-set", "train.stpes=3"},
		"bad value":     {"-config", synthetic, "-set", "ways=1"},
		"unknown flag":  {"-config", synthetic, "-fast"},
		"stray operand": {"-config", synthetic, "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			code, so, se := runCmd(t.Context(), append(args, "-out", filepath.Join(dir, "out"))...)
			if code != 2 || so != "" || strings.Count(se, "\n") != 1 || !strings.HasPrefix(se, "drknn-train: ") {
				t.Fatalf("exit %d stdout %q stderr %q", code, so, se)
			}
		})
	}
}

// From a directory with no configs/ folder, a shipped config's name
// resolves to the copy embedded in the binary; a file of that name on disk
// wins over it.
func TestShippedConfigFromAnyDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	code, so, se := runCmd(t.Context(), "-config", "synthetic.yaml", "-set", "train.steps=2", "-set", "repeats=1", "-set", "queries=20", "-out", "run", "-quiet")
	if code != 0 || !strings.Contains(so, filepath.Join("run", "results.json")) {
		t.Fatalf("exit %d: %s %s", code, so, se)
	}
	var res experiment.Results
	if b, err := os.ReadFile(filepath.Join("run", "results.json")); err != nil || json.Unmarshal(b, &res) != nil || res.Dataset != "synthetic-images" {
		t.Fatalf("results.json: %v %+v", err, res.Dataset)
	}
	// A file on disk of the same name wins.
	if err := os.WriteFile("synthetic.yaml", []byte("dataset: synthetic-gauss\nmodel: {kind: mlp}\ntrain: {steps: 2}\nrepeats: 1\nqueries: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, se = runCmd(t.Context(), "-config", "synthetic.yaml", "-out", "run2", "-quiet")
	if b, err := os.ReadFile(filepath.Join("run2", "results.json")); code != 0 || err != nil || json.Unmarshal(b, &res) != nil || res.Dataset != "synthetic-gauss" {
		t.Fatalf("file on disk: exit %d %s, dataset %q", code, se, res.Dataset)
	}
	code, _, se = runCmd(t.Context(), "-config", "mnsit.yaml")
	if code != 2 || !strings.Contains(se, "mnsit.yaml does not exist") || !strings.Contains(se, "shipped: ") || !strings.Contains(se, "mnist.yaml") {
		t.Fatalf("unknown name: exit %d, %q", code, se)
	}
}

// TestMissingConfig: a -config that looks like a path (a folder separator,
// or .yaml / .yml) and does not exist is refused saying that file does not
// exist — it said "no shipped config of that name" of mine/mnist.yaml —
// and a bare name that is not shipped lists the shipped names; exit 2, one
// line, before any work.
func TestMissingConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	for cfg, want := range map[string][]string{
		filepath.Join("mine", "mnist.yaml"): {"the file " + filepath.Join("mine", "mnist.yaml") + " does not exist"},
		"mine/other.yml":                    {"the file mine/other.yml does not exist"},
		"nope.yaml":                         {"the file nope.yaml does not exist", "shipped: ", "synthetic.yaml"},
		"mnst":                              {`no shipped config "mnst"`, "shipped: ", "mnist.yaml", "synthetic.yaml"},
	} {
		code, so, se := runCmd(t.Context(), "-config", cfg, "-out", "run")
		ok := code == 2 && so == "" && strings.Count(se, "\n") == 1
		for _, w := range want {
			ok = ok && strings.Contains(se, w)
		}
		if !ok || (strings.Contains(cfg, "mine") && strings.Contains(se, "shipped")) {
			t.Errorf("-config %s: exit %d stdout %q stderr %q; want %q", cfg, code, so, se, want)
		}
		if _, err := os.Stat("run"); err == nil {
			t.Fatalf("-config %s: made the run folder", cfg)
		}
	}
}

func TestListAndPrintConfigs(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "configs", "mnist.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, so, se := runCmd(t.Context(), "-list-configs")
	if code != 0 || !strings.Contains(so, "mnist.yaml") || !strings.Contains(so, "synthetic.yaml") || !strings.Contains(so, "MNIST") {
		t.Fatalf("exit %d: %q %q", code, so, se)
	}
	code, so, _ = runCmd(t.Context(), "-print-config", "mnist")
	if code != 0 || so != string(want) {
		t.Fatalf("print mnist: exit %d %q", code, so)
	}
	if code, _, se := runCmd(t.Context(), "-print-config", "nope"); code != 2 || !strings.Contains(se, "nope") {
		t.Fatalf("print nope: exit %d %q", code, se)
	}
	// A -set or -config beside them was ignored without a word.
	for _, args := range [][]string{
		{"-print-config", "mnist", "-set", "ways=5"},
		{"-list-configs", "-config", "mnist"},
		{"-list-configs", "-print-config", "mnist"},
	} {
		if code, so, se := runCmd(t.Context(), args...); code != 2 || so != "" || !strings.Contains(se, "take no -config, -set or each other") {
			t.Fatalf("%q: exit %d %q %q", args, code, so, se)
		}
	}
}

// protocol fit through the command: the summary names the export that
// drknn-predict -model takes.
func TestTrainFitCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	if _, _, err := fixtures.CSV(path, 10, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, so, se := runCmd(t.Context(), "-config", "synthetic.yaml", "-set", "dataset=csv", "-set", "data_dir="+path, "-set", "protocol=fit", "-set", "model.kind=",
		"-set", "data.label=kind", "-set", "data.missing=mode", "-set", "train.steps=3", "-set", "train.cv_folds=2", "-out", out, "-quiet")
	if code != 0 || !strings.Contains(so, "csv fit: 30 training samples, 3 classes") || !strings.Contains(so, filepath.Join(out, "export")) || !strings.Contains(so, "(cv)") {
		t.Fatalf("exit %d: %q %q", code, so, se)
	}
}

// TestOutIsDataRefused: -out the data folder itself (a split image folder)
// with -force is refused with exit 2 before anything is removed: -force
// would have deleted the images under train/.
func TestOutIsDataRefused(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := fixtures.ImageFolder(dir, 8, 2, 2); err != nil {
		t.Fatal(err)
	}
	before, err := filepath.Glob(filepath.Join(dir, "train", "*", "*"))
	if err != nil || len(before) == 0 {
		t.Fatalf("fixture: %v %v", before, err)
	}
	code, so, se := runCmd(t.Context(), "-config", "synthetic.yaml", "-set", "dataset=imagefolder", "-set", "data_dir="+dir, "-set", "protocol=fit",
		"-set", "train.steps=1", "-out", dir, "-force", "-quiet")
	if code != 2 || !strings.Contains(se, "choose an -out outside the data") || so != "" {
		t.Fatalf("exit %d: %q %q", code, so, se)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "train", "*", "*"))
	if len(after) != len(before) {
		t.Fatalf("train/ held %d files, now %d", len(before), len(after))
	}
}

// TestFailingMethodKeepsRun is issue 14's report: -set train.lr=0.05 makes
// the MetaOptNet baseline's solve singular on MNIST repeat 2 (step 21 of its
// 50). The run completes, results.json records the failure (no accuracy
// for that repeat), every other method has its values, and the exit status
// is 3 with the failure on stderr.
func TestFailingMethodKeepsRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, so, se := runCmd(t.Context(), "-config", filepath.Join("..", "..", "configs", "mnist.yaml"), "-set", "train.lr=0.05", "-set", "train.steps=5",
		"-set", "repeats=2", "-set", "queries=100", "-set", "eval.methods=[drknn,metaoptnet]", "-out", out)
	if code != 3 || !strings.Contains(se, "drknn-train: failed: repeat 2: metaoptnet: ") || !strings.Contains(so, "metaoptnet") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, so, se)
	}
	var res experiment.Results
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("results.json: %v", err)
	}
	if d, m := res.Methods["drknn"], res.Methods["metaoptnet"]; len(d.Completed()) != 2 || len(m.Completed()) != 1 || m.Error == "" || len(res.Errors) != 1 {
		t.Fatalf("drknn %+v\nmetaoptnet %+v\nerrors %q", d, m, res.Errors)
	}
}

// TestRunFolderFlags: -force replaces a finished run, -resume with -force
// is refused, checkpoints go unless -keep-checkpoints.
func TestRunFolderFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"-config", synthetic, "-set", "train.steps=2", "-set", "train.checkpoint_every=1", "-set", "repeats=1", "-set", "queries=20", "-out", out, "-quiet"}
	ck := filepath.Join(out, "repeats", "01", "checkpoint.bin")
	if code, _, se := runCmd(t.Context(), append(args, "-keep-checkpoints")...); code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("-keep-checkpoints: %v", err)
	}
	if code, _, se := runCmd(t.Context(), append(args, "-resume", "-force")...); code != 2 || !strings.Contains(se, "exclude each other") {
		t.Fatalf("-resume -force: exit %d %q", code, se)
	}
	if code, _, se := runCmd(t.Context(), append(args, "-resume")...); code != 2 || !strings.Contains(se, "already holds a finished run") {
		t.Fatalf("-resume of a finished run: exit %d %q", code, se)
	}
	if code, _, se := runCmd(t.Context(), append(args, "-force")...); code != 0 {
		t.Fatalf("-force: exit %d %q", code, se)
	}
	if _, err := os.Stat(ck); !os.IsNotExist(err) {
		t.Fatalf("checkpoint kept without -keep-checkpoints: %v", err)
	}
}

// A run that fails as a whole, outside any repeat — here a fit run told to
// -resume from a damaged checkpoint.bin — says why in its train.log (one
// line, as the terminal's) besides the terminal; before, train.log ended
// without a word about it.
func TestRunFailureInLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	if _, _, err := fixtures.CSV(path, 10, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "checkpoint.bin"), []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, se := runCmd(t.Context(), "-config", "synthetic.yaml", "-set", "dataset=csv", "-set", "data_dir="+path, "-set", "protocol=fit", "-set", "model.kind=mlp",
		"-set", "data.label=kind", "-set", "data.missing=mode", "-set", "train.steps=3", "-set", "train.cv_folds=2", "-out", out, "-resume", "-quiet")
	if code != 1 {
		t.Fatalf("exit %d: %q", code, se)
	}
	b, err := os.ReadFile(filepath.Join(out, "train.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := lines[len(lines)-1]
	why := strings.TrimPrefix(strings.TrimSpace(se), "drknn-train: ")
	if !strings.HasSuffix(last, " failed: "+why) || !strings.Contains(why, "checkpoint.bin") {
		t.Fatalf("train.log's last line %q, want it to say %q", last, why)
	}
}

// A run whose training diverges on every repeat (train.lr 1e300) exits 1
// with one line on the terminal naming each cause once, without Gorgonia's
// dump of the failing instruction; train.log has each repeat's line and
// then the run's, which says the run failed without repeating them.
func TestDivergedRunSaysSoOnce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, _, se := runCmd(t.Context(), "-config", synthetic, "-set", "train.lr=1e300", "-set", "train.steps=3", "-set", "repeats=2",
		"-set", "queries=10", "-set", "eval.methods=[drknn]", "-out", out, "-quiet")
	cause := "training diverged at step 2 of 3: non-finite risk (the embeddings hold NaN or ±Inf); lower train.lr (now 1e+300) or check the data for NaN/Inf"
	if want := "drknn-train: all 2 repeats failed: repeats 1, 2: " + cause + "\n"; code != 1 || se != want {
		t.Fatalf("exit %d, stderr %q\nwant %q", code, se, want)
	}
	b, err := os.ReadFile(filepath.Join(out, "train.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, w := range []string{"PC ", "Failed to", "CPU"} {
		if strings.Contains(log, w) {
			t.Errorf("train.log holds the machine's %q:\n%s", w, log)
		}
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if n := strings.Count(log, cause); n != 2 || !strings.HasSuffix(lines[len(lines)-1], " failed: the run failed (all 2 repeats failed; each repeat's cause is logged above)") {
		t.Fatalf("train.log: the cause %d times (want 2, one per repeat), last line %q:\n%s", n, lines[len(lines)-1], log)
	}
}

type fullWriter struct{}

func (fullWriter) Write(p []byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutFull: -list-configs and a run's summary to a full standard
// output (`> /dev/full`) exit 1 with one line, as main runs them.
func TestStdoutFull(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	for _, args := range [][]string{
		{"-list-configs"},
		{"-config", synthetic, "-set", "train.steps=2", "-set", "repeats=1", "-out", out, "-quiet"},
	} {
		var se bytes.Buffer
		code := cli.Exec(t.Context(), "drknn-train", run, args, fullWriter{}, &se, experiment.ErrConfig)
		if code != 1 || strings.Count(se.String(), "\n") != 1 || !strings.Contains(se.String(), "writing standard output: no space left on device") {
			t.Errorf("%q: exit %d, stderr %q", args, code, se.String())
		}
	}
}

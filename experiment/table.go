package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/oneline"
)

// TableOptions control a run of the paper's Table 1.
type TableOptions struct {
	OutDir     string   // table.md, table.csv and cells/<cell>/… go here
	ConfigDir  string   // the folder every cell reads its config from, all or none (TableConfigs); "" = configs/, or the shipped configs where there is none
	Quick      bool     // 1 repeat, few steps, 200 queries: a smoke test of every cell
	Sets       []string // overrides applied to every cell after the quick settings
	Only       []string // run only these cells ("mnist-2w5s", or a data set name); empty = all
	Observer   Observer // TableStarted, CellStarted/CellDone per cell, and each cell's run events (nil: none)
	CommitInfo string   // commit and machine line for table.md
	// Resume reuses every cell whose OutDir/cells/<cell>/results.json was
	// made with the cell's effective config and resumes the others from
	// their checkpoints; a finished cell with another config is an error.
	Resume bool
	// KeepCheckpoints keeps every cell's repeat checkpoints after the cell
	// is done (Options.KeepCheckpoints; by default they are deleted).
	KeepCheckpoints bool
}

// CellOutcome is one column of the table.
type CellOutcome struct {
	Column  eval.Column
	Name    string // e.g. "mnist-2w5s"
	Config  string // config file used ("NAME.yaml (shipped)": the copy built into the binary)
	Results *Results
	// Skipped says why the cell was not run: its data set is absent
	// ("data not available: …"). A cell that ran and failed has Failed
	// instead (NotRun gives either).
	Skipped string
	// Failed is the error of a cell that ran and failed as a whole (every
	// repeat failed, or its run did): the table is written without it.
	Failed string
	Reused bool // -resume: the cell's results.json was reused, nothing ran
}

// Failures are the cell's failures, one line each naming the cell: the
// whole cell's ("mnist-2w5s: repeat 1: …"), or those its results record
// — a method on a repeat ("mnist-2w5s: repeat 3: metaoptnet: …"), a whole
// repeat ("mnist-2w5s: repeat 5: …"). None for a cell skipped because its
// data set is absent.
func (o CellOutcome) Failures() []string { return cellFailures(o.Name, o.Failed, o.Results) }

// NotRun is why the cell has no results: "failed: " and the error of a
// cell that ran and failed as a whole (Failed), or why it was skipped
// (Skipped); "" for a cell with results.
func (o CellOutcome) NotRun() string { return notRun(o.Skipped, o.Failed) }

func cellFailures(name, failed string, res *Results) []string {
	if failed != "" {
		return []string{"cell " + name + ": " + failed}
	}
	if res == nil {
		return nil
	}
	var lines []string
	for _, e := range res.Errors {
		lines = append(lines, "cell "+name+": "+oneline.Err(errors.New(e)))
	}
	return lines
}

// configName maps the table's data set names to config files.
func configName(ds string) string {
	switch ds {
	case "lung":
		return "lung-cancer"
	case "covid":
		return "covid-ct"
	}
	return ds
}

// QuickSets are the overrides of the quick mode.
func QuickSets() []string {
	return []string{"repeats=1", "train.steps=5", "queries=200"}
}

func cellName(c eval.Column) string { return fmt.Sprintf("%s-%dw%ds", configName(c.Dataset), c.M, c.K) }

// TableNames are the names -only accepts for Table 1: every data set (as
// its config is named and as the paper's table names it) and every cell.
func TableNames() []string {
	var names, cells []string
	for _, c := range eval.PaperColumns() {
		for _, n := range []string{configName(c.Dataset), c.Dataset} {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		cells = append(cells, cellName(c))
	}
	return append(names, cells...)
}

// checkOnly refuses names that are not in valid (an ErrConfig listing
// them): a misspelt -only must not give an empty table.
func checkOnly(only, valid []string) error {
	var bad []string
	for _, o := range only {
		if !slices.Contains(valid, o) {
			bad = append(bad, fmt.Sprintf("%q", o))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return configErr(fmt.Errorf("-only: unknown cell or data set %s; valid names: %s", strings.Join(bad, ", "), strings.Join(valid, ", ")))
}

func wanted(only []string, c eval.Column) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o == cellName(c) || o == configName(c.Dataset) || o == c.Dataset {
			return true
		}
	}
	return false
}

// RunTable runs every runnable cell of the paper's Table 1 (data set × M × K)
// with its config, all methods, and writes table.md and table.csv. A cell
// whose data set is absent (datasets.ErrNotFound) is skipped and reported
// with the reason; a data set that is there but unreadable fails the run
// with the reader's message. A cell that fails as a whole (every repeat
// failed) is recorded (CellOutcome.Failed) and the others run; a method or
// repeat that fails is recorded in its cell's results; the table lists
// both (CellOutcome.Failures). Each cell's repeats run in parallel (config
// key workers); results never depend on the worker count. When ctx is
// cancelled the running cell stops after its current training step
// (keeping its checkpoints) and RunTable returns an error without writing
// the table.
func RunTable(ctx context.Context, opts TableOptions) ([]CellOutcome, error) {
	start := time.Now()
	notify := serial(opts.Observer)
	if opts.OutDir == "" {
		return nil, fmt.Errorf("table: no output folder")
	}
	if err := checkOnly(opts.Only, TableNames()); err != nil {
		return nil, err
	}
	paths, shipped, err := TableConfigs(opts, false)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	// Every cell's config first: a bad override fails before any work,
	// and the plan gives one progress bar over the whole table.
	type cell struct {
		o   CellOutcome
		cfg Config
	}
	var cells []cell
	var plan []CellPlan
	if err := cellFixedSets(opts.Sets); err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	for _, col := range eval.PaperColumns() {
		if !wanted(opts.Only, col) {
			continue
		}
		path := paths[configName(col.Dataset)+".yaml"]
		o := CellOutcome{Column: col, Name: cellName(col), Config: path}
		if shipped {
			o.Config = configName(col.Dataset) + ".yaml (shipped)"
		}
		sets := []string{fmt.Sprintf("ways=%d", col.M), fmt.Sprintf("shots=%d", col.K)}
		if opts.Quick {
			sets = append(sets, QuickSets()...)
		}
		sets = append(sets, opts.Sets...)
		cfg, err := LoadConfig(path, sets)
		if err == nil {
			err = tableProtocol(path, cfg)
		}
		if err == nil {
			err = checkTableData(opts.OutDir, cfg.DataDir)
		}
		if err != nil {
			return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
		}
		cells = append(cells, cell{o, cfg})
		plan = append(plan, CellPlan{Name: o.Name, Repeats: cfg.Repeats, Steps: cfg.fitSteps(), CVSteps: cfg.cvSteps(), Methods: cfg.methods()})
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	notify(TableStarted{Dir: opts.OutDir, Cells: plan})
	var outs []CellOutcome
	cache := map[string]*datasets.Dataset{}
	loadErr := map[string]error{}
	for _, c := range cells {
		o, cfg := c.o, c.cfg
		key := cfg.Dataset + "|" + cfg.DataDir + fmt.Sprintf("|%+v", cfg.Data)
		d, ok := cache[key]
		if !ok && loadErr[key] == nil {
			var err error
			d, err = LoadData(cfg)
			if err != nil {
				loadErr[key] = err
			} else {
				cache[key] = d
			}
		}
		if err := loadErr[key]; err != nil {
			if !errors.Is(err, datasets.ErrNotFound) {
				return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
			}
			o.Skipped = "data not available: " + strings.ReplaceAll(err.Error(), "\n", " ")
			outs = append(outs, o)
			notify(CellDone{o})
			continue
		}
		dir := filepath.Join(opts.OutDir, "cells", o.Name)
		if opts.Resume {
			want, _, err := ForData(cfg, d)
			if err != nil {
				return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
			}
			if err := recoverPartial(dir); err != nil { // a set-aside or restore a kill interrupted
				return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
			}
			res, err := finishedCell(dir, want)
			if errors.Is(err, errDamagedCell) {
				notify(damagedNote(o.Name, err))
				res, err = nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
			}
			if res != nil {
				// A -force killed after the cell's results.json and
				// before its settling left the earlier run aside: the
				// results.json beside it is the newer run's (runKind), so
				// the reused cell settles it.
				if err := ResumedRunDir(dir).Settle(nil); err != nil {
					return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
				}
				o.Results, o.Reused = res, true
				outs = append(outs, o)
				notify(CellDone{o})
				continue
			}
		}
		// A cell run afresh starts without the run outputs of an earlier
		// run of it (repeats, exports, log: after -force nothing of it
		// stays beside the new one); they are set aside until the new run
		// has finished, and put back if it fails (ReplaceRunDir).
		replaced := ResumedRunDir(dir)
		if !opts.Resume {
			var err error
			if replaced, err = ReplaceRunDir(dir); err != nil {
				return nil, fmt.Errorf("table: cell %s: %w", o.Name, err)
			}
		}
		notify(CellStarted{Name: o.Name, Dir: dir, Config: o.Config})
		res, err := RunData(ctx, cfg, d, Options{OutDir: dir, Resume: opts.Resume, KeepCheckpoints: opts.KeepCheckpoints, Observer: notify})
		if err == nil && res == nil {
			err = errors.New("no results and no error (a bug: the cell would pass for skipped)")
		}
		err = replaced.Settle(err)
		if err != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("table: cell %s: %w", o.Name, err) // interrupted: no table
		}
		if err != nil {
			// The cell failed as a whole (e.g. every repeat failed): it is
			// reported, and the other cells and the table go on.
			o.Failed = oneline.Err(err)
			outs = append(outs, o)
			notify(CellDone{o})
			continue
		}
		o.Results = res
		outs = append(outs, o)
		notify(CellDone{o})
	}
	wall := time.Since(start)
	if err := writeTable(opts, outs, wall); err != nil {
		return nil, err
	}
	return outs, nil
}

// DefaultConfigDir is the config folder of a table when
// TableOptions.ConfigDir is "": configs/ of a clone, else the shipped
// configs.
const DefaultConfigDir = "configs"

// TableConfigs returns the config file of each cell opts selects, by file
// name ("mnist.yaml"; the transfer table's when transfer:
// "mnist-transfer.yaml"), as the path LoadConfig reads: all of them from
// the one folder opts.ConfigDir, never some from there and some shipped.
// A folder that lacks some is an ErrConfig naming every missing file (and
// the cells that need it); so is a ConfigDir that is not a folder —
// except the default one, "" or "configs", when no such folder exists:
// then shipped is true and every path names a shipped config (LoadConfig
// reads the copy built into the binary).
func TableConfigs(opts TableOptions, transfer bool) (paths map[string]string, shipped bool, err error) {
	dir := opts.ConfigDir
	if dir == "" {
		dir = DefaultConfigDir
	}
	need := map[string][]string{} // file name → cells
	var names []string
	add := func(file, cell string) {
		if need[file] == nil {
			names = append(names, file)
		}
		need[file] = append(need[file], cell)
	}
	if transfer {
		for _, c := range TransferCells() {
			if len(opts.Only) == 0 || slices.Contains(opts.Only, c.Name()) || slices.Contains(opts.Only, c.Dataset) {
				add(c.Dataset+"-transfer.yaml", c.Name())
			}
		}
	} else {
		for _, col := range eval.PaperColumns() {
			if wanted(opts.Only, col) {
				add(configName(col.Dataset)+".yaml", cellName(col))
			}
		}
	}
	paths = map[string]string{}
	for _, n := range names {
		paths[n] = filepath.Join(dir, n)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && filepath.Clean(dir) == DefaultConfigDir:
		return paths, true, nil // the shipped configs, every one
	case err != nil:
		return nil, false, configErr(fmt.Errorf("config folder %s: %w", dir, err))
	case !st.IsDir():
		return nil, false, configErr(fmt.Errorf("config folder %s is not a folder", dir))
	}
	var missing []string
	for _, n := range names {
		if _, err := os.Stat(paths[n]); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, false, configErr(fmt.Errorf("config folder %s: %w", dir, err))
			}
			missing = append(missing, fmt.Sprintf("%s (cells %s)", n, strings.Join(need[n], ", ")))
		}
	}
	if len(missing) > 0 {
		return nil, false, configErr(fmt.Errorf("config folder %s has no %s; every cell reads its config from that folder: add the missing ones (drknn-train -print-config NAME prints a shipped one to start from), or leave those cells out with -only",
			dir, strings.Join(missing, "; ")))
	}
	return paths, false, nil
}

// errDamagedCell is wrapped by finishedCell's error for a results.json
// that is not JSON (truncated, overwritten) or whose contents do not hold
// together (Results.validate: a method with fewer accuracies than repeats,
// an accuracy outside [0, 1], a method missing or named twice, …): the
// table runs the cell again (damagedNote) rather than stopping or writing
// a wrong table.
var errDamagedCell = errors.New("damaged results")

// damagedNote is the log line of a cell run again because its results.json
// is damaged (err wraps errDamagedCell).
func damagedNote(cell string, err error) Message {
	return Message{Text: fmt.Sprintf("cell %s: %s; running the cell again", cell, oneline.Err(err))}
}

// finishedCell reads the results.json of a cell's run folder when there is
// one: nil when the cell has not finished, an ErrConfig when it was made
// with another config than want (the config the run records: after
// ForData for Table 1) — resuming must not mix settings in one table —
// and an error wrapping errDamagedCell, naming the file (and the field),
// when it is not JSON or not results the table can show (Results.validate). The worker count never changes results and is not compared.
func finishedCell(dir string, want Config) (*Results, error) {
	path := filepath.Join(dir, "results.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errDamagedCell, path, err)
	}
	got := res.Config
	got.Workers, want.Workers = 0, 0
	gb, err1 := json.Marshal(got)
	wb, err2 := json.Marshal(want)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if !bytes.Equal(gb, wb) {
		return nil, configErr(fmt.Errorf("%s was made with another config than this table's (%s); "+
			"use another -out, or delete that cell's folder to run it again", path, configDiff(got, want)))
	}
	if err := res.validate(b, want); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errDamagedCell, path, err)
	}
	return &res, nil
}

// validate checks what the table's writers (writeTable, pairedCSV,
// writeTransferTable) take from finished results made with cfg, b being
// their JSON: the results of cfg's data set, ways, shots and repeats; one
// entry for each of cfg's methods, no other and none twice; each with one
// accuracy per repeat, in [0, 1] or null (failed), its failed repeats
// those nulls and an error when there are any, its mean and interval
// those of the accuracies; log-loss and ECE, when present, one value per
// repeat and a finite mean; one episode record per repeat; and the
// transfer record of a transfer run. The error names the field.
func (r *Results) validate(b []byte, cfg Config) error {
	if err := uniqueMethods(b); err != nil {
		return err
	}
	switch {
	case r.Dataset != cfg.Dataset:
		return fmt.Errorf("dataset %q, the config's is %q", r.Dataset, cfg.Dataset)
	case r.Ways != cfg.Ways:
		return fmt.Errorf("ways %d, the config's is %d", r.Ways, cfg.Ways)
	case r.Shots != cfg.Shots:
		return fmt.Errorf("shots %d, the config's is %d", r.Shots, cfg.Shots)
	case r.Repeats != cfg.Repeats:
		return fmt.Errorf("repeats %d, the config's is %d", r.Repeats, cfg.Repeats)
	case len(r.Episodes) != cfg.Repeats:
		return fmt.Errorf("episodes: %d records, the config's repeats is %d", len(r.Episodes), cfg.Repeats)
	}
	methods := cfg.methods()
	if cfg.Protocol == ProtocolTransfer {
		if r.Transfer == nil {
			return errors.New("transfer: missing (a transfer run records its split and trainings)")
		}
		if cfg.Transfer.Anchor != nil {
			methods = cfg.transferMethods()
		}
	}
	for _, m := range methods {
		if _, ok := r.Methods[m]; !ok {
			return fmt.Errorf("methods: no %s, which the config evaluates", m)
		}
	}
	for _, m := range r.MethodOrder() {
		if !slices.Contains(methods, m) {
			return fmt.Errorf("methods.%s: not a method the config evaluates", m)
		}
		if err := r.Methods[m].validate(cfg.Repeats); err != nil {
			return fmt.Errorf("methods.%s.%w", m, err)
		}
	}
	return nil
}

// validate checks a method's result over n repeats (Results.validate);
// the error starts with the field's name.
func (m MethodResult) validate(n int) error {
	if len(m.PerRepeat) != n {
		return fmt.Errorf("per_repeat: %d accuracies, the config's repeats is %d", len(m.PerRepeat), n)
	}
	var failed []int
	for i, a := range m.PerRepeat {
		switch {
		case math.IsNaN(a):
			failed = append(failed, i+1)
		case !(a >= 0 && a <= 1):
			return fmt.Errorf("per_repeat: repeat %d: accuracy %v outside [0, 1]", i+1, a)
		}
	}
	if !slices.Equal(m.Failed, failed) {
		return fmt.Errorf("failed: %v, but per_repeat has no accuracy on repeats %v", m.Failed, failed)
	}
	if (m.Error != "") != (len(failed) > 0) {
		if m.Error == "" {
			return fmt.Errorf("error: missing, but the method failed on repeats %v", failed)
		}
		return fmt.Errorf("error: %q, but the method failed on no repeat", m.Error)
	}
	mean, ci := math.NaN(), math.NaN()
	if done := m.Completed(); len(done) > 0 {
		s, err := eval.Summarize(done)
		if err != nil {
			return fmt.Errorf("per_repeat: %w", err)
		}
		mean, ci = s.Mean, s.HalfWidth
	}
	if !sameValue(m.Mean, mean) {
		return fmt.Errorf("mean: %v, but per_repeat's mean is %v", m.Mean, mean)
	}
	if !sameValue(m.CI95, ci) {
		return fmt.Errorf("ci95: %v, but per_repeat's is %v", m.CI95, ci)
	}
	for _, s := range []struct {
		name string
		m    *Metric
	}{{"log_loss", m.LogLoss}, {"ece", m.ECE}} {
		if s.m == nil {
			continue
		}
		switch {
		case len(s.m.PerRepeat) != n:
			return fmt.Errorf("%s.per_repeat: %d values, the config's repeats is %d", s.name, len(s.m.PerRepeat), n)
		case math.IsNaN(s.m.Mean) || math.IsInf(s.m.Mean, 0) || s.m.Mean < 0:
			return fmt.Errorf("%s.mean: %v, not a finite score", s.name, s.m.Mean)
		case math.IsInf(s.m.CI95, 0) || s.m.CI95 < 0:
			return fmt.Errorf("%s.ci95: %v, not a half-width", s.name, s.m.CI95)
		}
	}
	return nil
}

// sameValue reports whether a recorded mean or interval a is b, recomputed
// (both NaN, or equal up to rounding).
func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b))
}

// uniqueMethods refuses a results.json whose methods object names a method
// twice, or that has two methods objects (encoding/json keeps the last
// value of a key, and merges the objects, silently).
func uniqueMethods(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil // not an object: json.Unmarshal has refused it
	}
	objects := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		if k != "methods" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if objects++; objects > 1 {
			return errors.New("methods: given twice")
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil // null, or not an object
		}
		seen := map[string]bool{}
		for dec.More() {
			m, err := dec.Token()
			if err != nil {
				return nil
			}
			name, _ := m.(string)
			if seen[name] {
				return fmt.Errorf("methods: %s named twice", name)
			}
			seen[name] = true
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil
		}
	}
	return nil
}

// configDiff names the first keys (JSON paths) where two configs differ.
func configDiff(a, b Config) string { return jsonDiff(a, b) }

// jsonDiff names the first keys (JSON paths) where the JSON forms of two
// values differ ("train.lr 0.003 there, 0.01 now").
func jsonDiff(a, b any) string {
	var ma, mb map[string]any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	var diffs []string
	var walk func(prefix string, x, y map[string]any)
	walk = func(prefix string, x, y map[string]any) {
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			xs, xok := x[k].(map[string]any)
			ys, yok := y[k].(map[string]any)
			if xok && yok {
				walk(prefix+k+".", xs, ys)
				continue
			}
			if xv, yv := fmt.Sprint(x[k]), fmt.Sprint(y[k]); xv != yv {
				diffs = append(diffs, fmt.Sprintf("%s%s %s there, %s now", prefix, k, shorten(xv), shorten(yv)))
			}
		}
	}
	walk("", ma, mb)
	if len(diffs) > 3 {
		diffs = append(diffs[:3], "…")
	}
	return strings.Join(diffs, "; ")
}

// shorten keeps a value of a message short: the first 40 characters of a
// longer one (a list of hundreds of classes), with "…"; an empty one is "".
func shorten(v string) string {
	if v == "" {
		return `""`
	}
	if r := []rune(v); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return v
}

// Machine describes this machine for result files.
func Machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				model = strings.TrimSpace(line[strings.Index(line, ":")+1:])
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, %s/%s, %s", model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func writeTable(opts TableOptions, outs []CellOutcome, wall time.Duration) error {
	var tab eval.Table
	partial := false // a method failed on some repeats of a cell
	for _, o := range outs {
		if o.Results == nil {
			continue
		}
		for m, r := range o.Results.Methods {
			done := r.Completed() // a method that failed on a repeat has no value there
			if len(done) == 0 {
				continue
			}
			s, err := eval.Summarize(done)
			if err != nil {
				return err
			}
			tab.Add(m, o.Column, s)
			if len(done) < len(r.PerRepeat) {
				tab.Note(m, o.Column, fmt.Sprintf("%d of %d repeats", len(done), len(r.PerRepeat)))
				partial = true
			}
		}
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# Table 1 reproduction\n\nMode: %s. Wall time: %s.\n\n", tableMode(opts, QuickSets()), wall.Round(time.Second))
	if opts.CommitInfo != "" {
		fmt.Fprintf(&md, "%s\n\n", opts.CommitInfo)
	}
	fmt.Fprintf(&md, "Machine: %s.\n\n", Machine())
	if s := settingsTable(outs); s != "" {
		md.WriteString("Settings of each cell as run (its effective config, after the overrides):\n\n" + s + "\n")
	}
	md.WriteString("Accuracy on the episode's queries, mean ± 95% CI half-width over the repeats; the paper's value in brackets.\n\n")
	md.WriteString(tab.Markdown(true))
	if partial {
		md.WriteString("\nA cell marked [N of R repeats] is the mean over the N repeats the method completed: it failed on the others " +
			"(table.csv's status and the cell's results.json say why), so it is not over the same episodes as the rest of its column.\n")
	}
	md.WriteString("\n## Dr.k-NN against the paper\n\n| cell | ours | paper | difference | repeats | queries per repeat |\n|---|---|---|---|---|---|\n")
	for _, o := range outs {
		paper, ok := eval.PaperAccuracy("drknn", o.Column)
		ps := "–"
		if ok {
			ps = fmt.Sprintf("%.3f", paper)
		}
		if o.Results == nil {
			what := "not run"
			if o.Failed != "" {
				what = "failed"
			}
			fmt.Fprintf(&md, "| %s | %s | %s | – | – | – |\n", o.Name, what, ps)
			continue
		}
		r, evaluated := o.Results.Methods["drknn"]
		if !evaluated { // eval.methods without drknn: no 0.000 for it
			fmt.Fprintf(&md, "| %s | not evaluated | %s | – | %d | %s |\n", o.Name, ps, o.Results.Repeats, queriesNote(o.Results))
			continue
		}
		ours, diff := "failed", "–" // drknn failed on every repeat: no mean
		if !math.IsNaN(r.Mean) {
			ours = fmt.Sprintf("%.3f", r.Mean)
			if ok {
				diff = fmt.Sprintf("%+.3f", r.Mean-paper)
			}
		}
		q := queriesNote(o.Results)
		reps := strconv.Itoa(o.Results.Repeats)
		if n := len(r.Completed()); n < len(r.PerRepeat) {
			reps = fmt.Sprintf("%d of %d", n, len(r.PerRepeat))
		}
		fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %s |\n", o.Name, ours, ps, diff, reps, q)
	}
	md.WriteString(pairedMarkdown(outs))
	md.WriteString(scoresMarkdown(outs))
	var notRun []CellOutcome
	for _, o := range outs {
		if o.NotRun() != "" {
			notRun = append(notRun, o)
		}
	}
	if len(notRun) > 0 {
		md.WriteString("\n## Cells not run\n\n")
		for _, o := range notRun {
			fmt.Fprintf(&md, "- %s: %s\n", o.Name, o.NotRun())
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(opts.OutDir, "table.md"), md.Bytes()); err != nil {
		return err
	}
	var cb bytes.Buffer
	w := csv.NewWriter(&cb)
	w.Write([]string{"dataset", "ways", "shots", "method", "mean", "ci95", "paper", "repeats", "status",
		"log_loss", "log_loss_ci95", "ece", "ece_ci95"})
	for _, o := range outs {
		if o.Results == nil {
			w.Write([]string{configName(o.Column.Dataset), strconv.Itoa(o.Column.M), strconv.Itoa(o.Column.K), "", "", "", "", "", noResultsStatus(o.Skipped, o.Failed),
				"", "", "", ""})
			continue
		}
		for _, m := range o.Results.MethodOrder() {
			r := o.Results.Methods[m]
			paper := ""
			if p, ok := eval.PaperAccuracy(m, o.Column); ok {
				paper = strconv.FormatFloat(p, 'f', 3, 64)
			}
			w.Write([]string{configName(o.Column.Dataset), strconv.Itoa(o.Column.M), strconv.Itoa(o.Column.K), m,
				csvNum(r.Mean), csvNum(r.CI95), paper, strconv.Itoa(o.Results.Repeats), csvStatus(r, "repeats"),
				metricMean(r.LogLoss), metricCI(r.LogLoss), metricMean(r.ECE), metricCI(r.ECE)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(opts.OutDir, "table.csv"), cb.Bytes()); err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(opts.OutDir, "table-paired.csv"), pairedCSV(outs))
}

// noResultsStatus is the CSV status of a cell without results: "failed:
// …" for one that failed, "skipped: …" for one whose data is absent.
func noResultsStatus(skipped, failed string) string {
	if failed != "" {
		return notRun(skipped, failed)
	}
	return "skipped: " + skipped
}

// notRun is why a cell has no results: "failed: " and the error of a
// cell that failed as a whole, else why it was skipped ("" for neither).
func notRun(skipped, failed string) string {
	if failed != "" {
		return "failed: " + failed
	}
	return skipped
}

// csvStatus is a CSV row's status column: "ok", or the failure and how
// many of the units (repeats, tasks) it cost.
func csvStatus(r MethodResult, units string) string {
	if r.Error == "" {
		return "ok"
	}
	return fmt.Sprintf("failed on %d of %d %s: %s", len(r.Failed), len(r.PerRepeat), units, r.Error)
}

// csvNum formats a table value with 4 decimals ("" for NaN: one repeat).
func csvNum(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

func metricMean(m *Metric) string {
	if m == nil {
		return ""
	}
	return csvNum(m.Mean)
}

func metricCI(m *Metric) string {
	if m == nil {
		return ""
	}
	return csvNum(m.CI95)
}

// TablePairs are the paired comparisons drknn-table reports per cell, as
// (method, reference): method − reference on the same repeats.
var TablePairs = [][2]string{
	{eval.MethodDrKNN, eval.MethodEmbeddingKNN},
	{eval.MethodDrKNNTruncated, eval.MethodDrKNN},
}

// Paired is the difference of two methods' accuracies on the same repeats
// of a run: the mean of the per-repeat differences with its 95% t-interval
// (eval.Summarize, N − 1 degrees of freedom), and on how many repeats the
// method was above, level with, or below the reference.
type Paired struct {
	Method, Reference  string
	Diff               eval.Summary
	Wins, Ties, Losses int
}

// PairedDiff compares method with reference on r's repeats; false when
// either is missing.
func PairedDiff(r *Results, method, reference string) (Paired, bool, error) {
	a, okA := r.Methods[method]
	b, okB := r.Methods[reference]
	if !okA || !okB || len(a.PerRepeat) != len(b.PerRepeat) || len(a.PerRepeat) == 0 {
		return Paired{}, false, nil
	}
	p := Paired{Method: method, Reference: reference}
	var d []float64
	for i, x := range a.PerRepeat {
		if math.IsNaN(x) || math.IsNaN(b.PerRepeat[i]) {
			continue // a repeat where either failed has no pair
		}
		d = append(d, x-b.PerRepeat[i])
		switch {
		case d[len(d)-1] > 0:
			p.Wins++
		case d[len(d)-1] < 0:
			p.Losses++
		default:
			p.Ties++
		}
	}
	if len(d) == 0 {
		return Paired{}, false, nil
	}
	var err error
	p.Diff, err = eval.Summarize(d)
	return p, err == nil, err
}

// TruncationTolerance is issue 13.1's bar: drknn_truncated's mean accuracy
// within this of drknn's, or above it, in every cell.
const TruncationTolerance = 0.01

// accuracySlack is the slack of comparisons of mean accuracies: they are
// hits/nq, so their differences carry float64 rounding (0.79 − 0.80 =
// −0.010000000000000009); 1e-9 is far below one query in any episode.
const accuracySlack = 1e-9

// meetsTruncationBar reports whether a mean difference drknn_truncated −
// drknn meets TruncationTolerance (within accuracySlack).
func meetsTruncationBar(diff float64) bool { return diff >= -TruncationTolerance-accuracySlack }

// signed formats a difference "+0.012 ± 0.008" ("± n/a" with one repeat).
func signed(s eval.Summary) string {
	if math.IsNaN(s.HalfWidth) {
		return fmt.Sprintf("%+.3f ± n/a", s.Mean)
	}
	return fmt.Sprintf("%+.3f ± %.3f", s.Mean, s.HalfWidth)
}

// pairedMarkdown is table.md's section of paired differences per cell.
func pairedMarkdown(outs []CellOutcome) string {
	var b strings.Builder
	b.WriteString("\n## Paired differences\n\nPer cell, the mean over the repeats of one method's accuracy minus another's on the same episode, ± the 95% t-interval half-width of that mean; W/T/L counts the repeats where it was above / level / below. ")
	fmt.Fprintf(&b, "The last column checks issue 13.1's bar: drknn_truncated at least drknn − %.2f.\n\n", TruncationTolerance)
	b.WriteString("| cell | drknn − embedding_knn | W/T/L | drknn_truncated − drknn | W/T/L | truncated ≥ drknn − 0.01 |\n|---|---|---|---|---|---|\n")
	for _, o := range outs {
		if o.Results == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s |", o.Name)
		var trunc *Paired
		for _, pr := range TablePairs {
			p, ok, _ := PairedDiff(o.Results, pr[0], pr[1])
			if !ok {
				b.WriteString(" – | – |")
				continue
			}
			fmt.Fprintf(&b, " %s | %d/%d/%d |", signed(p.Diff), p.Wins, p.Ties, p.Losses)
			if pr[0] == eval.MethodDrKNNTruncated {
				trunc = &p
			}
		}
		switch {
		case trunc == nil:
			b.WriteString(" – |\n")
		case meetsTruncationBar(trunc.Diff.Mean):
			b.WriteString(" yes |\n")
		default:
			b.WriteString(" **no** |\n")
		}
	}
	return b.String()
}

// pairedCSV is table-paired.csv: one row per cell and comparison.
func pairedCSV(outs []CellOutcome) []byte {
	var cb bytes.Buffer
	w := csv.NewWriter(&cb)
	w.Write([]string{"dataset", "ways", "shots", "method", "reference", "mean_diff", "ci95", "wins", "ties", "losses", "repeats"})
	for _, o := range outs {
		if o.Results == nil {
			continue
		}
		for _, pr := range TablePairs {
			p, ok, _ := PairedDiff(o.Results, pr[0], pr[1])
			if !ok {
				continue
			}
			w.Write([]string{configName(o.Column.Dataset), strconv.Itoa(o.Column.M), strconv.Itoa(o.Column.K), p.Method, p.Reference,
				strconv.FormatFloat(p.Diff.Mean, 'f', 4, 64), csvNum(p.Diff.HalfWidth),
				strconv.Itoa(p.Wins), strconv.Itoa(p.Ties), strconv.Itoa(p.Losses), strconv.Itoa(p.Diff.N)})
		}
	}
	w.Flush()
	return cb.Bytes()
}

// scoresMarkdown is table.md's section of log-loss and ECE: one row per
// method, one column per cell run, "log-loss / ECE" means over the repeats.
func scoresMarkdown(outs []CellOutcome) string {
	var run []CellOutcome
	for _, o := range outs {
		if o.Results != nil {
			run = append(run, o)
		}
	}
	if len(run) == 0 {
		return ""
	}
	var methods []string
	for _, o := range run {
		for _, m := range o.Results.MethodOrder() {
			if !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	var b strings.Builder
	b.WriteString("\n## Log-loss and calibration\n\nLog-loss / expected calibration error (15 bins) of each method's class probabilities on the queries, means over the repeats (lower is better; always answering 1/M scores log M: 0.693 for 2-way, 1.609 for 5-way). table.csv has their 95% intervals.\n\n| method |")
	for _, o := range run {
		b.WriteString(" " + o.Name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(run)) + "\n")
	for _, m := range methods {
		b.WriteString("| " + m + " |")
		for _, o := range run {
			r, ok := o.Results.Methods[m]
			if !ok || r.LogLoss == nil || r.ECE == nil {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.3f / %.3f |", r.LogLoss.Mean, r.ECE.Mean)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// tableMode describes how the cells' configs were set: as committed, the
// quick smoke test, or with -set overrides (named; they apply after the
// quick settings).
func tableMode(opts TableOptions, quickSets []string) string {
	var parts []string
	if opts.Quick {
		parts = append(parts, "quick ("+strings.Join(quickSets, ", ")+") — a smoke test, not a result")
	}
	if len(opts.Sets) > 0 {
		parts = append(parts, "overrides `"+strings.Join(opts.Sets, "`, `")+"` applied to every cell")
	}
	if len(parts) == 0 {
		return "full (the configs as committed)"
	}
	return strings.Join(parts, "; then ")
}

// settingsTable lists the settings each cell ran with, read from its
// results (the effective config): what the header must not guess from the
// committed files.
func settingsTable(outs []CellOutcome) string {
	var b strings.Builder
	for _, o := range outs {
		if o.Results == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| cell | repeats | queries | model | steps | ϑ | k | methods |\n|---|---|---|---|---|---|---|---|\n")
		}
		c := o.Results.Config
		theta := fmt.Sprint(c.Train.Theta)
		if len(c.Train.ThetaGrid) > 0 {
			theta = fmt.Sprintf("CV over %v", c.Train.ThetaGrid)
		}
		steps := strconv.Itoa(c.fitSteps())
		if c.fitSteps() > 0 && (c.Train.Augment.Shift > 0 || c.Train.Augment.Flip) {
			steps += " (augmented)"
		}
		reused := ""
		if o.Reused {
			reused = " (reused)"
		}
		fmt.Fprintf(&b, "| %s%s | %d | %d | %s | %s | %s | %d | %d |\n", o.Name, reused, c.Repeats, c.Queries, c.Model.Kind, steps, theta,
			c.Eval.K, len(o.Results.Methods))
	}
	return b.String()
}

// queriesNote is the queries per repeat over the repeats that ran ("–"
// when none did): a repeat that failed as a whole records no queries.
func queriesNote(r *Results) string {
	lo, hi, short := math.MaxInt, 0, false
	for _, e := range r.Episodes {
		if e.Error != "" {
			continue
		}
		lo, hi = min(lo, len(e.QueryIndex)), max(hi, len(e.QueryIndex))
		short = short || e.Short
	}
	if lo > hi {
		return "–"
	}
	s := strconv.Itoa(lo)
	if hi != lo {
		s = fmt.Sprintf("%d–%d", lo, hi)
	}
	if short {
		s += " (all that remain)"
	}
	return s
}

// cellFixedSets refuses -set overrides of what a table cell fixes itself —
// its data set, ways and shots: applied after the cell's own values they
// won, and the table then labelled (and compared with the paper) a cell of
// another size than it ran — and of the protocol, which the table fixes
// (Table 1: episodes; the transfer table: transfer): -set protocol=fit
// wrote a Table 1 of cross-validation scores labelled as episodes.
// (Table 1 and the transfer table.)
func cellFixedSets(sets []string) error {
	for _, kv := range sets {
		key, _, _ := strings.Cut(kv, "=")
		switch k := strings.TrimSpace(key); k {
		case "dataset", "ways", "shots":
			return configErr(fmt.Errorf("-set %s: every cell fixes its own data set, ways and shots; run one size with drknn-train -config", k))
		case "protocol":
			return configErr(fmt.Errorf("-set %s: the table fixes the protocol (Table 1: episodes; -transfer: transfer); run another protocol with drknn-train -config", k))
		}
	}
	return nil
}

// tableProtocol refuses a Table 1 cell whose config (from a -configs
// folder) is not of the episodes protocol.
func tableProtocol(path string, cfg Config) error {
	switch cfg.Protocol {
	case "", ProtocolEpisodes:
		return nil
	}
	return configErr(fmt.Errorf("%s: key protocol = %s: Table 1's cells run the episodes protocol", path, cfg.Protocol))
}

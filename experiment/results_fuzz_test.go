package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/drknn/drknn/eval"
	"github.com/drknn/drknn/internal/datadir"
	"github.com/drknn/drknn/internal/oneline"
)

// resultsSeed is a finished cell's results.json with the config it was
// made with (what finishedCell is asked for) and its table column.
type resultsSeed struct {
	name     string
	col      eval.Column
	transfer *TransferCell // a transfer table's cell (col unused)
	b        []byte
	cfg      Config
}

var quickSeed struct {
	once sync.Once
	seed resultsSeed
	err  error
}

// quickResults runs one quick Table 1 cell (lung-cancer, 3 repeats, the
// methods of the paired comparisons) once per test binary and returns its
// results.json.
func quickResults(t testing.TB) resultsSeed {
	t.Helper()
	data, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Skip(err)
	}
	quickSeed.once.Do(func() {
		out, err := os.MkdirTemp("", "resfuzz")
		if err != nil {
			quickSeed.err = err
			return
		}
		defer os.RemoveAll(out)
		outs, err := RunTable(t.Context(), TableOptions{OutDir: out, Only: []string{"lung-cancer-3w5s"}, Quick: true,
			Sets: []string{"data_dir=" + data, "repeats=3", "queries=10", "eval.methods=[drknn,drknn_truncated,embedding_knn]"}})
		if err != nil {
			quickSeed.err = err
			return
		}
		if len(outs) != 1 || outs[0].Results == nil {
			quickSeed.err = errors.New("the quick cell has no results")
			return
		}
		b, err := os.ReadFile(filepath.Join(out, "cells", outs[0].Name, "results.json"))
		quickSeed.seed, quickSeed.err = resultsSeed{outs[0].Name, outs[0].Column, nil, b, outs[0].Results.Config}, err
	})
	if quickSeed.err != nil {
		t.Fatal(quickSeed.err)
	}
	return quickSeed.seed
}

var transferSeed struct {
	once sync.Once
	seed resultsSeed
	err  error
}

// quickTransferResults runs the transfer table's quick MNIST 5-way 1-shot
// cell once per test binary and returns its results.json.
func quickTransferResults(t testing.TB) resultsSeed {
	t.Helper()
	if _, err := datadir.Require("mnist"); err != nil {
		t.Skip(err)
	}
	transferSeed.once.Do(func() {
		out, err := os.MkdirTemp("", "resfuzz")
		if err != nil {
			transferSeed.err = err
			return
		}
		defer os.RemoveAll(out)
		outs, err := RunTransferTable(t.Context(), TableOptions{OutDir: out, Only: []string{"mnist-5w1s"}, Quick: true})
		if err != nil {
			transferSeed.err = err
			return
		}
		if len(outs) != 1 || outs[0].Results == nil {
			transferSeed.err = errors.New("the quick transfer cell has no results")
			return
		}
		cell := outs[0].Cell
		b, err := os.ReadFile(filepath.Join(out, "cells", cell.Name(), "results.json"))
		transferSeed.seed, transferSeed.err = resultsSeed{cell.Name(), eval.Column{}, &cell, b, outs[0].Results.Config}, err
	})
	if transferSeed.err != nil {
		t.Fatal(transferSeed.err)
	}
	return transferSeed.seed
}

// committedSeeds are the committed results of Table 1's cells
// (results/table-cells), each with its own config.
func committedSeeds(t testing.TB) []resultsSeed {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "results", "table-cells", "*.json"))
	var seeds []resultsSeed
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		i := slices.IndexFunc(eval.PaperColumns(), func(c eval.Column) bool { return cellName(c) == name })
		if i < 0 {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var res Results
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seeds = append(seeds, resultsSeed{name, eval.PaperColumns()[i], nil, b, res.Config})
	}
	return seeds
}

// finishedCellBytes writes b as a cell's results.json and reads it back
// with finishedCell(want).
func finishedCellBytes(t testing.TB, b []byte, want Config) (*Results, string, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := finishedCell(dir, want)
	return res, path, err
}

// checkRendered writes the table of one cell with res (finishedCell's
// answer for cfg) as RunTable does and checks it says what res does:
// a row per method with the config's repeats, "failed on N of R" with N
// the repeats it has no accuracy on, means in [0, 1], paired differences
// over no more repeats than there are.
func checkRendered(t *testing.T, s resultsSeed, res *Results, cfg Config) {
	t.Helper()
	if s.transfer != nil {
		checkTransferRendered(t, *s.transfer, res, cfg)
		return
	}
	dir := t.TempDir()
	outs := []CellOutcome{{Column: s.col, Name: s.name, Results: res, Reused: true}}
	if err := writeTable(TableOptions{OutDir: dir}, outs, 0); err != nil {
		t.Fatalf("writeTable: %v", err)
	}
	rows := readCSV(t, filepath.Join(dir, "table.csv"))
	if got, want := len(rows)-1, len(cfg.methods()); got != want {
		t.Fatalf("table.csv has %d method rows, the config evaluates %d methods", got, want)
	}
	reps := strconv.Itoa(cfg.Repeats)
	for _, row := range rows[1:] {
		m := row[3]
		if row[7] != reps {
			t.Errorf("table.csv: %s: repeats %s, the config's is %s", m, row[7], reps)
		}
		r := res.Methods[m]
		if nan := len(r.PerRepeat) - len(r.Completed()); nan > 0 {
			if want := "failed on " + strconv.Itoa(nan) + " of " + reps + " repeats"; !strings.HasPrefix(row[8], want) {
				t.Errorf("table.csv: %s: status %q, want %q…", m, row[8], want)
			}
		} else if row[8] != "ok" {
			t.Errorf("table.csv: %s: status %q with an accuracy on every repeat", m, row[8])
		}
		if row[4] != "" {
			if v, err := strconv.ParseFloat(row[4], 64); err != nil || v < 0 || v > 1 {
				t.Errorf("table.csv: %s: mean %q", m, row[4])
			}
		}
		if done := r.Completed(); len(done) > 0 {
			// The mean the table shows is that of the accuracies it counts.
			if s, err := eval.Summarize(done); err != nil || csvNum(s.Mean) != row[4] {
				t.Errorf("table.csv: %s: mean %q, the mean of per_repeat %v is %v (%v)", m, row[4], done, s.Mean, err)
			}
		}
	}
	for _, row := range readCSV(t, filepath.Join(dir, "table-paired.csv"))[1:] {
		if n, err := strconv.Atoi(row[10]); err != nil || n < 1 || n > cfg.Repeats {
			t.Errorf("table-paired.csv: %s − %s over %q repeats of %d", row[3], row[4], row[10], cfg.Repeats)
		}
	}
}

// checkTransferRendered is checkRendered for the transfer table: a row
// of transfer.csv per method with the config's tasks, "failed on N of R
// tasks" with N the tasks it has no accuracy on, the mean of the
// accuracies it counts.
func checkTransferRendered(t *testing.T, cell TransferCell, res *Results, cfg Config) {
	t.Helper()
	dir := t.TempDir()
	outs := []TransferOutcome{{Cell: cell, Results: res, Reused: true}}
	if err := writeTransferTable(TableOptions{OutDir: dir}, outs, 0); err != nil {
		t.Fatalf("writeTransferTable: %v", err)
	}
	rows := readCSV(t, filepath.Join(dir, "transfer.csv"))
	if got, want := len(rows)-1, len(cfg.transferMethods()); got != want {
		t.Fatalf("transfer.csv has %d method rows, the config evaluates %d methods", got, want)
	}
	tasks := strconv.Itoa(cfg.Repeats)
	for _, row := range rows[1:] {
		m := row[3]
		if row[6] != tasks {
			t.Errorf("transfer.csv: %s: tasks %s, the config's is %s", m, row[6], tasks)
		}
		r := res.Methods[m]
		if nan := len(r.PerRepeat) - len(r.Completed()); nan > 0 {
			if want := "failed on " + strconv.Itoa(nan) + " of " + tasks + " tasks"; !strings.HasPrefix(row[9], want) {
				t.Errorf("transfer.csv: %s: status %q, want %q…", m, row[9], want)
			}
		}
		if done := r.Completed(); len(done) > 0 {
			if s, err := eval.Summarize(done); err != nil || csvNum(s.Mean) != row[4] {
				t.Errorf("transfer.csv: %s: mean %q, the mean of per_repeat %v is %v (%v)", m, row[4], done, s.Mean, err)
			}
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// FuzzFinishedCell: whatever a results.json holds, finishedCell returns
// results the table renders without panicking and consistently with the
// config (checkRendered), or an error — ErrConfig for another config,
// else errDamagedCell naming the file, in one line.
func FuzzFinishedCell(f *testing.F) {
	seeds := committedSeeds(f)
	if _, err := datadir.Require("lung-cancer"); err == nil {
		seeds = append([]resultsSeed{quickResults(f)}, seeds...)
	}
	if _, err := datadir.Require("mnist"); err == nil {
		seeds = append(seeds, quickTransferResults(f))
	}
	if len(seeds) == 0 {
		f.Skip("no results.json to start from")
	}
	for i, s := range seeds {
		f.Add(s.b, uint8(i))
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		s := seeds[int(which)%len(seeds)]
		res, path, err := finishedCellBytes(t, b, s.cfg)
		if err != nil {
			if res != nil {
				t.Fatalf("results and an error: %v", err)
			}
			msg := oneline.Err(err)
			if !errors.Is(err, ErrConfig) && !(errors.Is(err, errDamagedCell) && strings.Contains(msg, path)) {
				t.Fatalf("neither another config nor a damaged cell naming %s: %v", path, err)
			}
			return
		}
		if res == nil {
			t.Fatal("no results and no error for a results.json that is there")
		}
		checkRendered(t, s, res, s.cfg)
	})
}

// editResults is seed's results.json with edit applied to its JSON form.
func editResults(t *testing.T, b []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func method(v map[string]any, m string) map[string]any {
	return v["methods"].(map[string]any)[m].(map[string]any)
}

// TestFinishedCellDamaged: a results.json that parses and records the
// cell's config, but whose contents the table would index out of range,
// render wrong or silently drop (a method with fewer accuracies than the
// repeats, no methods, a method named twice, accuracies outside [0, 1],
// failed repeats that do not exist, missing fields, null arrays), is a
// damaged cell — one line naming the file and the field — never results.
func TestFinishedCellDamaged(t *testing.T) {
	s := quickResults(t)
	if res, _, err := finishedCellBytes(t, s.b, s.cfg); err != nil || res == nil {
		t.Fatalf("the undamaged results.json: %v", err)
	}
	dup := bytes.Replace(s.b, []byte(`"methods": {`), []byte(`"methods": {"embedding_knn": {"mean": 0.5, "ci95": null, "per_repeat": [0.5, 0.5, 0.5]},`), 1)
	if bytes.Equal(dup, s.b) {
		t.Fatal("no methods object to edit")
	}
	for _, c := range []struct {
		name, field string
		b           []byte
	}{
		{"fewer accuracies than repeats", "methods.drknn.per_repeat", editResults(t, s.b, func(v map[string]any) {
			m := method(v, "drknn")
			m["per_repeat"] = m["per_repeat"].([]any)[:2]
		})},
		{"more accuracies than repeats", "methods.embedding_knn.per_repeat", editResults(t, s.b, func(v map[string]any) {
			m := method(v, "embedding_knn")
			m["per_repeat"] = append(m["per_repeat"].([]any), 0.5, 0.5)
		})},
		{"empty methods", "methods: no drknn", editResults(t, s.b, func(v map[string]any) { v["methods"] = map[string]any{} })},
		{"null methods", "methods: no drknn", editResults(t, s.b, func(v map[string]any) { v["methods"] = nil })},
		{"no methods", "methods: no drknn", editResults(t, s.b, func(v map[string]any) { delete(v, "methods") })},
		{"a method missing", "methods: no drknn_truncated", editResults(t, s.b, func(v map[string]any) {
			delete(v["methods"].(map[string]any), "drknn_truncated")
		})},
		{"a method the config does not evaluate", "methods.svm", editResults(t, s.b, func(v map[string]any) {
			v["methods"].(map[string]any)["svm"] = method(v, "drknn")
		})},
		{"a method named twice", "methods: embedding_knn named twice", dup},
		{"two methods objects", "methods: given twice", append(bytes.TrimSuffix(bytes.TrimSpace(s.b), []byte("}")), []byte(`, "methods": {"drknn": {"mean": 0.5, "ci95": null, "per_repeat": [0.5, 0.5, 0.5]}}}`)...)},
		{"accuracy above 1", "methods.drknn.per_repeat: repeat 2", editResults(t, s.b, func(v map[string]any) {
			method(v, "drknn")["per_repeat"].([]any)[1] = 1.5
		})},
		{"negative accuracy", "methods.drknn_truncated.per_repeat: repeat 1", editResults(t, s.b, func(v map[string]any) {
			method(v, "drknn_truncated")["per_repeat"].([]any)[0] = -0.25
		})},
		{"a failed repeat beyond the repeats", "methods.drknn.failed", editResults(t, s.b, func(v map[string]any) {
			m := method(v, "drknn")
			m["failed"], m["error"] = []any{9}, "repeat 9: lost"
		})},
		{"a null accuracy not in failed", "methods.drknn.failed", editResults(t, s.b, func(v map[string]any) {
			method(v, "drknn")["per_repeat"].([]any)[2] = nil
		})},
		{"no per_repeat", "methods.drknn.per_repeat", editResults(t, s.b, func(v map[string]any) { delete(method(v, "drknn"), "per_repeat") })},
		{"null per_repeat", "methods.embedding_knn.per_repeat", editResults(t, s.b, func(v map[string]any) { method(v, "embedding_knn")["per_repeat"] = nil })},
		{"a mean that is not per_repeat's", "methods.drknn.mean", editResults(t, s.b, func(v map[string]any) { method(v, "drknn")["mean"] = 0.999 })},
		{"no mean", "methods.drknn.mean", editResults(t, s.b, func(v map[string]any) { delete(method(v, "drknn"), "mean") })},
		{"repeats not the config's", "repeats 10", editResults(t, s.b, func(v map[string]any) { v["repeats"] = 10 })},
		{"no repeats", "repeats 0", editResults(t, s.b, func(v map[string]any) { delete(v, "repeats") })},
		{"null episodes", "episodes: 0 records", editResults(t, s.b, func(v map[string]any) { v["episodes"] = nil })},
		{"log-loss over fewer repeats", "methods.drknn.log_loss.per_repeat", editResults(t, s.b, func(v map[string]any) {
			ll := method(v, "drknn")["log_loss"].(map[string]any)
			ll["per_repeat"] = ll["per_repeat"].([]any)[:1]
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, path, err := finishedCellBytes(t, c.b, s.cfg)
			if res != nil || !errors.Is(err, errDamagedCell) {
				t.Fatalf("results %v, error %v; want a damaged cell", res != nil, err)
			}
			msg := oneline.Err(err)
			if msg != err.Error() || !strings.Contains(msg, path) || !strings.Contains(msg, c.field) {
				t.Fatalf("%q: want one line naming %s and %q", msg, path, c.field)
			}
		})
	}
}

// TestFinishedCellTransferRecord: a transfer cell's results.json without
// its transfer record (which the transfer table reads for the trainings),
// or with a task's accuracy missing from one method, is a damaged cell,
// and the transfer table of what finishedCell returns never panics.
func TestFinishedCellTransferRecord(t *testing.T) {
	s := quickTransferResults(t)
	if res, _, err := finishedCellBytes(t, s.b, s.cfg); err != nil || res == nil {
		t.Fatalf("the undamaged results.json: %v", err)
	}
	for _, c := range []struct {
		name, field string
		b           []byte
	}{
		{"no transfer record", "transfer: missing", editResults(t, s.b, func(v map[string]any) { delete(v, "transfer") })},
		{"null transfer record", "transfer: missing", editResults(t, s.b, func(v map[string]any) { v["transfer"] = nil })},
		{"a task's accuracy missing", "methods.proto_net.per_repeat", editResults(t, s.b, func(v map[string]any) {
			m := method(v, "proto_net")
			m["per_repeat"] = m["per_repeat"].([]any)[1:]
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, path, err := finishedCellBytes(t, c.b, s.cfg)
			if res != nil {
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("writeTransferTable panicked on the results finishedCell accepted: %v", p)
						}
					}()
					writeTransferTable(TableOptions{OutDir: t.TempDir()}, []TransferOutcome{{Cell: *s.transfer, Results: res}}, 0)
				}()
				t.Fatal("accepted")
			}
			if msg := oneline.Err(err); !errors.Is(err, errDamagedCell) || msg != err.Error() || !strings.Contains(msg, path) || !strings.Contains(msg, c.field) {
				t.Fatalf("%v: want a damaged cell, one line naming %s and %q", err, path, c.field)
			}
		})
	}
}

// TestTableResumeInconsistentCell: -resume with a cell whose results.json
// parses but holds 2 accuracies of drknn for 3 repeats runs the cell again
// with the damaged-cell note naming the file and the field, and the table
// then says 3 repeats for every method.
func TestTableResumeInconsistentCell(t *testing.T) {
	data, err := datadir.Require("lung-cancer")
	if err != nil {
		t.Skip(err)
	}
	out := t.TempDir()
	opts := TableOptions{OutDir: out, Only: []string{"lung-cancer-3w5s"}, Quick: true,
		Sets: []string{"data_dir=" + data, "repeats=3", "queries=10", "eval.methods=[drknn,embedding_knn]"}}
	first, err := RunTable(t.Context(), opts)
	if err != nil || len(first) != 1 {
		t.Fatalf("%v, %d cells", err, len(first))
	}
	path := filepath.Join(out, "cells", first[0].Name, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = editResults(t, b, func(v map[string]any) {
		m := method(v, "drknn")
		m["per_repeat"] = m["per_repeat"].([]any)[:2]
	})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	opts.Resume = true
	opts.Observer = func(e Event) {
		if m, ok := e.(Message); ok {
			msgs = append(msgs, m.Text)
		}
	}
	outs, err := RunTable(t.Context(), opts)
	if err != nil || len(outs) != 1 {
		t.Fatalf("-resume: %v", err)
	}
	if o := outs[0]; o.Reused || o.Results == nil {
		t.Fatalf("the damaged cell was reused: %+v", o)
	}
	want := "cell " + first[0].Name + ": damaged results: " + path + ": methods.drknn.per_repeat: 2 accuracies, the config's repeats is 3; running the cell again"
	if !slices.Contains(msgs, want) {
		t.Fatalf("no note %q in %q", want, msgs)
	}
	for _, row := range readCSV(t, filepath.Join(out, "table.csv"))[1:] {
		if row[7] != "3" || len(outs[0].Results.Methods[row[3]].PerRepeat) != 3 {
			t.Errorf("table.csv row %q", row)
		}
	}
}

package experiment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drknn/drknn/internal/atomicfile"
)

// runEntries are the files and folders a run writes in its folder (every
// protocol): what -force replaces.
var runEntries = []string{"results.json", "train.log", "repeats", "export", "checkpoint.bin", "settings.json", "cv.json", "history.json", "train"}

// ErrRunDirInUse is wrapped by PrepareRunDir's refusal of a folder that
// already holds files.
var ErrRunDirInUse = errors.New("run folder in use")

// PrepareRunDir checks that dir may receive a new run. A missing or empty
// folder is fine; a folder holding anything is refused (wrapping
// ErrRunDirInUse, one line naming the folder) unless resume (continue the
// run in it; a finished run, one with results.json, is refused all the
// same) or force (the run outputs of runEntries are removed first; other
// files are left alone).
func PrepareRunDir(dir string, resume, force bool) error {
	if err := recoverPartial(dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	if force {
		for _, name := range runEntries {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("run folder: %w", err)
			}
		}
		return nil
	}
	if resume {
		if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
			return fmt.Errorf("%w: %s already holds a finished run (results.json); replace it with -force or choose another -out", ErrRunDirInUse, dir)
		}
		return nil
	}
	return fmt.Errorf("%w: %s is not empty (%d entries, e.g. %s); continue its run with -resume, replace it with -force, or choose another -out",
		ErrRunDirInUse, dir, len(ents), ents[0].Name())
}

// isTemp reports whether a file name is the temporary of an atomic write
// of a run output (internal/atomicfile's ".NAME.tmp-…"): NAME one of the
// kinds of file a run writes.
func isTemp(name string) bool {
	i := strings.Index(name, ".tmp")
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	switch filepath.Ext(name[1:i]) {
	case ".json", ".bin", ".npy", ".csv", ".md", ".png", ".svg":
		return true
	}
	return false
}

// RemoveTemps deletes the temporaries that atomic writes killed before
// their rename (SIGKILL, power loss) left in dir and under its run
// folders (repeats/, export/, train/, cells/), and returns how many it
// removed. A run calls it on start: nothing else writes there. Files that
// are not temporaries of run outputs are never touched.
func RemoveTemps(dir string) (int, error) {
	n := 0
	remove := func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() && p != dir && filepath.Dir(p) == dir && !slices.Contains([]string{"repeats", "export", "train", "cells"}, e.Name()) {
			return fs.SkipDir // not a run folder of ours
		}
		if e.Type().IsRegular() && isTemp(e.Name()) {
			if err := os.Remove(p); err != nil {
				return err
			}
			n++
		}
		return nil
	}
	if err := filepath.WalkDir(dir, remove); err != nil {
		return n, fmt.Errorf("run folder: removing stale temporaries: %w", err)
	}
	return n, nil
}

// CheckRunDirData refuses a run folder dir that overlaps the data the run
// reads (dataDir, the config's data_dir; "" — a data set under the data
// root — is never checked): the data folder itself, or data inside one of
// the outputs a run writes and -force removes (runEntries: a split image
// folder's train/ is one), or a run folder inside the data folder (its
// outputs would be read back as data — a class folder "runs", say). Both
// paths are compared resolved (resolvePath: symbolic links followed, a
// folder not made yet by its nearest existing parent), so a link to the
// data folder, or to a folder above it, is no way past the check. One line
// naming both paths, wrapping ErrRunDirInUse.
func CheckRunDirData(dir, dataDir string) error {
	if strings.TrimSpace(dataDir) == "" {
		return nil
	}
	out, err1 := resolvePath(dir)
	data, err2 := resolvePath(dataDir)
	if err1 != nil || err2 != nil {
		return nil // no working directory: nothing to compare (the run reports its own error)
	}
	if rel, err := filepath.Rel(out, data); err == nil && (rel == "." || runEntryPath(rel)) {
		return fmt.Errorf("%w: -out %s would hold its run outputs where data_dir %s is (-force removes %s); choose an -out outside the data", ErrRunDirInUse, dir, dataDir, strings.Join(runEntries, ", "))
	}
	if st, err := os.Stat(data); err == nil && st.IsDir() && within(data, out) {
		return fmt.Errorf("%w: -out %s is inside data_dir %s, whose reader would take the run's outputs for data; choose an -out outside it", ErrRunDirInUse, dir, dataDir)
	}
	return nil
}

// checkTableData refuses a table folder dir that overlaps a cell's data
// (dataDir; "" is never checked): data anywhere inside the table folder
// (a cell's folder is removed whole when the cell runs afresh) or the
// table folder inside the data folder. Paths are compared resolved, as in
// CheckRunDirData; one line naming both, an ErrConfig.
func checkTableData(dir, dataDir string) error {
	if strings.TrimSpace(dataDir) == "" {
		return nil
	}
	out, err1 := resolvePath(dir)
	data, err2 := resolvePath(dataDir)
	if err1 != nil || err2 != nil {
		return nil
	}
	if out == data || within(out, data) {
		return configErr(fmt.Errorf("%w: data_dir %s is inside the table folder -out %s, whose cell folders a run replaces; choose an -out outside the data", ErrRunDirInUse, dataDir, dir))
	}
	if within(data, out) {
		return configErr(fmt.Errorf("%w: -out %s is inside data_dir %s, whose reader would take the table's outputs for data; choose an -out outside it", ErrRunDirInUse, dir, dataDir))
	}
	return nil
}

// within reports whether the clean absolute path p lies strictly inside
// the folder dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolvePath is p absolute, with its symbolic links resolved: of a path
// that does not exist (yet), its nearest existing parent is resolved and
// the rest appended.
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for d := abs; ; {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(d), rest)
		d = parent
	}
}

// runEntryPath reports whether rel, a path relative to a run folder, lies
// in one of the run's outputs (runEntries).
func runEntryPath(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return slices.Contains(runEntries, first)
}

// InterruptedNote says, for a run stopped in the run folder dir (Ctrl-C),
// where its checkpoints are — they are where each protocol writes them:
// dir/repeats/NN/checkpoint.bin (episodes), dir/train/<objective>/checkpoint.bin
// (transfer), dir/checkpoint.bin (fit) — with the finished
// cross-validation fits of train.theta_grid of a training stopped before
// its first checkpoint (cv.json beside where it would be), and how to go
// on, or that none was written.
func InterruptedNote(dir string) string {
	var kept []string
	if reps, _ := filepath.Glob(filepath.Join(dir, "repeats", "*", "checkpoint.bin")); len(reps) == 1 {
		kept = append(kept, reps[0])
	} else if len(reps) > 1 {
		kept = append(kept, fmt.Sprintf("%s (%d repeats)", filepath.Join(dir, "repeats", "*", "checkpoint.bin"), len(reps)))
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "train", "*", "checkpoint.bin"))
	kept = append(kept, objs...)
	if _, err := os.Stat(filepath.Join(dir, "checkpoint.bin")); err == nil {
		kept = append(kept, filepath.Join(dir, "checkpoint.bin"))
	}
	// the cross-validation fits of train.theta_grid (cv.json) of trainings
	// stopped before their first checkpoint
	var cv []string
	cvs, _ := filepath.Glob(filepath.Join(dir, "repeats", "*", "cv.json"))
	if _, err := os.Stat(filepath.Join(dir, "cv.json")); err == nil {
		cvs = append(cvs, filepath.Join(dir, "cv.json"))
	}
	for _, c := range cvs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(c), "checkpoint.bin")); err != nil {
			cv = append(cv, c)
		}
	}
	if len(cv) > 1 {
		cv = []string{fmt.Sprintf("%s (%d repeats)", filepath.Join(dir, "repeats", "*", "cv.json"), len(cv))}
	}
	switch {
	case len(kept) == 0 && len(cv) == 0:
		return fmt.Sprintf("no checkpoint was written in %s before the stop; a rerun (-resume or -force) trains from the start", dir)
	case len(kept) == 0:
		return fmt.Sprintf("no checkpoint was written in %s before the stop; the finished cross-validation fits are kept in %s; continue with -resume", dir, cv[0])
	case len(cv) == 0:
		return fmt.Sprintf("checkpoints kept in %s; continue with -resume", strings.Join(kept, ", "))
	}
	return fmt.Sprintf("checkpoints kept in %s, finished cross-validation fits in %s; continue with -resume", strings.Join(kept, ", "), cv[0])
}

// ReplacedDir is the folder, inside a run folder, where -force keeps the
// run it replaces (ReplaceRunDir) until the new run has finished.
const ReplacedDir = ".replaced-run"

// partialDir is the folder, inside a run folder, that a set-aside fills
// before it is renamed to ReplacedDir, and that a restore renames
// ReplacedDir to before it empties it: each move is then one rename at
// the folder level. One left by a kill holds entries of the earlier run
// whose other entries are in the run folder; recoverPartial puts them
// back.
const partialDir = ReplacedDir + ".partial"

// recoverPartial puts back into the run folder dir the entries a set-aside
// or a restore killed half-way left in dir/partialDir — the earlier run's,
// none of them in dir: the new run never started, or its entries were
// removed — and removes it, with the note of a transfer training's
// set-aside (asideNote), which means nothing without one. A name in both
// is refused (one line naming both) with nothing moved. Nothing to do
// when there is no partialDir.
func recoverPartial(dir string) error {
	partial := filepath.Join(dir, partialDir)
	if _, err := os.Lstat(partial); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	ents, err := os.ReadDir(partial)
	if err != nil {
		return fmt.Errorf("run folder: recovering an interrupted set-aside: %w", err)
	}
	for _, e := range ents {
		if _, err := os.Lstat(filepath.Join(dir, e.Name())); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("run folder: recovering an interrupted set-aside: %s would replace %s; move one of them away", filepath.Join(partial, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	for _, e := range ents {
		if err := os.Rename(filepath.Join(partial, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("run folder: recovering an interrupted set-aside: %w", err)
		}
	}
	if err := os.Remove(partial); err != nil {
		return fmt.Errorf("run folder: recovering an interrupted set-aside: %w", err)
	}
	os.Remove(filepath.Join(dir, asideNote))
	return nil
}

// Replaced is a finished (or stopped) run that -force set aside in its run
// folder's ReplacedDir while a new run is made in its place: Settle puts
// it back if the new run fails, and deletes it once the new run has
// finished.
type Replaced struct {
	dir     string // the run folder
	aside   string // dir/ReplacedDir, "" when nothing was set aside
	restore bool   // -force: a new run that fails gives the earlier run back
	kind    replacedKind
}

// replacedKind is what a folder set aside by -force holds: a run folder's
// run outputs (runKind), or a transfer table's base-class training
// (trainingKind).
type replacedKind struct {
	what string // the messages' word: "run", "training"
	// entries are the names of what the run made in dir, present or not
	// (the set-aside folder and the note never among them).
	entries func(dir string) []string
	// finished reports whether the run in dir had finished: then a
	// set-aside there is older than it, and it is the run to set aside.
	finished func(dir string) bool
	// note, when set, is the name of a file kept in dir beside the
	// set-aside, which writeNote writes (atomically) before anything is
	// set aside and which goes with the set-aside: what finished needs to
	// judge it later.
	note      string
	writeNote func(dir string) error
}

// runKind is a run folder's: its run outputs (runEntries); finished when
// results.json is there. ReplaceRunDir moves results.json first into the
// set-aside, and Settle puts it back last, so a results.json beside a
// set-aside is always the new run's, written after the set-aside.
var runKind = replacedKind{
	what:    "run",
	entries: func(string) []string { return runEntries },
	finished: func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "results.json"))
		return err == nil
	},
}

// asideNote is the file, in a transfer table's training folder,
// beside the earlier training -force set aside there (ReplacedDir): the
// cells' results.json that were there when it was set aside.
const asideNote = ".replaced-run-cells.json"

// asideCells is asideNote's content: each cell's folder name
// with the SHA-256 (hex) of its results.json, of the cells of the data
// set that had one when the training was set aside.
type asideCells struct {
	Results map[string]string `json:"results"`
}

// trainingKind is a transfer table's training folder OUT/train/<data
// set>, whose every entry (the objectives' folders) is the training's;
// cells are the folders of the cells of its data set (OUT/cells/<cell>).
//
// Nothing in the training folder itself says a finished cell used the
// training in it, and the cell's results.json is written before the
// set-aside is deleted, so a kill in between leaves a set-aside that is
// older than the training of a finished cell. What tells the two apart is
// a cell's results.json written after the set-aside: it was made with the
// training in the folder (the table trains there and nowhere else), which
// is then the one to keep (finished, trainingSuperseded). The
// modification times of results.json and of the set-aside would say so
// too, but not surely on a file system of coarse timestamps (a second,
// FAT's two) nor across a clock set back, and -force deletes one of the
// two trainings on that word; so the set-aside is recorded instead: before
// anything is moved, asideNote lists the digest of every results.json
// of the data set's cells (-force moves a cell's results.json into the
// cell's set-aside and back on failure, unchanged), and a results.json
// not listed was written since. A set-aside without a readable note (one
// made by an earlier drknn, or a note damaged) is never taken for
// superseded: it is kept, as before.
func trainingKind(cells []string) replacedKind {
	return replacedKind{
		what: "training",
		entries: func(dir string) []string {
			ents, _ := os.ReadDir(dir)
			var names []string
			for _, e := range ents {
				if e.Name() != ReplacedDir && e.Name() != partialDir && e.Name() != asideNote {
					names = append(names, e.Name())
				}
			}
			return names
		},
		finished: func(dir string) bool {
			for _, c := range cells {
				if trainingSuperseded(dir, c) {
					return true
				}
			}
			return false
		},
		note: asideNote,
		writeNote: func(dir string) error {
			note := asideCells{Results: map[string]string{}}
			for _, c := range cells {
				sum, err := resultsDigest(c)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return err
				}
				note.Results[filepath.Base(c)] = sum
			}
			b, err := json.MarshalIndent(note, "", "  ")
			if err != nil {
				return err
			}
			return atomicfile.WriteBytes(filepath.Join(dir, asideNote), append(b, '\n'))
		},
	}
}

// resultsDigest is the SHA-256 (hex) of the results.json in the run
// folder dir.
func resultsDigest(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// trainingSuperseded reports whether the earlier training set aside in
// the training folder trainDir is older than a finished cell's: whether
// the cell folder cell has a results.json that asideNote does not
// list (see trainingKind). False when there is no set-aside, no readable
// note, or no results.json.
func trainingSuperseded(trainDir, cell string) bool {
	if st, err := os.Lstat(filepath.Join(trainDir, ReplacedDir)); err != nil || !st.IsDir() {
		return false
	}
	b, err := os.ReadFile(filepath.Join(trainDir, asideNote))
	if err != nil {
		return false
	}
	var note asideCells
	if err := json.Unmarshal(b, &note); err != nil || note.Results == nil {
		return false
	}
	sum, err := resultsDigest(cell)
	return err == nil && note.Results[filepath.Base(cell)] != sum
}

// Aside is the folder that holds the earlier run ("" when none).
func (r *Replaced) Aside() string { return r.aside }

// ReplaceRunDir is -force: it moves the run outputs (runEntries) of dir
// into dir/ReplacedDir, so that the new run starts from a folder without
// them while nothing of the earlier run is lost before the new one has
// finished; other files are left where they are. A ReplacedDir already
// there is from a -force run that was stopped (Ctrl-C, or a kill): it is
// kept — the run it holds is the one still to be replaced — and what the
// stopped run left is removed, unless the stopped run had finished
// (results.json): then it is that run which is set aside. A missing or
// empty dir has nothing to set aside.
func ReplaceRunDir(dir string) (*Replaced, error) { return replaceDir(dir, runKind) }

// replaceTrainDir is ReplaceRunDir for a transfer table's training folder
// (trainingKind), cells the folders of its data set's cells: everything
// in it is set aside, and a set-aside already there is kept (what a
// stopped -force run trained is removed) unless a cell finished with the
// training in the folder since (trainingSuperseded): then the set-aside is
// deleted and that training set aside in its place.
func replaceTrainDir(dir string, cells []string) (*Replaced, error) {
	return replaceDir(dir, trainingKind(cells))
}

func replaceDir(dir string, kind replacedKind) (*Replaced, error) {
	r := &Replaced{dir: dir, restore: true, kind: kind}
	if _, err := os.ReadDir(dir); errors.Is(err, fs.ErrNotExist) {
		return r, nil
	} else if err != nil {
		return nil, fmt.Errorf("%s folder: %w", kind.what, err)
	}
	if err := recoverPartial(dir); err != nil {
		return nil, err
	}
	aside := filepath.Join(dir, ReplacedDir)
	_, err := os.Lstat(aside)
	hasAside := err == nil
	if hasAside && kind.finished(dir) {
		if err := os.RemoveAll(aside); err != nil {
			return nil, fmt.Errorf("%s folder: %w", kind.what, err)
		}
		hasAside = false
	}
	if hasAside {
		for _, name := range kind.entries(dir) {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("%s folder: %w", kind.what, err)
			}
		}
		r.aside = aside
		return r, nil
	}
	var present []string
	for _, name := range kind.entries(dir) {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			present = append(present, name)
		}
	}
	if len(present) == 0 {
		kind.removeNote(dir)
		return r, nil
	}
	if kind.writeNote != nil { // before anything is moved: a set-aside never goes without it
		if err := kind.writeNote(dir); err != nil {
			return nil, fmt.Errorf("%s folder: setting the earlier %s aside: %w", kind.what, kind.what, err)
		}
	}
	// The entries go into partialDir, which becomes ReplacedDir in one
	// rename: a kill half-way leaves a partialDir, which recoverPartial
	// empties back, never a half-filled ReplacedDir.
	partial := filepath.Join(dir, partialDir)
	if err := os.Mkdir(partial, 0o755); err != nil {
		kind.removeNote(dir)
		return nil, fmt.Errorf("%s folder: setting the earlier %s aside: %w", kind.what, kind.what, err)
	}
	var moved []string
	err = nil
	for _, name := range present {
		if err = os.Rename(filepath.Join(dir, name), filepath.Join(partial, name)); err != nil {
			break
		}
		moved = append(moved, name)
	}
	if err == nil {
		err = os.Rename(partial, aside)
	}
	if err != nil {
		for _, m := range moved { // put back what was moved: the folder as it was
			os.Rename(filepath.Join(partial, m), filepath.Join(dir, m))
		}
		os.Remove(partial)
		kind.removeNote(dir)
		return nil, fmt.Errorf("%s folder: setting the earlier %s aside: %w", kind.what, kind.what, err)
	}
	r.aside = aside
	return r, nil
}

// removeNote deletes the kind's note in dir, if it has one. Its errors
// are dropped: a note without a set-aside beside it means nothing (it is
// read only beside one, and written anew before every set-aside).
func (kind replacedKind) removeNote(dir string) {
	if kind.note != "" {
		os.Remove(filepath.Join(dir, kind.note))
	}
}

// ResumedRunDir is the Replaced of a run -resume continues in dir: the
// run a stopped -force run replaces, when there is one, which Settle
// deletes once the resumed run has finished (and keeps otherwise).
func ResumedRunDir(dir string) *Replaced { return resumedDir(dir, runKind) }

// resumedTrainDir is ResumedRunDir for a transfer table's training folder.
func resumedTrainDir(dir string) *Replaced { return resumedDir(dir, trainingKind(nil)) }

func resumedDir(dir string, kind replacedKind) *Replaced {
	r := &Replaced{dir: dir, kind: kind}
	if st, err := os.Lstat(filepath.Join(dir, ReplacedDir)); err == nil && st.IsDir() {
		r.aside = filepath.Join(dir, ReplacedDir)
	}
	return r
}

// Settle ends the replacement after the new run returned runErr: a run
// that finished (nil) deletes the earlier run; a stopped one (context
// cancelled) keeps it aside, for -resume; a -force run that failed is
// removed (its run outputs) and the earlier run put back. The error
// returned is runErr with what became of the earlier run, or an error of
// the settling itself.
func (r *Replaced) Settle(runErr error) error {
	if r == nil || r.aside == "" {
		return runErr
	}
	kind := r.kind
	if kind.entries == nil {
		kind = runKind
	}
	what := kind.what
	switch {
	case runErr == nil:
		if err := os.RemoveAll(r.aside); err != nil {
			return fmt.Errorf("%s folder: removing the replaced %s: %w", what, what, err)
		}
		kind.removeNote(r.dir)
		return nil
	case errors.Is(runErr, context.Canceled) || !r.restore:
		return fmt.Errorf("%w; the %s this one replaces is kept in %s until it finishes", runErr, what, r.aside)
	}
	for _, name := range kind.entries(r.dir) {
		if err := os.RemoveAll(filepath.Join(r.dir, name)); err != nil {
			return fmt.Errorf("%w; restoring the earlier %s from %s: %w", runErr, what, r.aside, err)
		}
	}
	// The set-aside is renamed to partialDir first, in one rename: a kill
	// while its entries go back leaves a partialDir, which recoverPartial
	// empties back, never a ReplacedDir holding part of the earlier run.
	// results.json goes back last all the same.
	partial := filepath.Join(r.dir, partialDir)
	if err := os.Rename(r.aside, partial); err != nil {
		return fmt.Errorf("%w; restoring the earlier %s from %s: %w", runErr, what, r.aside, err)
	}
	r.aside = partial // what is left of the earlier run, if the restore stops
	ents, err := os.ReadDir(partial)
	slices.SortStableFunc(ents, func(a, b fs.DirEntry) int {
		return cmpBool(a.Name() == "results.json", b.Name() == "results.json")
	})
	for _, e := range ents {
		if err == nil {
			err = os.Rename(filepath.Join(partial, e.Name()), filepath.Join(r.dir, e.Name()))
		}
	}
	if err == nil {
		err = os.Remove(partial)
	}
	if err != nil {
		return fmt.Errorf("%w; restoring the earlier %s from %s: %w", runErr, what, partial, err)
	}
	kind.removeNote(r.dir)
	return fmt.Errorf("%w; the earlier %s in %s is restored (-force replaces it only when the new %s finishes)", runErr, what, r.dir, what)
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

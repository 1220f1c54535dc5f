package datasets

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/drknn/drknn/internal/datadir"
)

// SetState is what Verify finds of one built-in data set.
type SetState string

// Verify's verdicts for one data set.
const (
	StateOK      SetState = "ok"      // complete and as published
	StateAbsent  SetState = "absent"  // not there at all
	StatePartial SetState = "partial" // some files missing; those present match
	StateBad     SetState = "BAD"     // something present is wrong
)

// SetStatus is Verify's finding for one data set.
type SetStatus struct {
	Name   string
	State  SetState
	Detail string // what is missing (partial) or wrong (BAD)
}

// VerifyReport is what Verify found in a data folder.
type VerifyReport struct {
	Dir  string
	Sets []SetStatus // one per built-in set, in FetchSets order
	// Sums is the number of entries of Dir/MD5SUMS checked (0 when there is
	// no MD5SUMS file: HasSums false), SumsBad one description per missing or
	// different file.
	HasSums bool
	Sums    int
	SumsBad []string
	// Unlisted holds, when there is an MD5SUMS file, the files (paths as
	// MD5SUMS writes them, sorted) that a present set's readers read but
	// MD5SUMS has no line for: nothing checks them. As with go.sum or
	// pip's hash-checking mode, a missing entry is a failure, not a pass.
	Unlisted []string
}

// OK reports whether everything present is as it should be: no set is BAD
// and every MD5SUMS entry matches. Absent and partial sets are not failures.
func (r *VerifyReport) OK() bool {
	for _, s := range r.Sets {
		if s.State == StateBad {
			return false
		}
	}
	return len(r.SumsBad) == 0 && len(r.Unlisted) == 0
}

// WriteTo writes the report as text, one line per set ("mnist        ok",
// "cifar10      partial: …") and a summary of the MD5SUMS check.
func (r *VerifyReport) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	for _, s := range r.Sets {
		fmt.Fprintf(&b, "%-12s %s", s.Name, s.State)
		if s.Detail != "" {
			b.WriteString(": " + s.Detail)
		}
		b.WriteByte('\n')
	}
	list := func(lines []string, suffix string) {
		for i, l := range lines {
			if i == 10 {
				fmt.Fprintf(&b, "  … and %d more\n", len(lines)-10)
				break
			}
			fmt.Fprintf(&b, "  %s%s\n", l, suffix)
		}
	}
	if r.HasSums && len(r.SumsBad) == 0 && len(r.Unlisted) == 0 {
		fmt.Fprintf(&b, "MD5SUMS      ok, %d files match\n", r.Sums)
	}
	if r.HasSums && len(r.SumsBad) > 0 {
		fmt.Fprintf(&b, "MD5SUMS      BAD: %d of %d files missing or different\n", len(r.SumsBad), r.Sums)
		list(r.SumsBad, "")
	}
	if r.HasSums && len(r.Unlisted) > 0 {
		fmt.Fprintf(&b, "MD5SUMS      BAD: %d files of the data sets have no line in it, so nothing checks them (add them: md5sum ./PATH >> MD5SUMS in %s)\n", len(r.Unlisted), r.Dir)
		list(r.Unlisted, ": no entry in MD5SUMS")
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// Verify checks what is in dir: for every built-in set its files and layout
// (ok, absent, partial with the missing files, or BAD with the reason),
// then, when dir/MD5SUMS exists (lines "MD5  PATH" as md5sum writes them),
// every listed file, and that every file the present sets' readers read is
// listed (see VerifyReport.Unlisted). A folder holding none of the built-in sets is an error
// wrapping ErrNotFound (there is nothing to verify: a mistyped -dir or an
// unset DRKNN_DATA must not pass as success); so is a missing folder.
func Verify(ctx context.Context, dir string) (*VerifyReport, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, classify(fmt.Errorf("data folder: %w", err))
	} else if !fi.IsDir() {
		return nil, notFoundf("data folder %s is not a folder", dir)
	}
	r := &VerifyReport{Dir: dir}
	present := 0
	for _, s := range FetchSets() {
		top := strings.SplitN(s.Files[0].Dest, "/", 2)[0]
		st := SetStatus{Name: s.Name, State: StateOK}
		if _, err := os.Stat(filepath.Join(dir, top)); err != nil {
			st.State = StateAbsent
			r.Sets = append(r.Sets, st)
			continue
		}
		switch s.Name {
		case "mnist", "cifar10", "lung-cancer":
			missing, err := verifyKnownFiles(dir, knownFiles[s.Name])
			switch {
			case err != nil:
				st.State, st.Detail = StateBad, err.Error()
			case len(missing) == len(knownFiles[s.Name]):
				st.State = StateAbsent // an empty folder
			case len(missing) > 0:
				st.State, st.Detail = StatePartial, "present files match; missing "+strings.Join(missing, ", ")
			}
		default:
			// A tree whose folder is missing is missing, not wrong: a
			// set folder holding none of them (only an unfinished
			// download, say) is absent.
			var missing []string
			for _, spec := range treeLayouts[s.Name] {
				if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(spec.root))); errors.Is(err, os.ErrNotExist) {
					missing = append(missing, spec.root+"/")
				} else if err := checkTree(dir, spec); err != nil {
					st.State, st.Detail = StateBad, err.Error()
					break
				}
			}
			switch {
			case st.State == StateBad:
			case len(missing) == len(treeLayouts[s.Name]):
				st.State = StateAbsent
			case len(missing) > 0:
				st.State, st.Detail = StatePartial, "present folders match; missing "+strings.Join(missing, ", ")
			}
		}
		if st.State != StateAbsent {
			present++
		}
		r.Sets = append(r.Sets, st)
	}
	if present == 0 {
		return nil, notFoundf("no data set in %s (looked for %s; set %s or -dir, or download one: drknn-data get NAME)",
			dir, strings.Join(fetchTops(), ", "), datadir.EnvVar)
	}
	sums := filepath.Join(dir, "MD5SUMS")
	if _, err := os.Stat(sums); err == nil {
		entries, bad, err := checkMD5SUMS(ctx, dir, sums)
		if err != nil {
			return nil, err
		}
		r.HasSums, r.Sums, r.SumsBad = true, len(entries), bad
		r.Unlisted = unlistedFiles(dir, r.Sets, entries)
	}
	return r, nil
}

// unlistedFiles returns the files the present sets of sets need (setFiles)
// that no MD5SUMS entry names, sorted.
func unlistedFiles(dir string, sets []SetStatus, entries []MD5Entry) []string {
	listed := make(map[string]bool, len(entries))
	for _, e := range entries {
		listed[e.Path] = true
	}
	var out []string
	for _, s := range sets {
		if s.State == StateAbsent {
			continue
		}
		for _, p := range setFiles(dir, s.Name) {
			if !listed[p] {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// setFiles lists the present files of the built-in set name that its
// readers read, as paths relative to dir with "/": the known files of
// mnist, cifar10 and lung-cancer, every drawing of the two Omniglot sets
// and every image of the two COVID-CT folders. A part whose layout is wrong
// (reported by the set's check) is left out.
func setFiles(dir, name string) []string {
	var out []string
	if want, ok := knownFiles[name]; ok {
		for _, n := range sortedKeys(want) {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(n))); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	var roots []string
	depth := 1
	switch name {
	case "omniglot":
		roots, depth = []string{"omniglot/" + OmniglotBackground, "omniglot/" + OmniglotEvaluation}, 3
	case "covid-ct":
		for _, c := range COVIDCTClasses {
			roots = append(roots, "covid-ct/"+c)
		}
	}
	for _, root := range roots {
		files, err := treeFiles(filepath.Join(dir, filepath.FromSlash(root)), depth)
		if err != nil {
			continue
		}
		for _, f := range files {
			out = append(out, root+"/"+f)
		}
	}
	return out
}

// treeFiles lists the files of a tree of the given depth as countTree
// walks it, as paths relative to root with "/".
func treeFiles(root string, depth int) ([]string, error) {
	names, err := listDir(root, depth > 1)
	if err != nil || depth == 1 {
		return names, err
	}
	var out []string
	for _, n := range names {
		sub, err := treeFiles(filepath.Join(root, n), depth-1)
		if err != nil {
			return nil, err
		}
		for _, s := range sub {
			out = append(out, n+"/"+s)
		}
	}
	return out, nil
}

// FetchAll fetches every set in turn (see Fetch). A set that fails is
// reported and the others are still fetched: the error joins one error per
// failed set, each naming it. Only a cancelled ctx stops it early. Options
// that no fetch can work with (no Dir, a malformed BaseURL: see
// CheckBaseURL) are one error before any set is fetched.
func FetchAll(ctx context.Context, sets []FetchSet, opts FetchOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	var errs []error
	for _, s := range sets {
		if err := Fetch(ctx, s, opts); err != nil {
			if !strings.HasPrefix(err.Error(), s.Name+":") {
				err = fmt.Errorf("%s: %w", s.Name, err)
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// fetchTops lists the top-level folders of the built-in sets ("mnist/", …).
func fetchTops() []string {
	var out []string
	for _, s := range FetchSets() {
		out = append(out, strings.SplitN(s.Files[0].Dest, "/", 2)[0]+"/")
	}
	return out
}

// SelectFetchSets returns the built-in sets called names, in that order;
// "all" stands for every set and "cifar-10" for cifar10. An unknown name or
// an empty list is an error listing the known ones.
func SelectFetchSets(names []string) ([]FetchSet, error) {
	if len(names) == 0 {
		return nil, errors.New("name a data set (mnist, cifar10, omniglot, lung-cancer, covid-ct or all)")
	}
	var sets []FetchSet
	for _, n := range names {
		if n == "all" {
			sets = append(sets, FetchSets()...)
			continue
		}
		if n == "cifar-10" {
			n = "cifar10"
		}
		s, ok := LookupFetchSet(n)
		if !ok {
			return nil, fmt.Errorf("unknown data set %q (want mnist, cifar10, omniglot, lung-cancer, covid-ct or all)", n)
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// knownFiles lists, for the single-file sets, every upstream file with its
// md5 ("" when only its presence can be checked).
//
// CIFAR-10: the md5s of the six batches of the binary version (the files of
// cifar-10-binary.tar.gz) are those recorded by two independent downloaders
// of that tarball (prabhuomkar/pytorch-cpp, cmake/fetch_cifar10.cmake;
// rai-project/dldataset, vision/cifar10.go); test_batch.bin's agrees with
// the project's shared copy. torchvision's CIFAR10 train_list/test_list are
// not these: they are the md5s of the Python-pickle batches
// (cifar-10-batches-py, test_batch 40351d58…), another format.
var knownFiles = map[string]map[string]string{
	"mnist": {
		"mnist/train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
		"mnist/train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
		"mnist/t10k-images-idx3-ubyte.gz":  "9fb629c4189551a2d022fa330f9573f3",
		"mnist/t10k-labels-idx1-ubyte.gz":  "ec29112dd5afa0611ce80d1b7f02629c",
	},
	"cifar10": {
		"cifar-10/cifar-10-batches-bin/data_batch_1.bin": "5dd7e06a14cb22eb9f671a540d1b7c25",
		"cifar-10/cifar-10-batches-bin/data_batch_2.bin": "5ea93a67294ea407fff1d09f752e9692",
		"cifar-10/cifar-10-batches-bin/data_batch_3.bin": "942cd6a4bcdd0dd3c604fbe906cb4421",
		"cifar-10/cifar-10-batches-bin/data_batch_4.bin": "ae636b3ba5c66a11e91e8cb52e771fcb",
		"cifar-10/cifar-10-batches-bin/data_batch_5.bin": "53f37980c15c3d472c316c40844f3f0d",
		"cifar-10/cifar-10-batches-bin/test_batch.bin":   "803d5f7f4d78ea53de84dbe85f74fb6d",
		"cifar-10/cifar-10-batches-bin/batches.meta.txt": "40a0b180e208fe03a63ecc891b2555ad",
	},
	"lung-cancer": {
		"lung-cancer/lung-cancer.data": "6fc6934899073560c0a8da6c74d300ae",
	},
}

// verifyKnownFiles checks the present files of want against their md5s and
// lists the missing ones (sorted).
func verifyKnownFiles(dir string, want map[string]string) (missing []string, err error) {
	for _, n := range sortedKeys(want) {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				missing = append(missing, n)
				continue
			}
			return nil, err
		}
		if want[n] == "" {
			continue
		}
		got, err := fileSum(p, "md5")
		if err != nil {
			return nil, err
		}
		if got != want[n] {
			return nil, fmt.Errorf("%s: md5 %s, want %s", p, got, want[n])
		}
	}
	return missing, nil
}

// checkMD5SUMS checks every "MD5  PATH" line of the file sums (paths
// relative to dir, as md5sum -c would read them from dir) on all cores. It
// returns the entries and a description of each failing one.
func checkMD5SUMS(ctx context.Context, dir, sums string) ([]MD5Entry, []string, error) {
	f, err := os.Open(sums)
	if err != nil {
		return nil, nil, err
	}
	entries, err := ParseMD5SUMS(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s %w", sums, err)
	}
	bad := make([]string, len(entries))
	err = parallelFor(len(entries), func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := entries[i]
		p := filepath.Join(dir, filepath.FromSlash(e.Path))
		got, err := fileSum(p, "md5")
		switch {
		case errors.Is(err, os.ErrNotExist):
			bad[i] = e.Path + ": missing"
		case err != nil:
			bad[i] = e.Path + ": " + err.Error()
		case got != e.MD5:
			bad[i] = e.Path + ": md5 " + got + ", want " + e.MD5
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var out []string
	for _, b := range bad {
		if b != "" {
			out = append(out, b)
		}
	}
	return entries, out, nil
}

// MD5Entry is one line of an MD5SUMS file.
type MD5Entry struct {
	MD5  string // 32 lower-case hex digits
	Path string // as written, relative to the folder holding MD5SUMS
}

// ParseMD5SUMS parses the output format of md5sum: "HASH  PATH" (text
// mode) or "HASH *PATH" (binary mode) per line; blank lines and lines
// starting with "#" are skipped. A malformed line, an absolute path or one
// leaving the folder is an error naming the line.
func ParseMD5SUMS(r io.Reader) ([]MD5Entry, error) {
	var entries []MD5Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), "\r")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		sum, name, ok := strings.Cut(t, " ")
		if ok && (strings.HasPrefix(name, " ") || strings.HasPrefix(name, "*")) {
			name = name[1:]
		} else {
			ok = false
		}
		if !ok || len(sum) != 32 || name == "" || !isHex(sum) {
			return nil, fmt.Errorf("line %d: want \"MD5  PATH\", got %q", line, t)
		}
		clean := path.Clean(strings.TrimPrefix(name, "./"))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(name, 0) {
			return nil, fmt.Errorf("line %d: path %q leaves the folder", line, name)
		}
		entries = append(entries, MD5Entry{MD5: strings.ToLower(sum), Path: clean})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return entries, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

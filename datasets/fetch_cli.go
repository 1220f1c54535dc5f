package datasets

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/drknn/drknn/internal/datadir"
)

// DataCommandUsage is the help text of the drknn-data command.
const DataCommandUsage = `usage:
  drknn-data get NAME... [-dir DIR] [-base-url URL] [-retries N] [-keep-archives]
  drknn-data verify [-dir DIR]
  drknn-data list

NAME is mnist, cifar10, omniglot, lung-cancer, covid-ct or all.
DIR defaults to $DRKNN_DATA, else ../shared/data beside the module root.
-base-url fetches file F of set S from URL/S/F instead of upstream.
verify checks what is in DIR (and DIR/MD5SUMS when present); exit 1 on a mismatch.
`

// RunDataCommand runs the drknn-data command with args (without the program
// name) and returns its exit status: 0 success, 1 failure, 2 bad usage
// (reported as one line on stderr).
func RunDataCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "drknn-data: "+format+" (see drknn-data -h)\n", a...)
		return 2
	}
	if len(args) == 0 {
		return usageErr("missing command: get, verify or list")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, DataCommandUsage)
		return 0
	case "get", "verify", "list":
	default:
		return usageErr("unknown command %q: want get, verify or list", cmd)
	}
	fs := flag.NewFlagSet("drknn-data "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", datadir.Dir(), "data folder")
	var base *string
	var retries *int
	var keep *bool
	if cmd == "get" {
		base = fs.String("base-url", "", "fetch from this base URL instead of upstream")
		retries = fs.Int("retries", 3, "further attempts after a cut connection")
		keep = fs.Bool("keep-archives", false, "keep downloaded archives after extracting")
	}
	// Flags may come before, between or after the names.
	var names []string
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, DataCommandUsage)
				return 0
			}
			return usageErr("%s: %v", cmd, err)
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch cmd {
	case "list":
		if len(names) > 0 {
			return usageErr("list takes no names, got %q", names[0])
		}
		for _, s := range FetchSets() {
			fmt.Fprintf(stdout, "%-12s %s\n", s.Name, s.About)
			for _, f := range s.Files {
				sum := "unverified (no published checksum)"
				switch {
				case f.SHA256 != "":
					sum = "sha256 " + f.SHA256 + " (" + f.SumSource + ")"
				case f.MD5 != "":
					sum = "md5 " + f.MD5 + " (" + f.SumSource + ")"
				}
				fmt.Fprintf(stdout, "  %s\n    -> %s, %s\n", f.URL, f.Dest, sum)
			}
		}
		return 0
	case "verify":
		if len(names) > 0 {
			return usageErr("verify takes no names, got %q", names[0])
		}
		ok, err := Verify(ctx, *dir, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "drknn-data: verify: %v\n", err)
			return 1
		}
		if !ok {
			return 1
		}
		return 0
	}
	// get
	if len(names) == 0 {
		return usageErr("get: name a data set (mnist, cifar10, omniglot, lung-cancer, covid-ct or all)")
	}
	if *retries < 0 {
		return usageErr("get: -retries %d must be ≥ 0", *retries)
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
			return usageErr("get: unknown data set %q (want mnist, cifar10, omniglot, lung-cancer, covid-ct or all)", n)
		}
		sets = append(sets, s)
	}
	r := *retries
	if r == 0 {
		r = -1 // FetchOptions: 0 means the default, < 0 none
	}
	opts := FetchOptions{Dir: *dir, BaseURL: *base, Retries: r, KeepArchives: *keep, Log: stdout}
	for _, s := range sets {
		if err := Fetch(ctx, s, opts); err != nil {
			fmt.Fprintf(stderr, "drknn-data: %v\n", err)
			return 1
		}
	}
	return 0
}

// Verify reports, one line per data set, what is in dir: for every
// built-in set its files and layout ("ok", "absent", "partial" with the
// missing files, or "BAD" with the reason), then, when dir/MD5SUMS exists
// (lines "MD5  PATH" as md5sum writes them), the result of checking every
// listed file. It returns false when anything present is wrong or a file
// listed in MD5SUMS is missing or different; absent or partial sets alone
// are not failures.
func Verify(ctx context.Context, dir string, w io.Writer) (bool, error) {
	if fi, err := os.Stat(dir); err != nil {
		return false, err
	} else if !fi.IsDir() {
		return false, fmt.Errorf("%s is not a folder", dir)
	}
	allOK := true
	for _, s := range FetchSets() {
		top := strings.SplitN(s.Files[0].Dest, "/", 2)[0]
		if _, err := os.Stat(filepath.Join(dir, top)); err != nil {
			fmt.Fprintf(w, "%-12s absent\n", s.Name)
			continue
		}
		var status string
		switch s.Name {
		case "mnist", "cifar10", "lung-cancer":
			missing, err := verifyKnownFiles(dir, knownFiles[s.Name])
			switch {
			case err != nil:
				status, allOK = "BAD: "+err.Error(), false
			case len(missing) > 0:
				status = "partial, present files match; missing " + strings.Join(missing, ", ")
			default:
				status = "ok"
			}
		default:
			if err := s.Check(dir); err != nil {
				status, allOK = "BAD: "+err.Error(), false
			} else {
				status = "ok"
			}
		}
		fmt.Fprintf(w, "%-12s %s\n", s.Name, status)
	}
	sums := filepath.Join(dir, "MD5SUMS")
	if _, err := os.Stat(sums); err == nil {
		n, bad, err := checkMD5SUMS(ctx, dir, sums)
		if err != nil {
			return false, err
		}
		if len(bad) == 0 {
			fmt.Fprintf(w, "MD5SUMS      ok, %d files match\n", n)
		} else {
			allOK = false
			fmt.Fprintf(w, "MD5SUMS      BAD: %d of %d files missing or different\n", len(bad), n)
			for i, b := range bad {
				if i == 10 {
					fmt.Fprintf(w, "  … and %d more\n", len(bad)-10)
					break
				}
				fmt.Fprintf(w, "  %s\n", b)
			}
		}
	}
	return allOK, nil
}

// knownFiles lists, for the single-file sets, every upstream file with its
// md5 ("" when only its presence can be checked).
var knownFiles = map[string]map[string]string{
	"mnist": {
		"mnist/train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
		"mnist/train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
		"mnist/t10k-images-idx3-ubyte.gz":  "9fb629c4189551a2d022fa330f9573f3",
		"mnist/t10k-labels-idx1-ubyte.gz":  "ec29112dd5afa0611ce80d1b7f02629c",
	},
	"cifar10": {
		"cifar-10/cifar-10-batches-bin/data_batch_1.bin": "",
		"cifar-10/cifar-10-batches-bin/data_batch_2.bin": "",
		"cifar-10/cifar-10-batches-bin/data_batch_3.bin": "",
		"cifar-10/cifar-10-batches-bin/data_batch_4.bin": "",
		"cifar-10/cifar-10-batches-bin/data_batch_5.bin": "",
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
// returns the number of entries and a description of each failing one.
func checkMD5SUMS(ctx context.Context, dir, sums string) (int, []string, error) {
	f, err := os.Open(sums)
	if err != nil {
		return 0, nil, err
	}
	entries, err := ParseMD5SUMS(f)
	f.Close()
	if err != nil {
		return 0, nil, fmt.Errorf("%s %w", sums, err)
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
		return 0, nil, err
	}
	var out []string
	for _, b := range bad {
		if b != "" {
			out = append(out, b)
		}
	}
	return len(entries), out, nil
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

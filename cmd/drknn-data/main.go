// Command drknn-data downloads the data sets of the experiments into the
// layout the datasets readers read (datasets.Fetch) and verifies what is
// there (datasets.Verify). A download that receives nothing for
// -idle-timeout (datasets.DefaultIdleTimeout, 60 s, by default) is
// abandoned as stalled and retried like a cut connection; a slow one has
// no overall time limit. Exit
// status: 0 success, 1 failure, 2 bad usage, 130 interrupted (Ctrl-C or
// SIGTERM).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/internal/datadir"
)

const usage = `usage:
  drknn-data get NAME... [-dir DIR] [-base-url URL] [-retries N] [-idle-timeout DURATION] [-keep-archives]
  drknn-data verify [-dir DIR]
  drknn-data list

NAME is mnist, cifar10, omniglot, lung-cancer, covid-ct or all.
DIR defaults to $DRKNN_DATA, else ../shared/data beside the module root.
-base-url fetches file F of set S from URL/S/F instead of upstream (URL: an
http:// or https:// address with a host, no query or fragment).
A download that receives nothing for -idle-timeout (a Go duration: 90s,
5m; 0 = the default, 60s) is abandoned as stalled and retried like a cut
connection (-retries), resuming from the bytes kept; a slow one has no
time limit while bytes arrive. -retries is 0…100 (default 3).
verify checks what is in DIR and, when DIR/MD5SUMS is present, every file it
lists and that it lists every file of the sets present; exit 1 on a mismatch,
a file missing from MD5SUMS, or when DIR holds no data set.
`

func main() { cli.Main("drknn-data", run) }

// maxRetries bounds -retries: a download that failed a hundred times in a
// row (each retry resumes from the bytes kept, and a stall costs
// -idle-timeout) will not succeed on the next try, and a mistyped count
// (1000000000) must not hammer a server until the process is killed.
const maxRetries = 100

// run runs the command line args (without the program name), writing
// listings, reports and progress to stdout.
func run(ctx context.Context, args []string, stdout, _ io.Writer) error {
	bad := func(format string, a ...any) error {
		return cli.Usagef(format+" (see drknn-data -h)", a...)
	}
	if len(args) == 0 {
		return bad("missing command: get, verify or list")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "get", "verify", "list":
	default:
		return bad("unknown command %q: want get, verify or list", cmd)
	}
	fs := flag.NewFlagSet("drknn-data "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := datasets.FetchOptions{Progress: func(msg string) { fmt.Fprintln(stdout, msg) }}
	fs.StringVar(&opts.Dir, "dir", datadir.Dir(), "data folder")
	if cmd == "get" {
		fs.StringVar(&opts.BaseURL, "base-url", "", "fetch from this base URL instead of upstream")
		fs.IntVar(&opts.Retries, "retries", 3, "further attempts after a cut connection (0…100)")
		fs.DurationVar(&opts.IdleTimeout, "idle-timeout", 0, "abandon a download that receives nothing for this long (0 = 60s)")
		fs.BoolVar(&opts.KeepArchives, "keep-archives", false, "keep downloaded archives after extracting")
	}
	var names []string // flags may come before, between or after the names
	for {
		if err := fs.Parse(rest); errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil
		} else if err != nil {
			return bad("%s: %v", cmd, err)
		}
		if fs.NArg() == 0 {
			break
		}
		names, rest = append(names, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case cmd != "get" && len(names) > 0:
		return bad("%s takes no names, got %q", cmd, names[0])
	case cmd == "list":
		for _, s := range datasets.FetchSets() {
			fmt.Fprint(stdout, s)
		}
		return nil
	case opts.Dir == "":
		return bad("%s: -dir \"\": no data folder", cmd)
	case cmd == "verify":
		r, err := datasets.Verify(ctx, opts.Dir)
		if err != nil && errors.Is(err, datasets.ErrNotFound) {
			return fmt.Errorf("verify: %w (the data folder is -dir, else $%s, else ../shared/data; drknn-data get fetches the sets into it)", err, datadir.EnvVar)
		}
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if r.WriteTo(stdout); !r.OK() {
			return fmt.Errorf("verify: %s: some files are missing, different or not listed in MD5SUMS (see above)", opts.Dir)
		}
		return nil
	case opts.Retries < 0 || opts.Retries > maxRetries:
		return bad("get: -retries %d: want 0…%d", opts.Retries, maxRetries)
	case opts.IdleTimeout < 0:
		return bad("get: -idle-timeout %v must be ≥ 0 (0 = the default, %gs)", opts.IdleTimeout, datasets.DefaultIdleTimeout.Seconds())
	case opts.BaseURL != "" && datasets.CheckBaseURL(opts.BaseURL) != nil:
		return bad("get: -base-url %q: %v", opts.BaseURL, datasets.CheckBaseURL(opts.BaseURL))
	case opts.Retries == 0:
		opts.Retries = -1 // FetchOptions: 0 means the default, < 0 none
	}
	sets, err := datasets.SelectFetchSets(names)
	if err != nil {
		return bad("get: %v", err)
	}
	return datasets.FetchAll(ctx, sets, opts)
}

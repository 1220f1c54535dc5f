package datasets

// Downloading the data sets from their upstream locations (the logic of the
// drknn-data command): checksummed, resumable downloads written through
// temporary files, archive extraction into exactly the layout the readers
// read.

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FetchFile is one file of a data set as published upstream.
type FetchFile struct {
	URL string // canonical upstream address
	// Alt lists other upstream addresses of the same bytes, tried in order
	// when URL fails (not when the checksum fails). Unused with BaseURL.
	Alt    []string
	MD5    string // hex md5 of the file, "" if none is known
	SHA256 string // hex sha256 of the file, "" if none is known
	// SumSource says where the checksum comes from (published by whom, or
	// recorded from a known-good copy); empty with no checksum.
	SumSource string
	// Dest is where the file is kept, relative to the data folder
	// ("mnist/t10k-images-idx3-ubyte.gz").
	Dest string
	// Extract, when set ("tar.gz" or "zip"), unpacks the download into the
	// folder ExtractTo (relative to the data folder), keeping only entries
	// under Keep/ (other entries such as __MACOSX/ are skipped); the archive
	// is then removed unless FetchOptions.KeepArchives.
	Extract   string
	ExtractTo string
	Keep      string
}

// Name returns the file's base name, which is also its name on a mirror.
func (f FetchFile) Name() string { return path.Base(f.Dest) }

// Verified reports whether the file has a checksum to check against.
func (f FetchFile) Verified() bool { return f.MD5 != "" || f.SHA256 != "" }

// FetchSet is a data set that drknn-data can download.
type FetchSet struct {
	Name  string // "mnist", "cifar10", "omniglot", "lung-cancer", "covid-ct"
	About string // one line for the listing
	Files []FetchFile
	// Check tests the layout the readers need under the data folder (files
	// present, counts, known checksums). It is what makes a completed get a
	// no-op, and what verify reports.
	Check func(dir string) error
}

// String describes the set for a listing: its name and what it is, then
// for each file its address, where it is kept and its checksum.
func (s FetchSet) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %s\n", s.Name, s.About)
	for _, f := range s.Files {
		sum := "unverified (no published checksum)"
		if f.SHA256 != "" {
			sum = "sha256 " + f.SHA256 + " (" + f.SumSource + ")"
		} else if f.MD5 != "" {
			sum = "md5 " + f.MD5 + " (" + f.SumSource + ")"
		}
		fmt.Fprintf(&b, "  %s\n    -> %s, %s\n", f.URL, f.Dest, sum)
	}
	return b.String()
}

// FetchSets returns the built-in table of downloadable data sets.
//
// MNIST comes from the well-known mirror that torchvision uses, with
// LeCun's own site as the fallback. Its t10k pair is fetched before the
// train pair: a get that stops part-way then leaves either no complete
// split or the t10k split the reader reads by default — never the train
// split alone, which the reader's default would take for the data set
// (60,000 training images instead of the 10,000 test images).
//
// Checksums: MNIST's four md5s are the published ones (also in
// torchvision); the CIFAR-10 binary tarball md5 is published on the CIFAR
// page; the Omniglot zip md5s are the ones torchvision checks. UCI publishes
// no checksum for lung-cancer.data: the md5 and sha256 recorded here are of
// the known-good copy in the project's shared data (two independent copies
// agree). The COVID-CT zips have no published checksum and are unverified;
// what is checked is the extracted result (349 and 397 images).
func FetchSets() []FetchSet {
	const lecun = "https://ossci-datasets.s3.amazonaws.com/mnist/"
	const yann = "http://yann.lecun.com/exdb/mnist/"
	const omni = "https://raw.githubusercontent.com/brendenlake/omniglot/master/python/"
	const covid = "https://github.com/UCSD-AI4H/COVID-CT/raw/master/Images-processed/"
	mnistSrc := "published md5 (LeCun et al.; torchvision's mirror list)"
	return []FetchSet{
		{Name: "mnist", About: "MNIST handwritten digits, IDX files (gzip), 60,000 + 10,000 images",
			Files: []FetchFile{
				{URL: lecun + "t10k-images-idx3-ubyte.gz", MD5: "9fb629c4189551a2d022fa330f9573f3", Alt: []string{yann + "t10k-images-idx3-ubyte.gz"}, SumSource: mnistSrc, Dest: "mnist/t10k-images-idx3-ubyte.gz"},
				{URL: lecun + "t10k-labels-idx1-ubyte.gz", MD5: "ec29112dd5afa0611ce80d1b7f02629c", Alt: []string{yann + "t10k-labels-idx1-ubyte.gz"}, SumSource: mnistSrc, Dest: "mnist/t10k-labels-idx1-ubyte.gz"},
				{URL: lecun + "train-images-idx3-ubyte.gz", MD5: "f68b3c2dcbeaaa9fbdd348bbdeb94873", Alt: []string{yann + "train-images-idx3-ubyte.gz"}, SumSource: mnistSrc, Dest: "mnist/train-images-idx3-ubyte.gz"},
				{URL: lecun + "train-labels-idx1-ubyte.gz", MD5: "d53e105ee54ea40749a09fcbcd1e9432", Alt: []string{yann + "train-labels-idx1-ubyte.gz"}, SumSource: mnistSrc, Dest: "mnist/train-labels-idx1-ubyte.gz"},
			},
			Check: checkFiles(knownFiles["mnist"]),
		},
		{Name: "cifar10", About: "CIFAR-10 binary batches, 50,000 + 10,000 32×32 colour images",
			Files: []FetchFile{{URL: "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
				MD5: "c32a1d4ab5d03f1284b67883e8d87530", SumSource: "published md5 (CIFAR-10 page)",
				Dest: "cifar-10/cifar-10-binary.tar.gz", Extract: "tar.gz", ExtractTo: "cifar-10", Keep: "cifar-10-batches-bin"}},
			Check: checkFiles(knownFiles["cifar10"]),
		},
		{Name: "omniglot", About: "Omniglot background + evaluation sets, 32,460 105×105 drawings of 1,623 characters",
			Files: []FetchFile{
				{URL: omni + "images_background.zip", MD5: "68d2efa1b9178cc56df9314c21c6e718", SumSource: "md5 checked by torchvision",
					Dest: "omniglot/images_background.zip", Extract: "zip", ExtractTo: "omniglot", Keep: "images_background"},
				{URL: omni + "images_evaluation.zip", MD5: "6b91aef0f799c5bb55b94e3f2daec811", SumSource: "md5 checked by torchvision",
					Dest: "omniglot/images_evaluation.zip", Extract: "zip", ExtractTo: "omniglot", Keep: "images_evaluation"},
			},
			Check: checkLayout(treeLayouts["omniglot"]),
		},
		{Name: "lung-cancer", About: "UCI Lung Cancer, 32 patients × 56 nominal attributes",
			Files: []FetchFile{{URL: "https://archive.ics.uci.edu/ml/machine-learning-databases/lung-cancer/lung-cancer.data",
				MD5: "6fc6934899073560c0a8da6c74d300ae", SHA256: "725a482ccc65f6a51403c9faacaf0c35c9572c9351e3e63df308d13c6ab6a5f0",
				SumSource: "no published checksum: recorded from a known-good copy (two independent copies agree)",
				Dest:      "lung-cancer/lung-cancer.data"}},
			Check: checkFiles(knownFiles["lung-cancer"]),
		},
		{Name: "covid-ct", About: "COVID-CT (UCSD-AI4H), 349 COVID + 397 non-COVID CT images",
			Files: []FetchFile{
				{URL: covid + "CT_COVID.zip", Dest: "covid-ct/CT_COVID.zip", Extract: "zip", ExtractTo: "covid-ct", Keep: "CT_COVID"},
				{URL: covid + "CT_NonCOVID.zip", Dest: "covid-ct/CT_NonCOVID.zip", Extract: "zip", ExtractTo: "covid-ct", Keep: "CT_NonCOVID"},
			},
			Check: checkLayout(treeLayouts["covid-ct"]),
		},
	}
}

// LookupFetchSet returns the built-in set called name.
func LookupFetchSet(name string) (FetchSet, bool) {
	for _, s := range FetchSets() {
		if s.Name == name {
			return s, true
		}
	}
	return FetchSet{}, false
}

// FetchOptions controls Fetch.
type FetchOptions struct {
	Dir string // data folder (created if missing)
	// BaseURL, when set, replaces the upstream hosts: file F of set S is
	// fetched from BaseURL/S/F (a mirror, or a test server).
	BaseURL      string
	Client       *http.Client // nil: a client with a 30 s header timeout
	Retries      int          // further attempts after a cut connection; 0 means 3, < 0 none
	KeepArchives bool         // keep downloaded archives after extracting them
	// IdleTimeout bounds the time a download may go without receiving a
	// byte — connecting, waiting for the response, reading the body —
	// before it is abandoned as stalled (and retried like a cut
	// connection, resuming from the bytes kept). The download as a whole
	// has no time limit while bytes arrive. 0 means DefaultIdleTimeout,
	// < 0 none.
	IdleTimeout time.Duration
	// Progress, when set, receives one line (no newline) per step:
	// downloads, resumptions, extractions. Fetch itself never prints.
	Progress func(msg string)
}

// CheckBaseURL reports whether u can serve as FetchOptions.BaseURL: an
// absolute http or https address with a host and without a query or a
// fragment (file F of set S is fetched from u/S/F, so anything else would
// send the requests somewhere other than the mirror meant). The error does
// not repeat u.
func CheckBaseURL(u string) error {
	p, err := url.Parse(u)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("not a URL: %v", err)
	case p.Scheme != "http" && p.Scheme != "https":
		if p.Scheme == "" {
			return errors.New("no scheme: want an http:// or https:// address")
		}
		return fmt.Errorf("scheme %q: want http or https", p.Scheme)
	case p.Opaque != "":
		return errors.New("no \"//\" after the scheme: want http://HOST/PATH")
	case p.Host == "" || p.Hostname() == "":
		return errors.New("no host")
	case p.RawQuery != "" || p.ForceQuery:
		return errors.New("a query (?…) cannot be followed by the set's path")
	case p.Fragment != "" || strings.Contains(u, "#"):
		return errors.New("a fragment (#…) cannot be followed by the set's path")
	}
	return nil
}

// check refuses options that no fetch can work with, before any work: no
// data folder, a malformed BaseURL.
func (o FetchOptions) check() error {
	if o.Dir == "" {
		return errors.New("fetch: no data folder given")
	}
	if o.BaseURL != "" {
		if err := CheckBaseURL(o.BaseURL); err != nil {
			return fmt.Errorf("fetch: base URL %q: %w", o.BaseURL, err)
		}
	}
	return nil
}

func (o FetchOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second}}
}

// DefaultIdleTimeout is FetchOptions.IdleTimeout's default.
const DefaultIdleTimeout = 60 * time.Second

func (o FetchOptions) idleTimeout() time.Duration {
	switch {
	case o.IdleTimeout == 0:
		return DefaultIdleTimeout
	case o.IdleTimeout < 0:
		return 0
	}
	return o.IdleTimeout
}

// errStalled marks a download abandoned after FetchOptions.IdleTimeout
// without a byte.
var errStalled = errors.New("stalled")

// progressReader calls progress after every read that returns bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

func (o FetchOptions) logf(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// Fetch downloads set into opts.Dir and lays it out for the readers. When
// set.Check already passes nothing is downloaded. Every file is written to
// DEST.part, resumed with an HTTP Range request after a cut connection (or
// restarted from zero when the server ignores the range), but only from the
// address its bytes came from and only while the server reports the same
// file (DEST.part.src records the address and the ETag or Last-Modified;
// a .part without that record is downloaded again), checked against
// its checksum, and only then renamed to DEST; on a checksum mismatch the
// partial file is removed and an error returned. A download that
// receives nothing for opts.IdleTimeout (60 s by default) is abandoned as
// stalled and retried like a cut connection; the last failure names the
// address. Archives are extracted into
// a temporary folder beside their destination and moved into place.
//
// A fetch that fails leaves no folder it made empty behind (the data
// folder itself included): an empty DIR/SET would pass for a set that is
// there. What it keeps is what the next fetch continues from: files already
// downloaded and checked, and a DEST.part holding bytes (with its record).
func Fetch(ctx context.Context, set FetchSet, opts FetchOptions) (err error) {
	if err := opts.check(); err != nil {
		return err
	}
	if set.Check != nil && set.Check(opts.Dir) == nil {
		opts.logf("%s: already present and complete in %s", set.Name, opts.Dir)
		return nil
	}
	made := missingDirs(opts.Dir, set)
	defer func() {
		if err != nil {
			for _, d := range made {
				os.Remove(d) // only if empty: whatever a folder holds is kept
			}
		}
	}()
	for _, f := range set.Files {
		urls := append([]string{f.URL}, f.Alt...)
		if opts.BaseURL != "" {
			urls = []string{strings.TrimSuffix(opts.BaseURL, "/") + "/" + set.Name + "/" + f.Name()}
		}
		dest := filepath.Join(opts.Dir, filepath.FromSlash(f.Dest))
		_, serr := os.Stat(dest)
		had := serr == nil // an archive already there: never removed below
		var err error
		for i, url := range urls {
			if i > 0 {
				opts.logf("%v; trying %s", err, url)
			}
			if err = download(ctx, opts, url, dest, f); err == nil || errors.Is(err, errChecksum) || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", set.Name, err)
		}
		if f.Extract != "" {
			to := filepath.Join(opts.Dir, filepath.FromSlash(f.ExtractTo))
			opts.logf("%s: extracting %s into %s", set.Name, f.Name(), to)
			if err := extractArchive(dest, f.Extract, to, f.Keep, opts.logf); err != nil {
				// An archive without a checksum that this get downloaded and
				// that cannot be read as an archive may be cut short or not
				// an archive at all: kept, it would be taken as downloaded
				// by every later get, which would fail the same way. One
				// that was already there (placed by hand, or kept with
				// -keep-archives), or that failed for another reason (a
				// clash with the files present, a full disk), is kept.
				var bad *badArchiveError
				switch {
				case f.Verified() || !errors.As(err, &bad):
				case !had && os.Remove(dest) == nil:
					err = fmt.Errorf("%w; %s removed (no checksum shows it whole: the next get downloads it again)", err, dest)
				case had:
					err = fmt.Errorf("%w (%s has no checksum and may be cut short: delete it to download it again)", err, dest)
				}
				return fmt.Errorf("%s: %w", set.Name, err)
			}
			if !opts.KeepArchives {
				if err := os.Remove(dest); err != nil {
					return fmt.Errorf("%s: %w", set.Name, err)
				}
			}
		}
	}
	if set.Check != nil {
		if err := set.Check(opts.Dir); err != nil {
			return fmt.Errorf("%s: downloaded, but the result is not as expected: %w", set.Name, err)
		}
	}
	opts.logf("%s: done", set.Name)
	return nil
}

// missingDirs lists the folders that fetching set into root may create and
// that do not exist yet — root itself, its missing parents, the folders of
// the files' Dest and ExtractTo — deepest first.
func missingDirs(root string, set FetchSet) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		for ; !seen[p]; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				return // there already (or not ours to judge)
			}
			seen[p] = true
			out = append(out, p)
			if filepath.Dir(p) == p {
				return
			}
		}
	}
	add(filepath.Clean(root))
	for _, f := range set.Files {
		add(filepath.Dir(filepath.Join(root, filepath.FromSlash(f.Dest))))
		if f.Extract != "" {
			add(filepath.Join(root, filepath.FromSlash(f.ExtractTo)))
		}
	}
	// Deepest first: a child is always longer than its parent.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// fileSum returns the hex digest of the file at p with the algorithm of
// want ("md5" or "sha256").
func fileSum(p, algo string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var h hash.Hash
	switch algo {
	case "md5":
		h = md5.New()
	case "sha256":
		h = sha256.New()
	default:
		return "", fmt.Errorf("unknown checksum %q", algo)
	}
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkSum compares the file at p with the checksums of f (sha256 first if
// both are known). It returns ok=true for a file without checksums.
func checkSum(p string, f FetchFile) (ok bool, got string, err error) {
	algo, want := "sha256", f.SHA256
	if want == "" {
		algo, want = "md5", f.MD5
	}
	if want == "" {
		return true, "", nil
	}
	got, err = fileSum(p, algo)
	if err != nil {
		return false, "", err
	}
	return strings.EqualFold(got, want), algo + " " + got + ", want " + want, nil
}

// errChecksum marks a download whose bytes do not match the checksum.
var errChecksum = errors.New("checksum mismatch")

// errRetry marks a failure worth another attempt (cut connection, 5xx).
type errRetry struct{ err error }

func (e errRetry) Error() string { return e.err.Error() }
func (e errRetry) Unwrap() error { return e.err }

// download fetches url into dest through dest.part; see Fetch. A failed
// download keeps dest.part only when it holds bytes to resume from.
func download(ctx context.Context, opts FetchOptions, url, dest string, f FetchFile) (err error) {
	part := dest + ".part"
	defer func() {
		if fi, serr := os.Stat(part); err != nil && serr == nil && fi.Size() == 0 {
			removePart(part)
		}
	}()
	if _, err := os.Stat(dest); err == nil {
		ok, got, err := checkSum(dest, f)
		if err != nil {
			return err
		}
		if ok && f.Verified() {
			opts.logf("have %s (checksum ok)", dest)
			return nil
		}
		if ok {
			opts.logf("have %s (unverified: no published checksum)", dest)
			return nil
		}
		opts.logf("%s: checksum mismatch (%s); downloading again", dest, got)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	retries := opts.Retries
	if retries == 0 {
		retries = 3
	}
	if retries < 0 {
		retries = 0
	}
	resumed := false
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			opts.logf("retrying %s (attempt %d of %d): %v", url, attempt+1, retries+1, lastErr)
		}
		r, err := fetchOnce(ctx, opts, url, part)
		if err != nil {
			var re errRetry
			if errors.As(err, &re) && ctx.Err() == nil {
				lastErr = err
				resumed = resumed || r
				continue
			}
			return fmt.Errorf("%s: %w", url, err)
		}
		resumed = resumed || r
		ok, got, err := checkSum(part, f)
		if err != nil {
			return err
		}
		if !ok {
			removePart(part)
			if resumed && attempt < retries {
				// A resumed file may have been stitched from two versions:
				// start once more from zero before giving up.
				lastErr = fmt.Errorf("checksum mismatch after resuming (%s)", got)
				resumed = false
				continue
			}
			return fmt.Errorf("%s: %w (%s); download removed", url, errChecksum, got)
		}
		if !f.Verified() {
			s, err := fileSum(part, "sha256")
			if err != nil {
				return err
			}
			opts.logf("unverified: %s has no published checksum (got sha256 %s)", f.Name(), s)
		}
		if err := os.Rename(part, dest); err != nil {
			return err
		}
		os.Remove(part + partSourceSuffix) // its record has no further use
		opts.logf("got %s", dest)
		return nil
	}
	kept := ""
	if fi, err := os.Stat(part); err == nil && fi.Size() > 0 {
		kept = fmt.Sprintf(" (%d bytes kept in %s; the next get resumes)", fi.Size(), part)
	}
	plural := "s"
	if retries == 0 {
		plural = ""
	}
	return fmt.Errorf("%s: giving up after %d attempt%s: %w%s", url, retries+1, plural, lastErr, kept)
}

// fetchOnce makes one request for url, resuming part if it has bytes that
// came from url (see partSource). It reports whether it appended to
// existing bytes. Failures that another attempt may cure are wrapped in
// errRetry.
func fetchOnce(ctx context.Context, opts FetchOptions, url, part string) (resumed bool, err error) {
	var off int64
	var src partSource
	if fi, err := os.Stat(part); err == nil && fi.Size() > 0 {
		src, err = readPartSource(part + partSourceSuffix)
		switch {
		case err != nil:
			opts.logf("not resuming %s: %v; downloading %s from zero", part, err, url)
		case src.URL != url:
			opts.logf("not resuming %s: its bytes came from %s; downloading %s from zero", part, src.URL, url)
		default:
			off = fi.Size()
		}
	}
	// A watchdog cancels the request when nothing arrives for the idle
	// timeout; every byte received (and the response headers) rearms it.
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := opts.idleTimeout()
	stall := fmt.Errorf("%w: nothing received for %v", errStalled, idle)
	rearm := func() {}
	if idle > 0 {
		watch := time.AfterFunc(idle, func() { cancel(stall) })
		defer watch.Stop()
		rearm = func() { watch.Reset(idle) }
	}
	// stalled returns the stall error for a failure the watchdog caused
	// (not for one of ctx's: an interrupt is reported as such).
	stalled := func(err error) error {
		if ctx.Err() == nil && errors.Is(context.Cause(reqCtx), errStalled) {
			return stall
		}
		return err
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
		// The rest only if the file is still the one the bytes came from;
		// otherwise the server sends it whole (200).
		if v := src.validator(); v != "" {
			req.Header.Set("If-Range", v)
		}
	}
	resp, err := opts.client().Do(req)
	if err != nil {
		return false, errRetry{stalled(err)}
	}
	defer resp.Body.Close()
	rearm()
	flags := os.O_WRONLY | os.O_CREATE
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, ok := contentRangeStart(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			// Not the range asked for: start again from zero.
			removePart(part)
			return false, errRetry{fmt.Errorf("server sent range %q for a request from byte %d", resp.Header.Get("Content-Range"), off)}
		}
		flags |= os.O_APPEND
		resumed = true
		opts.logf("resuming %s from byte %d", url, off)
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC // whole file: a clean restart
		if off > 0 {
			opts.logf("server sent the whole file (range ignored, or the file changed): restarting %s from zero", url)
		} else {
			opts.logf("downloading %s", url)
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && off > 0:
		// The partial file is already whole (or longer than the file):
		// let the checksum decide; on a mismatch the caller starts over.
		return true, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return false, errRetry{fmt.Errorf("server answered %s", resp.Status)}
	default:
		return false, fmt.Errorf("server answered %s", resp.Status)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, err
	}
	if !resumed {
		// part is empty now: record where its bytes will come from before
		// the first one is written.
		rec := partSource{URL: url, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
		if err := writePartSource(part+partSourceSuffix, rec); err != nil {
			out.Close()
			return false, err
		}
	}
	_, cerr := io.Copy(out, progressReader{resp.Body, rearm})
	if err := out.Close(); err != nil && cerr == nil {
		cerr = err
	}
	if cerr != nil {
		if err := stalled(nil); err != nil {
			return resumed, errRetry{fmt.Errorf("transfer %w", err)}
		}
		return resumed, errRetry{fmt.Errorf("transfer cut: %w", cerr)}
	}
	return resumed, nil
}

// partSourceSuffix names the record kept beside DEST.part: DEST.part.src.
const partSourceSuffix = ".src"

// partSource records where the bytes of a DEST.part came from, so that a
// download is resumed only from that same address and only while the
// server still has the same file (If-Range with the recorded ETag or
// Last-Modified). Bytes from one address are never continued with bytes
// from another (a fallback, a mirror given with BaseURL, another run): for
// a file without a checksum nothing else would notice the splice.
type partSource struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// validator returns the If-Range value for s: its ETag when strong, else
// its Last-Modified date, else "" (resume on the address alone).
func (s partSource) validator() string {
	if s.ETag != "" && !strings.HasPrefix(s.ETag, "W/") {
		return s.ETag
	}
	return s.LastModified
}

// parsePartSource parses a partSource record: one JSON object with a
// non-empty url and no other fields than the three above.
func parsePartSource(b []byte) (partSource, error) {
	var s partSource
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return partSource{}, fmt.Errorf("not a source record: %w", err)
	}
	if dec.More() {
		return partSource{}, errors.New("not a source record: data after the object")
	}
	if s.URL == "" {
		return partSource{}, errors.New("source record without a url")
	}
	return s, nil
}

// readPartSource reads the record at p; a missing one is an error too (a
// partial file of unknown origin).
func readPartSource(p string) (partSource, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return partSource{}, errors.New("no record of where its bytes came from")
	}
	if err != nil {
		return partSource{}, err
	}
	s, err := parsePartSource(b)
	if err != nil {
		return partSource{}, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

// writePartSource writes s to p through a temporary name.
func writePartSource(p string, s partSource) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// removePart removes a partial download and its source record.
func removePart(part string) {
	os.Remove(part)
	os.Remove(part + partSourceSuffix)
}

// contentRangeStart parses the first byte of "bytes START-END/TOTAL".
func contentRangeStart(h string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !ok {
		return 0, false
	}
	s, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// extractArchive unpacks the entries under keep/ of the archive at src into
// a temporary folder beside to, then moves them into to/keep (merging with
// what is there, swapped in whole: see mergeInto), after finishing or
// undoing a replacement an earlier run left cut short (recoverReplaced). Entries outside keep/ that are
// bookkeeping (__MACOSX/, hidden files) are skipped; if no entry is under
// keep/, the archive is taken to be flat and every file goes to keep/NAME.
// Paths that would leave the folder are an error.
func extractArchive(src, kind, to, keep string, logf func(string, ...any)) error {
	done, err := recoverReplaced(to, keep)
	for _, d := range done {
		logf("%s", d)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(to, extractPrefix+keep+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var entries []archiveEntry
	switch kind {
	case "zip":
		zr, err := zip.OpenReader(src)
		if err != nil {
			return badArchive(fmt.Errorf("%s: %w", src, err))
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			entries = append(entries, archiveEntry{f.Name, f.Open})
		}
		if err := writeEntries(src, entries, tmp, keep); err != nil {
			return err
		}
	case "tar.gz":
		if err := extractTarGz(src, tmp, keep); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown archive kind %q", kind)
	}
	if _, err := os.Stat(filepath.Join(tmp, keep)); err != nil {
		return badArchive(fmt.Errorf("%s: no files under %s/ in the archive", src, keep))
	}
	return mergeInto(filepath.Join(tmp, keep), filepath.Join(to, keep))
}

// badArchiveError marks an extraction that failed on the archive itself
// (it does not open, an entry does not read, a path leaves the folder, or
// nothing is under keep/) rather than on the files around it.
type badArchiveError struct{ err error }

func (e *badArchiveError) Error() string { return e.err.Error() }
func (e *badArchiveError) Unwrap() error { return e.err }

func badArchive(err error) error { return &badArchiveError{err} }

// archiveReader marks its read errors (io.EOF aside) as the archive's.
type archiveReader struct{ r io.Reader }

func (a archiveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err != nil && err != io.EOF {
		err = badArchive(err)
	}
	return n, err
}

type archiveEntry struct {
	name string
	open func() (io.ReadCloser, error)
}

// entryTarget maps an archive entry name to its path under keep, or "" to
// skip it. flat selects the fallback for archives without a keep/ folder.
func entryTarget(name, keep string, flat bool) (string, error) {
	clean := path.Clean(strings.TrimPrefix(strings.ReplaceAll(name, `\`, "/"), "./"))
	for _, p := range strings.Split(clean, "/") {
		if skipName(p) {
			return "", nil
		}
	}
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("entry %q points outside the folder", name)
	}
	if flat {
		return path.Join(keep, path.Base(clean)), nil
	}
	if clean == keep || !strings.HasPrefix(clean, keep+"/") {
		return "", nil
	}
	return clean, nil
}

func writeEntries(src string, entries []archiveEntry, tmp, keep string) error {
	flat := true
	for _, e := range entries {
		if t, _ := entryTarget(e.name, keep, false); t != "" {
			flat = false
			break
		}
	}
	for _, e := range entries {
		t, err := entryTarget(e.name, keep, flat)
		if err != nil {
			return badArchive(fmt.Errorf("%s: %w", src, err))
		}
		if t == "" {
			continue
		}
		rc, err := e.open()
		if err != nil {
			return badArchive(fmt.Errorf("%s: entry %s: %w", src, e.name, err))
		}
		err = writeNewFile(filepath.Join(tmp, filepath.FromSlash(t)), archiveReader{rc})
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s: entry %s: %w", src, e.name, err)
		}
	}
	return nil
}

func extractTarGz(src, tmp, keep string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return badArchive(fmt.Errorf("%s: %w", src, err))
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return badArchive(fmt.Errorf("%s: %w", src, err))
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		t, err := entryTarget(h.Name, keep, false)
		if err != nil {
			return badArchive(fmt.Errorf("%s: %w", src, err))
		}
		if t == "" {
			continue
		}
		if err := writeNewFile(filepath.Join(tmp, filepath.FromSlash(t)), archiveReader{tr}); err != nil {
			return fmt.Errorf("%s: entry %s: %w", src, h.Name, err)
		}
	}
}

// writeNewFile creates p (and its folders) with the contents of r; a file
// already there is an error (an archive listing one name twice).
func writeNewFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// mergeInto puts the tree src at dst (see mergeIntoWith) with the real
// file system calls.
func mergeInto(src, dst string) error {
	return mergeIntoWith(src, dst, os.Rename, os.RemoveAll)
}

// Name prefixes of mergeInto's folders beside dst: the previous dst while
// it is being replaced, and extractArchive's temporary folders.
const (
	replacedPrefix = ".replaced-"
	extractPrefix  = ".extract-"
)

// mergeIntoWith moves the tree src to dst so that dst is at every moment
// either complete as it was or complete as merged. When dst does not exist
// that is one rename. Otherwise src is first made the merged tree: every
// file of dst that src lacks is hard-linked (or, where links fail, copied)
// into it, so files of dst that the archive does not have are kept and
// files of the same name are replaced. A file in one where the other has a
// folder is an error before anything changes. Then the folders swap: dst
// is renamed to .replaced-NAME-* beside it, src renamed to dst, and the
// replaced copy removed. A failure names where the old and the new files
// are; recoverReplaced, run by the next extraction, finishes or undoes an
// interrupted swap. rename and removeAll are the file system's (a parameter
// so that tests can make each step fail).
func mergeIntoWith(src, dst string, rename func(from, to string) error, removeAll func(string) error) error {
	if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
		return rename(src, dst)
	} else if err != nil {
		return err
	}
	if err := carryOver(dst, src); err != nil {
		return fmt.Errorf("%s: %w; nothing changed", dst, err)
	}
	parent, name := filepath.Split(dst)
	old, err := os.MkdirTemp(parent, replacedPrefix+name+"-")
	if err != nil {
		return fmt.Errorf("%s: %w; nothing changed", dst, err)
	}
	if err := os.Remove(old); err != nil { // the name is reserved; rename needs it free
		return fmt.Errorf("%s: %w; nothing changed", dst, err)
	}
	if err := rename(dst, old); err != nil {
		return fmt.Errorf("%s: moving it aside: %w; nothing changed", dst, err)
	}
	if err := rename(src, dst); err != nil {
		if rerr := rename(old, dst); rerr != nil {
			return fmt.Errorf("%s: %v, and moving the previous files back failed (%v): they are in %s (the next get puts them back)", dst, err, rerr, old)
		}
		return fmt.Errorf("%s: %w; nothing changed", dst, err)
	}
	if err := removeAll(old); err != nil {
		return fmt.Errorf("%s is complete, but the replaced copy %s is left over: %w (the next get removes it)", dst, old, err)
	}
	return nil
}

// carryOver adds to the tree into every entry of the tree from that into
// lacks (hard links for files, copies where linking fails, the same target
// for symbolic links), and fails without touching from when a name is a
// folder in one tree and not in the other.
func carryOver(from, into string) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil || rel == "." {
			return err
		}
		t := filepath.Join(into, rel)
		fi, err := os.Lstat(t)
		switch {
		case err == nil && d.IsDir() && !fi.IsDir():
			return fmt.Errorf("%s is a folder among the present files but a file among the new ones", rel)
		case err == nil && !d.IsDir() && fi.IsDir():
			return fmt.Errorf("%s is a file among the present files but a folder among the new ones", rel)
		case err == nil:
			return nil // a folder of both (walked into), or a file the new tree replaces
		case !errors.Is(err, os.ErrNotExist):
			return err
		case d.IsDir():
			return os.Mkdir(t, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, t)
		case d.Type().IsRegular():
			if os.Link(p, t) == nil {
				return nil
			}
			return copyFile(p, t)
		default:
			return fmt.Errorf("%s is neither a file nor a folder (%v)", rel, d.Type())
		}
	})
}

// copyFile copies the regular file from to the new file to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeNewFile(to, in)
}

// recoverReplaced finishes or undoes a swap of mergeInto that was cut short
// (the process killed between its steps): in the folder to, a
// .replaced-KEEP-* folder with no KEEP beside it is moved back to KEEP, one
// with KEEP present is removed (the swap had completed), and temporary
// .extract-KEEP-* folders are removed. It returns what it did, one line per
// folder.
func recoverReplaced(to, keep string) ([]string, error) {
	entries, err := os.ReadDir(to)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	dst := filepath.Join(to, keep)
	var done []string
	for _, e := range entries {
		p := filepath.Join(to, e.Name())
		switch {
		case !e.IsDir():
		case strings.HasPrefix(e.Name(), extractPrefix+keep+"-"):
			if err := os.RemoveAll(p); err != nil {
				return done, err
			}
			done = append(done, "removed the unfinished extraction "+p)
		case strings.HasPrefix(e.Name(), replacedPrefix+keep+"-"):
			if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
				if err := os.Rename(p, dst); err != nil {
					return done, err
				}
				done = append(done, "put the files of an interrupted replacement back: "+p+" -> "+dst)
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return done, err
			}
			done = append(done, "removed the replaced copy "+p)
		}
	}
	return done, nil
}

// checkFiles returns a Check that requires each file (relative to the data
// folder) to exist and, where an md5 is given, to match it.
func checkFiles(want map[string]string) func(dir string) error {
	return func(dir string) error {
		for _, n := range sortedKeys(want) {
			p := filepath.Join(dir, filepath.FromSlash(n))
			if _, err := os.Stat(p); err != nil {
				return err
			}
			if want[n] == "" {
				continue
			}
			got, err := fileSum(p, "md5")
			if err != nil {
				return err
			}
			if got != want[n] {
				return fmt.Errorf("%s: md5 %s, want %s", p, got, want[n])
			}
		}
		return nil
	}
}

// countTree counts the leaf folders and their files in a tree of the given
// depth: 3 for an Omniglot set (SET/<Alphabet>/<character>/<file>), 1 for a
// flat folder of files. Empty folders and misplaced entries are errors.
func countTree(root string, depth int) (folders, files int, err error) {
	var walk func(p string, d int) error
	walk = func(p string, d int) error {
		names, err := listDir(p, d > 1)
		if err != nil {
			return err
		}
		if d == 1 {
			files += len(names)
			folders++
			return nil
		}
		for _, n := range names {
			if err := walk(filepath.Join(p, n), d-1); err != nil {
				return err
			}
		}
		return nil
	}
	err = walk(root, depth)
	return folders, files, err
}

// treeSpec is one folder of a set laid out as a tree (countTree): its path
// relative to the data folder ("/"), its depth, and how many leaf folders
// (0: not checked) and files it must hold.
type treeSpec struct {
	root           string
	depth          int
	folders, files int
}

// treeLayouts lists the folders of the sets that are trees of files:
// Omniglot's two sets (964 characters and 19,280 drawings in
// images_background, 659 and 13,180 in images_evaluation) and COVID-CT's
// two classes (349 + 397 images).
var treeLayouts = map[string][]treeSpec{
	"omniglot": {
		{"omniglot/" + OmniglotBackground, 3, 964, 19280},
		{"omniglot/" + OmniglotEvaluation, 3, 659, 13180},
	},
	"covid-ct": {
		{"covid-ct/" + COVIDCTClasses[0], 1, 0, 349},
		{"covid-ct/" + COVIDCTClasses[1], 1, 0, 397},
	},
}

// checkTree checks the folder of spec under dir.
func checkTree(dir string, spec treeSpec) error {
	p := filepath.Join(dir, filepath.FromSlash(spec.root))
	folders, files, err := countTree(p, spec.depth)
	switch {
	case err != nil:
		return err
	case spec.folders == 0 && files != spec.files:
		return fmt.Errorf("%s: %d images, want %d", p, files, spec.files)
	case spec.folders > 0 && (folders != spec.folders || files != spec.files):
		return fmt.Errorf("%s: %d characters and %d drawings, want %d and %d", p, folders, files, spec.folders, spec.files)
	}
	return nil
}

// checkLayout returns a Check that requires every folder of specs.
func checkLayout(specs []treeSpec) func(dir string) error {
	return func(dir string) error {
		for _, spec := range specs {
			if err := checkTree(dir, spec); err != nil {
				return err
			}
		}
		return nil
	}
}

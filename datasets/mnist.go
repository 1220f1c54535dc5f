package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drknn/drknn/internal/errkind"
)

// IDX magic numbers of the MNIST files: unsigned-byte data with 3
// dimensions (images) and 1 dimension (labels).
const (
	idxMagicImages = 2051
	idxMagicLabels = 2049
	mnistSide      = 28
)

// maxIDXItems bounds the item count an IDX header may declare. It is far
// above any real file (MNIST has 60,000) and keeps a corrupt header from
// describing an absurd size.
const maxIDXItems = 1 << 26

// gzipMagic are the first two bytes of every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// maybeGunzip returns a reader of the decompressed stream when r starts
// with the gzip magic bytes (concatenated gzip members read as one stream,
// as gunzip does), and r itself (buffered) otherwise. The file
// name is never consulted, so a .gz file that is not compressed and an
// uncompressed file named .gz both read correctly.
func maybeGunzip(r io.Reader) (io.Reader, func() error, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	if bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip header: %w", err)
		}
		return zr, zr.Close, nil
	}
	return br, func() error { return nil }, nil
}

// IDX is a parsed IDX file of unsigned bytes.
type IDX struct {
	Dims []int  // size of each dimension; Dims[0] is the item count
	Data []byte // prod(Dims) bytes, row-major
}

// ParseIDX reads an IDX file of unsigned bytes (type code 0x08), gzip
// compressed or not (detected by the magic bytes), and checks that the
// header's magic equals wantMagic (2051 for MNIST images, 2049 for labels),
// that every dimension is positive, and that the stream holds exactly the
// declared number of bytes: a short stream and trailing bytes are both
// errors.
//
// Memory grows with the bytes actually read, never with the header's claim.
// A gzip stream that decompresses more than idxMaxRatio:1 (real IDX files
// compress about 2–5:1; a few kilobytes of deflated zeros expand to
// megabytes) is not kept in memory: it is only counted, so a truncated one
// fails with no large allocation, and a complete one is read a second time
// into a buffer of exactly the declared size when r is an io.Seeker. (A
// stream that cannot seek keeps growing its buffer as before.)
func ParseIDX(r io.Reader, wantMagic uint32) (*IDX, error) {
	return parseIDX(r, wantMagic, idxLimits{ratio: idxMaxRatio, slack: idxSlack})
}

// Decompression past idxSlack bytes beyond idxMaxRatio times the compressed
// bytes read is counted, not kept (see ParseIDX).
const (
	idxMaxRatio = 32
	idxSlack    = 1 << 20
)

// idxLimits are ParseIDX's thresholds, a parameter so that tests and fuzzing
// reach the counting path with small inputs.
type idxLimits struct {
	ratio, slack int64
	// exact, when > 0, is the data size a first pass counted: the stream
	// is known complete, so that many bytes are allocated at once (a
	// header now declaring another size is an error: the file changed).
	exact int64
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func parseIDX(r io.Reader, wantMagic uint32, lim idxLimits) (*IDX, error) {
	seeker, _ := r.(io.Seeker)
	var start int64
	if seeker != nil {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			seeker = nil // not really seekable (a pipe behind an *os.File)
		}
	}
	in := &countingReader{r: r}
	rd, closeFn, err := maybeGunzip(in)
	if err != nil {
		return nil, err
	}
	_, compressed := rd.(*gzip.Reader)
	var hdr [4]byte
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		return nil, fmt.Errorf("IDX header: %w", shortErr(err))
	}
	magic := binary.BigEndian.Uint32(hdr[:])
	if magic != wantMagic {
		return nil, fmt.Errorf("IDX magic %d, want %d", magic, wantMagic)
	}
	nd := int(hdr[3])
	if nd < 1 || nd > 4 {
		return nil, fmt.Errorf("IDX header declares %d dimensions", nd)
	}
	dimBytes := make([]byte, 4*nd)
	if _, err := io.ReadFull(rd, dimBytes); err != nil {
		return nil, fmt.Errorf("IDX dimensions: %w", shortErr(err))
	}
	dims := make([]int, nd)
	total := int64(1)
	for i := range dims {
		v := binary.BigEndian.Uint32(dimBytes[4*i:])
		if v == 0 || v > maxIDXItems {
			return nil, fmt.Errorf("IDX dimension %d is %d", i, v)
		}
		dims[i] = int(v)
		total *= int64(dims[i])
		if total > int64(maxIDXItems)*mnistSide*mnistSide {
			return nil, fmt.Errorf("IDX dimensions %v describe more than %d bytes", dims[:i+1], int64(maxIDXItems)*mnistSide*mnistSide)
		}
	}
	var data []byte
	var n int64
	if lim.exact > 0 {
		if total != lim.exact {
			return nil, fmt.Errorf("IDX data: dimensions %v on the second read, %d bytes on the first: the file changed while being read", dims, lim.exact)
		}
		data = make([]byte, total)
		m, err := io.ReadFull(rd, data)
		if n = int64(m); err == nil {
			var one [1]byte
			m, err = io.ReadFull(rd, one[:])
			n += int64(m)
			if err == io.EOF {
				err = nil
			}
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("IDX data: %w", shortErr(err))
		}
	} else {
		// Read at most total+1 bytes (the extra one detects trailing data),
		// growing the buffer with the data that is really there; past the
		// ratio limit stop keeping it and only count.
		keep := func(n int64) bool { return !compressed || seeker == nil || n <= lim.ratio*in.n+lim.slack }
		data, n, err = readCounting(io.LimitReader(rd, total+1), total+1, keep)
		if err != nil {
			return nil, fmt.Errorf("IDX data: %w", shortErr(err))
		}
	}
	if n < total {
		return nil, fmt.Errorf("IDX data truncated: %d of %d bytes (dimensions %v)", n, total, dims)
	}
	if n > total {
		return nil, fmt.Errorf("IDX data has trailing bytes after the %d declared by dimensions %v", total, dims)
	}
	if err := closeFn(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if data == nil {
		// Complete, but too compressible to have been kept (only a seekable
		// r gets here): read it again into exactly the declared size.
		if _, err := seeker.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("IDX data: rereading: %w", err)
		}
		return parseIDX(r, wantMagic, idxLimits{exact: n})
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// readCounting reads r (at most limit bytes) to its end while keep(bytes
// read) reports true, doubling its buffer as the data comes (never past
// limit); once keep reports false the bytes read so far are dropped and the
// rest is only counted (data is then nil). n is the number of bytes read.
func readCounting(r io.Reader, limit int64, keep func(n int64) bool) (data []byte, n int64, err error) {
	data = make([]byte, 0, min(512, limit))
	var scratch []byte
	for {
		var m int
		if data != nil {
			if len(data) == cap(data) && int64(cap(data)) < limit {
				grown := make([]byte, len(data), min(2*int64(cap(data)), limit))
				copy(grown, data)
				data = grown
			}
			m, err = r.Read(data[len(data):cap(data)])
			data = data[:len(data)+m]
		} else {
			if scratch == nil {
				scratch = make([]byte, 32<<10)
			}
			m, err = r.Read(scratch)
		}
		n += int64(m)
		if data != nil && !keep(n) {
			data = nil
		}
		if err == io.EOF {
			return data, n, nil
		}
		if err != nil {
			return nil, n, err
		}
	}
}

func shortErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file truncated")
	}
	return err
}

// ParseMNIST parses an MNIST image IDX stream and its label IDX stream
// (each gzip compressed or not). It checks the magics (2051, 2049), that the
// images are 28×28, that both files hold the same number of items and that
// every label is 0…9. Errors name which stream failed via imgName/labName.
// The result has Shape [1, 28, 28], pixels p/255, Classes "0"…"9".
func ParseMNIST(img io.Reader, imgName string, lab io.Reader, labName string) (*Dataset, error) {
	im, err := ParseIDX(img, idxMagicImages)
	if err != nil {
		return nil, fmt.Errorf("mnist: %s: %w", imgName, err)
	}
	if len(im.Dims) != 3 || im.Dims[1] != mnistSide || im.Dims[2] != mnistSide {
		return nil, fmt.Errorf("mnist: %s: image dimensions %v, want [N 28 28]", imgName, im.Dims)
	}
	lb, err := ParseIDX(lab, idxMagicLabels)
	if err != nil {
		return nil, fmt.Errorf("mnist: %s: %w", labName, err)
	}
	if len(lb.Dims) != 1 {
		return nil, fmt.Errorf("mnist: %s: label dimensions %v, want [N]", labName, lb.Dims)
	}
	n := im.Dims[0]
	if lb.Dims[0] != n {
		return nil, fmt.Errorf("mnist: %s holds %d labels but %s holds %d images", labName, lb.Dims[0], imgName, n)
	}
	labels := make([]int, n)
	for i, v := range lb.Data {
		if v > 9 {
			return nil, fmt.Errorf("mnist: %s: label %d of item %d is outside 0…9", labName, v, i)
		}
		labels[i] = int(v)
	}
	d := &Dataset{
		Name:    "mnist",
		Shape:   []int{1, mnistSide, mnistSide},
		X:       bytesToUnit(im.Data),
		Labels:  labels,
		Classes: digitClasses(),
	}
	return d, nil
}

// byteScale maps a byte b to b/255 exactly as float32(b)/255 does.
var byteScale = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return t
}()

func bytesToUnit(b []byte) []float32 {
	x := make([]float32, len(b))
	for i, v := range b {
		x[i] = byteScale[v]
	}
	return x
}

func digitClasses() []string {
	c := make([]string, 10)
	for i := range c {
		c[i] = strconv.Itoa(i)
	}
	return c
}

// MNIST split choices for ReadMNISTSplit (Options.Split of Load("mnist")).
const (
	MNISTTrain = "train" // the 60,000 training images (train-*)
	MNISTTest  = "test"  // the 10,000 test images (t10k-*)
	MNISTAll   = "all"   // train then test; both must be present
)

// ReadMNIST reads the MNIST splits present in dir: train
// (train-images-idx3-ubyte, train-labels-idx1-ubyte) and/or t10k
// (t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte), each with or without a
// .gz suffix; compression is detected from the content. The natural order is
// the train split (if present) followed by t10k (if present), each in file
// order. Files holds "<image file>:<item>" for every sample. A folder with
// neither split is an error, and so is a split that is there only in part
// (see ReadMNISTSplit).
//
// Load("mnist") calls ReadMNISTSplit instead, whose default reads the test
// split alone when it is present, so that adding the training files to a
// folder changes no episode.
func ReadMNIST(dir string) (*Dataset, error) {
	return readMNISTSplits(dir, []string{"train", "t10k"}, false)
}

// ReadMNISTSplit reads one choice of MNIST splits from dir:
//
//   - "test": t10k-images/labels only (required);
//   - "train": train-images/labels only (required);
//   - "all": train then t10k (both required);
//   - "": the test split when any of its files is there, otherwise the
//     training split — the data the project has always used when only the
//     t10k files are there, and unchanged when the train files are added.
//     A folder holding the train pair alone reads it.
//
// A split is there in part when one file of its pair is missing while the
// other is there, when a partial download of one of its files is left
// (NAME.part or NAME.part.src, from an interrupted drknn-data get), or when
// one of its names is not a regular file (a folder, a dangling link). Such a
// split is an error naming the missing or bad file and saying how to
// complete it (drknn-data get mnist); it is never skipped, so a download cut
// off before the t10k files does not silently read the 60,000 training
// images instead of the 10,000 test images. A split that is not read is not
// looked at: "train" reads the train pair whatever the state of the t10k
// files, and so does "test" (or the default with a complete t10k pair) the
// t10k pair. A bad file (truncated, wrong magic…) is an ErrCorrupt error
// that names it and says to delete it and download it again; a missing one
// is ErrNotFound.
//
// Files, order and checks are those of ReadMNIST.
func ReadMNISTSplit(dir, split string) (*Dataset, error) {
	switch split {
	case MNISTTest:
		return readMNISTSplits(dir, []string{"t10k"}, true)
	case MNISTTrain:
		return readMNISTSplits(dir, []string{"train"}, true)
	case MNISTAll:
		return readMNISTSplits(dir, []string{"train", "t10k"}, true)
	case "":
		if !lookMNISTSplit(dir, "t10k").absent() {
			return readMNISTSplits(dir, []string{"t10k"}, true)
		}
		return ReadMNIST(dir)
	}
	return nil, fmt.Errorf("mnist: unknown split %q (want train, test or all)", split)
}

// readMNISTSplits reads the listed splits ("train", "t10k") in order; with
// required every one must be present, otherwise the absent ones are
// skipped (but not all of them). A split there in part is an error either
// way.
func readMNISTSplits(dir string, splits []string, required bool) (*Dataset, error) {
	var parts []*Dataset
	for _, split := range splits {
		s := lookMNISTSplit(dir, split)
		if s.absent() {
			if required {
				return nil, notFoundf("mnist: no %s-images-idx3-ubyte[.gz] and %s-labels-idx1-ubyte[.gz] in %s", split, split, dir)
			}
			continue
		}
		if err := s.incomplete(dir); err != nil {
			return nil, err
		}
		d, err := readMNISTPair(dir, s.img.path, s.lab.path)
		if err != nil {
			return nil, err
		}
		parts = append(parts, d)
	}
	if len(parts) == 0 {
		return nil, notFoundf("mnist: no train-* or t10k-* IDX files in %s", dir)
	}
	return concat("mnist", parts), nil
}

func readMNISTPair(dir, imgPath, labPath string) (*Dataset, error) {
	fi, err := os.Open(imgPath)
	if err != nil {
		return nil, classify(fmt.Errorf("mnist: %w", err))
	}
	defer fi.Close()
	fl, err := os.Open(labPath)
	if err != nil {
		return nil, classify(fmt.Errorf("mnist: %w", err))
	}
	defer fl.Close()
	d, err := ParseMNIST(fi, imgPath, fl, labPath)
	if err != nil {
		// drknn-data get replaces a .gz whose md5 is not the published
		// one, but never reads an uncompressed file (which the reader
		// prefers): deleting the bad file is what always works.
		return nil, errkind.Mark(ErrCorrupt, saysFix{fmt.Errorf("%w (a damaged or partial file: delete it, then %s)", err, mnistFix(dir, "to download it again"))})
	}
	base := filepath.Base(imgPath)
	d.Files = make([]string, d.Len())
	for i := range d.Files {
		d.Files[i] = base + ":" + strconv.Itoa(i)
	}
	return d, nil
}

// saysFix marks an error whose message already says how to fix it: Load
// adds no general "how to get it" to it.
type saysFix struct{ error }

func (e saysFix) Unwrap() error { return e.error }

// mnistFix says how to put the MNIST files into dir with drknn-data get,
// which writes DIR/mnist/: with -dir the parent of a folder called mnist
// (then done ends the sentence: "to finish it"), and for any other folder
// the command and the folder to read instead.
func mnistFix(dir, done string) string {
	if filepath.Base(dir) == "mnist" {
		return "run drknn-data get mnist -dir " + filepath.Dir(dir) + " " + done
	}
	return "copy the file in from a complete MNIST download, or run drknn-data get mnist -dir DIR and read DIR/mnist instead"
}

// mnistFileState is what a folder holds under one MNIST file name.
type mnistFileState int

const (
	mnistAbsent  mnistFileState = iota // nothing under the name
	mnistPresent                       // a regular file (or a link to one)
	mnistPartial                       // only a partial download (NAME.part, NAME.part.src)
	mnistNotFile                       // the name is there but is no regular file
)

// mnistFile is one MNIST file name looked up in a folder.
type mnistFile struct {
	name  string // base name without .gz: "t10k-images-idx3-ubyte"
	state mnistFileState
	// path is the file (mnistPresent), the entry that is not one
	// (mnistNotFile) or the partial download (mnistPartial).
	path string
	err  error // mnistNotFile: what is wrong with path
}

// lookMNISTFile looks for dir/name and dir/name.gz (the first that is a
// regular file wins, the uncompressed name first), then for an entry under
// either name that is not a regular file, then for a partial download of
// either left by drknn-data get.
func lookMNISTFile(dir, name string) mnistFile {
	f := mnistFile{name: name, path: filepath.Join(dir, name)}
	names := []string{name, name + ".gz"}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			f.state, f.path = mnistPresent, p
			return f
		}
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		lst, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		f.state, f.path = mnistNotFile, p
		switch st, serr := os.Stat(p); {
		case err != nil:
			f.err = err
		case errors.Is(serr, fs.ErrNotExist) && lst.Mode().Type() == fs.ModeSymlink:
			to, _ := os.Readlink(p)
			f.err = errkind.Mark(fs.ErrNotExist, fmt.Errorf("%s is a link to %s, which does not exist", p, to))
		case serr != nil:
			f.err = serr
		case st.IsDir():
			f.err = fmt.Errorf("%s is not a regular file but a folder", p)
		default:
			f.err = fmt.Errorf("%s is not a regular file (%v)", p, lst.Mode().Type()|st.Mode().Type())
		}
		return f
	}
	for _, n := range names {
		for _, suffix := range []string{".part", ".part" + partSourceSuffix} {
			p := filepath.Join(dir, n+suffix)
			if _, err := os.Lstat(p); err == nil {
				f.state, f.path = mnistPartial, p
				return f
			}
		}
	}
	return f
}

// mnistSplit is the pair of files of one split ("train" or "t10k").
type mnistSplit struct{ img, lab mnistFile }

func lookMNISTSplit(dir, split string) mnistSplit {
	return mnistSplit{
		img: lookMNISTFile(dir, split+"-images-idx3-ubyte"),
		lab: lookMNISTFile(dir, split+"-labels-idx1-ubyte"),
	}
}

// absent reports whether nothing of the split is in the folder.
func (s mnistSplit) absent() bool {
	return s.img.state == mnistAbsent && s.lab.state == mnistAbsent
}

// incomplete returns nil when both files of the split are there, and
// otherwise an error naming the first one missing or bad (an entry that is
// not a file first, then a partial download, then a missing file) and
// saying how to complete the split. The split must not be absent.
func (s mnistSplit) incomplete(dir string) error {
	pair := [2]mnistFile{s.img, s.lab}
	for _, f := range pair {
		if f.state == mnistNotFile {
			return classify(saysFix{fmt.Errorf("mnist: %w (remove it, then %s)", f.err, mnistFix(dir, "to download the file"))})
		}
	}
	for _, f := range pair {
		if f.state == mnistPartial {
			// The file the partial download was to become: its name
			// without .part / .part.src.
			want := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f.path), partSourceSuffix), ".part")
			return notFoundf("%w", saysFix{fmt.Errorf("mnist: %s has no %s, only the partial download %s (an interrupted download): %s", dir, want, filepath.Base(f.path), mnistFix(dir, "to finish it"))})
		}
	}
	for i, f := range pair {
		if f.state == mnistAbsent {
			other := pair[1-i]
			return notFoundf("%w", saysFix{fmt.Errorf("mnist: %s has %s but no %s[.gz] (an incomplete download?): %s", dir, filepath.Base(other.path), f.name, mnistFix(dir, "to complete it"))})
		}
	}
	return nil
}

// concat joins data sets with identical shapes and classes; parts[0]'s
// metadata is kept. It is used for multi-file readers.
func concat(name string, parts []*Dataset) *Dataset {
	if len(parts) == 1 {
		parts[0].Name = name
		return parts[0]
	}
	out := &Dataset{Name: name, Shape: parts[0].Shape, Classes: parts[0].Classes}
	nx, nl := 0, 0
	for _, p := range parts {
		nx += len(p.X)
		nl += len(p.Labels)
	}
	out.X = make([]float32, 0, nx)
	out.Labels = make([]int, 0, nl)
	withFiles := true
	for _, p := range parts {
		withFiles = withFiles && p.Files != nil
	}
	if withFiles {
		out.Files = make([]string, 0, nl)
	}
	for _, p := range parts {
		out.X = append(out.X, p.X...)
		out.Labels = append(out.Labels, p.Labels...)
		if withFiles {
			out.Files = append(out.Files, p.Files...)
		}
	}
	return out
}

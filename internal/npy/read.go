package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"
)

// maxDataBytes bounds the payload a header may announce (1 TiB); beyond it
// the header is taken to be corrupt.
const maxDataBytes = min(1<<40, math.MaxInt)

// ReadHeader reads and checks the magic, version and header dictionary,
// leaving r at the first data byte.
func ReadHeader(r io.Reader) (*Header, error) {
	var pre [10]byte
	if n, err := io.ReadFull(r, pre[:8]); err != nil {
		if n >= 6 && string(pre[:6]) != magic || n < 6 && string(pre[:n]) != magic[:n] {
			return nil, fmt.Errorf("%w: wrong magic bytes", ErrFormat)
		}
		return nil, fmt.Errorf("%w: truncated before the header (%d bytes)", ErrFormat, n)
	}
	if string(pre[:6]) != magic {
		return nil, fmt.Errorf("%w: wrong magic bytes %q", ErrFormat, pre[:6])
	}
	h := &Header{Major: pre[6], Minor: pre[7]}
	var hlen int
	switch h.Major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, fmt.Errorf("%w: truncated header length", ErrFormat)
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("%w: truncated header length", ErrFormat)
		}
		v := binary.LittleEndian.Uint32(b[:])
		if v > maxHeaderLen {
			return nil, fmt.Errorf("%w: header length %d exceeds %d bytes", ErrFormat, v, maxHeaderLen)
		}
		hlen = int(v)
	default:
		return nil, fmt.Errorf("%w: unsupported format version %d.%d", ErrFormat, h.Major, h.Minor)
	}
	hdr := make([]byte, hlen)
	if n, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("%w: truncated header (%d of %d bytes)", ErrFormat, n, hlen)
	}
	if hlen == 0 || hdr[hlen-1] != '\n' {
		return nil, fmt.Errorf("%w: header does not end with a newline", ErrFormat)
	}
	descr, fortran, shape, err := parseDict(string(hdr[:hlen-1]))
	if err != nil {
		return nil, err
	}
	h.Descr, h.Fortran, h.Shape = descr, fortran, shape
	if h.Kind, h.Size, h.BigEndian, err = parseDescr(descr); err != nil {
		return nil, err
	}
	n := 1
	for _, s := range shape {
		if s != 0 && n > maxDataBytes/s {
			return nil, fmt.Errorf("%w: shape %v is too large", ErrFormat, shape)
		}
		n *= s
	}
	if n > maxDataBytes/h.Size {
		return nil, fmt.Errorf("%w: shape %v is too large", ErrFormat, shape)
	}
	return h, nil
}

// payloadChunk is the most readPayload allocates before data arrive.
const payloadChunk = 1 << 20

// fileReader is the reader of a file of known size (openRead, Read): it
// counts the bytes left, so a payload the file is long enough to hold is
// read into one allocation of its full size instead of a buffer grown as
// data arrive (whose doublings and final copy peaked at about three times
// the payload: 262 MB of heap to read 74 MB of features).
type fileReader struct {
	r    *bufio.Reader
	left int64 // bytes of the file not yet returned by Read
}

func newFileReader(f *os.File, bufSize int) io.Reader {
	r := bufio.NewReaderSize(f, bufSize)
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return r
	}
	return &fileReader{r: r, left: st.Size()}
}

func (f *fileReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.left -= int64(n)
	return n, err
}

// holds reports whether r is a fileReader with at least need bytes left.
func holds(r io.Reader, need int64) bool {
	f, ok := r.(*fileReader)
	return ok && f.left >= need
}

// readPayload reads exactly the h.Len()·h.Size data bytes and checks that
// nothing follows them. It allocates at most payloadChunk bytes up front
// and then grows its buffer (bytes.Buffer) as data arrive, so a header
// announcing more data than the stream holds costs no large allocation,
// while a payload up to payloadChunk is read into one allocation (no
// copies; io.ReadAll grows from 512 bytes).
func readPayload(r io.Reader, h *Header) ([]byte, error) {
	need := int64(h.Len()) * int64(h.Size)
	if need <= payloadChunk || holds(r, need) {
		b := make([]byte, need)
		return b, readInto(r, h, b)
	}
	buf := bytes.NewBuffer(make([]byte, 0, payloadChunk))
	if _, err := buf.ReadFrom(io.LimitReader(r, need)); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b, checkEnd(r, h, int64(len(b)))
}

// readInto reads exactly len(b) data bytes into b and checks that nothing
// follows them (len(b) is the header's h.Len()·h.Size).
func readInto(r io.Reader, h *Header, b []byte) error {
	k, err := io.ReadFull(r, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return err
	}
	return checkEnd(r, h, int64(k))
}

// checkEnd checks that got, the data bytes read, is what h needs and that
// nothing follows them.
func checkEnd(r io.Reader, h *Header, got int64) error {
	need := int64(h.Len()) * int64(h.Size)
	if got != need {
		return fmt.Errorf("%w: truncated data: shape %v of %s needs %d bytes, found %d",
			ErrFormat, h.Shape, h.Descr, need, got)
	}
	var one [1]byte
	if n, _ := io.ReadFull(r, one[:]); n > 0 {
		return fmt.Errorf("%w: extra bytes after the %d data bytes of shape %v", ErrFormat, need, h.Shape)
	}
	return nil
}

func checkRank(h *Header) error {
	if len(h.Shape) < 1 || len(h.Shape) > 2 {
		return fmt.Errorf("%w: shape %v has rank %d, want 1 or 2", ErrRank, h.Shape, len(h.Shape))
	}
	return nil
}

// toC reorders a Fortran-order rank-2 array into C (row-major) order.
func toC[T any](v []T, h *Header) []T {
	if !h.Fortran || len(h.Shape) != 2 {
		return v
	}
	rows, cols := h.Shape[0], h.Shape[1]
	out := make([]T, len(v))
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			out[i*cols+j] = v[j*rows+i]
		}
	}
	return out
}

// readArrayHeader reads the header of a rank-1 or rank-2 array of the
// given kind and sizes 4 or 8.
func readArrayHeader(r io.Reader, kind Kind, want string) (*Header, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, withWant(err, want)
	}
	if h.Kind != kind || h.Size != 4 && h.Size != 8 {
		return nil, &DtypeError{Descr: h.Descr, Want: want}
	}
	if err := checkRank(h); err != nil {
		return nil, err
	}
	return h, nil
}

func byteOrder(h *Header) binary.ByteOrder {
	if h.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// nativeLittle reports whether this machine stores integers little-endian.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// DecodeFloat64 reads a rank-1 or rank-2 float64 or float32 array from r,
// returning its elements in C order and its shape. With rejectNonFinite a
// NaN or ±Inf element is an error naming its index.
func DecodeFloat64(r io.Reader, rejectNonFinite bool) ([]float64, []int, error) {
	h, err := readArrayHeader(r, Float, "float64 or float32")
	if err != nil {
		return nil, nil, err
	}
	var v []float64
	if need := int64(h.Len()) * 8; h.Size == 8 && (need <= payloadChunk || holds(r, need)) {
		// float64 up to payloadChunk bytes, or a file that holds them: read straight into the result
		// (no byte buffer: half the fresh memory and one copy less), then
		// fix the byte order in place if it is not the machine's
		v = make([]float64, h.Len())
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
		if err := readInto(r, h, b); err != nil {
			return nil, nil, err
		}
		if order := byteOrder(h); h.BigEndian == nativeLittle {
			for i := range v {
				v[i] = math.Float64frombits(order.Uint64(b[8*i:]))
			}
		}
		return finishFloat64(v, h, rejectNonFinite)
	}
	b, err := readPayload(r, h)
	if err != nil {
		return nil, nil, err
	}
	order := byteOrder(h)
	v = make([]float64, h.Len())
	for i := range v {
		if h.Size == 8 {
			v[i] = math.Float64frombits(order.Uint64(b[8*i:]))
		} else {
			v[i] = float64(math.Float32frombits(order.Uint32(b[4*i:])))
		}
	}
	return finishFloat64(v, h, rejectNonFinite)
}

// finishFloat64 puts v in C order and rejects non-finite elements if asked.
func finishFloat64(v []float64, h *Header, rejectNonFinite bool) ([]float64, []int, error) {
	v = toC(v, h)
	if rejectNonFinite {
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil, fmt.Errorf("%w: element %s is %v", ErrNonFinite, index(i, h.Shape), x)
			}
		}
	}
	return v, h.Shape, nil
}

// DecodeInt64 reads a rank-1 or rank-2 array of any integer dtype NumPy
// writes — int8, int16, int32, int64, uint8, uint16, uint32 or uint64, in
// either byte order — from r, returning its elements widened to int64 in C
// order and its shape. A float (whole-valued or not) or any other dtype is
// a DtypeError naming the dtype and the integer dtypes; a uint64 element
// beyond the int64 range is an error naming its index.
func DecodeInt64(r io.Reader) ([]int64, []int, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return nil, nil, withWant(err, intDtype)
	}
	if h.Kind != Int && h.Kind != Uint {
		return nil, nil, &DtypeError{Descr: h.Descr, Want: intDtype}
	}
	if err := checkRank(h); err != nil {
		return nil, nil, err
	}
	b, err := readPayload(r, h)
	if err != nil {
		return nil, nil, err
	}
	a := &Array{Header: *h, data: b, order: byteOrder(h)}
	if h.Fortran && len(h.Shape) == 2 {
		a.data = fortranToC(b, h.Shape, h.Size)
	}
	v := make([]int64, h.Len())
	for i := range v {
		_, n, ok := a.at(i)
		if !ok {
			return nil, nil, fmt.Errorf("%w: element %s is %d, beyond the int64 range", ErrRange, index(i, h.Shape), uint64(n))
		}
		v[i] = n
	}
	return v, h.Shape, nil
}

// index formats flat C-order index i as (row, col) for a matrix.
func index(i int, shape []int) string {
	if len(shape) == 2 && shape[1] > 0 {
		return fmt.Sprintf("(%d, %d)", i/shape[1], i%shape[1])
	}
	return fmt.Sprintf("%d", i)
}

func openRead[T any](path string, decode func(io.Reader) (T, []int, error)) (T, []int, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	// a small buffer: it serves the header; a payload read of at least its
	// size goes straight to the file (no fresh 64 KB buffer to fill and copy)
	v, shape, err := decode(newFileReader(f, 4096))
	if err != nil {
		return zero, nil, fmt.Errorf("npy: %s: %w", path, err)
	}
	return v, shape, nil
}

// ReadFloat64 reads a rank-1 or rank-2 float64 (or float32, widened) array
// from the .npy file at path. The data come back in C order with the shape.
func ReadFloat64(path string, rejectNonFinite bool) ([]float64, []int, error) {
	return openRead(path, func(r io.Reader) ([]float64, []int, error) {
		return DecodeFloat64(r, rejectNonFinite)
	})
}

// ReadMatrix reads a rank-2 float64 (or float32) array from path and
// returns it row-major with its dimensions. A rank-1 file is an error.
func ReadMatrix(path string, rejectNonFinite bool) (data []float64, rows, cols int, err error) {
	v, shape, err := ReadFloat64(path, rejectNonFinite)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(shape) != 2 {
		return nil, 0, 0, fmt.Errorf("npy: %s: %w: shape %v, want a matrix (rank 2)", path, ErrRank, shape)
	}
	return v, shape[0], shape[1], nil
}

// ReadInt64 reads a rank-1 vector of any integer dtype (DecodeInt64),
// widened to int64, from path: a label vector.
func ReadInt64(path string) ([]int64, error) {
	v, shape, err := openRead(path, DecodeInt64)
	if err != nil {
		return nil, err
	}
	if len(shape) != 1 {
		return nil, fmt.Errorf("npy: %s: %w: shape %v, want a vector (rank 1)", path, ErrRank, shape)
	}
	return v, nil
}

// IsFormatError reports whether err comes from malformed file content (as
// opposed to an I/O failure).
func IsFormatError(err error) bool {
	return errors.Is(err, ErrFormat) || errors.Is(err, ErrDtype) ||
		errors.Is(err, ErrRank) || errors.Is(err, ErrNonFinite) || errors.Is(err, ErrRange)
}

// Package npy reads and writes NumPy .npy files (format versions 1.0, 2.0
// and 3.0) holding the arrays drknn exchanges with NumPy: float64 (or
// float32) vectors and matrices, and label vectors of any integer dtype
// (int8 … int64, uint8 … uint64; written as int64).
//
// The header parser is our own rather than github.com/sbinet/npyio's: npyio
// v0.6.0 panics on some malformed headers (a header without a newline slices
// out of range), and a reader of files from outside must never panic. npyio
// is used in the tests as an independent second reader of what we write.
//
// Reading accepts little- and big-endian data, C or Fortran order (Fortran
// matrices are transposed into row-major order), and rejects anything else —
// wrong magic, truncated or over-long files, unsupported dtypes, wrong rank,
// and, when asked, NaN or ±Inf — with one error naming the file. Writing
// produces exactly what numpy.save produces for the same array: format 1.0,
// little-endian, C order, header padded to a multiple of 64 bytes. Files are
// written to a temporary name in the destination directory and renamed, so a
// reader never sees a half-written file.
package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors, matchable with errors.Is on the wrapped errors this
// package returns.
var (
	ErrFormat    = errors.New("not a valid .npy file")
	ErrDtype     = errors.New("unsupported dtype")
	ErrRank      = errors.New("wrong rank")
	ErrNonFinite = errors.New("non-finite value")
	// ErrRange: an integer element the reader cannot return (a uint64
	// above the int64 range).
	ErrRange = errors.New("integer out of range")
)

// DtypeError is a dtype a reader does not take: errors.Is(err, ErrDtype)
// holds, and the message names the dtype as the header writes it, its
// NumPy name (DtypeName), and what the reader accepts.
type DtypeError struct {
	Descr string // as the header writes it, e.g. "<f4"
	Want  string // what the reader accepts, e.g. "float64 or float32"
}

func (e *DtypeError) Error() string {
	return fmt.Sprintf("%v %q (%s): want %s", ErrDtype, e.Descr, DtypeName(e.Descr), e.Want)
}

// Is makes errors.Is(err, ErrDtype) hold.
func (e *DtypeError) Is(target error) bool { return target == ErrDtype }

// anyDtype is what the package reads at all (Decode, ReadHeader);
// intDtype what ReadInts, ReadInt64 and Array.Int64 take.
const (
	anyDtype = "float64, float32, or a signed or unsigned integer of 1, 2, 4 or 8 bytes"
	intDtype = "an integer dtype (int8, int16, int32, int64 or uint8 … uint64)"
)

// withWant returns err with what the caller accepts when err is a
// DtypeError (its message then lists only what that reader takes), and
// err unchanged otherwise.
func withWant(err error, want string) error {
	var de *DtypeError
	if errors.As(err, &de) {
		return &DtypeError{Descr: de.Descr, Want: want}
	}
	return err
}

// DtypeName names a dtype string as NumPy does, for messages: "<f4" →
// "float32", ">i8" → "int64, big-endian", "|b1" → "bool", "<c16" →
// "complex128", "|O" → "Python objects", "<U3" → "Unicode strings of 3
// characters"; a string that is no NumPy dtype is "not a NumPy dtype".
func DtypeName(descr string) string {
	if descr == "" {
		return "not a NumPy dtype"
	}
	order, rest := "", descr
	switch descr[0] {
	case '<', '|', '=':
		rest = descr[1:]
	case '>':
		order, rest = ", big-endian", descr[1:]
	}
	if rest == "" {
		return "not a NumPy dtype"
	}
	code, size := rest[0], rest[1:]
	unit := ""
	if i := strings.IndexByte(size, '['); i >= 0 && strings.HasSuffix(size, "]") {
		size, unit = size[:i], size[i:]
		for _, r := range unit[1 : len(unit)-1] {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
				return "not a NumPy dtype" // a unit is letters and digits: ns, 10s, D
			}
		}
	}
	n, err := strconv.Atoi(size)
	if size == "" {
		n, err = 0, nil
	}
	if err != nil || n < 0 || n > 1<<20 {
		return "not a NumPy dtype"
	}
	bits := func(name string) string {
		if n == 0 {
			return "not a NumPy dtype"
		}
		return fmt.Sprintf("%s%d%s", name, 8*n, order)
	}
	switch code {
	case 'f':
		return bits("float")
	case 'i':
		return bits("int")
	case 'u':
		return bits("uint")
	case 'c':
		return bits("complex")
	case 'b', '?':
		return "bool"
	case 'O':
		return "Python objects"
	case 'U':
		return "Unicode strings of " + count(n, "character")
	case 'S', 'a':
		return "byte strings of " + count(n, "byte")
	case 'V':
		return "raw records of " + count(n, "byte")
	case 'M':
		return "datetime64" + unit
	case 'm':
		return "timedelta64" + unit
	}
	return "not a NumPy dtype"
}

// count is "1 byte", "3 bytes".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// magic opens every .npy file.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header dictionary we are willing to parse. NumPy
// itself refuses headers over 10,000 bytes by default; a generous bound
// stops a corrupt length field from making us allocate gigabytes.
const maxHeaderLen = 1 << 20

// Kind is the element kind of a dtype.
type Kind byte

// Element kinds.
const (
	Float Kind = 'f'
	Int   Kind = 'i'
	Uint  Kind = 'u'
)

// Header is the parsed header of a .npy file.
type Header struct {
	Major, Minor byte
	Descr        string // the dtype string as written, e.g. "<f8"
	Kind         Kind   // Float, Int or Uint
	Size         int    // bytes per element: 1, 2, 4 or 8 (floats: 4 or 8)
	BigEndian    bool
	Fortran      bool
	Shape        []int
}

// Len is the number of elements the shape describes.
func (h *Header) Len() int {
	n := 1
	for _, s := range h.Shape {
		n *= s
	}
	return n
}

// parseDescr interprets a dtype string: float32/64 ("<f4", "<f8"), signed
// and unsigned integers of 1, 2, 4 or 8 bytes ("|i1", "<i2", "<u4", …), in
// either byte order ('=' means the writer's native order and is read as
// little-endian, the order of every machine NumPy is built for that writes
// '='; '|', "not applicable", is only valid for one-byte types).
func parseDescr(s string) (kind Kind, size int, big bool, err error) {
	bad := &DtypeError{Descr: s, Want: anyDtype}
	if len(s) != 3 {
		return 0, 0, false, bad
	}
	switch s[2] {
	case '1':
		size = 1
	case '2':
		size = 2
	case '4':
		size = 4
	case '8':
		size = 8
	default:
		return 0, 0, false, bad
	}
	switch s[1] {
	case 'f':
		if size < 4 {
			return 0, 0, false, bad
		}
		kind = Float
	case 'i':
		kind = Int
	case 'u':
		kind = Uint
	default:
		return 0, 0, false, bad
	}
	switch s[0] {
	case '<', '=':
	case '>':
		big = true
	case '|':
		if size != 1 {
			return 0, 0, false, bad
		}
	default:
		return 0, 0, false, bad
	}
	return kind, size, big, nil
}

// parseDict parses the header dictionary, a Python literal such as
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
//
// It accepts any key order, single or double quotes, and optional
// whitespace and trailing commas; every one of the three keys must appear
// exactly once and no other key may.
func parseDict(s string) (descr string, fortran bool, shape []int, err error) {
	p := &dictParser{s: s}
	seen := map[string]bool{}
	p.space()
	if !p.eat('{') {
		return "", false, nil, p.fail("dictionary does not start with '{'")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, ok := p.str()
		if !ok {
			return "", false, nil, p.fail("expected a quoted key")
		}
		if seen[key] {
			return "", false, nil, p.fail("duplicate key " + strconv.Quote(key))
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return "", false, nil, p.fail("expected ':'")
		}
		p.space()
		switch key {
		case "descr":
			v, ok := p.str()
			if !ok {
				return "", false, nil, p.fail("'descr' is not a string (structured dtypes are not supported)")
			}
			descr = v
		case "fortran_order":
			switch {
			case p.word("True"):
				fortran = true
			case p.word("False"):
				fortran = false
			default:
				return "", false, nil, p.fail("'fortran_order' is not True or False")
			}
		case "shape":
			sh, e := p.tuple()
			if e != nil {
				return "", false, nil, e
			}
			shape = sh
		default:
			return "", false, nil, p.fail("unexpected key " + strconv.Quote(key))
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if p.eat('}') {
			break
		}
		return "", false, nil, p.fail("expected ',' or '}'")
	}
	p.space()
	if p.i != len(p.s) {
		return "", false, nil, p.fail("trailing characters after '}'")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return "", false, nil, fmt.Errorf("%w: header lacks key %q", ErrFormat, k)
		}
	}
	return descr, fortran, shape, nil
}

type dictParser struct {
	s string
	i int
}

func (p *dictParser) fail(msg string) error {
	return fmt.Errorf("%w: header dictionary at byte %d: %s", ErrFormat, p.i, msg)
}

func (p *dictParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *dictParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dictParser) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str reads a quoted string without escapes (NumPy never writes any in
// the three values we accept).
func (p *dictParser) str() (string, bool) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", false
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	p.i += end + 2
	return v, true
}

// tuple reads a Python tuple of non-negative integers: (), (3,), (3, 4).
func (p *dictParser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, p.fail("'shape' is not a tuple")
	}
	shape := []int{}
	commas := 0
	for {
		p.space()
		if p.eat(')') {
			break
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		// NumPy may write Python 2 long literals such as 3L.
		digits := p.s[start:p.i]
		p.eat('L')
		if digits == "" {
			return nil, p.fail("'shape' holds a non-integer")
		}
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || v > 1<<50 {
			return nil, p.fail("'shape' dimension " + digits + " is too large")
		}
		shape = append(shape, int(v))
		p.space()
		if p.eat(',') {
			commas++
			continue
		}
		p.space()
		if p.eat(')') {
			break
		}
		return nil, p.fail("expected ',' or ')' in 'shape'")
	}
	if len(shape) == 1 && commas == 0 {
		// "(3)" is an int in Python, not a tuple; NumPy writes "(3,)".
		return nil, p.fail("'shape' (n) lacks the trailing comma of a 1-tuple")
	}
	return shape, nil
}

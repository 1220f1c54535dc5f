package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// Array is a .npy array of any rank and of any dtype the package reads
// (float32/64, signed and unsigned integers of 1–8 bytes), its data in C
// (row-major) order whatever the file's order.
type Array struct {
	Header        // the file's header; Shape is the array's shape
	data   []byte // Len()·Size bytes in C order, in the file's byte order
	order  binary.ByteOrder
}

// Decode reads a .npy array of any rank (a rank-0 scalar included) from r.
// Fortran-order data are reordered into C order. The checks are those of
// the rank-1/2 readers: magic, version, header, dtype, exact length.
func Decode(r io.Reader) (*Array, error) { return decode(r, false) }

// decode is Decode; ints takes integer dtypes only (ReadInts).
func decode(r io.Reader, ints bool) (*Array, error) {
	h, err := ReadHeader(r)
	if err != nil && ints {
		return nil, withWant(err, intDtype)
	}
	if err != nil {
		return nil, err
	}
	if ints && h.Kind == Float {
		return nil, &DtypeError{Descr: h.Descr, Want: intDtype}
	}
	b, err := readPayload(r, h)
	if err != nil {
		return nil, err
	}
	a := &Array{Header: *h, data: b, order: binary.LittleEndian}
	if h.BigEndian {
		a.order = binary.BigEndian
	}
	if h.Fortran && len(h.Shape) > 1 {
		a.data = fortranToC(b, h.Shape, h.Size)
		a.Fortran = false
	}
	return a, nil
}

// Read reads the .npy file at path with Decode; errors name the file.
func Read(path string) (*Array, error) { return read(path, false) }

// ReadInts is Read for an array of an integer dtype (such as labels): a
// float or any other dtype is an error that names the dtype and says the
// integer dtypes are wanted.
func ReadInts(path string) (*Array, error) { return read(path, true) }

func read(path string, ints bool) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	a, err := decode(newFileReader(f, 1<<16), ints)
	if err != nil {
		return nil, fmt.Errorf("npy: %s: %w", path, err)
	}
	return a, nil
}

// fortranToC reorders the elements (of size bytes each) of an array stored
// in Fortran order (first index fastest) into C order (last index fastest).
func fortranToC(b []byte, shape []int, size int) []byte {
	n := len(b) / size
	out := make([]byte, len(b))
	idx := make([]int, len(shape)) // multi-index of C-order element c
	for c := 0; c < n; c++ {
		f, stride := 0, 1
		for k := range shape {
			f += idx[k] * stride
			stride *= shape[k]
		}
		copy(out[c*size:(c+1)*size], b[f*size:(f+1)*size])
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

// at returns element i as a float64 (integers converted exactly up to
// 2^53) and, for integer kinds, as an int64 with ok false when a uint64
// does not fit.
func (a *Array) at(i int) (f float64, n int64, ok bool) {
	p := a.data[i*a.Size:]
	switch a.Kind {
	case Float:
		if a.Size == 8 {
			f = math.Float64frombits(a.order.Uint64(p))
		} else {
			f = float64(math.Float32frombits(a.order.Uint32(p)))
		}
		return f, 0, false
	case Int:
		switch a.Size {
		case 1:
			n = int64(int8(p[0]))
		case 2:
			n = int64(int16(a.order.Uint16(p)))
		case 4:
			n = int64(int32(a.order.Uint32(p)))
		default:
			n = int64(a.order.Uint64(p))
		}
		return float64(n), n, true
	default:
		var u uint64
		switch a.Size {
		case 1:
			u = uint64(p[0])
		case 2:
			u = uint64(a.order.Uint16(p))
		case 4:
			u = uint64(a.order.Uint32(p))
		default:
			u = a.order.Uint64(p)
		}
		return float64(u), int64(u), u <= math.MaxInt64
	}
}

// Float32 returns the elements converted to float32 in C order: floats
// rounded, integers converted (uint8 pixel values stay 0…255; scaling is
// the caller's choice). With rejectNonFinite a NaN, ±Inf, or a float64
// beyond the float32 range is an error naming its index.
func (a *Array) Float32(rejectNonFinite bool) ([]float32, error) {
	out := make([]float32, a.Len())
	for i := range out {
		f, _, _ := a.at(i)
		v := float32(f)
		if rejectNonFinite && (math.IsNaN(f) || math.IsInf(float64(v), 0)) {
			return nil, fmt.Errorf("%w: element %s is %v (not a finite float32)", ErrNonFinite, multiIndex(i, a.Shape), f)
		}
		out[i] = v
	}
	return out, nil
}

// Float64 returns element i (C order) as the file holds it, as a float64:
// floats widened, integers converted (exactly up to 2^53).
func (a *Array) Float64(i int) float64 { f, _, _ := a.at(i); return f }

// MultiIndex formats flat C-order index i of an array of shape as a tuple,
// "(2, 0, 1)" (a plain number for rank ≤ 1), as numpy indexes it.
func MultiIndex(i int, shape []int) string { return multiIndex(i, shape) }

// Int64 returns the elements of an integer array in C order. A float
// array, or a uint64 element above the int64 range, is an error.
func (a *Array) Int64() ([]int64, error) {
	if a.Kind == Float {
		return nil, &DtypeError{Descr: a.Descr, Want: intDtype}
	}
	out := make([]int64, a.Len())
	for i := range out {
		_, n, ok := a.at(i)
		if !ok {
			return nil, fmt.Errorf("%w: element %s is %d, beyond the int64 range", ErrRange, multiIndex(i, a.Shape), uint64(n))
		}
		out[i] = n
	}
	return out, nil
}

// multiIndex formats flat C-order index i as a tuple of the shape.
func multiIndex(i int, shape []int) string {
	if len(shape) <= 1 {
		return fmt.Sprint(i)
	}
	idx := make([]any, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	s := "("
	for k, v := range idx {
		if k > 0 {
			s += ", "
		}
		s += fmt.Sprint(v)
	}
	return s + ")"
}

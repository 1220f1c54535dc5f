package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/drknn/drknn/internal/atomicfile"
)

// header returns the bytes numpy.save writes before the data of an array
// with the given dtype and shape: format 1.0, C order, the dictionary
// padded with spaces and a newline to a multiple of 64 bytes.
func header(descr string, shape []int) []byte {
	var sh strings.Builder
	sh.WriteByte('(')
	for i, s := range shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + sh.String() + ", }"
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	b := make([]byte, 0, 10+hlen)
	b = append(b, magic...)
	b = append(b, 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(hlen))
	b = append(b, dict...)
	for i := 0; i < pad; i++ {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

func checkShape(n int, shape []int) error {
	if len(shape) < 1 || len(shape) > 2 {
		return fmt.Errorf("%w: shape %v has rank %d, want 1 or 2", ErrRank, shape, len(shape))
	}
	p := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("npy: negative dimension in shape %v", shape)
		}
		p *= s
	}
	if p != n {
		return fmt.Errorf("npy: shape %v holds %d elements, data has %d", shape, p, n)
	}
	return nil
}

// EncodeFloat64 writes data (C order) as a little-endian float64 array of
// the given rank-1 or rank-2 shape, byte for byte as numpy.save would.
func EncodeFloat64(w io.Writer, data []float64, shape ...int) error {
	return encode8(w, "<f8", data, shape, math.Float64bits)
}

// EncodeInt64 writes data (C order) as a little-endian int64 array of the
// given rank-1 or rank-2 shape.
func EncodeInt64(w io.Writer, data []int64, shape ...int) error {
	return encode8(w, "<i8", data, shape, func(x int64) uint64 { return uint64(x) })
}

// encode8 writes the header of dtype descr and shape, then each element of
// data as the 8 little-endian bytes of bits(element).
func encode8[T any](w io.Writer, descr string, data []T, shape []int, bits func(T) uint64) error {
	if err := checkShape(len(data), shape); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(header(descr, shape))
	var b [8]byte
	for _, x := range data {
		binary.LittleEndian.PutUint64(b[:], bits(x))
		bw.Write(b[:])
	}
	return bw.Flush()
}

// writeAtomic writes through encode to a temporary file beside path and
// renames it over path (internal/atomicfile); on failure path is untouched.
func writeAtomic(path string, encode func(io.Writer) error) error {
	if err := atomicfile.Write(path, encode); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteFloat64 writes data, in C order with the given rank-1 or rank-2
// shape (for an M×n matrix: shape M, n), to path as a float64 .npy file.
func WriteFloat64(path string, data []float64, shape ...int) error {
	return writeAtomic(path, func(w io.Writer) error { return EncodeFloat64(w, data, shape...) })
}

// WriteInt64 writes the vector data to path as an int64 .npy file of shape
// (len(data),).
func WriteInt64(path string, data []int64) error {
	return writeAtomic(path, func(w io.Writer) error { return EncodeInt64(w, data, len(data)) })
}

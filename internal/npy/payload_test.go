package npy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Payloads on both sides of payloadChunk (read into one allocation below
// it, into a growing buffer above it), as float64 (read straight into the
// result below the chunk) and int64 (through the byte buffer): the values
// round-trip, a missing last byte is reported as truncated and one byte too
// many as extra.
func TestPayloadAroundChunk(t *testing.T) {
	for _, n := range []int{payloadChunk/8 - 1, payloadChunk / 8, payloadChunk/8 + 1, 3*payloadChunk/8 + 5} {
		f := make([]float64, n)
		k := make([]int64, n)
		for i := range f {
			f[i] = float64(i)*0.5 - 7
			k[i] = int64(i)*3 - 11
		}
		var fb, kb bytes.Buffer
		if err := EncodeFloat64(&fb, f, n); err != nil {
			t.Fatal(err)
		}
		if err := EncodeInt64(&kb, k, n); err != nil {
			t.Fatal(err)
		}
		gotF, shape, err := DecodeFloat64(bytes.NewReader(fb.Bytes()), true)
		if err != nil || len(shape) != 1 || shape[0] != n {
			t.Fatalf("n = %d: float64: shape %v, %v", n, shape, err)
		}
		for i := range f {
			if gotF[i] != f[i] {
				t.Fatalf("n = %d: float64 element %d = %v, want %v", n, i, gotF[i], f[i])
			}
		}
		gotK, _, err := DecodeInt64(bytes.NewReader(kb.Bytes()))
		if err != nil {
			t.Fatalf("n = %d: int64: %v", n, err)
		}
		for i := range k {
			if gotK[i] != k[i] {
				t.Fatalf("n = %d: int64 element %d = %v, want %v", n, i, gotK[i], k[i])
			}
		}
		b := fb.Bytes()
		if _, _, err := DecodeFloat64(bytes.NewReader(b[:len(b)-1]), true); !errors.Is(err, ErrFormat) {
			t.Errorf("n = %d: one byte short: %v, want a format error", n, err)
		}
		if _, _, err := DecodeFloat64(bytes.NewReader(append(b[:len(b):len(b)], 0)), true); !errors.Is(err, ErrFormat) {
			t.Errorf("n = %d: one byte extra: %v, want a format error", n, err)
		}
	}
}

// TestReadFileFullSize: a file that holds its payload is read into one
// allocation of the payload's size (a buffer grown as data arrive, then
// copied, allocated about three times the payload), and a file one byte
// short of it is still reported as truncated.
func TestReadFileFullSize(t *testing.T) {
	const n = 3*payloadChunk/8 + 5
	f := make([]float64, n)
	for i := range f {
		f[i] = float64(i) * 0.25
	}
	var b bytes.Buffer
	if err := EncodeFloat64(&b, f, n); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, short := filepath.Join(dir, "f.npy"), filepath.Join(dir, "short.npy")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, b.Bytes()[:b.Len()-1], 0o644); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	got, _, err := ReadFloat64(path, true)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f {
		if got[i] != f[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], f[i])
		}
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 8*n+64<<10 {
		t.Errorf("reading %d bytes of data allocated %d bytes", 8*n, alloc)
	}
	if _, _, err := ReadFloat64(short, true); !errors.Is(err, ErrFormat) {
		t.Errorf("one byte short: %v, want a format error", err)
	}
	a, err := Read(path)
	if err != nil || a.Len() != n {
		t.Fatalf("Read: %v", err)
	}
	if _, err := Read(short); !errors.Is(err, ErrFormat) {
		t.Errorf("Read, one byte short: %v, want a format error", err)
	}
}

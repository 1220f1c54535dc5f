package model

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"

	"github.com/drknn/drknn/internal/oneline"
)

// adamState is Adam's serialised form: the step count and both moments of
// every node, widened to float64 (float32 values round-trip exactly).
type adamState struct {
	Version int
	T       int
	M, V    [][]float64
}

// MarshalBinary encodes the optimiser state (not the settings or nodes) for
// a checkpoint.
func (a *Adam) MarshalBinary() ([]byte, error) {
	st := adamState{Version: 1, T: a.t, M: make([][]float64, len(a.m)), V: make([][]float64, len(a.v))}
	values := 0
	for i := range a.m {
		st.M[i], st.V[i] = widenView(a.m[i]), widenView(a.v[i])
		values += len(st.M[i]) + len(st.V[i])
	}
	// gob writes a float64 in at most 9 bytes: sized once, the buffer
	// never grows by copying (tens of MB for a CNN's moments).
	var buf bytes.Buffer
	buf.Grow(9*values + 64*len(a.m) + 256)
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("model: Adam state: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary for an
// optimiser over nodes of the same sizes; on error nothing changes. Every
// moment must be finite in the nodes' dtype (a float32 optimiser refuses a
// float64 value past float32's range) and every second moment ≥ 0.
func (a *Adam) UnmarshalBinary(data []byte) error { return a.unmarshal(data, -1) }

// UnmarshalBinaryAfter is UnmarshalBinary for a state that must have taken
// exactly steps steps (a checkpoint's history says how many): a state of
// another step count is refused, changing nothing.
func (a *Adam) UnmarshalBinaryAfter(data []byte, steps int) error { return a.unmarshal(data, steps) }

func (a *Adam) unmarshal(data []byte, steps int) error {
	var st adamState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		// gob's messages quote names from the data: one line, whatever they hold
		return fmt.Errorf("model: Adam state: %w: %s", ErrFormat, oneline.Quote(err.Error()))
	}
	if st.Version != 1 || st.T < 0 || len(st.M) != len(a.m) || len(st.V) != len(a.v) {
		return fmt.Errorf("model: Adam state: %w: version %d, %d/%d moment tensors for %d nodes", ErrFormat, st.Version, len(st.M), len(st.V), len(a.m))
	}
	if steps >= 0 && st.T != steps {
		return fmt.Errorf("model: Adam state: %w: %d steps, want %d", ErrFormat, st.T, steps)
	}
	for i := range a.m {
		if len(st.M[i]) != lenOf(a.m[i]) || len(st.V[i]) != lenOf(a.v[i]) {
			return fmt.Errorf("model: Adam state: %w: node %d has %d values, want %d", ErrFormat, i, len(st.M[i]), lenOf(a.m[i]))
		}
		// float32 moments: the value narrowed must be finite too
		_, f32 := a.m[i].([]float32)
		finite := func(v float64) bool {
			return !math.IsNaN(v) && !math.IsInf(v, 0) && (!f32 || !math.IsInf(float64(float32(v)), 0))
		}
		dtype := map[bool]string{true: "float32", false: "float64"}[f32]
		for j, v := range st.M[i] {
			if !finite(v) {
				return fmt.Errorf("model: Adam state: %w: node %d first moment %d is %v, want finite in %s", ErrFormat, i, j, v, dtype)
			}
		}
		for j, v := range st.V[i] {
			if !(v >= 0) || !finite(v) {
				return fmt.Errorf("model: Adam state: %w: node %d second moment %d is %v, want finite in %s and ≥ 0", ErrFormat, i, j, v, dtype)
			}
		}
	}
	for i := range a.m {
		narrow(a.m[i], st.M[i])
		narrow(a.v[i], st.V[i])
	}
	a.t = st.T
	return nil
}

// widenView is widen without copying a []float64 (for encoding only: the
// result aliases x).
func widenView(x any) []float64 {
	if d, ok := x.([]float64); ok {
		return d
	}
	return widen(x)
}

func widen(x any) []float64 {
	switch d := x.(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	return nil
}

func lenOf(x any) int {
	switch d := x.(type) {
	case []float64:
		return len(d)
	case []float32:
		return len(d)
	}
	return -1
}

func narrow(dst any, src []float64) {
	switch d := dst.(type) {
	case []float64:
		copy(d, src)
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	}
}

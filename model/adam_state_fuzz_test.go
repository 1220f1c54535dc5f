package model

import (
	"bytes"
	"encoding/gob"
	"errors"
	"strings"
	"testing"
)

// adamStates are optimisers over a tiny CNN in float32 and float64, and
// the states each wrote after 0 and 2 steps.
func adamStates(tb testing.TB) (float32s, float64s *Adam, seeds [][]byte) {
	tb.Helper()
	var opts []*Adam
	for _, dt := range []DType{Float32, Float64} {
		s := newTrainStep(tb, Config{Kind: CNN, InShape: []int{1, 4, 4}, Channels: 1, Dim: 2, DType: dt}, 2, 1)
		for i := 0; i < 3; i++ {
			if i != 1 {
				state, err := s.adam.MarshalBinary()
				if err != nil {
					tb.Fatal(err)
				}
				seeds = append(seeds, state)
			}
			s.run(tb)
		}
		fresh := newTrainStep(tb, Config{Kind: CNN, InShape: []int{1, 4, 4}, Channels: 1, Dim: 2, DType: dt}, 2, 1)
		opts = append(opts, fresh.adam)
	}
	return opts[0], opts[1], seeds
}

// checkAdamState fails unless a restoring data either refuses it in one
// line wrapping ErrFormat, unchanged, or holds a consistent state after:
// a step count ≥ 0 and moments finite, second moments ≥ 0.
func checkAdamState(t *testing.T, a *Adam, data []byte) {
	t.Helper()
	before, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.UnmarshalBinary(data); err != nil {
		if !errors.Is(err, ErrFormat) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("refusal not one line wrapping ErrFormat: %q", err)
		}
		after, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatal("a refused state changed the optimiser")
		}
		return
	}
	if a.Steps() < 0 {
		t.Fatalf("restored step count %d", a.Steps())
	}
	if node, moment := a.NonFiniteMoment(); node != "" {
		t.Fatalf("restored %s moment of %s is not finite", moment, node)
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var st adamState
	if err := gob.NewDecoder(bytes.NewReader(state)).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for i, v := range st.V {
		for j, x := range v {
			if !(x >= 0) {
				t.Fatalf("restored second moment %d[%d] = %v", i, j, x)
			}
		}
	}
}

// FuzzAdamUnmarshal: any bytes either restore a consistent optimiser
// state or are refused in one line, changing nothing; never a panic.
func FuzzAdamUnmarshal(f *testing.F) {
	a32, a64, seeds := adamStates(f)
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		for _, off := range []int{0, len(s) / 3, len(s) / 2, len(s) - 1} {
			b := append([]byte(nil), s...)
			b[off] ^= 0x40
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAdamState(t, a32, data)
		checkAdamState(t, a64, data)
	})
}

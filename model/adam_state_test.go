package model

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestAdamStateRoundTrip: an optimiser restored from a checkpoint takes the
// same next step as the original, bit for bit; bad states are rejected
// without changing anything.
func TestAdamStateRoundTrip(t *testing.T) {
	cfg := Config{Kind: CNN, InShape: []int{1, 8, 8}, Channels: 2, Dim: 4}
	a := newTrainStep(t, cfg, 5, 1)
	for i := 0; i < 3; i++ {
		a.run(t)
	}
	state, err := a.adam.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := newTrainStep(t, cfg, 5, 1)
	// Copy the weights, restore the moments, then both take one step.
	for i, p := range b.net.params {
		copy(p.F32, a.net.params[i].F32)
	}
	if err := b.adam.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	if b.adam.Steps() != 3 {
		t.Fatalf("restored step count %d, want 3", b.adam.Steps())
	}
	a.run(t)
	b.run(t)
	if !sameWeights(a.net, b.net) {
		t.Error("restored optimiser took a different step")
	}

	other := newTrainStep(t, Config{Kind: CNN, InShape: []int{1, 8, 8}, Channels: 3, Dim: 4}, 5, 1)
	if err := other.adam.UnmarshalBinary(state); err == nil {
		t.Error("state for 2 channels accepted by a 3-channel optimiser")
	}
	if err := b.adam.UnmarshalBinary(state[:len(state)/2]); err == nil || !errors.Is(err, ErrFormat) {
		t.Errorf("truncated state: err = %v", err)
	}
	// A NaN first moment and a negative second moment.
	for _, bad := range []func(*adamState){
		func(s *adamState) { s.M[0][0] = math.NaN() },
		func(s *adamState) { s.V[2][1] = -1 },
		func(s *adamState) { s.T = -1 },
	} {
		var st adamState
		if err := gob.NewDecoder(bytes.NewReader(state)).Decode(&st); err != nil {
			t.Fatal(err)
		}
		bad(&st)
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(st); err != nil {
			t.Fatal(err)
		}
		before := b.adam.Steps()
		if err := b.adam.UnmarshalBinary(buf.Bytes()); err == nil {
			t.Error("bad state accepted")
		}
		if b.adam.Steps() != before {
			t.Error("rejected state changed the optimiser")
		}
	}
}

// TestAdamStateRefusesFloat32Overflow: moments finite as float64 but past
// float32's range (a hand-made state; the writer widens float32 moments
// exactly) are refused by a float32 optimiser, which would hold ±Inf
// moments after narrowing them, and leave it unchanged. A float64
// optimiser takes them.
func TestAdamStateRefusesFloat32Overflow(t *testing.T) {
	a32, a64, seeds := adamStates(t)
	state32, state64 := seeds[1], seeds[3] // after 2 steps
	for _, c := range []struct {
		name string
		edit func(*adamState)
		want string
	}{
		{"first moment 1e300", func(s *adamState) { s.M[0][0] = 1e300 }, "first moment 0 is 1e+300"},
		{"first moment -4e38", func(s *adamState) { s.M[1][0] = -4e38 }, "first moment 0 is -4e+38"},
		{"second moment 1e39", func(s *adamState) { s.V[0][1] = 1e39 }, "second moment 1 is 1e+39"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edited := func(state []byte) []byte {
				var st adamState
				if err := gob.NewDecoder(bytes.NewReader(state)).Decode(&st); err != nil {
					t.Fatal(err)
				}
				c.edit(&st)
				var buf bytes.Buffer
				if err := gob.NewEncoder(&buf).Encode(st); err != nil {
					t.Fatal(err)
				}
				return buf.Bytes()
			}
			before, _ := a32.MarshalBinary()
			err := a32.UnmarshalBinary(edited(state32))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "float32") {
				t.Fatalf("float32 optimiser: %v", err)
			}
			if after, _ := a32.MarshalBinary(); !bytes.Equal(before, after) {
				t.Fatal("the refused state changed the optimiser")
			}
			if err := a64.UnmarshalBinary(edited(state64)); err != nil {
				t.Fatalf("float64 optimiser: %v", err)
			}
		})
	}
}

// TestAdamStateRefusalOneLine: a gob whose type name holds a newline (the
// decoder's error quotes it) is refused in one line.
func TestAdamStateRefusalOneLine(t *testing.T) {
	a32, _, _ := adamStates(t)
	type adamStatX struct{ Version string }
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(adamStatX{"1"}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Replace(buf.Bytes(), []byte("adamStatX"), []byte("adamStat\n"), 1)
	err := a32.UnmarshalBinary(data)
	if !errors.Is(err, ErrFormat) || strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("%q", err)
	}
}

// TestAdamStateSteps: UnmarshalBinaryAfter refuses a state of another
// step count, changing nothing, and takes the state of that count.
func TestAdamStateSteps(t *testing.T) {
	a32, _, seeds := adamStates(t)
	before, _ := a32.MarshalBinary()
	err := a32.UnmarshalBinaryAfter(seeds[1], 3)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "2 steps, want 3") {
		t.Fatalf("%v", err)
	}
	if after, _ := a32.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("the refused state changed the optimiser")
	}
	if err := a32.UnmarshalBinaryAfter(seeds[1], 2); err != nil || a32.Steps() != 2 {
		t.Fatalf("%v, %d steps", err, a32.Steps())
	}
}

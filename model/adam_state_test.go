package model

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
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

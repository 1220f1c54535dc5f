package experiment

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/train"
)

// TestDecodeTrainState: the validation state a transfer training's
// checkpoint carries is taken back only when a run could have left it;
// anything else is refused as a corrupt checkpoint (train.ErrCorruptCheckpoint),
// in one line naming the file and what is wrong, before the training
// resumes — not after its last step (an undecodable best network) or when
// results.json is written (a NaN time).
func TestDecodeTrainState(t *testing.T) {
	cfg := synthConfig(t)
	net, err := model.New(cfg.NetConfig([]int{1, 16, 16}), 1)
	if err != nil {
		t.Fatal(err)
	}
	netBytes, err := net.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model.Dim++
	other, err := model.New(cfg.NetConfig([]int{1, 16, 16}), 1)
	if err != nil {
		t.Fatal(err)
	}
	otherBytes, err := other.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	good := func() trainState {
		return trainState{
			Validations: []Validation{{Step: 2, Accuracy: 0.5}, {Step: 4, Accuracy: 0.75}, {Step: 6, Accuracy: 0.75}},
			BestStep:    4, BestAcc: 0.75, Best: netBytes, Seconds: 3, CPUSeconds: 5,
		}
	}
	enc := func(st trainState) []byte {
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(st); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	const ck = "/runs/x/checkpoint.bin"
	for _, c := range []struct {
		name string
		st   trainState
	}{
		{"good", good()},
		{"before any validation", trainState{BestAcc: -1, Seconds: 1, CPUSeconds: 1}},
		{"validated at step 0", trainState{Validations: []Validation{{Step: 0, Accuracy: 0.2}}, BestAcc: 0.2, Best: netBytes}},
	} {
		got, err := decodeTrainState(ck, enc(c.st), 6, net)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !bytes.Equal(enc(got), enc(c.st)) {
			t.Errorf("%s: decoded %+v", c.name, got)
		}
	}
	for _, c := range []struct {
		name, want string
		mod        func(*trainState)
	}{
		{"validation past the steps", "step 7", func(s *trainState) { s.Validations[2].Step = 7 }},
		{"validations out of order", "step 2", func(s *trainState) { s.Validations[1].Step = 2 }},
		{"negative step", "step -1", func(s *trainState) { s.Validations[0].Step = -1 }},
		{"accuracy NaN", "NaN", func(s *trainState) { s.Validations[0].Accuracy = math.NaN() }},
		{"accuracy above 1", "1.5", func(s *trainState) { s.Validations[0].Accuracy = 1.5 }},
		{"best not the validations' best", "best validation", func(s *trainState) { s.BestAcc = 0.9 }},
		{"best at the later tie", "best validation", func(s *trainState) { s.BestStep = 6 }},
		{"no best network", "best network", func(s *trainState) { s.Best = nil }},
		{"best network damaged", "best network", func(s *trainState) { s.Best = s.Best[:len(s.Best)/2] }},
		{"best network of another config", "config", func(s *trainState) { s.Best = otherBytes }},
		{"best network without validations", "without a validation", func(s *trainState) {
			s.Validations, s.BestStep, s.BestAcc = nil, 0, -1
		}},
		{"NaN seconds", "NaN", func(s *trainState) { s.Seconds = math.NaN() }},
		{"negative CPU seconds", "-1", func(s *trainState) { s.CPUSeconds = -1 }},
		{"infinite seconds", "+Inf", func(s *trainState) { s.Seconds = math.Inf(1) }},
	} {
		st := good()
		c.mod(&st)
		_, err := decodeTrainState(ck, enc(st), 6, net)
		if !errors.Is(err, train.ErrCorruptCheckpoint) || !strings.Contains(err.Error(), ck) ||
			!strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want a one-line corrupt-checkpoint error naming %s and %q", c.name, err, ck, c.want)
		}
	}
	// Not gob at all, and a gob whose error would quote a newline.
	for _, b := range [][]byte{[]byte("not gob"), enc(good())[:20]} {
		_, err := decodeTrainState(ck, b, 6, net)
		if !errors.Is(err, train.ErrCorruptCheckpoint) || !strings.Contains(err.Error(), ck) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want a one-line corrupt-checkpoint error naming %s", b, err, ck)
		}
	}
}

// FuzzDecodeTrainState: any bytes decode without a panic to either a
// one-line corrupt-checkpoint error or a state whose every validation is
// within the steps, in order, in [0, 1], with the best one recorded.
func FuzzDecodeTrainState(f *testing.F) {
	cfg, err := LoadConfig("../configs/synthetic.yaml", nil)
	if err != nil {
		f.Fatal(err)
	}
	net, err := model.New(cfg.NetConfig([]int{1, 16, 16}), 1)
	if err != nil {
		f.Fatal(err)
	}
	netBytes, err := net.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	for _, st := range []trainState{
		{BestAcc: -1},
		{Validations: []Validation{{Step: 1, Accuracy: 0.5}, {Step: 3, Accuracy: 0.25}}, BestStep: 1, BestAcc: 0.5, Best: netBytes, Seconds: 2, CPUSeconds: 3},
	} {
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(st); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes(), 3)
	}
	f.Fuzz(func(t *testing.T, b []byte, steps int) {
		if steps < 0 || steps > 1000 {
			return
		}
		st, err := decodeTrainState("ck.bin", b, steps, net)
		if err != nil {
			if !errors.Is(err, train.ErrCorruptCheckpoint) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "ck.bin") {
				t.Fatalf("error %q", err)
			}
			return
		}
		best := -1.0
		for i, v := range st.Validations {
			if v.Step < 0 || v.Step > steps || (i > 0 && v.Step <= st.Validations[i-1].Step) || !(v.Accuracy >= 0 && v.Accuracy <= 1) {
				t.Fatalf("validation %d: %+v", i, v)
			}
			best = max(best, v.Accuracy)
		}
		if st.BestAcc != best || math.IsNaN(st.Seconds) || math.IsNaN(st.CPUSeconds) {
			t.Fatalf("state %+v", st)
		}
	})
}

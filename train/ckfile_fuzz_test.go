package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
)

// wrapCheckpoint puts payload in a valid checkpoint envelope (magic,
// version, length, sha256): what a fuzzed payload needs to get past the
// checksum to the gob decoding and the validation after it.
func wrapCheckpoint(version uint32, payload []byte) []byte {
	b := make([]byte, ckHeader, ckHeader+len(payload)+ckTrailer)
	copy(b, ckMagic)
	binary.LittleEndian.PutUint32(b[8:], version)
	binary.LittleEndian.PutUint64(b[12:], uint64(len(payload)))
	b = append(b, payload...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// payloadOf is the gob payload of the checkpoint file path.
func payloadOf(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data[ckHeader : len(data)-ckTrailer]
}

// resumable is what the fuzz targets and table tests need of a trainer.
type resumable struct {
	net     *model.Net
	adam    *model.Adam
	steps   int // configured
	history func() []StepStats
	resume  func(path string) error
}

// snapshot is a trainer's whole restorable state, as bytes.
func (r resumable) snapshot(tb testing.TB) []byte {
	tb.Helper()
	netb, err := r.net.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	adamb, err := r.adam.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(struct {
		Net, Adam []byte
		History   []StepStats
	}{netb, adamb, r.history()}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// wireAdam mirrors model's Adam state encoding (gob matches fields by
// name) so the tests can look at the restored moments.
type wireAdam struct {
	Version int
	T       int
	M, V    [][]float64
}

// consistent fails unless r's restored state is one a run could have
// left: finite weights and statistics (running variances ≥ 0), finite
// moments with second moments ≥ 0, Adam's step count equal to the steps
// in the history, no more steps than configured, history entries numbered
// 1…n with a finite risk and counts ≥ 0 (the relative gaps are the
// solver's and may be ±Inf or NaN when its lower bound is 0).
func (r resumable) consistent(tb testing.TB) {
	tb.Helper()
	for _, p := range append(append([]*model.Param(nil), r.net.Params()...), r.net.Buffers()...) {
		isVar := strings.HasSuffix(p.Name, "running_var")
		for j := 0; j < p.Len(); j++ {
			if v := p.At(j); math.IsNaN(v) || math.IsInf(v, 0) || (isVar && v < 0) {
				tb.Fatalf("restored %s[%d] = %v", p.Name, j, v)
			}
		}
	}
	if node, moment := r.adam.NonFiniteMoment(); node != "" {
		tb.Fatalf("restored %s moment of %s is not finite", moment, node)
	}
	adamb, err := r.adam.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	var st wireAdam
	if err := gob.NewDecoder(bytes.NewReader(adamb)).Decode(&st); err != nil {
		tb.Fatal(err)
	}
	for i, v := range st.V {
		for j, x := range v {
			if !(x >= 0) {
				tb.Fatalf("restored second moment %d[%d] = %v", i, j, x)
			}
		}
	}
	h := r.history()
	if len(h) > r.steps {
		tb.Fatalf("restored %d steps of %d", len(h), r.steps)
	}
	if st.T != len(h) {
		tb.Fatalf("restored Adam step count %d with %d steps of history", st.T, len(h))
	}
	for i, s := range h {
		if s.Step != i+1 || s.Iterations < 0 || s.NotOptimal < 0 || math.IsNaN(s.Risk) || math.IsInf(s.Risk, 0) {
			tb.Fatalf("restored history entry %d: %+v", i, s)
		}
	}
}

// refusal fails unless err is a one-line refusal of path: naming it,
// wrapping ErrCorruptCheckpoint, model.ErrFormat or ErrCheckpointMismatch
// (or the refusal of more steps than configured).
func refusal(tb testing.TB, err error, path string) {
	tb.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, path) {
		tb.Fatalf("refusal not one line naming %s: %q", path, msg)
	}
	if !errors.Is(err, ErrCorruptCheckpoint) && !errors.Is(err, model.ErrFormat) && !errors.Is(err, ErrCheckpointMismatch) &&
		!strings.Contains(msg, "the config asks for") && !strings.Contains(msg, "the settings ask for") {
		tb.Fatalf("refusal wraps neither ErrCorruptCheckpoint nor model.ErrFormat: %v", err)
	}
}

// checkResume resumes r from a file holding payload in a valid envelope:
// either a one-line refusal that leaves r unchanged or a consistent
// state, and never an allocation out of proportion to the payload.
func checkResume(t *testing.T, r resumable, dir string, version uint32, payload []byte) {
	t.Helper()
	path := filepath.Join(dir, "ck.bin")
	if err := os.WriteFile(path, wrapCheckpoint(version, payload), 0o644); err != nil {
		t.Fatal(err)
	}
	before := r.snapshot(t)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := r.resume(path)
	runtime.ReadMemStats(&m1)
	// The gob decoder grows slices as their data arrive (saferio): a
	// length prefix alone allocates nothing. Bound what it may allocate.
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 256*uint64(len(payload))+64<<20 {
		t.Fatalf("resuming a %d-byte payload allocated %d bytes", len(payload), alloc)
	}
	if err != nil {
		refusal(t, err, path)
		if !bytes.Equal(r.snapshot(t), before) {
			t.Fatalf("refused checkpoint (%v) changed the trainer", err)
		}
		return
	}
	r.consistent(t)
}

// fuzzTrainer is a tiny Trainer (the CNN of the trainer tests, float64)
// and the payloads of its checkpoints after 0 and 2 of 3 steps.
func fuzzTrainer(tb testing.TB) (resumable, [][]byte) {
	tb.Helper()
	d, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 2, PerClass: 20, Size: 8, Noise: 0.3, Seed: 4})
	if err != nil {
		tb.Fatal(err)
	}
	ep, err := datasets.NewEpisode(d, datasets.EpisodeSettings{Ways: 2, Shots: 5, Queries: 10, Seed: 4})
	if err != nil {
		tb.Fatal(err)
	}
	s := trainSettings(3, 1)
	build := func() (*model.Net, *Trainer) {
		net, err := model.New(model.Config{Kind: model.CNN, InShape: d.Shape, Channels: 2, Dim: 4, DType: model.Float64}, 11)
		if err != nil {
			tb.Fatal(err)
		}
		tr, err := NewTrainer(net, d.Subset(ep.TrainIndex).X, ep.TrainLabels, s)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { tr.Close() })
		return net, tr
	}
	_, w := build()
	dir := tb.TempDir()
	var seeds [][]byte
	for _, steps := range []int{0, 2} {
		for w.StepsDone() < steps {
			if _, err := w.Step(); err != nil {
				tb.Fatal(err)
			}
		}
		p := filepath.Join(dir, "seed.bin")
		if err := w.SaveCheckpoint(p, "key"); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, payloadOf(tb, p))
	}
	net, tr := build()
	return resumable{net: net, adam: tr.adam, steps: s.Steps, history: tr.History,
		resume: func(path string) error { return tr.Resume(path, "key") }}, seeds
}

// fuzzEpisodic is a tiny EpisodicTrainer (Conv4, float32, with batch-norm
// statistics) and the payloads of its checkpoints after 0 and 2 of 3
// steps.
func fuzzEpisodic(tb testing.TB) (resumable, [][]byte) {
	tb.Helper()
	d, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 6, PerClass: 8, Size: 16, Noise: 0.3, Seed: 5})
	if err != nil {
		tb.Fatal(err)
	}
	base := []int{0, 1, 2, 3}
	var idx []int
	for i, y := range d.Labels {
		if y < 4 {
			idx = append(idx, i)
		}
	}
	s := episodicSettings(ObjectiveProto, 3)
	s.Rotate, s.Episodes = false, 1
	build := func() (*model.Net, *EpisodicTrainer) {
		net, err := model.New(model.Config{Kind: model.Conv4, InShape: d.Shape, Channels: 2}, 11)
		if err != nil {
			tb.Fatal(err)
		}
		tr, err := NewEpisodicTrainer(net, d, base, idx, s)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { tr.Close() })
		return net, tr
	}
	_, w := build()
	dir := tb.TempDir()
	var seeds [][]byte
	for _, steps := range []int{0, 2} {
		for w.StepsDone() < steps {
			if _, err := w.Step(); err != nil {
				tb.Fatal(err)
			}
		}
		p := filepath.Join(dir, "seed.bin")
		if err := w.SaveCheckpoint(p, "key", []byte("extra")); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, payloadOf(tb, p))
	}
	net, tr := build()
	return resumable{net: net, adam: tr.adam, steps: s.Steps, history: tr.History,
		resume: func(path string) error { _, err := tr.Resume(path, "key"); return err }}, seeds
}

// addSeeds adds each payload, truncations of it and copies with one bit
// flipped in each region.
func addSeeds(f *testing.F, payloads [][]byte) {
	for _, p := range payloads {
		f.Add(p)
		for _, n := range []int{0, 1, len(p) / 4, len(p) / 2, len(p) - 1} {
			f.Add(p[:n])
		}
		for _, off := range []int{0, 3, len(p) / 8, len(p) / 3, len(p) / 2, 2 * len(p) / 3, len(p) - 40, len(p) - 5, len(p) - 1} {
			b := append([]byte(nil), p...)
			b[off] ^= 0x40
			f.Add(b)
		}
	}
}

// FuzzTrainerResume: any payload in a valid envelope either resumes a
// Trainer to a consistent state or is refused in one line naming the file,
// leaving the trainer unchanged; never a panic or a runaway allocation.
func FuzzTrainerResume(f *testing.F) {
	r, seeds := fuzzTrainer(f)
	addSeeds(f, seeds)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkResume(t, r, dir, checkpointVersion, payload)
	})
}

// FuzzEpisodicResume: FuzzTrainerResume for the EpisodicTrainer (Conv4,
// float32, batch-norm statistics, the caller's extra bytes).
func FuzzEpisodicResume(f *testing.F) {
	r, seeds := fuzzEpisodic(f)
	addSeeds(f, seeds)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkResume(t, r, dir, episodicCheckpointVersion, payload)
	})
}

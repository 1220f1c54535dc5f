package train

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/drknn/drknn/model"
)

// reencode decodes payload into v, lets edit change it and encodes it
// again.
func reencode[T any](tb testing.TB, payload []byte, edit func(*T)) []byte {
	tb.Helper()
	var v T
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&v); err != nil {
		tb.Fatal(err)
	}
	edit(&v)
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// editAdam rewrites the Adam state inside a checkpoint.
func editAdam(tb testing.TB, adamb []byte, edit func(*wireAdam)) []byte {
	return reencode(tb, adamb, edit)
}

// TestResumeRefusesInconsistentState: checkpoints whose envelope and gob
// are valid but whose state no run could have left — Adam's step count
// other than the steps in the history (negative, huge), history entries
// misnumbered or not finite, moments of the wrong length, moments that
// are finite as float64 but overflow the float32 network's moments, NaN
// weights, another network, another payload version, more steps than
// configured — are refused in one line naming the file (wrapping
// ErrCorruptCheckpoint or model.ErrFormat) and leave the trainer as it
// was.
func TestResumeRefusesInconsistentState(t *testing.T) {
	type edit struct {
		name  string
		edit  func(tb testing.TB, ck *checkpoint)
		is    error  // the error wraps this
		holds string // … and its message holds this
	}
	for _, trainer := range []string{"Trainer", "EpisodicTrainer"} {
		var r resumable
		var seeds [][]byte
		var version uint32
		if trainer == "Trainer" {
			r, seeds, version = fuzzTrainerWith(t)
		} else {
			r, seeds, version = fuzzEpisodicWith(t)
		}
		payload := seeds[1] // 2 of 3 steps
		nan := func(tb testing.TB, ck *checkpoint) {
			net, err := model.UnmarshalNet(ck.Net, "net")
			if err != nil {
				tb.Fatal(err)
			}
			p := net.Params()[0]
			if p.F32 != nil {
				p.F32[1] = float32(math.NaN())
			} else {
				p.F64[1] = math.NaN()
			}
			if ck.Net, err = net.MarshalBinary(); err != nil {
				tb.Fatal(err)
			}
		}
		other := func(tb testing.TB, ck *checkpoint) {
			net, err := model.UnmarshalNet(ck.Net, "net")
			if err != nil {
				tb.Fatal(err)
			}
			cfg := net.Config()
			cfg.Channels++
			o, err := model.New(cfg, 1)
			if err != nil {
				tb.Fatal(err)
			}
			if ck.Net, err = o.MarshalBinary(); err != nil {
				tb.Fatal(err)
			}
		}
		adam := func(f func(*wireAdam)) func(testing.TB, *checkpoint) {
			return func(tb testing.TB, ck *checkpoint) { ck.Adam = editAdam(tb, ck.Adam, f) }
		}
		cases := []edit{
			{"adam step count above the history", adam(func(a *wireAdam) { a.T = 5 }), ErrCorruptCheckpoint, "Adam"},
			{"adam step count huge", adam(func(a *wireAdam) { a.T = math.MaxInt }), ErrCorruptCheckpoint, "Adam"},
			{"adam step count negative", adam(func(a *wireAdam) { a.T = -1 }), model.ErrFormat, "Adam"},
			{"history shorter than the step", func(_ testing.TB, ck *checkpoint) { ck.History = ck.History[:1] }, ErrCorruptCheckpoint, "Adam"},
			{"history misnumbered", func(_ testing.TB, ck *checkpoint) { ck.History[1].Step = 7 }, ErrCorruptCheckpoint, "step 2"},
			{"history NaN risk", func(_ testing.TB, ck *checkpoint) { ck.History[0].Risk = math.NaN() }, ErrCorruptCheckpoint, "step 1"},
			{"history negative iterations", func(_ testing.TB, ck *checkpoint) { ck.History[0].Iterations = -3 }, ErrCorruptCheckpoint, "step 1"},
			{"moment of the wrong length", adam(func(a *wireAdam) { a.M[0] = a.M[0][1:] }), model.ErrFormat, "Adam"},
			{"moments missing", adam(func(a *wireAdam) { a.V = a.V[:1] }), model.ErrFormat, "Adam"},
			{"NaN first moment", adam(func(a *wireAdam) { a.M[1][0] = math.NaN() }), model.ErrFormat, "first moment"},
			{"negative second moment", adam(func(a *wireAdam) { a.V[1][0] = -1e-9 }), model.ErrFormat, "second moment"},
			{"NaN weights", nan, model.ErrFormat, "NaN"},
			{"another network", other, ErrCorruptCheckpoint, "network config"},
			{"payload version", func(_ testing.TB, ck *checkpoint) { ck.Version = 7 }, ErrCorruptCheckpoint, "version 7"},
		}
		if trainer == "EpisodicTrainer" { // float32 moments
			cases = append(cases,
				edit{"first moment past float32", adam(func(a *wireAdam) { a.M[0][0] = 1e300 }), model.ErrFormat, "first moment"},
				edit{"second moment past float32", adam(func(a *wireAdam) { a.V[0][0] = 1e39 }), model.ErrFormat, "second moment"})
		}
		for _, c := range cases {
			t.Run(trainer+"/"+c.name, func(t *testing.T) {
				// checkpoint and episodicCheckpoint share these fields'
				// names: gob decodes either into checkpoint, and
				// episodicCheckpoint's Extra survives in the other form.
				bad := reencodeKeepExtra(t, payload, func(ck *checkpoint) { c.edit(t, ck) })
				path := filepath.Join(t.TempDir(), "ck.bin")
				if err := os.WriteFile(path, wrapCheckpoint(version, bad), 0o644); err != nil {
					t.Fatal(err)
				}
				before := r.snapshot(t)
				err := r.resume(path)
				if err == nil {
					t.Fatalf("resumed; Adam step count and history: %+v", r.history())
				}
				refusal(t, err, path)
				if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.holds) {
					t.Fatalf("refusal %q, want one wrapping %v and naming %q", err, c.is, c.holds)
				}
				if !bytes.Equal(r.snapshot(t), before) {
					t.Fatal("the refused checkpoint changed the trainer")
				}
			})
		}
		t.Run(trainer+"/more steps than configured", func(t *testing.T) {
			bad := reencodeKeepExtra(t, payload, func(ck *checkpoint) {
				ck.History = append(ck.History, StepStats{Step: 3}, StepStats{Step: 4})
				ck.Adam = editAdam(t, ck.Adam, func(a *wireAdam) { a.T = 4 })
			})
			path := filepath.Join(t.TempDir(), "ck.bin")
			if err := os.WriteFile(path, wrapCheckpoint(version, bad), 0o644); err != nil {
				t.Fatal(err)
			}
			err := r.resume(path)
			if err == nil || !strings.Contains(err.Error(), "has 4 steps") {
				t.Fatalf("resume: %v", err)
			}
			refusal(t, err, path)
		})
		t.Run(trainer+"/intact", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ck.bin")
			if err := os.WriteFile(path, wrapCheckpoint(version, payload), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := r.resume(path); err != nil {
				t.Fatal(err)
			}
			r.consistent(t)
			if len(r.history()) != 2 {
				t.Fatalf("%d steps", len(r.history()))
			}
		})
	}
}

// reencodeKeepExtra edits a payload of either trainer as a checkpoint,
// keeping an episodic checkpoint's Extra.
func reencodeKeepExtra(tb testing.TB, payload []byte, edit func(*checkpoint)) []byte {
	return reencode(tb, payload, func(e *episodicCheckpoint) {
		ck := checkpoint{Version: e.Version, Key: e.Key, Net: e.Net, Adam: e.Adam, History: e.History}
		edit(&ck)
		e.Version, e.Key, e.Net, e.Adam, e.History = ck.Version, ck.Key, ck.Net, ck.Adam, ck.History
	})
}

func fuzzTrainerWith(tb testing.TB) (resumable, [][]byte, uint32) {
	r, s := fuzzTrainer(tb)
	return r, s, checkpointVersion
}

func fuzzEpisodicWith(tb testing.TB) (resumable, [][]byte, uint32) {
	r, s := fuzzEpisodic(tb)
	return r, s, episodicCheckpointVersion
}

// TestResumeRefusalOneLine: a payload whose gob type name holds a newline
// (gob's error quotes it) is refused in one line naming the file, for
// either trainer.
func TestResumeRefusalOneLine(t *testing.T) {
	type checkpoinX struct{ Version string }
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(checkpoinX{"2"}); err != nil {
		t.Fatal(err)
	}
	payload := bytes.Replace(buf.Bytes(), []byte("checkpoinX"), []byte("checkpoin\n"), 1)
	for _, c := range []struct {
		name string
		get  func(testing.TB) (resumable, [][]byte, uint32)
	}{{"Trainer", fuzzTrainerWith}, {"EpisodicTrainer", fuzzEpisodicWith}} {
		t.Run(c.name, func(t *testing.T) {
			r, _, version := c.get(t)
			path := filepath.Join(t.TempDir(), "ck.bin")
			if err := os.WriteFile(path, wrapCheckpoint(version, payload), 0o644); err != nil {
				t.Fatal(err)
			}
			err := r.resume(path)
			if err == nil {
				t.Fatal("resumed")
			}
			if !errors.Is(err, ErrCorruptCheckpoint) {
				t.Fatalf("%q", err)
			}
			refusal(t, err, path)
		})
	}
}

// TestResumeHugeLengthPrefix: a payload whose gob message claims 4 GiB, or
// whose weights claim 2^40 bytes, in a file of a few kB, is refused as
// corrupt without allocating anything like it: gob reads a message's
// bytes as they arrive (saferio.ReadData: "unexpected EOF") and refuses a
// slice length beyond the bytes left in its message ("bad []uint8 slice
// length: 0", the 0 its check returns), so no bound of our own is needed.
func TestResumeHugeLengthPrefix(t *testing.T) {
	r, seeds, version := fuzzTrainerWith(t)
	p := seeds[1]
	// gob's uint: a byte < 0x80, or the negated byte count then the bytes
	huge := append([]byte{0xfc, 0xff, 0xff, 0xff, 0xff}, p[1:]...) // first message: 4 GiB
	if p[0] >= 0x80 {
		t.Fatalf("first message length encoded in %d bytes", 256-int(p[0]))
	}
	// a []byte of 2^40 bytes: the Net field re-encoded with its length
	// prefix (2 bytes for len 200) replaced, the message length fixed up
	small := reencodeKeepExtra(t, p, func(ck *checkpoint) { ck.Net = bytes.Repeat([]byte{7}, 200) })
	i := bytes.Index(small, append([]byte{0xff, 200}, bytes.Repeat([]byte{7}, 8)...))
	if i < 0 {
		t.Fatal("no 200-byte Net in the re-encoded payload")
	}
	long := growMessage(t, small, i, []byte{0xfa, 1, 0, 0, 0, 0, 0}, 2)
	for _, c := range []struct {
		name    string
		payload []byte
	}{{"message of 4 GiB", huge}, {"weights of 2^40 bytes", long}} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ck.bin")
			if err := os.WriteFile(path, wrapCheckpoint(version, c.payload), 0o644); err != nil {
				t.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			err := r.resume(path)
			runtime.ReadMemStats(&m1)
			if !errors.Is(err, ErrCorruptCheckpoint) {
				t.Fatalf("%v", err)
			}
			refusal(t, err, path)
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 64<<20 {
				t.Fatalf("refusing %d bytes allocated %d", len(c.payload), alloc)
			}
			t.Logf("%v", err)
		})
	}
}

// growMessage replaces the n bytes at off of the gob stream b by repl and
// fixes the length prefix of the message holding them.
func growMessage(tb testing.TB, b []byte, off int, repl []byte, n int) []byte {
	tb.Helper()
	for at := 0; at < len(b); {
		size, w := gobUint(b[at:])
		start := at + w
		if off >= start && off < start+size {
			var out []byte
			out = append(out, b[:at]...)
			out = append(out, putGobUint(size-n+len(repl))...)
			out = append(out, b[start:off]...)
			out = append(out, repl...)
			return append(out, b[off+n:]...)
		}
		at = start + size
	}
	tb.Fatalf("offset %d in no message", off)
	return nil
}

// gobUint decodes gob's unsigned integer at the start of b: its value and
// width.
func gobUint(b []byte) (int, int) {
	if b[0] < 0x80 {
		return int(b[0]), 1
	}
	n := 256 - int(b[0])
	v := 0
	for _, c := range b[1 : 1+n] {
		v = v<<8 | int(c)
	}
	return v, 1 + n
}

func putGobUint(v int) []byte {
	if v < 0x80 {
		return []byte{byte(v)}
	}
	var be []byte
	for ; v > 0; v >>= 8 {
		be = append([]byte{byte(v)}, be...)
	}
	return append([]byte{byte(256 - len(be))}, be...)
}

package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/oneline"
	"github.com/drknn/drknn/model"
)

// Checkpoint files (Trainer and EpisodicTrainer), all integers
// little-endian:
//
//	magic    8 bytes  "DRKNNCKP"
//	version  uint32   the payload's format version
//	length   uint64   payload bytes
//	payload  length bytes of gob (weights, Adam moments, history, key …)
//	sha256   32 bytes of every preceding byte
//
// Every byte is covered by the checksum: a flipped bit anywhere (weights,
// optimizer state, history, key) makes the file refused as corrupt, in
// one line, instead of resuming from damaged state.
const (
	ckMagic   = "DRKNNCKP"
	ckHeader  = 8 + 4 + 8
	ckTrailer = sha256.Size
)

// ErrCorruptCheckpoint is wrapped by every error about a checkpoint file
// that fails its checksum or cannot be decoded.
var ErrCorruptCheckpoint = errors.New("corrupt checkpoint")

// writeCheckpointSized gob-encodes v under version into path atomically,
// with the header and checksum above.
// size is the payload's expected size (the weight and Adam bytes it holds):
// the buffer is allocated once instead of growing by copies, which for a
// CNN's 60 MB checkpoint cost more CPU than the encoding. It does not
// change the bytes written.
func writeCheckpointSized(path string, version uint32, v any, size int) error {
	var buf bytes.Buffer
	buf.Grow(ckHeader + size + 4096 + ckTrailer)
	buf.Write(make([]byte, ckHeader))
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	b := buf.Bytes()
	copy(b, ckMagic)
	binary.LittleEndian.PutUint32(b[8:], version)
	binary.LittleEndian.PutUint64(b[12:], uint64(len(b)-ckHeader))
	sum := sha256.Sum256(b)
	return atomicfile.WriteBytes(path, append(b, sum[:]...))
}

// readCheckpoint checks path's header, length and checksum and decodes its
// payload into v; the payload's version must be version.
func readCheckpoint(path string, version uint32, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	bad := func(format string, a ...any) error { return corrupt(path, format, a...) }
	if len(data) < ckHeader+ckTrailer || string(data[:8]) != ckMagic {
		return bad("not a drknn checkpoint of this version (%d bytes; an older build's checkpoint, or damaged)", len(data))
	}
	n := binary.LittleEndian.Uint64(data[12:])
	if n != uint64(len(data)-ckHeader-ckTrailer) {
		return bad("payload length %d, the file holds %d (truncated?)", n, len(data)-ckHeader-ckTrailer)
	}
	body := data[:len(data)-ckTrailer]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return bad("checksum mismatch")
	}
	if got := binary.LittleEndian.Uint32(data[8:]); got != version {
		return fmt.Errorf("resume %s: checkpoint format %d, this build reads %d", path, got, version)
	}
	if err := gob.NewDecoder(bytes.NewReader(body[ckHeader:])).Decode(v); err != nil {
		// gob's messages quote type and field names from the data: one
		// line, whatever they hold
		return bad("%s", oneline.Quote(err.Error()))
	}
	return nil
}

// corrupt is the error about the checkpoint path that fails its checksum,
// cannot be decoded or holds a state no run could have left.
func corrupt(path, format string, a ...any) error {
	return fmt.Errorf("resume %s: %w: %s (delete it, or start again with -force)", path, ErrCorruptCheckpoint, fmt.Sprintf(format, a...))
}

// checkDecoded checks what a checkpoint's gob held beyond the network and
// Adam bytes (restoreState checks those): the payload's own version, and a
// history of steps numbered 1, 2, … with a finite risk and counts ≥ 0, as
// Step appends them. (The relative gaps are the solver's, which may be
// ±Inf or NaN when its lower bound is 0: not checked.)
func checkDecoded(path string, version, want int, history []StepStats) error {
	if version != want {
		return corrupt(path, "payload version %d, its header says %d", version, want)
	}
	for i, s := range history {
		if s.Step != i+1 {
			return corrupt(path, "history: step %d is numbered %d", i+1, s.Step)
		}
		if math.IsNaN(s.Risk) || math.IsInf(s.Risk, 0) || s.Iterations < 0 || s.NotOptimal < 0 {
			return corrupt(path, "history of step %d: risk %v, %d iterations, %d not optimal", s.Step, s.Risk, s.Iterations, s.NotOptimal)
		}
	}
	return nil
}

// stateBytes marshals a trainer's network (weights and batch-norm running
// statistics) and Adam moments for the checkpoint path.
func stateBytes(path string, net *model.Net, adam *model.Adam) (netb, adamb []byte, err error) {
	if netb, err = net.MarshalBinary(); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if adamb, err = adam.MarshalBinary(); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return netb, adamb, nil
}

// restoreState puts a checkpoint's network and Adam bytes (stateBytes)
// back into net and adam, refusing a network of another config and Adam
// moments of other sizes or of another step count than steps, the steps
// of the checkpoint's history. On error neither changes.
func restoreState(path string, netb, adamb []byte, steps int, net *model.Net, adam *model.Adam) error {
	saved, err := model.UnmarshalNet(netb, path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if saved.Config().String() != net.Config().String() {
		// the key, which covers the config, matched
		return corrupt(path, "network config %s, want %s", saved.Config(), net.Config())
	}
	// Adam first: it validates sizes and changes nothing on error.
	if err := adam.UnmarshalBinaryAfter(adamb, steps); err != nil {
		return fmt.Errorf("resume %s: %w: %w", path, ErrCorruptCheckpoint, err)
	}
	if err := net.CopyWeights(saved); err != nil { // weights and BN running statistics
		return fmt.Errorf("resume %s: %w", path, err)
	}
	return nil
}

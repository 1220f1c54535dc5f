package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/drknn/drknn/internal/atomicfile"
)

// File format (version 2), all integers little-endian:
//
//	magic      8 bytes  "DRKNNMDL"
//	version    uint32   2
//	hdrLen     uint32   length of the JSON manifest (≤ 1 MiB)
//	manifest   hdrLen bytes of JSON: {"format_version":2, "config":{…},
//	           "dtype":"float32", "storage":"float32",
//	           "tensors":[{"name":…, "shape":[…]}, …,
//	                      {"name":…, "shape":[…], "buffer":true}, …]}
//	data       each tensor in manifest order, row-major, IEEE-754 in the
//	           storage dtype
//	crc        uint32   CRC-32 (IEEE) of every preceding byte
//
// Tensor names, shapes and order must be exactly those the config
// implies: the learnable parameters, then the buffers (Conv4's batch
// normalisation running means and variances, marked "buffer"). storage is
// the network's dtype unless the file was written with SaveOptions{Storage:
// Float32} from a float64 network (half the size; the weights load
// rounded to float32). Version 1 files (no storage field, no buffers;
// written before Conv4 existed) still load.

// FormatVersion is the version of the weights file format written by Save.
const FormatVersion = 2

const (
	fileMagic   = "DRKNNMDL"
	maxManifest = 1 << 20
)

type tensorEntry struct {
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	Buffer bool   `json:"buffer,omitempty"`
}

type manifest struct {
	FormatVersion int           `json:"format_version"`
	Config        Config        `json:"config"`
	DType         DType         `json:"dtype"`
	Storage       DType         `json:"storage,omitempty"` // version ≥ 2
	Tensors       []tensorEntry `json:"tensors"`
}

// SaveOptions select how Save and MarshalBinaryWith store the tensors.
type SaveOptions struct {
	// Storage is the dtype of the stored values: "" (the network's
	// dtype, exact) or Float32 (a float64 network's weights rounded to
	// float32, half the bytes; loading gives a float64 network with those
	// rounded values). A float32 network is always stored in float32.
	Storage DType
}

// MarshalBinary encodes the network in the weights file format, exactly.
func (n *Net) MarshalBinary() ([]byte, error) { return n.MarshalBinaryWith(SaveOptions{}) }

// MarshalBinaryWith encodes the network with the given options.
func (n *Net) MarshalBinaryWith(o SaveOptions) ([]byte, error) {
	storage := n.cfg.DType
	switch o.Storage {
	case "", n.cfg.DType:
	case Float32:
		storage = Float32
	default:
		return nil, fmt.Errorf("model: storage dtype %q, want %q or %q", o.Storage, Float32, Float64)
	}
	m := manifest{FormatVersion: FormatVersion, Config: n.cfg, DType: n.cfg.DType, Storage: storage}
	size := 0
	for _, p := range n.params {
		m.Tensors = append(m.Tensors, tensorEntry{Name: p.Name, Shape: p.Shape})
		size += p.Len()
	}
	for _, p := range n.buffers {
		m.Tensors = append(m.Tensors, tensorEntry{Name: p.Name, Shape: p.Shape, Buffer: true})
		size += p.Len()
	}
	hdr, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("model: encoding manifest: %w", err)
	}
	width := 4
	if storage == Float64 {
		width = 8
	}
	buf := make([]byte, 0, 16+len(hdr)+size*width+4)
	buf = append(buf, fileMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, FormatVersion)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(hdr)))
	buf = append(buf, hdr...)
	for _, p := range n.tensors() {
		for _, v := range p.F32 {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		for _, v := range p.F64 {
			if width == 4 {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v)))
			} else {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf)), nil
}

// Save writes the network to path, exactly: to a temporary file in the
// same folder, synced, then renamed over path (internal/atomicfile), so a
// crash never leaves a partial file.
func (n *Net) Save(path string) error { return n.SaveWith(path, SaveOptions{}) }

// SaveWith is Save with options (e.g. float32 storage of a float64
// network).
func (n *Net) SaveWith(path string, o SaveOptions) error {
	data, err := n.MarshalBinaryWith(o)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(path, data); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// ErrFormat is wrapped by every error about a malformed weights file.
var ErrFormat = errors.New("malformed weights file")

// UnmarshalNet decodes a network from the weights file format. name is
// used in error messages.
func UnmarshalNet(data []byte, name string) (*Net, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("model: %s: %w: %s", name, ErrFormat, fmt.Sprintf(format, a...))
	}
	if len(data) < 20 {
		return nil, bad("%d bytes, too short for a header", len(data))
	}
	if string(data[:8]) != fileMagic {
		return nil, bad("bad magic %q, want %q", data[:8], fileMagic)
	}
	version := binary.LittleEndian.Uint32(data[8:])
	if version != 1 && version != FormatVersion {
		return nil, bad("format version %d, this build reads 1 and %d", version, FormatVersion)
	}
	hl := binary.LittleEndian.Uint32(data[12:])
	if hl > maxManifest || int(hl) > len(data)-20 {
		return nil, bad("manifest length %d does not fit in %d bytes", hl, len(data))
	}
	body := data[:len(data)-4]
	if got, want := crc32.ChecksumIEEE(body), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, bad("checksum %08x, stored %08x (truncated or corrupt)", got, want)
	}
	var m manifest
	dec := json.NewDecoder(bytes.NewReader(data[16 : 16+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, bad("manifest: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("trailing data after the manifest")
	}
	if m.FormatVersion != int(version) {
		return nil, bad("manifest format_version %d, header %d", m.FormatVersion, version)
	}
	cfg := m.Config
	if cfg.DType != m.DType {
		return nil, bad("manifest dtype %q differs from config dtype %q", m.DType, cfg.DType)
	}
	storage := m.Storage
	switch {
	case version == 1 && storage != "":
		return nil, bad("storage %q in a version 1 manifest", storage)
	case version == 1:
		storage = m.DType
	case storage != m.DType && !(storage == Float32 && m.DType == Float64):
		return nil, bad("storage %q for a %q network", storage, m.DType)
	}
	if d := cfg.WithDefaults(); !sameConfig(d, cfg) {
		return nil, bad("config %v is not fully specified", cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %s: %w: %w", name, ErrFormat, err)
	}
	specs := cfg.specs()
	if len(m.Tensors) != len(specs) {
		return nil, bad("%d tensors, the config needs %d", len(m.Tensors), len(specs))
	}
	width := 4
	if storage == Float64 {
		width = 8
	}
	need := 0
	for i, s := range specs {
		t := m.Tensors[i]
		if t.Name != s.name {
			return nil, bad("tensor %d is %q, want %q", i, t.Name, s.name)
		}
		if t.Buffer != s.buffer {
			return nil, bad("tensor %q: buffer %t, want %t", s.name, t.Buffer, s.buffer)
		}
		if !slices.Equal(t.Shape, s.shape) {
			return nil, bad("tensor %q has shape %v, the config needs %v", s.name, t.Shape, s.shape)
		}
		need += shapeLen(s.shape) * width
	}
	raw := body[16+hl:]
	if len(raw) != need {
		return nil, bad("%d bytes of tensor data, want %d", len(raw), need)
	}
	net := newZero(cfg) // sized by the data actually present
	off := 0
	for _, p := range net.tensors() {
		for j := range p.F32 {
			p.F32[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[off:]))
			off += 4
		}
		for j := range p.F64 {
			if width == 4 {
				p.F64[j] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[off:])))
				off += 4
			} else {
				p.F64[j] = math.Float64frombits(binary.LittleEndian.Uint64(raw[off:]))
				off += 8
			}
		}
		isVar := strings.HasSuffix(p.Name, "running_var")
		for j := 0; j < p.Len(); j++ {
			if v := p.At(j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, bad("tensor %q element %d is %v", p.Name, j, v)
			} else if isVar && v < 0 {
				return nil, bad("tensor %q element %d is %v, want ≥ 0", p.Name, j, v)
			}
		}
	}
	return net, nil
}

func sameConfig(a, b Config) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// Load reads a network saved by Save.
func Load(path string) (*Net, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: loading weights: %w", err)
	}
	return UnmarshalNet(data, path)
}

// LoadWeights replaces n's weights with those saved in path, which must
// hold a network of the same configuration; otherwise the error names the
// file and the first differing setting or tensor, and n is unchanged.
func (n *Net) LoadWeights(path string) error {
	m, err := Load(path)
	if err != nil {
		return err
	}
	if m.cfg.DType != n.cfg.DType {
		return fmt.Errorf("model: %s: dtype %s, the network is %s", path, m.cfg.DType, n.cfg.DType)
	}
	if m.cfg.Kind != n.cfg.Kind {
		return fmt.Errorf("model: %s: kind %s, the network is %s", path, m.cfg.Kind, n.cfg.Kind)
	}
	if !slices.Equal(m.cfg.InShape, n.cfg.InShape) {
		return fmt.Errorf("model: %s: in_shape %v, the network has %v", path, m.cfg.InShape, n.cfg.InShape)
	}
	mt, nt := m.tensors(), n.tensors()
	if len(mt) != len(nt) {
		return fmt.Errorf("model: %s: %d tensors, the network has %d (config %v, the network's %v)", path, len(mt), len(nt), m.cfg, n.cfg)
	}
	for i, p := range nt {
		if !slices.Equal(mt[i].Shape, p.Shape) {
			return fmt.Errorf("model: %s: tensor %q has shape %v, the network needs %v", path, p.Name, m.params[i].Shape, p.Shape)
		}
	}
	if !sameConfig(m.cfg, n.cfg) {
		return fmt.Errorf("model: %s: config %v differs from the network's %v", path, m.cfg, n.cfg)
	}
	return n.CopyWeights(m)
}

package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for i, cfg := range []Config{
		{Kind: CNN, InShape: []int{1, 28, 28}, Channels: 4, Dim: 10, DType: Float32},
		{Kind: CNN, InShape: []int{3, 9, 7}, Channels: 2, Padding: IntPtr(0), Dim: 5, DType: Float64},
		{Kind: MLP, InShape: []int{56}, Hidden: 12, Dim: 7, DType: Float32},
		{Kind: MLP, InShape: []int{56}, Dim: 7, DType: Float64},
	} {
		net, err := New(cfg, int64(i))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "w.bin")
		if err := net.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.cfg.String() != net.cfg.String() {
			t.Errorf("config %v, saved %v", got.cfg, net.cfg)
		}
		if !sameWeights(got, net) {
			t.Errorf("%v: loaded weights differ", cfg)
		}
		x := make([]float32, 3*net.cfg.InSize())
		for j := range x {
			x[j] = float32(j%13) / 13
		}
		a, _ := net.Embed(x, 3)
		b, _ := got.Embed(x, 3)
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("%v: embeddings differ after reload", cfg)
			}
		}
		// LoadWeights into a differently seeded net of the same config.
		other, _ := New(cfg, 99)
		if err := other.LoadWeights(path); err != nil {
			t.Fatal(err)
		}
		if !sameWeights(other, net) {
			t.Errorf("%v: LoadWeights gave different weights", cfg)
		}
		// No temporary files left behind.
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("folder holds %d files after Save, want 1", len(ents))
		}
	}
}

func TestLoadWrongShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.bin")
	small, _ := New(Config{Kind: CNN, InShape: []int{1, 8, 8}, Channels: 2, Dim: 4}, 1)
	if err := small.Save(path); err != nil {
		t.Fatal(err)
	}
	big, _ := New(Config{Kind: CNN, InShape: []int{1, 8, 8}, Channels: 3, Dim: 4}, 1)
	before := big.Clone()
	err := big.LoadWeights(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"conv.weight"`) {
		t.Errorf("loading 2-channel weights into a 3-channel net: err = %v, want it to name the file and conv.weight", err)
	}
	if !sameWeights(big, before) {
		t.Error("failed LoadWeights changed the weights")
	}
	other, _ := New(Config{Kind: CNN, InShape: []int{1, 8, 8}, Channels: 2, Dim: 4, DType: Float64}, 1)
	if err := other.LoadWeights(path); err == nil || !strings.Contains(err.Error(), "dtype") {
		t.Errorf("loading float32 weights into a float64 net: err = %v", err)
	}

	// A manifest whose tensor shape disagrees with its own config.
	data, _ := small.MarshalBinary()
	bad := rewriteManifest(t, data, func(s string) string {
		return strings.Replace(s, `"shape":[2,1,3,3]`, `"shape":[2,1,3,4]`, 1)
	})
	_, err = UnmarshalNet(bad, "edited.bin")
	if err == nil || !strings.Contains(err.Error(), "edited.bin") || !strings.Contains(err.Error(), `"conv.weight"`) || !errors.Is(err, ErrFormat) {
		t.Errorf("manifest with wrong conv.weight shape: err = %v", err)
	}
}

// rewriteManifest edits the JSON manifest of an encoded net and fixes up
// the length and checksum, so that only the edit is wrong.
func rewriteManifest(t *testing.T, data []byte, edit func(string) string) []byte {
	t.Helper()
	hl := binary.LittleEndian.Uint32(data[12:])
	hdr := edit(string(data[16 : 16+hl]))
	var out []byte
	out = append(out, data[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hdr)))
	out = append(out, hdr...)
	out = append(out, data[16+hl:len(data)-4]...)
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

func TestLoadCorrupt(t *testing.T) {
	net, _ := New(Config{Kind: MLP, InShape: []int{3}, Hidden: 2, Dim: 2, DType: Float64}, 1)
	data, _ := net.MarshalBinary()
	for n := 0; n < len(data); n++ {
		if _, err := UnmarshalNet(data[:n], "t.bin"); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(data))
		}
	}
	for i := 0; i < len(data); i++ {
		c := bytes.Clone(data)
		c[i] ^= 0x10
		if _, err := UnmarshalNet(c, "t.bin"); err == nil {
			t.Fatalf("bit flip at byte %d: no error", i)
		}
	}
	if _, err := UnmarshalNet(append(bytes.Clone(data), 0), "t.bin"); err == nil {
		t.Error("trailing byte: no error")
	}
	// Edits with a valid checksum.
	for name, edit := range map[string]func(string) string{
		"version": func(s string) string { return strings.Replace(s, `"format_version":1`, `"format_version":2`, 1) },
		"dtype": func(s string) string {
			return strings.Replace(s, `"dtype":"float64","tensors"`, `"dtype":"float32","tensors"`, 1)
		},
		"kind":      func(s string) string { return strings.Replace(s, `"kind":"mlp"`, `"kind":"cnn"`, 1) },
		"hidden":    func(s string) string { return strings.Replace(s, `"hidden":2`, `"hidden":3`, 1) },
		"name":      func(s string) string { return strings.Replace(s, `"fc2.bias"`, `"fc3.bias"`, 1) },
		"unknown":   func(s string) string { return strings.Replace(s, `{"format_version"`, `{"x":1,"format_version"`, 1) },
		"notjson":   func(s string) string { return s[:len(s)-1] },
		"huge":      func(s string) string { return strings.Replace(s, `"in_shape":[3]`, `"in_shape":[1000000000]`, 1) },
		"undefault": func(s string) string { return strings.Replace(s, `"dim":2`, `"dim":0`, 1) },
	} {
		if _, err := UnmarshalNet(rewriteManifest(t, data, edit), "t.bin"); err == nil {
			t.Errorf("manifest edit %q: no error", name)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.bin")); err == nil {
		t.Error("missing file: no error")
	}
}

func FuzzLoad(f *testing.F) {
	for _, cfg := range []Config{
		{Kind: MLP, InShape: []int{3}, Hidden: 2, Dim: 2, DType: Float64},
		{Kind: CNN, InShape: []int{1, 4, 4}, Channels: 1, Dim: 2, DType: Float32},
	} {
		net, _ := New(cfg, 1)
		data, _ := net.MarshalBinary()
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte("DRKNNMDL"))
	f.Fuzz(func(t *testing.T, data []byte) {
		net, err := UnmarshalNet(data, "fuzz.bin")
		if err != nil {
			return
		}
		// Whatever loads must round-trip and embed.
		again, err := net.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalNet(again, "again.bin")
		if err != nil {
			t.Fatalf("re-encoded file does not load: %v", err)
		}
		if back.cfg.String() != net.cfg.String() || !sameWeights(back, net) {
			t.Fatal("re-encoded file loads differently")
		}
		if _, err := net.Embed(make([]float32, net.cfg.InSize()), 1); err != nil {
			t.Fatal(err)
		}
	})
}

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
		"version":   func(s string) string { return strings.Replace(s, `"format_version":2`, `"format_version":3`, 1) },
		"version1":  func(s string) string { return strings.Replace(s, `"format_version":2`, `"format_version":1`, 1) },
		"storage":   func(s string) string { return strings.Replace(s, `"storage":"float64"`, `"storage":"float16"`, 1) },
		"storage32": func(s string) string { return strings.Replace(s, `"storage":"float64"`, `"storage":"float32"`, 1) },
		"dtype": func(s string) string {
			return strings.Replace(s, `"dtype":"float64","storage"`, `"dtype":"float32","storage"`, 1)
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
		{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 1, DType: Float32},
	} {
		net, _ := New(cfg, 1)
		data, _ := net.MarshalBinary()
		f.Add(data, true)
		f.Add(data[:len(data)/2], false)
		if cfg.DType == Float64 {
			data, _ = net.MarshalBinaryWith(SaveOptions{Storage: Float32})
			f.Add(data, true)
		}
	}
	for _, name := range []string{"v1_cnn_float32.bin", "v1_mlp_float64.bin"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, true)
	}
	f.Add([]byte("DRKNNMDL"), false)
	f.Fuzz(func(t *testing.T, data []byte, fixSum bool) {
		if fixSum && len(data) >= 20 {
			// The CRC-32 refuses nearly every mutation before the manifest
			// is read: store the right one, so that the manifest, the
			// config and the tensors are fuzzed too.
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.ChecksumIEEE(data[:len(data)-4]))
		}
		net, err := UnmarshalNet(data, "fuzz.bin")
		if err != nil {
			// one line, naming the file, whatever the bytes
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "fuzz.bin") {
				t.Fatalf("error %q: want one line naming fuzz.bin", err)
			}
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

// TestLoadVersion1 reads weights files written by format version 1 (before
// Conv4 and float32 storage; testdata/ holds files saved by that code) and
// checks their weights through the embeddings that code computed; saving
// them again writes version 2, which loads to the same network.
func TestLoadVersion1(t *testing.T) {
	for _, c := range []struct {
		file string
		want []float64
	}{
		{"v1_cnn_float32.bin", []float64{0.3053700923919678, 0.1847875863313675, 0.30567798018455505, 0.27241718769073486, -0.20509512722492218, 0.13854122161865234}},
		{"v1_mlp_float64.bin", []float64{-0.1457828110709025, 0.09439194676158466, 0, 0}},
	} {
		path := filepath.Join("testdata", c.file)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if v := binary.LittleEndian.Uint32(raw[8:]); v != 1 {
			t.Fatalf("%s is format version %d, want a version 1 file", path, v)
		}
		net, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 2*net.cfg.InSize())
		for i := range x {
			x[i] = float32(i%7) / 7
		}
		e, err := net.Embed(x, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !sameEmbedding(e, c.want) {
			t.Fatalf("%s: embedding %v, want %v", path, e, c.want)
		}
		data, err := net.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if v := binary.LittleEndian.Uint32(data[8:]); v != FormatVersion || FormatVersion != 2 {
			t.Errorf("re-saved as version %d, want 2", v)
		}
		back, err := UnmarshalNet(data, "resaved.bin")
		if err != nil || !sameWeights(back, net) {
			t.Errorf("%s re-saved as version 2: err %v, same weights %v", path, err, err == nil && sameWeights(back, net))
		}
		// A version 1 header with a version 2 manifest, and the reverse.
		mixed := bytes.Clone(raw)
		binary.LittleEndian.PutUint32(mixed[8:], 2)
		binary.LittleEndian.PutUint32(mixed[len(mixed)-4:], crc32.ChecksumIEEE(mixed[:len(mixed)-4]))
		if _, err := UnmarshalNet(mixed, "mixed.bin"); err == nil {
			t.Errorf("%s with header version 2: no error", path)
		}
	}
}

// TestFloat32Storage: a float64 network saved with float32 storage takes
// half the bytes and loads as a float64 network with its weights rounded
// to float32; a float32 network's file is float32 either way.
func TestFloat32Storage(t *testing.T) {
	cfg := Config{Kind: CNN, InShape: []int{1, 28, 28}, Channels: 4, Dim: 10, DType: Float64}
	net, _ := New(cfg, 3)
	exact, _ := net.MarshalBinary()
	half, err := net.MarshalBinaryWith(SaveOptions{Storage: Float32})
	if err != nil {
		t.Fatal(err)
	}
	n := net.NumParams()
	if len(exact)-len(half) != 4*n {
		t.Errorf("float32 storage saves %d bytes, want 4 × %d weights", len(exact)-len(half), n)
	}
	got, err := UnmarshalNet(half, "half.bin")
	if err != nil {
		t.Fatal(err)
	}
	if got.cfg.DType != Float64 {
		t.Fatalf("loaded dtype %s, want float64", got.cfg.DType)
	}
	for i, p := range net.params {
		for j, v := range p.F64 {
			if got.params[i].F64[j] != float64(float32(v)) {
				t.Fatalf("%s[%d] = %v, want %v rounded to float32", p.Name, j, got.params[i].F64[j], v)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "h.bin")
	if err := net.SaveWith(path, SaveOptions{Storage: Float32}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(half)) {
		t.Errorf("SaveWith wrote %v bytes (err %v), want %d", fi.Size(), err, len(half))
	}
	if _, err := net.MarshalBinaryWith(SaveOptions{Storage: "float16"}); err == nil {
		t.Error("storage float16 accepted")
	}
	n32, _ := New(Config{Kind: Conv4, InShape: []int{1, 16, 16}, Channels: 2, DType: Float32}, 1)
	a, _ := n32.MarshalBinary()
	b, _ := n32.MarshalBinaryWith(SaveOptions{Storage: Float32})
	if !bytes.Equal(a, b) {
		t.Error("float32 network: float32 storage differs from the default")
	}
	if want := 4 * (n32.NumParams() + 16); len(a) < want || len(a) > want+2048 {
		t.Errorf("float32 conv4 file is %d bytes for %d params and 16 running statistics", len(a), n32.NumParams())
	}
	// A negative running variance is rejected.
	n32.buffers[1].F32[0] = -1
	bad, _ := n32.MarshalBinary()
	if _, err := UnmarshalNet(bad, "neg.bin"); err == nil || !strings.Contains(err.Error(), "running_var") {
		t.Errorf("negative running variance: err = %v", err)
	}
	// A buffer flag dropped from the manifest is rejected.
	n32.buffers[1].F32[0] = 1
	good, _ := n32.MarshalBinary()
	edited := rewriteManifest(t, good, func(s string) string { return strings.Replace(s, `,"buffer":true`, ``, 1) })
	if _, err := UnmarshalNet(edited, "flag.bin"); err == nil || !strings.Contains(err.Error(), "buffer") {
		t.Errorf("buffer flag removed: err = %v", err)
	}
}

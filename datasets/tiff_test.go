package datasets

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	// Registered as the commands register it (through gonum/plot's
	// vgimg): the readers must refuse TIFF all the same.
	_ "golang.org/x/image/tiff"
)

// TestTIFFRefusedRegisteredOrNot: TIFF is read by neither the library nor
// the commands. The commands linked x/image/tiff (through gonum/plot) and
// read .tiff folders the library alone skipped; and that decoder, given a
// header of 8 bytes whose first directory lies at 2 GiB, allocates 2 GiB
// in DecodeConfig. The readers now answer by the signature, before any
// decoder: skipped as a non-image in a folder, an error naming TIFF for a
// file given alone, nothing allocated.
func TestTIFFRefusedRegisteredOrNot(t *testing.T) {
	if _, _, err := image.DecodeConfig(bytes.NewReader([]byte(greyTIFF))); err != nil {
		t.Fatalf("the test binary does not decode TIFF (%v): it tests nothing", err)
	}
	dir := t.TempDir()
	g := image.NewGray(image.Rect(0, 0, 5, 4))
	var pb bytes.Buffer
	if err := png.Encode(&pb, g); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"a/x.png": pb.Bytes(), "a/y.tif": []byte(greyTIFF), "a/z.tiff": []byte(greyTIFF), "a/noext": []byte(greyTIFF), "b/w.png": pb.Bytes()} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := ReadImageFolder(os.DirFS(dir), dir, ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/x.png", "b/w.png"}; !slices.Equal(d.Files, want) || d.Report == nil || d.Report.NotImage != 3 {
		t.Fatalf("files %q (want %q), report %+v", d.Files, want, d.Report)
	}
	if IsFolderImage(filepath.Join(dir, "a", "noext")) {
		t.Fatal("-images lists a TIFF from a folder")
	}
	_, release, err := decodeImage([]byte(greyTIFF), 1<<16)
	release()
	if !errors.Is(err, errNotImage) || !strings.Contains(err.Error(), "TIFF") {
		t.Fatalf("decodeImage(TIFF): %v", err)
	}
	if _, err := DecodeReaderImage([]byte(greyTIFF), "imagefolder", 1, 4, 4, false); err == nil || !strings.Contains(err.Error(), "TIFF") {
		t.Fatalf("DecodeReaderImage(TIFF): %v", err)
	}
	// 8 bytes: little-endian TIFF, first directory at 2 GiB − 1.
	bomb := []byte("II*\x00\xff\xff\xff\x7f")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = DecodeConfig(bytes.NewReader(bomb))
	isImageData(bomb)
	_, release, _ = decodeImage(bomb, 1<<16)
	release()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, image.ErrFormat) || after.TotalAlloc-before.TotalAlloc > 64<<20 {
		t.Fatalf("an 8-byte TIFF header: %v, %d MiB allocated", err, (after.TotalAlloc-before.TotalAlloc)>>20)
	}
}

// greyTIFF is a 5×4 grey image as x/image/tiff encodes it.
const greyTIFF = "II*\x00\x1c\x00\x00\x00\x00(Px\xa0\xc8\xf0\x18@h\x90\xb8\xe0\b0X\x80\xa8\xd0\xf8\f\x00\x00\x01\x03\x00\x01\x00\x00\x00\x05\x00\x00\x00\x01\x01\x03\x00\x01\x00\x00\x00\x04\x00\x00\x00\x02\x01\x03\x00\x01\x00\x00\x00\b\x00\x00\x00\x03\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x06\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x11\x01\x04\x00\x01\x00\x00\x00\b\x00\x00\x00\x15\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x16\x01\x03\x00\x01\x00\x00\x00\x04\x00\x00\x00\x17\x01\x04\x00\x01\x00\x00\x00\x14\x00\x00\x00\x1a\x01\x05\x00\x01\x00\x00\x00\xb2\x00\x00\x00\x1b\x01\x05\x00\x01\x00\x00\x00\xba\x00\x00\x00(\x01\x03\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00H\x00\x00\x00\x01\x00\x00\x00H\x00\x00\x00\x01\x00\x00\x00"

package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	cifarSide   = 32
	cifarPixels = cifarSide * cifarSide
	cifarRecord = 1 + 3*cifarPixels // label byte + R, G, B planes
	// maxCIFARRecords bounds a single batch (upstream batches hold 10,000).
	maxCIFARRecords = 1 << 20
)

// CIFAR10Classes are the upstream class names, used when a folder has no
// batches.meta.txt.
var CIFAR10Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// CIFAR10Batches lists the binary batch files in the order ReadCIFAR10
// concatenates them (those that exist).
var CIFAR10Batches = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"}

// CIFAROptions selects how CIFAR-10 images are returned.
type CIFAROptions struct {
	// Grey converts each pixel to ITU-R BT.601 luma 0.299R + 0.587G + 0.114B
	// (on the [0, 1] scale) and returns Shape [1, 32, 32]; otherwise the
	// three colour planes are kept, Shape [3, 32, 32] (R, G, B).
	Grey bool
}

// CIFARBatch is one parsed CIFAR-10 binary batch: raw bytes, unscaled.
type CIFARBatch struct {
	Labels []byte // one per record, 0…9
	Pixels []byte // 3072 per record: 1024 R, 1024 G, 1024 B, row-major
}

// ParseCIFARBatch parses a CIFAR-10 binary batch: a sequence of records of
// one label byte (0…9) followed by 3072 pixel bytes. An empty stream, a
// length that is not a whole number of records and a label above 9 are
// errors.
func ParseCIFARBatch(r io.Reader) (*CIFARBatch, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(maxCIFARRecords)*cifarRecord+1))
	if err != nil {
		return nil, err
	}
	return parseCIFARBytes(data)
}

// parseCIFARBytes is ParseCIFARBatch on bytes it may overwrite.
func parseCIFARBytes(data []byte) (*CIFARBatch, error) {
	if len(data) == 0 {
		return nil, errors.New("empty batch")
	}
	if int64(len(data)) > int64(maxCIFARRecords)*cifarRecord {
		return nil, fmt.Errorf("batch larger than %d records", maxCIFARRecords)
	}
	if len(data)%cifarRecord != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte records (last record truncated after %d bytes)",
			len(data), cifarRecord, len(data)%cifarRecord)
	}
	n := len(data) / cifarRecord
	labels := make([]byte, n)
	for i := range labels {
		y := data[i*cifarRecord]
		if y > 9 {
			return nil, fmt.Errorf("record %d has label %d outside 0…9", i, y)
		}
		labels[i] = y
	}
	// Drop the label bytes by moving each record's pixels down in place
	// (destination always precedes source), so no second buffer is needed.
	const px = cifarRecord - 1
	for i := 0; i < n; i++ {
		copy(data[i*px:(i+1)*px], data[i*cifarRecord+1:(i+1)*cifarRecord])
	}
	return &CIFARBatch{Labels: labels, Pixels: data[: n*px : n*px]}, nil
}

// ParseCIFARMeta parses batches.meta.txt: one class name per line, blank
// lines ignored (the upstream file ends with an empty line). Exactly 10
// distinct names are required.
func ParseCIFARMeta(r io.Reader) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(r)
	seen := map[string]bool{}
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if seen[s] {
			return nil, fmt.Errorf("class name %q appears twice", s)
		}
		seen[s] = true
		names = append(names, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(names) != 10 {
		return nil, fmt.Errorf("%d class names, want 10", len(names))
	}
	return names, nil
}

// toDataset converts raw batch bytes to the [0, 1] scale.
func (b *CIFARBatch) toDataset(grey bool) *Dataset {
	n := len(b.Labels)
	d := &Dataset{Labels: make([]int, n)}
	for i, y := range b.Labels {
		d.Labels[i] = int(y)
	}
	if !grey {
		d.Shape = []int{3, cifarSide, cifarSide}
		d.X = bytesToUnit(b.Pixels)
		return d
	}
	d.Shape = []int{1, cifarSide, cifarSide}
	d.X = make([]float32, n*cifarPixels)
	for i := 0; i < n; i++ {
		src := b.Pixels[i*3*cifarPixels:]
		dst := d.X[i*cifarPixels : (i+1)*cifarPixels]
		for p := range dst {
			dst[p] = cifarLuma(float32(src[p]), float32(src[cifarPixels+p]), float32(src[2*cifarPixels+p]))
		}
	}
	return d
}

// cifarLuma is the grey value of a CIFAR-10 pixel from its R, G, B bytes
// (as float32, 0…255): the BT.601 luma in float32, on the [0, 1] scale.
// ReadCIFAR10 and DecodeReaderImage share it, so they agree bit for bit.
func cifarLuma(r, g, b float32) float32 {
	return (0.299*r + 0.587*g + 0.114*b) / 255
}

// ReadCIFAR10 reads the CIFAR-10 binary batches present in dir (or in
// dir/cifar-10-batches-bin when dir is the parent folder of the upstream
// archive): data_batch_1.bin … data_batch_5.bin then test_batch.bin, those
// that exist, in that order, each in file order. Class names come from
// batches.meta.txt when present, else the upstream names. Files holds
// "<batch file>:<record>".
func ReadCIFAR10(dir string, opts CIFAROptions) (*Dataset, error) {
	if st, err := os.Stat(filepath.Join(dir, "cifar-10-batches-bin")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "cifar-10-batches-bin")
	}
	classes := CIFAR10Classes
	metaPath := filepath.Join(dir, "batches.meta.txt")
	if f, err := os.Open(metaPath); err == nil {
		names, err := ParseCIFARMeta(f)
		f.Close()
		if err != nil {
			return nil, corruptf("cifar10: %s: %w", metaPath, err)
		}
		classes = names
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, classify(fmt.Errorf("cifar10: %w", err))
	}
	var parts []*Dataset
	for _, name := range CIFAR10Batches {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, classify(fmt.Errorf("cifar10: %w", err))
		}
		if st.Size() > int64(maxCIFARRecords)*cifarRecord {
			return nil, corruptf("cifar10: %s: %d bytes, larger than %d records", p, st.Size(), maxCIFARRecords)
		}
		data, err := os.ReadFile(p) // one allocation of the file's size
		if err != nil {
			return nil, classify(fmt.Errorf("cifar10: %w", err))
		}
		b, err := parseCIFARBytes(data)
		if err != nil {
			return nil, corruptf("cifar10: %s: %w", p, err)
		}
		d := b.toDataset(opts.Grey)
		d.Classes = classes
		d.Files = make([]string, d.Len())
		for i := range d.Files {
			d.Files[i] = name + ":" + strconv.Itoa(i)
		}
		parts = append(parts, d)
	}
	if len(parts) == 0 {
		return nil, notFoundf("cifar10: no data_batch_*.bin or test_batch.bin in %s", dir)
	}
	return concat("cifar10", parts), nil
}

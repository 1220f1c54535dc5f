package datasets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultMiniImageNetSize is the side ReadMiniImageNet resizes to when size
// is 0 (84, the standard miniImageNet resolution).
const DefaultMiniImageNetSize = 84

// MiniImageNetRow is one data row of a miniImageNet split CSV.
type MiniImageNetRow struct {
	Line     int    // line number in the CSV (the header is line 1)
	Filename string // image file name inside images/
	Label    string // class id, e.g. "n01532829"
}

// ParseMiniImageNetCSV parses a miniImageNet split file (Ravi & Larochelle
// layout): a header "filename,label" then one "FILE,LABEL" row per image.
// Spaces around fields and a UTF-8 byte-order mark are tolerated; a missing
// or different header, a row without exactly two fields, an empty field, a
// file name with a path separator or "..", a repeated file name, or no rows
// at all are errors naming the line.
func ParseMiniImageNetCSV(r io.Reader) ([]MiniImageNetRow, error) {
	cr := NewCSVReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file (want header filename,label)")
	}
	if err != nil {
		return nil, err
	}
	if len(head) != 2 || strings.TrimSpace(head[0]) != "filename" || strings.TrimSpace(head[1]) != "label" {
		return nil, fmt.Errorf("line 1: header %q, want \"filename,label\"", strings.Join(head, ","))
	}
	var rows []MiniImageNetRow
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != 2 {
			return nil, fmt.Errorf("line %d: %d fields, want 2 (filename,label)", line, len(rec))
		}
		file, label := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if file == "" || label == "" {
			return nil, fmt.Errorf("line %d: empty file name or label", line)
		}
		if strings.ContainsAny(file, "/\\\x00") || file == "." || file == ".." {
			return nil, fmt.Errorf("line %d: file name %q must be a plain name inside images/", line, file)
		}
		if prev, ok := seen[file]; ok {
			return nil, fmt.Errorf("line %d: file %q already listed on line %d", line, file, prev)
		}
		seen[file] = line
		rows = append(rows, MiniImageNetRow{Line: line, Filename: file, Label: label})
	}
	if len(rows) == 0 {
		return nil, errors.New("no data rows after the header")
	}
	return rows, nil
}

// ReadMiniImageNet reads one split of miniImageNet in its standard layout:
// dir/images/*.jpg and dir/SPLIT.csv (SPLIT is "train", "val" or "test", or
// another plain name with a CSV beside images/). Samples come in CSV row
// order; classes are the distinct labels sorted by name (for the standard
// files, whose rows are grouped by sorted class id, this is also the order of
// first appearance). Images are decoded by content, converted to RGB and
// stretched to size×size by exact area averaging (size 0 means 84). Shape is
// [3, size, size]; Files holds "images/NAME". A row naming a missing file is
// an error naming the CSV line.
func ReadMiniImageNet(dir string, split string, size int) (*Dataset, error) {
	if size == 0 {
		size = DefaultMiniImageNetSize
	}
	if size < 0 {
		return nil, fmt.Errorf("miniimagenet: size %d must be > 0", size)
	}
	if split == "" || strings.ContainsAny(split, `/\`) || split == "." || split == ".." {
		return nil, fmt.Errorf("miniimagenet: bad split name %q (want train, val or test)", split)
	}
	csvPath := filepath.Join(dir, split+".csv")
	f, err := os.Open(csvPath)
	if err != nil {
		return nil, classify(fmt.Errorf("miniimagenet: split %s: %w", split, err))
	}
	rows, err := ParseMiniImageNetCSV(f)
	f.Close()
	if err != nil {
		return nil, corruptf("miniimagenet: %s: %w", csvPath, err)
	}
	classSet := map[string]int{}
	for _, r := range rows {
		classSet[r.Label] = 0
	}
	classes := make([]string, 0, len(classSet))
	for c := range classSet {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for i, c := range classes {
		classSet[c] = i
	}
	imgDir := filepath.Join(dir, "images")
	items := make([]imageItem, len(rows))
	for i, r := range rows {
		p := filepath.Join(imgDir, r.Filename)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, classify(fmt.Errorf("miniimagenet: %s line %d: %w", csvPath, r.Line, err))
		}
		if !fi.Mode().IsRegular() {
			return nil, corruptf("miniimagenet: %s line %d: %s is not a regular file", csvPath, r.Line, p)
		}
		items[i] = fileItem(p, path.Join("images", r.Filename), classSet[r.Label])
	}
	convert := func(data []byte) ([]float32, error) { return toRGB(data, size) }
	d, err := decodeItems("miniimagenet-"+split, dir, []int{3, size, size}, classes, items, convert)
	if err != nil {
		return nil, fmt.Errorf("miniimagenet: %w", err)
	}
	return d, nil
}

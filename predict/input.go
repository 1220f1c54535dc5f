package predict

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// MaxFeatureRows bounds the rows ReadFeatureCSV accepts.
const MaxFeatureRows = 1 << 20

// ReadFeatureCSV reads rows of exactly f comma-separated numbers, one input
// per line, as float32 samples for a network on feature rows. Blank lines and
// lines starting with '#' are skipped; spaces around numbers are allowed;
// a first line that is not numeric is taken as a header and skipped. Values
// must be finite and already scaled as the data set's reader scales them
// (for UCI Lung Cancer: each attribute 0…3 divided by 3, missing values
// imputed). name is used in error messages.
func ReadFeatureCSV(r io.Reader, name string, f int) ([]float32, int, error) {
	if f < 1 {
		return nil, 0, fmt.Errorf("%s: the model takes %d features", name, f)
	}
	cr := csv.NewReader(bufio.NewReader(r))
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	var out []float32
	rows := 0
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		vals := make([]float32, len(rec))
		bad := -1
		for i, s := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				bad = i
				break
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
				return nil, 0, fmt.Errorf("%w: %s line %d, field %d: %q is not a finite number", ErrInput, name, line, i+1, s)
			}
			vals[i] = float32(v)
		}
		if bad >= 0 {
			if first {
				first = false
				continue // header
			}
			return nil, 0, fmt.Errorf("%w: %s line %d, field %d: %q is not a number", ErrInput, name, line, bad+1, rec[bad])
		}
		first = false
		if len(rec) != f {
			return nil, 0, fmt.Errorf("%w: %s line %d has %d values, the model takes %d features", ErrInput, name, line, len(rec), f)
		}
		if rows == MaxFeatureRows {
			return nil, 0, fmt.Errorf("%s: more than %d rows", name, MaxFeatureRows)
		}
		out = append(out, vals...)
		rows++
	}
	if rows == 0 {
		return nil, 0, fmt.Errorf("%w: %s holds no rows of numbers", ErrInput, name)
	}
	return out, rows, nil
}

// Format is an output format of Write.
type Format string

// Output formats.
const (
	Text Format = "text"
	CSV  Format = "csv"
	JSON Format = "json"
)

// Write writes the predictions in the format: text (an aligned table),
// CSV (header input,class,name,vote_<class name>…) or JSON (a list of
// objects with input, class, name and votes).
func Write(w io.Writer, preds []Prediction, classNames []string, f Format) error {
	bw := bufio.NewWriter(w)
	switch f {
	case Text, "":
		width := len("input")
		for _, p := range preds {
			width = max(width, len(p.Input))
		}
		fmt.Fprintf(bw, "%-*s  %5s  %s  votes(", width, "input", "class", "name")
		for m, n := range classNames {
			if m > 0 {
				bw.WriteString(", ")
			}
			bw.WriteString(n)
		}
		bw.WriteString(")\n")
		for _, p := range preds {
			fmt.Fprintf(bw, "%-*s  %5d  %s  ", width, p.Input, p.Class, p.Name)
			for m, v := range p.Votes {
				if m > 0 {
					bw.WriteByte(' ')
				}
				fmt.Fprintf(bw, "%.4f", v)
			}
			bw.WriteByte('\n')
		}
	case CSV:
		cw := csv.NewWriter(bw)
		head := []string{"input", "class", "name"}
		for _, n := range classNames {
			head = append(head, "vote_"+n)
		}
		if err := cw.Write(head); err != nil {
			return err
		}
		for _, p := range preds {
			rec := []string{p.Input, strconv.Itoa(p.Class), p.Name}
			for _, v := range p.Votes {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	case JSON:
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		if preds == nil {
			preds = []Prediction{}
		}
		if err := enc.Encode(preds); err != nil {
			return err
		}
	default:
		return fmt.Errorf("format %q: want text, csv or json", f)
	}
	return bw.Flush()
}

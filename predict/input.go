package predict

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxFeatureRows bounds the rows of a CSV of inputs.
const MaxFeatureRows = 1 << 20

// Format is an output format of Write.
type Format string

// Output formats (CSV is the default).
const (
	CSV  Format = "csv"
	Text Format = "text"
	JSON Format = "json"
)

// Write writes the predictions in the format: CSV (the header
// input,predicted,<one column per class name>, then one row per input with
// the predicted class's name and its class probabilities, which sum to 1; a
// failed input's row has an empty prediction and empty probabilities),
// text (an aligned table of the same) or JSON (a list of Prediction
// objects: input, class, name, votes, proba, error, warning).
func Write(w io.Writer, preds []Prediction, classNames []string, f Format) error {
	bw := bufio.NewWriter(w)
	switch f {
	case CSV, "":
		cw := csv.NewWriter(bw)
		if err := cw.Write(append([]string{"input", "predicted"}, classNames...)); err != nil {
			return err
		}
		for _, p := range preds {
			rec := make([]string, 2+len(classNames))
			rec[0], rec[1] = p.Input, p.Name
			for m, v := range p.Proba {
				rec[2+m] = strconv.FormatFloat(v, 'g', -1, 64)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	case Text:
		width := len("input")
		for _, p := range preds {
			width = max(width, len(p.Input))
		}
		fmt.Fprintf(bw, "%-*s  %-12s  probabilities(%s)\n", width, "input", "predicted", strings.Join(classNames, ", "))
		for _, p := range preds {
			if p.Error != "" {
				fmt.Fprintf(bw, "%-*s  %-12s  error: %s\n", width, p.Input, "-", p.Error)
				continue
			}
			fmt.Fprintf(bw, "%-*s  %-12s ", width, p.Input, p.Name)
			for _, v := range p.Proba {
				fmt.Fprintf(bw, " %.4f", v)
			}
			bw.WriteByte('\n')
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
		return fmt.Errorf("format %q: want csv, text or json", f)
	}
	return bw.Flush()
}

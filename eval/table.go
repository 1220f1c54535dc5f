package eval

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Column identifies one column of the accuracy table: a data set and an
// M-way K-shot task.
type Column struct {
	Dataset string // "mnist", "miniimagenet", "cifar10", "omniglot", "lung", "covid"
	M, K    int
}

func (c Column) String() string { return fmt.Sprintf("%s %d-way %d-shot", c.Dataset, c.M, c.K) }

// PaperColumns are the 20 columns of the paper's Table 1, in its order.
func PaperColumns() []Column {
	var cols []Column
	for _, ds := range []string{"mnist", "miniimagenet", "cifar10", "omniglot"} {
		for _, m := range []int{2, 5} {
			for _, k := range []int{5, 10} {
				cols = append(cols, Column{ds, m, k})
			}
		}
	}
	return append(cols, Column{"lung", 3, 5}, Column{"lung", 3, 8}, Column{"covid", 2, 5}, Column{"covid", 2, 10})
}

// PaperMethods are the rows of the paper's Table 1, in its order, under
// our method names: the three network baselines are the few-shot methods
// of fewshot.go (MethodMatchingNet, MethodProtoNet, MethodMetaOptNet;
// MethodMetaOptNetRR, a variant, has no row).
func PaperMethods() []string {
	return []string{MethodPCAKNN, MethodSVDKNN, MethodNCAKNN, MethodMatchingNet, MethodProtoNet, MethodMetaOptNet,
		MethodEmbeddingKNN, MethodKernelSmoothing, MethodDrKNNTruncated, MethodDrKNN}
}

// paperAliases are other names PaperAccuracy takes for a row: the
// prototypical network's row was keyed "prototypical_net" before it took
// the method's name.
var paperAliases = map[string]string{"prototypical_net": MethodProtoNet}

// paperTable is Table 1 of the paper, transcribed mechanically from the
// LaTeX source (rows in PaperMethods order, columns in PaperColumns order).
func paperTable() map[string][20]float64 {
	return map[string][20]float64{
		"pca_knn":          {0.801, 0.872, 0.614, 0.678, 0.578, 0.667, 0.268, 0.277, 0.687, 0.711, 0.262, 0.270, 0.597, 0.638, 0.309, 0.358, 0.617, 0.647, 0.658, 0.719},
		"svd_knn":          {0.749, 0.790, 0.524, 0.567, 0.587, 0.675, 0.268, 0.283, 0.680, 0.701, 0.259, 0.266, 0.591, 0.618, 0.305, 0.413, 0.624, 0.648, 0.646, 0.715},
		"nca_knn":          {0.602, 0.640, 0.340, 0.355, 0.547, 0.578, 0.245, 0.258, 0.597, 0.616, 0.232, 0.236, 0.549, 0.574, 0.267, 0.346, 0.575, 0.582, 0.612, 0.624},
		"matching_net":     {0.732, 0.830, 0.625, 0.732, 0.687, 0.703, 0.286, 0.360, 0.632, 0.641, 0.241, 0.247, 0.735, 0.769, 0.412, 0.433, 0.621, 0.635, 0.715, 0.732},
		"proto_net":        {0.742, 0.842, 0.671, 0.759, 0.710, 0.725, 0.296, 0.348, 0.651, 0.664, 0.254, 0.259, 0.769, 0.836, 0.448, 0.532, 0.632, 0.644, 0.729, 0.744},
		"metaoptnet":       {0.725, 0.843, 0.658, 0.790, 0.732, 0.741, 0.255, 0.363, 0.702, 0.713, 0.257, 0.298, 0.742, 0.755, 0.412, 0.453, 0.638, 0.642, 0.713, 0.739},
		"embedding_knn":    {0.792, 0.798, 0.546, 0.551, 0.738, 0.742, 0.490, 0.486, 0.689, 0.691, 0.492, 0.494, 0.725, 0.751, 0.445, 0.495, 0.664, 0.691, 0.701, 0.710},
		"kernel_smoothing": {0.777, 0.873, 0.559, 0.579, 0.593, 0.601, 0.272, 0.278, 0.642, 0.661, 0.272, 0.282, 0.520, 0.565, 0.240, 0.285, 0.367, 0.370, 0.582, 0.604},
		"drknn_truncated":  {0.815, 0.926, 0.742, 0.825, 0.746, 0.753, 0.295, 0.340, 0.703, 0.719, 0.297, 0.305, 0.755, 0.825, 0.425, 0.542, 0.652, 0.693, 0.722, 0.741},
		"drknn":            {0.838, 0.959, 0.746, 0.831, 0.752, 0.786, 0.306, 0.358, 0.707, 0.728, 0.309, 0.311, 0.765, 0.850, 0.465, 0.580, 0.667, 0.704, 0.734, 0.752},
	}
}

// PaperAccuracy returns the mean accuracy the paper reports for method on
// column c, and whether the paper has that cell. method is a name of
// PaperMethods ("prototypical_net" is taken for MethodProtoNet).
func PaperAccuracy(method string, c Column) (float64, bool) {
	if m, ok := paperAliases[method]; ok {
		method = m
	}
	row, ok := paperTable()[method]
	if !ok {
		return 0, false
	}
	for i, pc := range PaperColumns() {
		if pc == c {
			return row[i], true
		}
	}
	return 0, false
}

// Table collects accuracy summaries by method (rows) and column. The zero
// value is ready to use.
type Table struct {
	cells map[string]map[Column]Summary
	notes map[string]map[Column]string
}

// Note attaches a note to the cell of method on column c, printed after
// its value in brackets (e.g. "9 of 10 repeats" for a mean over fewer
// repeats than the other cells').
func (t *Table) Note(method string, c Column, note string) {
	if t.notes == nil {
		t.notes = map[string]map[Column]string{}
	}
	if t.notes[method] == nil {
		t.notes[method] = map[Column]string{}
	}
	t.notes[method][c] = note
}

// Add records the summary of method on column c, replacing any earlier one.
func (t *Table) Add(method string, c Column, s Summary) {
	if t.cells == nil {
		t.cells = map[string]map[Column]Summary{}
	}
	if t.cells[method] == nil {
		t.cells[method] = map[Column]Summary{}
	}
	t.cells[method][c] = s
}

// Get returns the summary of method on column c.
func (t *Table) Get(method string, c Column) (Summary, bool) {
	s, ok := t.cells[method][c]
	return s, ok
}

// Markdown renders the table: one row per method (PaperMethods order
// first, then others alphabetically), one column per task that has a
// result (PaperColumns order first, then others by name). A cell reads
// "0.838 ± 0.021" (mean ± 95% CI half-width; "± n/a" for one repeat); with
// withPaper, the paper's figure follows in brackets where it has one; a
// cell's Note follows its value in square brackets; a missing cell is "–".
func (t *Table) Markdown(withPaper bool) string {
	colSet := map[Column]bool{}
	for _, row := range t.cells {
		for c := range row {
			colSet[c] = true
		}
	}
	var cols []Column
	for _, c := range PaperColumns() {
		if colSet[c] {
			cols = append(cols, c)
			delete(colSet, c)
		}
	}
	var rest []Column
	for c := range colSet {
		rest = append(rest, c)
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].String() < rest[j].String() })
	cols = append(cols, rest...)

	var methods []string
	seen := map[string]bool{}
	for _, m := range PaperMethods() {
		if t.cells[m] != nil {
			methods = append(methods, m)
			seen[m] = true
		}
	}
	var others []string
	for m := range t.cells {
		if !seen[m] {
			others = append(others, m)
		}
	}
	sort.Strings(others)
	methods = append(methods, others...)

	var b strings.Builder
	b.WriteString("| method |")
	for _, c := range cols {
		b.WriteString(" " + c.String() + " |")
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, m := range methods {
		b.WriteString("| " + m + " |")
		for _, c := range cols {
			s, ok := t.cells[m][c]
			cell := "–"
			if ok {
				if math.IsNaN(s.HalfWidth) {
					cell = fmt.Sprintf("%.3f ± n/a", s.Mean)
				} else {
					cell = fmt.Sprintf("%.3f ± %.3f", s.Mean, s.HalfWidth)
				}
				if n := t.notes[m][c]; n != "" {
					cell += " [" + n + "]"
				}
			}
			if withPaper {
				if p, ok := PaperAccuracy(m, c); ok {
					cell += fmt.Sprintf(" (%.3f)", p)
				}
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

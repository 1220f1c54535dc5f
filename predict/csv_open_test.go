package predict

import (
	"strings"
	"testing"

	"github.com/drknn/drknn/datasets"
)

// TestCSVOpenedAsTraining: a table the csv data set of training reads is
// read by -csv too, columns found by name — a UTF-8 byte-order mark before
// a quoted header (R's write.csv with fileEncoding "UTF-8-BOM", pandas
// with QUOTE_ALL and encoding "utf-8-sig") was "bare \" in non-quoted-field"
// here — and spaces before a quoted field are accepted by both.
func TestCSVOpenedAsTraining(t *testing.T) {
	for name, in := range map[string]string{
		"BOM, quoted header":  "\ufeff\"sepal_len\",\"sepal_wid\",\"species\"\r\n5.1,3.5,\"setosa\"\r\n6.2,2.9,\"virginica\"\r\n",
		"BOM, plain header":   "\ufeffsepal_len,sepal_wid,species\n5.1,3.5,setosa\n6.2,2.9,virginica\n",
		"space before quotes": "sepal_len, \"sepal_wid\", \"species\"\n5.1, \"3.5\", \"setosa\"\n6.2,2.9,virginica\n",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := datasets.ParseCSV(strings.NewReader(in), "iris", datasets.CSVOptions{})
			if err != nil {
				t.Fatalf("training reader: %v", err)
			}
			m := featureModel(t, d.Features, []float64{0, 0})
			rows, err := m.readCSVSamples(strings.NewReader(in), "iris.csv", 2, d.Features)
			if err != nil {
				t.Fatalf("-csv: %v (the training reader took it: features %q)", err, d.Features)
			}
			if len(rows) != 2 || rows[0].err != nil || rows[0].x[0] != 5.1 || rows[0].x[1] != 3.5 || rows[1].x[1] != 2.9 {
				t.Fatalf("-csv rows %+v", rows)
			}
		})
	}
}

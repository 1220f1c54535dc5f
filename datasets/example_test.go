package datasets_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/drknn/drknn/datasets"
)

// Load reads a data set by name: here a CSV table of your own, with the
// label in a named column and a missing cell that each episode fills from
// its training samples.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	table := "petal,species,sepal\n1.4,setosa,5.1\n4.7,versicolor,NA\n1.3,setosa,4.7\n4.5,versicolor,6.4\n"
	os.WriteFile(filepath.Join(dir, "iris.csv"), []byte(table), 0o644)

	d, err := datasets.Load("csv", dir, datasets.Options{Label: "species", Missing: datasets.ImputeMean})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Len(), "rows of", d.Features, "classes", d.Classes, "labels", d.Labels)
	fmt.Println(d.Report.Summary())

	filled, _ := datasets.Impute(d, []int{0, 2, 3}, datasets.ImputeMean) // an episode's training rows
	fmt.Printf("row 1 sepal filled with %.2f\n", filled.Sample(1)[1])

	_, err = datasets.Load("mnist", filepath.Join(dir, "nothere"), datasets.Options{})
	fmt.Println(errors.Is(err, datasets.ErrNotFound), errors.Is(err, datasets.ErrCorrupt))
	// Output:
	// 4 rows of [petal sepal] classes [setosa versicolor] labels [0 1 0 1]
	// 1 missing cells (first: line 3, column "sepal")
	// row 1 sepal filled with 5.40
	// true false
}

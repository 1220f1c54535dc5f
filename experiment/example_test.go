package experiment_test

import (
	"context"
	"fmt"

	"github.com/drknn/drknn/experiment"
)

// Run runs a whole experiment from a configuration: here 2-way 5-shot
// episodes of the built-in synthetic images, a small network trained for a
// few steps of Algorithm 1, and two methods evaluated on 50 queries per
// repeat. With Options.OutDir set it would also write results.json, the
// checkpoints and one export folder per repeat.
func ExampleRun() {
	cfg, err := experiment.ParseConfig("example.yaml", []byte(`
dataset: synthetic-images
ways: 2
shots: 5
queries: 50
repeats: 2
model: {kind: cnn, channels: 4, dim: 16}
train: {steps: 5, minisets: 4}
eval: {methods: [drknn, embedding_knn]}
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := experiment.Run(context.Background(), cfg, experiment.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ep := range res.Episodes {
		fmt.Printf("episode seed %d: classes %v, %d training samples, %d queries\n", ep.Seed, ep.ClassNames, len(ep.TrainIndex), len(ep.QueryIndex))
	}
	fmt.Println("Dr.k-NN above chance:", res.Methods["drknn"].Mean > 0.5)
	// Output:
	// episode seed 1: classes [dots cross], 10 training samples, 50 queries
	// episode seed 2: classes [plus ring], 10 training samples, 50 queries
	// Dr.k-NN above chance: true
}

package predict_test

import (
	"fmt"

	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/predict"
)

// A model is the training embeddings, their labels, the least-favourable
// distributions P* solved on them, and the voting settings; NewModel builds
// one in memory (predict.Load reads the same from an export folder that
// drknn-train wrote) and Classify votes for new embeddings. This one has no
// network, so it classifies embeddings only.
func ExampleNewModel() {
	emb := []float64{ // six training points in a 2-D embedding
		0, 0, 0.2, 0.1, 0.1, 0.3, // class "cat"
		2, 2, 2.2, 1.9, 1.8, 2.1, // class "dog"
	}
	labels := []int{0, 0, 0, 1, 1, 1}
	lfd, err := optlayer.Solve(&optlayer.Problem{N: 6, Features: emb, Dim: 2, Labels: labels, Theta: []float64{0.3}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := predict.NewModel(nil, emb, 6, 2, labels, lfd.P, []string{"cat", "dog"}, predict.Settings{K: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	preds, err := m.Classify([]float64{0.1, 0.2, 1.9, 2.0}, 2, []string{"new-1", "new-2"}, predict.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("classes:", m.Classes())
	for _, p := range preds {
		fmt.Printf("%s: %s (class %d, votes for it %v)\n", p.Input, p.Name, p.Class, p.Votes[p.Class] > p.Votes[1-p.Class])
	}
	// Output:
	// classes: [cat dog]
	// new-1: cat (class 0, votes for it true)
	// new-2: dog (class 1, votes for it true)
}

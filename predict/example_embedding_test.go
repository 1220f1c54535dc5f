package predict_test

import (
	"fmt"
	"math/rand"

	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/predict"
)

// blocks returns n 16×16 grey images (flattened, values in [0, 1]) of a
// bright 6×6 block at (x0, y0), moved by up to ±1 pixel, over noise.
func blocks(n, x0, y0 int, rng *rand.Rand) []float32 {
	var out []float32
	for i := 0; i < n; i++ {
		dx, dy := rng.Intn(3)-1, rng.Intn(3)-1
		for y := 0; y < 16; y++ {
			for x := 0; x < 16; x++ {
				v := 0.2 * rng.Float32()
				if x >= x0+dx && x < x0+dx+6 && y >= y0+dy && y < y0+dy+6 {
					v = 0.8 + 0.2*rng.Float32()
				}
				out = append(out, v)
			}
		}
	}
	return out
}

// An embedding network (here an untrained Conv-4; normally the export of
// a transfer run, predict.LoadEmbedding) becomes the classifier of a new
// task from a few labelled samples: Fit embeds the support set, solves the
// least-favourable distributions on it and returns a Model that votes with
// them. No training happens. drknn-predict -model RUN/export -support DIR
// does the same with a folder of images per class.
func ExampleEmbedding_Fit() {
	net, err := model.New(model.Config{Kind: model.Conv4, InShape: []int{1, 16, 16}, Channels: 8}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := predict.NewEmbedding(net, predict.EmbeddingSettings{K: 3, Tau: 0.9, Theta: []float64{0.1}, ThetaRelative: true,
		Metric: "euclidean", Epsilon: 0.01, Tol: 1e-3})
	if err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.New(rand.NewSource(2))
	// The support set: three images of each new class.
	support := append(blocks(3, 1, 1, rng), blocks(3, 9, 9, rng)...)
	m, err := e.Fit(support, 6, []int{0, 0, 0, 1, 1, 1}, []string{"top-left", "bottom-right"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Two new images to classify.
	queries := append(blocks(1, 9, 9, rng), blocks(1, 1, 1, rng)...)
	emb, err := m.Embed(queries, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	preds, err := m.Classify(emb, 2, []string{"query-1", "query-2"}, predict.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("classes:", m.Classes())
	for _, p := range preds {
		fmt.Printf("%s: %s (probabilities sum to %.3f)\n", p.Input, p.Name, p.Proba[0]+p.Proba[1])
	}
	// Output:
	// classes: [top-left bottom-right]
	// query-1: bottom-right (probabilities sum to 1.000)
	// query-2: top-left (probabilities sum to 1.000)
}

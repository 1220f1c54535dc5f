package eval_test

import (
	"fmt"

	"github.com/drknn/drknn/eval"
)

// Dr.k-NN on five points on a line, with least-favourable distributions P*
// (one row per class, each summing to 1) as optlayer would return them:
// predictions, probabilities and their scores in one call. By hand:
// log-loss = −(log ¾ + log ¾ + log ¼)/3, and every confidence is ¾ with
// accuracy ⅔, so ECE = ¾ − ⅔.
func ExampleEvaluateScores() {
	x := []float64{0, 1, 2, 10, 11} // n = 5 points, d = 1
	y := []int{0, 0, 1, 1, 1}
	p := []float64{
		0.4, 0.3, 0.2, 0.1, 0, // P*_0
		0, 0.1, 0.2, 0.3, 0.4, // P*_1
	}
	q := []float64{0.9, 10.4, 2.2}
	truth := []int{0, 1, 1}
	c, err := eval.New(eval.MethodDrKNN, eval.Settings{K: 3}, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, pred, proba, err := eval.EvaluateScores(c, x, 5, 1, y, 2, q, 3, truth)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("predictions:", pred)
	fmt.Printf("Pr(class | ξ): %.2f\n", proba)
	fmt.Printf("accuracy %.3f, log-loss %.3f, ECE %.3f\n", s.Accuracy, s.LogLoss, s.ECE)
	// Output:
	// predictions: [0 1 0]
	// Pr(class | ξ): [0.75 0.25 0.25 0.75 0.75 0.25]
	// accuracy 0.667, log-loss 0.654, ECE 0.083
}

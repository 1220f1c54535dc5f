package optlayer_test

import (
	"fmt"

	"github.com/drknn/drknn/optlayer"
)

// Two points at distance 1, one per class, each class allowed to move mass
// 0.2 at cost 1 per unit: each least-favourable distribution keeps 0.8 on
// its own point and moves 0.2 onto the other, so the LP value is
// Σ_i max_m P_m(i) = 0.8 + 0.8 = 1.6 and the worst-case risk M − v = 0.4.
func ExampleSolve() {
	p := &optlayer.Problem{
		N:      2,
		Cost:   []float64{0, 1, 1, 0}, // c(i, j), row-major
		Labels: []int{0, 1},
		Theta:  []float64{0.2}, // the same radius for both classes
	}
	r, err := optlayer.Solve(p, nil) // nil: default settings
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("value %.2f, certified: %v\n", r.Objective, r.Status == optlayer.Optimal && r.RelGap <= 1e-3)
	for m := 0; m < r.M; m++ {
		fmt.Printf("P*_%d = [%.2f %.2f]\n", m+1, r.P[m*r.N], r.P[m*r.N+1])
	}
	// Output:
	// value 1.60, certified: true
	// P*_1 = [0.80 0.20]
	// P*_2 = [0.20 0.80]
}

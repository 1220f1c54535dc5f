package experiment

import (
	"strings"
	"testing"
)

// Cross-validated ϑ: radii with the same held-out accuracy go to the
// smaller one, whatever the order of train.theta_grid. With the identity
// model and no training, both radii classify the synthetic folds alike.
func TestChooseThetaTieGoesToSmallerRadius(t *testing.T) {
	for _, grid := range []string{"[0.5,0.1]", "[0.1,0.5]"} {
		cfg := synthConfig(t, "model.kind=identity", "train.steps=0", "repeats=1", "train.theta_grid="+grid, "train.cv_folds=2")
		d, err := LoadData(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg, d, err = ForData(cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		ep, err := NewEpisode(cfg, d, 0)
		if err != nil {
			t.Fatal(err)
		}
		var accs []string
		th, err := ChooseTheta(t.Context(), cfg, ep, func(e Event) {
			if m, ok := e.(Message); ok && strings.Contains(m.Text, "accuracy") {
				_, acc, _ := strings.Cut(m.Text, "accuracy ")
				accs = append(accs, acc)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(accs) != 2 || accs[0] != accs[1] {
			t.Fatalf("grid %s: cross-validation accuracies %q, want two equal ones (the test needs a tie)", grid, accs)
		}
		if len(th) != 1 || th[0] != 0.1 {
			t.Errorf("grid %s: chose ϑ = %v on a tie, want [0.1] (the smaller radius)", grid, th)
		}
	}
}

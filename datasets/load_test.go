package datasets

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/drknn/drknn/internal/datadir"
)

func TestLoadDispatch(t *testing.T) {
	root := datadir.Dir()
	for _, c := range []struct {
		name  string
		opts  Options
		n     int
		shape []int
	}{
		{"mnist", Options{}, 10000, []int{1, 28, 28}},
		{"cifar10", Options{Grey: true}, 10000, []int{1, 32, 32}},
		{"cifar10", Options{}, 10000, []int{3, 32, 32}},
		{"lung-cancer", Options{}, 32, []int{56}},
		{"synthetic-gauss", Options{Classes: 3, PerClass: 10}, 30, []int{2}},
		{"synthetic-swissroll", Options{PerClass: 10}, 20, []int{2}},
		{"synthetic-images", Options{Size: 16, PerClass: 3}, 30, []int{1, 16, 16}},
	} {
		dir := ""
		if !Synthetic(c.name) {
			var err error
			if dir, err = datadir.Require(Subdir(c.name)); err != nil {
				t.Fatal(err)
			}
		}
		d, err := Load(c.name, dir, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Len() != c.n || !equalInts(d.Shape, c.shape) {
			t.Errorf("%s: %d samples of shape %v, want %d of %v", c.name, d.Len(), d.Shape, c.n, c.shape)
		}
	}
	if _, err := Load("mnist", "", Options{}); err == nil || !strings.Contains(err.Error(), "no data folder") {
		t.Errorf("mnist without folder: %v", err)
	}
	if _, err := Load("mnist", filepath.Join(root, "cifar-10"), Options{}); err == nil || !strings.Contains(err.Error(), "no train-* or t10k-*") {
		t.Errorf("mnist from the wrong folder: %v", err)
	}
	if _, err := Load("imagenet", "", Options{}); err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Errorf("unknown name: %v", err)
	}
	want := "cifar10 covid-ct lung-cancer miniimagenet mnist omniglot synthetic-gauss synthetic-images synthetic-swissroll"
	if got := strings.Join(Names(), " "); got != want {
		t.Errorf("Names() = %s", got)
	}
}

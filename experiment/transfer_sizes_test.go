package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransferSizesCheckedBeforeTraining: task and episode sizes the split
// cannot give (transferYAML: 4 novel classes, 6 base classes of 24
// training and 6 validation samples each, 30 samples per class) are a
// config error naming the key and what the split holds, before a single
// training step.
func TestTransferSizesCheckedBeforeTraining(t *testing.T) {
	for _, c := range []struct {
		set  string
		want []string
	}{
		{"ways=5", []string{"key ways = 5", "4 novel classes", "(block, disc, triangle, dots)"}},
		{"shots=30", []string{"key shots = 30", "has 30 samples", "needs 31"}},
		{"transfer.ways=7", []string{"key transfer.ways = 7", "6 training classes"}},
		{"transfer.shots=23", []string{"key transfer.shots = 23", "has 24 training samples", "= 25 per class"}},
		{"transfer.val_ways=7", []string{"key transfer.val_ways = 7", "6 validation classes"}},
		{"transfer.val_shots=6", []string{"key transfer.val_shots = 6", "has 6 validation samples"}},
	} {
		cfg := transferConfig(t, c.set)
		steps := 0
		dir := t.TempDir()
		_, err := Run(t.Context(), cfg, Options{OutDir: dir, Observer: func(e Event) {
			if _, ok := e.(TransferStep); ok {
				steps++
			}
		}})
		if err == nil || !errors.Is(err, ErrConfig) || steps != 0 {
			t.Errorf("%s: error %v (config error %v) after %d training steps", c.set, err, errors.Is(err, ErrConfig), steps)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.set, err, w)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "train")); !os.IsNotExist(err) {
			t.Errorf("%s: a refused run made its training folder (%v)", c.set, err)
		}
	}
}

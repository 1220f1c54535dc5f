package model

import (
	"fmt"

	G "github.com/drknn/drknn/internal/gorgonia"
)

// Identity is no network: the embedding of a sample is the sample itself,
// flattened (d = the input size). It has no weights, so Algorithm 1 has
// nothing to learn; it is for inputs that already are the features to
// compare, such as the 56 Lung Cancer attributes, where 15–24 training rows
// are too few to learn a metric (results/TUNING.md, session 3).
const Identity Kind = "identity"

// validateIdentity checks an Identity config: any input shape, dim 0 (the
// input size) or the input size itself, no layer settings.
func (c Config) validateIdentity() error {
	if len(c.InShape) == 0 {
		return fmt.Errorf("model: identity needs an input shape")
	}
	if c.Dim != 0 && c.Dim != c.InSize() {
		return fmt.Errorf("model: identity dim = %d: the embedding is the input (%d values); use 0", c.Dim, c.InSize())
	}
	if c.Channels != 0 || c.Padding != nil || c.Hidden != 0 {
		return fmt.Errorf("model: identity has no layers: channels, padding and hidden must be unset")
	}
	return nil
}

// embedIdentity copies the n samples of x into out as float64.
func embedIdentity[S Float](x []S, out []float64) {
	for i, v := range x {
		out[i] = float64(v)
	}
}

// applyIdentity returns the batch x as an n×InSize node.
func (gr *Graph) applyIdentity(x *G.Node) (*G.Node, error) {
	s := x.Shape()
	in := gr.Net.cfg.InSize()
	if s.TotalSize() != s[0]*in {
		return nil, fmt.Errorf("model: Apply: input %q has shape %v, want (n, %v...) or (n, %d)", x.Name(), s, gr.Net.cfg.InShape, in)
	}
	if len(s) == 2 {
		return x, nil
	}
	y, err := G.Reshape(x, []int{s[0], in})
	if err != nil {
		return nil, fmt.Errorf("model: identity: %w", err)
	}
	return y, nil
}

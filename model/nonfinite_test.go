package model

import (
	"math"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// NonFinite finds a NaN or ±Inf in float64 and float32 tensors (at the end
// of a long one too: the vector kernel's bulk and the scalar tail) and
// scalars, and reports false for finite values and other kinds.
func TestNonFinite(t *testing.T) {
	long := make([]float64, 37)
	long32 := make([]float32, 70)
	f64, f32 := G.F64(math.NaN()), G.F32(float32(math.Inf(-1)))
	fin64 := G.F64(1)
	cases := []struct {
		name string
		v    G.Value
		want bool
	}{
		{"finite f64", tensor.New(tensor.WithBacking(append([]float64(nil), long...))), false},
		{"finite f32", tensor.New(tensor.WithBacking(append([]float32(nil), long32...))), false},
		{"NaN first f64", tensor.New(tensor.WithBacking(append([]float64{math.NaN()}, long...))), true},
		{"Inf last f64", tensor.New(tensor.WithBacking(append(append([]float64(nil), long...), math.Inf(1)))), true},
		{"Inf in bulk f32", tensor.New(tensor.WithBacking(append([]float32{float32(math.Inf(1))}, long32...))), true},
		{"NaN last f32", tensor.New(tensor.WithBacking(append(append([]float32(nil), long32...), float32(math.NaN())))), true},
		{"scalar NaN", &f64, true},
		{"scalar -Inf f32", &f32, true},
		{"scalar finite", &fin64, false},
		{"ints", tensor.New(tensor.WithBacking([]int{1, 2})), false},
	}
	for _, c := range cases {
		if got := NonFinite(c.v); got != c.want {
			t.Errorf("%s: NonFinite %v, want %v", c.name, got, c.want)
		}
	}
}

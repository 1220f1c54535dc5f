package model

import (
	"math/rand"
	"testing"
)

// im2colRef is im2col element by element (its form before the row
// copies): the reference of TestIm2colRows.
func im2colRef(g convGeom, x, cols []float64) {
	hw := g.hw()
	for c := 0; c < g.c; c++ {
		for kh := 0; kh < 3; kh++ {
			for kw := 0; kw < 3; kw++ {
				row := cols[((c*3+kh)*3+kw)*hw:][:hw]
				for oh := 0; oh < g.ho; oh++ {
					for ow := 0; ow < g.wo; ow++ {
						ih, iw := oh+kh-g.pad, ow+kw-g.pad
						v := 0.0
						if ih >= 0 && ih < g.h && iw >= 0 && iw < g.w {
							v = x[(c*g.h+ih)*g.w+iw]
						}
						row[oh*g.wo+ow] = v
					}
				}
			}
		}
	}
}

// TestIm2colRows: the row-copy im2col writes exactly the reference's
// patches (padding 0 and 1, square and oblong images, 1 and 3 channels),
// over a buffer full of garbage.
func TestIm2colRows(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, pad := range []int{0, 1} {
		for _, sz := range [][3]int{{1, 3, 3}, {1, 4, 7}, {3, 8, 8}, {1, 28, 28}, {3, 32, 32}, {2, 5, 3}} {
			cfg := Config{Kind: CNN, InShape: []int{sz[0], sz[1], sz[2]}, Padding: &pad}.WithDefaults()
			g := cfg.geom()
			x := make([]float64, g.c*g.h*g.w)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			got, want := make([]float64, g.c9()*g.hw()), make([]float64, g.c9()*g.hw())
			for i := range got {
				got[i] = rng.NormFloat64()
			}
			im2col(g, x, got)
			im2colRef(g, x, want)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("pad %d shape %v: cols[%d] = %v, want %v", pad, sz, i, got[i], want[i])
				}
			}
		}
	}
}

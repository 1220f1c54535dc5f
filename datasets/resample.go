package datasets

import (
	"math"

	"golang.org/x/image/draw"
)

// newKernelWeights computes the weights of golang.org/x/image/draw's
// Kernel.Scale along one axis of sw source pixels resampled to dw: output
// pixel x is centred at (x+0.5)·sw/dw − 0.5 in source coordinates; when
// shrinking the kernel is widened by sw/dw (so every source pixel counts:
// anti-aliasing); taps outside the image are dropped and the rest
// renormalised to sum to 1 (edge handling of x/image/draw).
func newKernelWeights(q *draw.Kernel, sw, dw int) axisWeights {
	scale := float64(sw) / float64(dw)
	half, argScale := q.Support, 1.0
	if scale > 1 {
		half *= scale
		argScale = 1 / scale
	}
	kw := axisWeights{start: make([]int, dw), w: make([][]float64, dw)}
	for x := 0; x < dw; x++ {
		center := (float64(x)+0.5)*scale - 0.5
		i := max(int(math.Floor(center-half)), 0)
		j := min(int(math.Ceil(center+half)), sw)
		// Weights for source pixels i … j-1, zero outside the support.
		ws := make([]float64, 0, j-i)
		first, total := -1, 0.0
		for c := i; c < j; c++ {
			t := math.Abs((center - float64(c)) * argScale)
			wt := 0.0
			if t < q.Support {
				wt = q.At(t)
			}
			if wt == 0 && first < 0 {
				continue
			}
			if first < 0 {
				first = c
			}
			ws = append(ws, wt)
			total += wt
		}
		if first < 0 || total == 0 { // cannot happen for sw ≥ 1; nearest pixel as a guard
			first, ws, total = min(max(int(math.Round(center)), 0), sw-1), []float64{1}, 1
		}
		for k := range ws {
			ws[k] /= total
		}
		kw.start[x], kw.w[x] = first, ws
	}
	return kw
}

// resizeKernel resamples c planes of h×w (channel-major) to oh×ow with
// kernel q (draw.CatmullRom for the image folders), horizontally then
// vertically in float64 like x/image/draw, and clamps the result to [0, 1]
// (the Catmull-Rom lobes overshoot at sharp edges). Equal sizes copy.
func resizeKernel(q *draw.Kernel, dst, src []float32, c, h, w, oh, ow int) {
	if h == oh && w == ow {
		copy(dst, src[:c*h*w])
		return
	}
	resample(dst, src, c, h, w, oh, ow, newKernelWeights(q, w, ow), newKernelWeights(q, h, oh), true)
}

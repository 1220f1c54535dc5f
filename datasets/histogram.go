package datasets

import (
	"fmt"
	"math"
)

// FeaturesHistogram is the Options.Features value that turns each COVID-CT
// image into the histogram of its grey levels.
const FeaturesHistogram = "histogram"

// HistogramBins is the number of grey-level bins of the histogram features.
const HistogramBins = 64

// ReadCOVIDCTHistogram reads the COVID-CT images (same files, order,
// labels and errors as ReadCOVIDCT) and returns for each image the
// histogram of its luma at full resolution — every pixel, no resizing:
// the luma v ∈ [0, 1] of each pixel (BT.601, as ReadCOVIDCT) is quantised
// to b = round(255·v) and counted in bin ⌊b·bins/256⌋ (for 64 bins: the
// top 6 bits of the 8-bit grey level, like NumPy's bincount(L >> 2) on
// PIL's "L" image), and the counts are divided by the number of pixels, so
// each sample sums to 1. Shape [bins]. The histogram ignores where grey
// levels are and the image's size, shape, file format and colour mode;
// only the distribution of its grey levels reaches the model.
func ReadCOVIDCTHistogram(dir string, bins int) (*Dataset, error) {
	if bins < 1 || bins > 256 {
		return nil, fmt.Errorf("covid-ct: %d histogram bins, want 1…256", bins)
	}
	items, err := covidItems(dir)
	if err != nil {
		return nil, err
	}
	convert := func(data []byte) ([]float32, error) {
		plane, _, _, err := toGrey(data, 0)
		if err != nil {
			return nil, err
		}
		return greyHistogram(plane, bins), nil
	}
	d, err := decodeItems("covid-ct", dir, []int{bins}, append([]string(nil), COVIDCTClasses...), items, convert)
	if err != nil {
		return nil, fmt.Errorf("covid-ct: %w", err)
	}
	return d, nil
}

// greyHistogram returns the normalised histogram of the grey levels in
// plane (values in [0, 1]) over bins bins, as ReadCOVIDCTHistogram
// describes.
func greyHistogram(plane []float32, bins int) []float32 {
	counts := make([]int, bins)
	for _, v := range plane {
		b := int(math.Round(255 * math.Min(1, math.Max(0, float64(v)))))
		counts[b*bins/256]++
	}
	out := make([]float32, bins)
	for i, c := range counts {
		out[i] = float32(float64(c) / float64(len(plane)))
	}
	return out
}

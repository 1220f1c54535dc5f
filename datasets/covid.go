package datasets

import (
	"fmt"
	"path"
	"path/filepath"
)

// COVIDCTClasses are the COVID-CT class folders (Zhao et al. 2020,
// UCSD-AI4H), in label order: 0 = CT_COVID, 1 = CT_NonCOVID.
var COVIDCTClasses = []string{"CT_COVID", "CT_NonCOVID"}

// DefaultCOVIDCTSize is the side ReadCOVIDCT resizes to when size is 0.
const DefaultCOVIDCTSize = 64

// ReadCOVIDCT reads the COVID-CT images from dir/CT_COVID and
// dir/CT_NonCOVID (the folders of the upstream CT_COVID.zip and
// CT_NonCOVID.zip; 349 + 397 images).
//
// Files are decoded by content, not by extension (34 upstream ".png" files
// hold JPEG data), reduced to luma at full resolution (BT.601 weights;
// JPEG's own Y channel; alpha ignored — the 174 RGBA files have alpha 255
// everywhere), and stretched to size×size by exact area averaging (the
// images are 115 to 1671 pixels on a side and not square; no cropping). The
// same pixels give bit-identical samples whatever the colour mode, alpha or
// file name (TestCOVIDCTNoModeOrFormatSignal): the set's formats, which
// follow its classes, reach the tensors only through the image content. size 0 means
// DefaultCOVIDCTSize. Order: CT_COVID then CT_NonCOVID, files sorted by name;
// Files holds "CT_COVID/NAME". Hidden files are ignored; any other file
// that is not an image, a sub-folder, an empty or missing class
// folder is an error naming the path. Shape is [1, size, size].
func ReadCOVIDCT(dir string, size int) (*Dataset, error) {
	if size == 0 {
		size = DefaultCOVIDCTSize
	}
	if size < 0 {
		return nil, fmt.Errorf("covid-ct: size %d must be > 0", size)
	}
	items, err := covidItems(dir)
	if err != nil {
		return nil, err
	}
	convert := func(data []byte) ([]float32, error) {
		v, _, _, err := toGrey(data, size)
		return v, err
	}
	d, err := decodeItems("covid-ct", dir, []int{1, size, size}, append([]string(nil), COVIDCTClasses...), items, convert)
	if err != nil {
		return nil, fmt.Errorf("covid-ct: %w", err)
	}
	return d, nil
}

// covidItems lists the COVID-CT image files in label order, sorted by name.
func covidItems(dir string) ([]imageItem, error) {
	var items []imageItem
	for label, cls := range COVIDCTClasses {
		names, err := listDir(filepath.Join(dir, cls), false)
		if err != nil {
			return nil, fmt.Errorf("covid-ct: %w", err) // classified by listDir
		}
		for _, n := range names {
			items = append(items, fileItem(filepath.Join(dir, cls, n), path.Join(cls, n), label))
		}
	}
	return items, nil
}

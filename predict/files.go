package predict

import (
	"fmt"
	"os"

	"github.com/drknn/drknn/internal/npy"
)

// Inputs are new samples given as files, in exactly one of three forms.
type Inputs struct {
	Images     []string // PNG or JPEG files, preprocessed as ImageSettings says
	Embeddings string   // an nq×D float64 .npy of embeddings made by the same network
	Features   string   // a CSV of feature rows for a feature-row (MLP) network (ReadFeatureCSV)
	Invert     *bool    // images: override the model's polarity (nil: the model's)
}

// Check reports inputs given in none or several forms, or -invert without
// images.
func (in Inputs) Check() error {
	forms := 0
	for _, given := range []bool{len(in.Images) > 0, in.Embeddings != "", in.Features != ""} {
		if given {
			forms++
		}
	}
	if forms != 1 {
		return fmt.Errorf("give exactly one of images, embeddings and features")
	}
	if in.Invert != nil && len(in.Images) == 0 {
		return fmt.Errorf("-invert applies only to images")
	}
	return nil
}

// PredictFiles reads the inputs, embeds them with the model's network
// (embeddings are used as given) and classifies them. Each prediction is
// named by its file (feature rows as FILE:ROW, embeddings by row number).
func (m *Model) PredictFiles(in Inputs, o Options) ([]Prediction, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	var q []float64
	var nq int
	var names []string
	switch {
	case in.Embeddings != "":
		var d int
		var err error
		if q, nq, d, err = npy.ReadMatrix(in.Embeddings, true); err != nil {
			return nil, err
		}
		if d != m.D {
			return nil, fmt.Errorf("%w: %s: embeddings of width %d, the model's are %d", ErrInput, in.Embeddings, d, m.D)
		}
	case in.Features != "":
		net, err := m.Net()
		if err != nil {
			return nil, err
		}
		shape := net.Config().InShape
		if len(shape) != 1 {
			return nil, fmt.Errorf("%w: %s: the model takes images of shape %v, not feature rows (use -images)", ErrInput, in.Features, shape)
		}
		f, err := os.Open(in.Features)
		if err != nil {
			return nil, err
		}
		x, n, err := ReadFeatureCSV(f, in.Features, shape[0])
		f.Close()
		if err != nil {
			return nil, err
		}
		if q, err = m.Embed(x, n); err != nil {
			return nil, err
		}
		nq = n
		for i := 0; i < n; i++ {
			names = append(names, fmt.Sprintf("%s:%d", in.Features, i+1))
		}
	default:
		s, err := m.ImageSettings()
		if err != nil {
			return nil, err
		}
		if in.Invert != nil {
			s.Invert = *in.Invert
		}
		x := make([]float32, 0, len(in.Images)*s.Channels*s.Height*s.Width)
		for _, path := range in.Images {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			v, err := Image(data, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			x = append(x, v...)
		}
		nq, names = len(in.Images), in.Images
		if q, err = m.Embed(x, nq); err != nil {
			return nil, err
		}
	}
	return m.Classify(q, nq, names, o)
}

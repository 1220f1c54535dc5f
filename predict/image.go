package predict

// Image preprocessing for new inputs. PredictFiles and FitFolder prepare
// image files with datasets.DecodeReaderImage, the preparation of the
// model's own reader, so that a file gives bit for bit the sample the
// reader would give it (TestImagesPreparedAsReader: miniImageNet RGB and
// grey, Omniglot in both polarities). Image is the generic preparation
// (datasets.DecodeImage, then Omniglot-style inversion when asked).

import (
	"fmt"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
)

// ImageSettings say how images become network inputs.
type ImageSettings struct {
	Channels, Height, Width int  // the network's InShape
	Invert                  bool // 1 − v after scaling (Omniglot's stroke = 1 polarity)
}

// ImageSettings returns the preprocessing for the model's network: its
// input shape, and inversion for Omniglot models (whose reader inverts by
// default). A network for feature rows (MLP) takes no images.
func (m *Model) ImageSettings() (ImageSettings, error) {
	net, err := m.Net()
	if err != nil {
		return ImageSettings{}, err
	}
	return imageSettingsFor(net.Config(), m.Settings.Dataset)
}

func imageSettingsFor(cfg model.Config, dataset string) (ImageSettings, error) {
	if (cfg.Kind != model.CNN && cfg.Kind != model.Conv4) || len(cfg.InShape) != 3 {
		return ImageSettings{}, fmt.Errorf("%w: the exported model takes feature rows of shape %v, not images (use -features)", ErrInput, cfg.InShape)
	}
	c, h, w := cfg.InShape[0], cfg.InShape[1], cfg.InShape[2]
	if c != 1 && c != 3 {
		return ImageSettings{}, fmt.Errorf("%w: the exported model takes %d-channel images; only 1 (grey) or 3 (RGB) can be made from PNG/JPEG", ErrInput, c)
	}
	return ImageSettings{Channels: c, Height: h, Width: w, Invert: dataset == "omniglot"}, nil
}

// Image turns the bytes of one PNG or JPEG file into a network input of
// s.Channels×s.Height×s.Width values in [0, 1]. The image is stretched to
// Height×Width (the aspect ratio is not kept, as in the COVID-CT and
// miniImageNet readers).
func Image(data []byte, s ImageSettings) ([]float32, error) {
	if s.Channels != 1 && s.Channels != 3 || s.Height < 1 || s.Width < 1 {
		return nil, fmt.Errorf("%w: cannot make images of shape [%d %d %d]", ErrInput, s.Channels, s.Height, s.Width)
	}
	out, err := datasets.DecodeImage(data, s.Channels, s.Height, s.Width)
	if err != nil {
		return nil, err
	}
	if s.Invert {
		for i, v := range out {
			out[i] = 1 - v
		}
	}
	return out, nil
}

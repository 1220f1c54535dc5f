package predict

// Image preprocessing for new inputs. It mirrors the (unexported) helpers of
// package datasets — content-sniffed decoding with a size limit, BT.601
// luma or R, G, B planes in [0, 1], exact area-averaging resize — so that a
// file gives the same sample here as through the matching reader; the tests
// check that against datasets.ReadCOVIDCT and datasets.ReadMiniImageNet.

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // registered for image.Decode
	_ "image/png"  // registered for image.Decode

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/model"
)

// ImageSettings say how images become network inputs.
type ImageSettings struct {
	Channels, Height, Width int  // the network's InShape
	Invert                  bool // 1 − v after scaling (Omniglot's stroke = 1 polarity)
}

// ImageSettings returns the preprocessing for the exported network: its
// input shape, and inversion for Omniglot models (whose reader inverts by
// default). A network for feature rows (MLP) takes no images.
func (e *Export) ImageSettings() (ImageSettings, error) {
	net, err := e.Net()
	if err != nil {
		return ImageSettings{}, err
	}
	return imageSettingsFor(net.Config(), e.Manifest.Config.Dataset)
}

func imageSettingsFor(cfg model.Config, dataset string) (ImageSettings, error) {
	if cfg.Kind != model.CNN || len(cfg.InShape) != 3 {
		return ImageSettings{}, fmt.Errorf("%w: the exported model takes feature rows of shape %v, not images (use -features)", ErrInput, cfg.InShape)
	}
	c, h, w := cfg.InShape[0], cfg.InShape[1], cfg.InShape[2]
	if c != 1 && c != 3 {
		return ImageSettings{}, fmt.Errorf("%w: the exported model takes %d-channel images; only 1 (grey) or 3 (RGB) can be made from PNG/JPEG", ErrInput, c)
	}
	return ImageSettings{Channels: c, Height: h, Width: w, Invert: dataset == "omniglot"}, nil
}

var errNotImage = errors.New("not a PNG or JPEG image")

// decode decodes PNG or JPEG data by content, checking the declared size
// against datasets.MaxImagePixels before allocating the pixels.
func decode(data []byte) (image.Image, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, image.ErrFormat) {
			return nil, errNotImage
		}
		return nil, fmt.Errorf("bad image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("%s image has empty size %d×%d", format, cfg.Width, cfg.Height)
	}
	if cfg.Width > datasets.MaxImagePixels/cfg.Height {
		return nil, fmt.Errorf("%s image of %d×%d pixels exceeds the limit of %d pixels", format, cfg.Width, cfg.Height, datasets.MaxImagePixels)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("corrupt %s image: %w", format, err)
	}
	if b := img.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return nil, fmt.Errorf("%s image decoded to %d×%d, header says %d×%d", format, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
	}
	return img, nil
}

// BT.601 luma weights, as in package datasets.
const lumaR, lumaG, lumaB = 0.299, 0.587, 0.114

// greyPlane is the luma of img in [0, 1]: grey pixels as they are, JPEG's
// stored Y channel, otherwise BT.601 of the (alpha-premultiplied, i.e.
// composited over black) colour.
func greyPlane(img image.Image) ([]float32, int, int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	plane := make([]float32, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px, py := b.Min.X+x, b.Min.Y+y
			var v float64
			switch m := img.(type) {
			case *image.Gray:
				v = float64(m.GrayAt(px, py).Y) / 255
			case *image.YCbCr:
				v = float64(m.Y[m.YOffset(px, py)]) / 255
			case *image.RGBA:
				c := m.RGBAAt(px, py)
				v = (lumaR*float64(c.R) + lumaG*float64(c.G) + lumaB*float64(c.B)) / 255
			case *image.NRGBA:
				c := m.NRGBAAt(px, py)
				v = (lumaR*float64(c.R) + lumaG*float64(c.G) + lumaB*float64(c.B)) / 255
				if c.A != 255 {
					v *= float64(c.A) / 255 // composite over black
				}
			default:
				r, g, bl, _ := img.At(px, py).RGBA()
				v = (lumaR*float64(r) + lumaG*float64(g) + lumaB*float64(bl)) / 0xffff
			}
			plane[y*w+x] = float32(v)
		}
	}
	return plane, h, w
}

// rgbPlanes returns img as R, G, B planes (channel-major) in [0, 1]; a grey
// image gives three equal planes.
func rgbPlanes(img image.Image) ([]float32, int, int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	n := w * h
	planes := make([]float32, 3*n)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.RGBA64)
			planes[y*w+x] = float32(c.R) / 0xffff
			planes[n+y*w+x] = float32(c.G) / 0xffff
			planes[2*n+y*w+x] = float32(c.B) / 0xffff
		}
	}
	return planes, h, w
}

// areaWeights: for each output pixel, the first source pixel and the
// weights of the source pixels it covers (they sum to 1).
type areaWeights struct {
	start []int
	w     [][]float64
}

// newAreaWeights computes exact area-averaging weights from n source pixels
// to m output pixels: output j covers the source interval [j·n/m, (j+1)·n/m).
func newAreaWeights(n, m int) areaWeights {
	aw := areaWeights{start: make([]int, m), w: make([][]float64, m)}
	scale := float64(n) / float64(m)
	for j := 0; j < m; j++ {
		lo, hi := j*n, (j+1)*n
		i0, i1 := lo/m, (hi+m-1)/m
		aw.start[j] = i0
		ws := make([]float64, i1-i0)
		for i := i0; i < i1; i++ {
			a, b := max(lo, i*m), min(hi, (i+1)*m)
			ws[i-i0] = float64(b-a) / float64(m) / scale
		}
		aw.w[j] = ws
	}
	return aw
}

// resizeArea resizes c planes of h×w to oh×ow by area averaging
// (accumulating in float64), horizontally first, as package datasets does.
func resizeArea(dst, src []float32, c, h, w, oh, ow int) {
	if h == oh && w == ow {
		copy(dst, src[:c*h*w])
		return
	}
	wx, wy := newAreaWeights(w, ow), newAreaWeights(h, oh)
	tmp := make([]float64, h*ow)
	for ch := 0; ch < c; ch++ {
		s := src[ch*h*w : (ch+1)*h*w]
		for y := 0; y < h; y++ {
			row := s[y*w : (y+1)*w]
			for j := 0; j < ow; j++ {
				acc := 0.0
				for k, wt := range wx.w[j] {
					acc += wt * float64(row[wx.start[j]+k])
				}
				tmp[y*ow+j] = acc
			}
		}
		d := dst[ch*oh*ow : (ch+1)*oh*ow]
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				acc := 0.0
				for k, wt := range wy.w[i] {
					acc += wt * tmp[(wy.start[i]+k)*ow+j]
				}
				d[i*ow+j] = float32(acc)
			}
		}
	}
}

// Image turns the bytes of one PNG or JPEG file into a network input of
// s.Channels×s.Height×s.Width values in [0, 1]. The image is stretched to
// Height×Width (the aspect ratio is not kept, as in the COVID-CT and
// miniImageNet readers).
func Image(data []byte, s ImageSettings) ([]float32, error) {
	if s.Channels != 1 && s.Channels != 3 || s.Height < 1 || s.Width < 1 {
		return nil, fmt.Errorf("%w: cannot make images of shape [%d %d %d]", ErrInput, s.Channels, s.Height, s.Width)
	}
	img, err := decode(data)
	if err != nil {
		return nil, err
	}
	var planes []float32
	var h, w int
	if s.Channels == 1 {
		planes, h, w = greyPlane(img)
	} else {
		planes, h, w = rgbPlanes(img)
	}
	out := make([]float32, s.Channels*s.Height*s.Width)
	resizeArea(out, planes, s.Channels, h, w, s.Height, s.Width)
	if s.Invert {
		for i, v := range out {
			out[i] = 1 - v
		}
	}
	return out, nil
}

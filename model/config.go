package model

import (
	"encoding/json"
	"fmt"
)

// Kind selects the body of the network.
type Kind string

const (
	// CNN is one 3×3 convolution (stride 1), ReLU, 2×2 max-pool, flatten
	// and a linear map to the embedding width, for images.
	CNN Kind = "cnn"
	// MLP is linear–ReLU–linear, for rows of features.
	MLP Kind = "mlp"
	// Conv4 is the standard few-shot backbone: four blocks of 3×3
	// convolution (padding 1, no bias), batch normalisation, ReLU and 2×2
	// max-pool, then flatten; optionally a linear map to Dim when Dim > 0.
	Conv4 Kind = "conv4"
)

// DType is the floating-point type of the weights and the graph.
type DType string

const (
	Float32 DType = "float32"
	Float64 DType = "float64"
)

// Defaults used when a Config field is zero.
const (
	DefaultChannels = 32
	DefaultPadding  = 1
	DefaultHidden   = 256
	DefaultDim      = 400
	DefaultDType    = Float32

	// DefaultConv4Channels is the width of every Conv-4 block.
	DefaultConv4Channels = 64
	// Conv4Blocks is the number of blocks of the Conv-4 body.
	Conv4Blocks = 4
	// BNMomentum and BNEps are batch normalisation's running-average
	// momentum and variance offset (PyTorch's defaults): running ←
	// (1 − BNMomentum)·running + BNMomentum·batch statistic, with the
	// unbiased batch variance for the running variance.
	BNMomentum = 0.1
	BNEps      = 1e-5
)

// maxElems caps the size of any one weight tensor (and of one sample), so
// that a corrupt or mistyped configuration is an error, not an out-of-memory.
const maxElems = 1 << 30

// Config describes a network. The zero values of Channels, Hidden, Dim and
// DType select the defaults; Padding nil selects DefaultPadding.
type Config struct {
	Kind     Kind  `json:"kind" yaml:"kind"`
	InShape  []int `json:"in_shape" yaml:"in_shape"` // CNN, Conv4: [C, H, W]; MLP: [F]
	Channels int   `json:"channels" yaml:"channels"` // CNN, Conv4: convolution output channels (Conv4: every block)
	Padding  *int  `json:"padding" yaml:"padding"`   // CNN: zero padding on each side (default 1); Conv4: 1 only
	Hidden   int   `json:"hidden" yaml:"hidden"`     // MLP: hidden width
	Dim      int   `json:"dim" yaml:"dim"`           // embedding width d; Conv4: 0 = the flattened body, no linear layer
	DType    DType `json:"dtype" yaml:"dtype"`       // float32 or float64
}

// String formats the configuration as JSON.
func (c Config) String() string {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("%#v", c)
	}
	return string(b)
}

// IntPtr returns a pointer to v, for Config.Padding.
func IntPtr(v int) *int { return &v }

// WithDefaults returns a copy of c with zero fields replaced by the
// defaults that apply to its Kind. It does not validate; fields of the
// other Kind are kept (and rejected by Validate).
func (c Config) WithDefaults() Config {
	c.InShape = append([]int(nil), c.InShape...)
	if c.Dim == 0 && c.Kind != Conv4 && c.Kind != Identity {
		c.Dim = DefaultDim
	}
	if c.DType == "" {
		c.DType = DefaultDType
	}
	switch c.Kind {
	case CNN:
		if c.Channels == 0 {
			c.Channels = DefaultChannels
		}
		if c.Padding == nil {
			c.Padding = IntPtr(DefaultPadding)
		} else {
			c.Padding = IntPtr(*c.Padding)
		}
	case MLP:
		if c.Hidden == 0 {
			c.Hidden = DefaultHidden
		}
	case Conv4:
		if c.Channels == 0 {
			c.Channels = DefaultConv4Channels
		}
		if c.Padding == nil {
			c.Padding = IntPtr(1)
		} else {
			c.Padding = IntPtr(*c.Padding)
		}
	}
	return c
}

// Validate reports the first problem with a defaulted configuration.
func (c Config) Validate() error {
	if c.Kind == Conv4 && c.Dim < 0 {
		return fmt.Errorf("model: dim = %d, want 0 (no linear layer) or ≥ 1 for conv4", c.Dim)
	}
	if c.Kind != Conv4 && c.Kind != Identity && c.Dim < 1 {
		return fmt.Errorf("model: dim = %d, want ≥ 1", c.Dim)
	}
	if c.DType != Float32 && c.DType != Float64 {
		return fmt.Errorf("model: dtype %q, want %q or %q", c.DType, Float32, Float64)
	}
	for i, v := range c.InShape {
		if v < 1 || v > maxElems {
			return fmt.Errorf("model: in_shape[%d] = %d, want 1…%d", i, v, maxElems)
		}
	}
	switch c.Kind {
	case CNN:
		if len(c.InShape) != 3 {
			return fmt.Errorf("model: cnn in_shape %v, want [channels, height, width]", c.InShape)
		}
		if c.Channels < 1 || c.Channels > 4096 {
			return fmt.Errorf("model: channels = %d, want 1…4096", c.Channels)
		}
		if c.Padding == nil || *c.Padding < 0 || *c.Padding > 2 {
			return fmt.Errorf("model: padding %v, want 0, 1 or 2", fmtPtr(c.Padding))
		}
		if c.Hidden != 0 {
			return fmt.Errorf("model: hidden = %d is for mlp, not cnn", c.Hidden)
		}
		g := c.geom()
		if g.ho < 2 || g.wo < 2 {
			return fmt.Errorf("model: input %v with padding %d gives a %d×%d convolution output, too small for 2×2 pooling", c.InShape, *c.Padding, g.ho, g.wo)
		}
		if g.c*g.h*g.w > maxElems || g.k*g.c*9 > maxElems || g.k*g.ho*g.wo > maxElems || g.flat()*c.Dim > maxElems {
			return fmt.Errorf("model: cnn %v with %d channels and dim %d is too large", c.InShape, c.Channels, c.Dim)
		}
	case MLP:
		if len(c.InShape) != 1 {
			return fmt.Errorf("model: mlp in_shape %v, want [features]", c.InShape)
		}
		if c.Hidden < 1 {
			return fmt.Errorf("model: hidden = %d, want ≥ 1", c.Hidden)
		}
		if c.Channels != 0 || c.Padding != nil {
			return fmt.Errorf("model: channels/padding are for cnn, not mlp")
		}
		if c.InShape[0]*c.Hidden > maxElems || c.Hidden*c.Dim > maxElems {
			return fmt.Errorf("model: mlp %v with hidden %d and dim %d is too large", c.InShape, c.Hidden, c.Dim)
		}
	case Conv4:
		if len(c.InShape) != 3 {
			return fmt.Errorf("model: conv4 in_shape %v, want [channels, height, width]", c.InShape)
		}
		if c.Channels < 1 || c.Channels > 4096 {
			return fmt.Errorf("model: channels = %d, want 1…4096", c.Channels)
		}
		if c.Padding == nil || *c.Padding != 1 {
			return fmt.Errorf("model: conv4 padding %v, want 1", fmtPtr(c.Padding))
		}
		if c.Hidden != 0 {
			return fmt.Errorf("model: hidden = %d is for mlp, not conv4", c.Hidden)
		}
		bs := c.blocks()
		for i, g := range bs {
			if g.ho < 2 || g.wo < 2 {
				return fmt.Errorf("model: conv4 input %v: block %d gets a %d×%d input, too small for 2×2 pooling (each block halves the size; conv4 needs at least 16×16)", c.InShape, i+1, g.h, g.w)
			}
			if int64(g.c)*int64(g.h)*int64(g.w) > maxElems || int64(g.k)*int64(g.ho)*int64(g.wo) > maxElems {
				return fmt.Errorf("model: conv4 %v with %d channels is too large", c.InShape, c.Channels)
			}
		}
		if int64(bs[len(bs)-1].flat())*int64(max(c.Dim, 1)) > maxElems {
			return fmt.Errorf("model: conv4 %v with %d channels and dim %d is too large", c.InShape, c.Channels, c.Dim)
		}
	case Identity:
		return c.validateIdentity()
	default:
		return fmt.Errorf("model: kind %q, want %q, %q, %q or %q", c.Kind, CNN, Conv4, MLP, Identity)
	}
	return nil
}

// InSize is the number of values in one input sample.
func (c Config) InSize() int {
	s := 1
	for _, v := range c.InShape {
		s *= v
	}
	return s
}

func fmtPtr(p *int) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// convGeom is the geometry of the fused conv–ReLU–pool layer.
type convGeom struct {
	c, h, w int // input channels, height, width
	k, pad  int // output channels, padding
	ho, wo  int // convolution output size
	hp, wp  int // pooled size
}

func (c Config) geom() convGeom {
	g := convGeom{c: c.InShape[0], h: c.InShape[1], w: c.InShape[2], k: c.Channels}
	if c.Padding != nil {
		g.pad = *c.Padding
	}
	g.ho = g.h + 2*g.pad - 2
	g.wo = g.w + 2*g.pad - 2
	g.hp, g.wp = g.ho/2, g.wo/2
	return g
}

func (g convGeom) flat() int { return g.k * g.hp * g.wp }
func (g convGeom) c9() int   { return g.c * 9 }
func (g convGeom) hw() int   { return g.ho * g.wo }

// blocks is the geometry of the Conv-4 blocks (valid for a Conv4 config
// with a 3-element InShape).
func (c Config) blocks() []convGeom {
	gs := make([]convGeom, Conv4Blocks)
	ch, h, w := c.InShape[0], c.InShape[1], c.InShape[2]
	for i := range gs {
		g := convGeom{c: ch, h: h, w: w, k: c.Channels, pad: 1, ho: h, wo: w, hp: h / 2, wp: w / 2}
		gs[i] = g
		ch, h, w = g.k, max(g.hp, 1), max(g.wp, 1)
	}
	return gs
}

// bodyWidth is the width of the flattened Conv-4 body.
func (c Config) bodyWidth() int {
	bs := c.blocks()
	return bs[len(bs)-1].flat()
}

// outDim is the embedding width of a validated config.
func (c Config) outDim() int {
	if c.Kind == Conv4 && c.Dim == 0 {
		return c.bodyWidth()
	}
	if c.Kind == Identity {
		return c.InSize()
	}
	return c.Dim
}

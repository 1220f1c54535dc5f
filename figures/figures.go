// Package figures draws the paper's figures with gonum/plot:
// the least-favourable distributions P*_1…P*_M of a 2-D training set with
// kernel-smoothed shading and the Dr.k-NN decision regions (Figure 3),
// decision regions of any classifier of package eval on 2-D points
// (Figure 5), accuracy against k and against the kernel bandwidth h
// (Appendix C), and training curves read from a run's history.json files.
//
// Every function renders to an io.Writer as PNG at the requested size in
// pixels, or as SVG, PDF or EPS when the writer comes from As (at 96 pixels
// per inch); Save writes a figure to a file in the format its extension
// names (.png, .svg, .pdf, .eps; others are refused) through a temporary
// name and a rename. Inputs are checked first: wrong lengths, NaN or ±Inf, labels out
// of range or an impossible size give an error and nothing is drawn.
package figures

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgeps"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/outpath"
)

// ErrInput is wrapped by every error about bad input.
var ErrInput = errors.New("figures: invalid input")

func inputf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
}

// Limits on the output size in pixels.
const (
	MinPixels = 64
	MaxPixels = 8192
	dpi       = 96
)

// Formats are the output formats, by file extension.
var Formats = []string{"png", "svg", "pdf", "eps"}

// FormatOf is the format a file name asks for (its extension, lower case);
// an unknown or missing extension is an ErrInput naming the formats.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if !slices.Contains(Formats, ext) {
		if ext == "" {
			return "", inputf("%s: no file extension; want .png, .svg, .pdf or .eps", path)
		}
		return "", inputf("%s: unknown extension .%s; want .png, .svg, .pdf or .eps", path, ext)
	}
	return ext, nil
}

// CheckOut checks, before any work, that a figure can be written to path:
// a known format (FormatOf) and a folder that exists (outpath.Folder,
// shared with drknn-predict -out). A missing folder, or one that is a
// file, is an ErrInput naming it (the write failed at the end, naming its
// hidden temporary file).
func CheckOut(path string) error {
	if _, err := FormatOf(path); err != nil {
		return err
	}
	if err := outpath.Folder(path); err != nil {
		return inputf("%v", err)
	}
	return nil
}

type formatWriter struct {
	io.Writer
	format string
}

// As makes the figure functions render to w in format (one of Formats)
// instead of PNG.
func As(w io.Writer, format string) io.Writer { return formatWriter{w, format} }

func formatOf(w io.Writer) string {
	if f, ok := w.(formatWriter); ok {
		return f.format
	}
	return "png"
}

// Save renders a figure with render, in the format path's extension names
// (FormatOf), and writes it to path atomically: the file appears complete
// or not at all.
func Save(path string, render func(w io.Writer) error) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return render(As(w, format)) }); err != nil {
		return fmt.Errorf("figure %s: %w", path, err)
	}
	return nil
}

func checkSize(width, height int) error {
	if width < MinPixels || height < MinPixels || width > MaxPixels || height > MaxPixels {
		return inputf("size %d×%d pixels, want each side in %d…%d", width, height, MinPixels, MaxPixels)
	}
	return nil
}

// renderRow draws n plots side by side, plot i made by build(i), as a
// width×height PNG; what names the plots in the error for n = 0.
func renderRow(w io.Writer, what string, n int, build func(i int) (*plot.Plot, error), width, height int) error {
	if n == 0 {
		return inputf("no %s", what)
	}
	if err := checkSize(width, height); err != nil {
		return err
	}
	row := make([]*plot.Plot, n)
	for i := range row {
		p, err := build(i)
		if err != nil {
			return err
		}
		row[i] = p
	}
	return renderGrid(w, [][]*plot.Plot{row}, width, height)
}

// renderGrid draws plots in a rows×cols grid on a width×height canvas and
// encodes it as PNG (or the format of As).
func renderGrid(w io.Writer, plots [][]*plot.Plot, width, height int) (err error) {
	if err := checkSize(width, height); err != nil {
		return err
	}
	defer func() {
		// gonum/plot panics on some degenerate inputs (e.g. a non-positive
		// value on a log axis); report those as errors.
		if r := recover(); r != nil {
			err = inputf("drawing failed: %v", r)
		}
	}()
	pt := func(px int) vg.Length { return vg.Length(px) * vg.Inch / dpi }
	format := formatOf(w)
	var c vg.CanvasSizer
	var img *vgimg.Canvas
	switch format {
	case "png":
		img = vgimg.NewWith(vgimg.UseWH(pt(width), pt(height)), vgimg.UseDPI(dpi))
		c = img
	case "svg":
		c = vgsvg.New(pt(width), pt(height))
	case "pdf":
		c = vgpdf.New(pt(width), pt(height))
	case "eps":
		c = vgeps.New(pt(width), pt(height))
	default:
		return inputf("unknown format %q; want one of %v", format, Formats)
	}
	dc := draw.New(c)
	rows, cols := len(plots), len(plots[0])
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			if p == nil {
				continue
			}
			// Too small a panel leaves no room for the data once the
			// axes and labels are placed (gonum would then loop or draw
			// nothing): refuse it.
			sz := p.DataCanvas(canvases[i][j]).Size()
			if !(sz.X > 10) || !(sz.Y > 10) || math.IsInf(float64(sz.X), 0) || math.IsInf(float64(sz.Y), 0) {
				return inputf("%d×%d pixels leave no room for the data of %d×%d panels", width, height, rows, cols)
			}
		}
	}
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if format == "eps" {
		// vgeps (gonum/plot 0.14) starts the file with "%%!PS-Adobe…";
		// the EPS magic is "%!PS-Adobe", which viewers look for.
		var b bytes.Buffer
		if _, err := c.(io.WriterTo).WriteTo(&b); err != nil {
			return err
		}
		_, err := w.Write(bytes.Replace(b.Bytes(), []byte("%%!PS-Adobe"), []byte("%!PS-Adobe"), 1))
		return err
	}
	if img == nil {
		_, err := c.(io.WriterTo).WriteTo(w)
		return err
	}
	return encodePNG(w, img.Image(), width, height)
}

// encodePNG writes img as a width×height PNG.
func encodePNG(w io.Writer, img image.Image, width, height int) error {
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		// vgimg rounds the canvas size; crop or pad to the exact request.
		out := image.NewRGBA(image.Rect(0, 0, width, height))
		for i := range out.Pix {
			out.Pix[i] = 255
		}
		for y := 0; y < min(height, b.Dy()); y++ {
			for x := 0; x < min(width, b.Dx()); x++ {
				out.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
			}
		}
		return png.Encode(w, out)
	}
	return png.Encode(w, img)
}

// ClassColour returns the colour of class m (red, blue, green, orange,
// purple, … as in the paper's Figure 3; it repeats after 10 classes).
func ClassColour(m int) color.RGBA {
	pal := []color.RGBA{
		{214, 39, 40, 255}, {31, 119, 180, 255}, {44, 160, 44, 255}, {255, 127, 14, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
	return pal[((m%len(pal))+len(pal))%len(pal)]
}

// blend mixes white with c: t = 0 gives white, t = 1 gives c.
func blend(c color.RGBA, t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	mix := func(v uint8) uint8 { return uint8(math.Round(255 - t*(255-float64(v)))) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = font.Length(11)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	return p
}

func finite(name string, xs []float64) error {
	for i, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputf("%s[%d] = %v is not finite", name, i, v)
		}
	}
	return nil
}

func checkLabels(name string, y []int, n, m int) error {
	if len(y) != n {
		return inputf("%d %s for %d points", len(y), name, n)
	}
	for i, v := range y {
		if v < 0 || v >= m {
			return inputf("%s[%d] = %d outside 0…%d", name, i, v, m-1)
		}
	}
	return nil
}

package predict

import (
	"os"
	"path/filepath"

	"github.com/drknn/drknn/internal/errkind"
	"github.com/drknn/drknn/internal/outpath"
)

// CheckOutput checks, before any work, that the predictions can be
// written to out: its folder exists (a missing one failed only at the end,
// naming the hidden temporary file), it is not a folder, it is none of the
// files read — the -csv, -npy or -embeddings file, an image given or
// listed from a folder of -images, an image of the -support folder, a file
// of the model's export — also through a symbolic or hard link
// (os.SameFile), and it is not inside the export folder model (nor a link
// to it) at all. Errors wrap ErrInput and name both paths. model is the
// -model folder, support the -support folder ("" when not given).
func CheckOutput(out string, in Inputs, model, support string) error {
	if out == "" {
		return nil
	}
	if err := outpath.Folder(out); err != nil {
		return errkind.Mark(ErrInput, err)
	}
	var inputs []outpath.Named
	for flag, p := range map[string]string{"-csv": in.CSV, "-npy": in.NPY, "-embeddings": in.Embeddings} {
		if p != "" {
			inputs = append(inputs, outpath.Named{Flag: flag, Path: p})
		}
	}
	images := func(flag string, paths []string) {
		for _, p := range paths {
			inputs = append(inputs, outpath.Named{Flag: flag, Path: p})
			if files, err := ExpandImages([]string{p}); err == nil {
				for _, f := range files {
					if f != p {
						inputs = append(inputs, outpath.Named{Flag: flag, Path: f})
					}
				}
			}
		}
	}
	images("-images", in.Images)
	if support != "" {
		images("-support", []string{support})
	}
	var protected []outpath.Named
	if model != "" {
		protected = append(protected, outpath.Named{Flag: "-model", Path: model})
		// Its files may be links to files elsewhere: those are inputs too.
		if entries, err := os.ReadDir(model); err == nil {
			for _, e := range entries {
				inputs = append(inputs, outpath.Named{Flag: "-model", Path: filepath.Join(model, e.Name())})
			}
		}
	}
	return errkind.Mark(ErrInput, outpath.NotInput(outpath.Named{Flag: "-out", Path: out}, inputs, protected))
}

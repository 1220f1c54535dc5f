// Command drknn-predict classifies new inputs with a model exported by
// drknn-train (RUN/export of a protocol fit run, or RUN/repeats/NN/export).
//
//	drknn-predict -model DIR (-images PATH… | -csv FILE | -npy X.npy | -embeddings Q.npy)
//	              [-k K] [-method drknn|drknn_truncated|embedding_knn|kernel_smoothing]
//	              [-format csv|text|json] [-out FILE] [-invert=true|false]
//	drknn-predict -model DIR -support DIR [-classes A,B,…] (-images PATH… | …) […]
//
// Inputs are prepared as the model's training samples were (predict.Model
// PredictFiles: image files and folders, CSV columns by header name, .npy
// samples, or embeddings). The output is CSV by default —
// input,predicted,<one probability column per class name> — on standard
// output or in -out FILE (written through a temporary name; refused before
// any work when its folder is missing, when it is one of the inputs or the
// export's files, also through a link, or inside the export folder:
// predict.CheckOutput). An input that
// cannot be read gets a row with an empty prediction and a line on
// standard error, the others are classified, and the exit status is 1;
// errors with the model or the options exit 2 with one line. Ctrl-C or
// SIGTERM stops the run between rows, images, the network's batches,
// chunks of queries and the phases of a -support fit (its one LFD solve
// runs to its end), writes nothing (a previous -out file is left as it
// was) and exits 130.
//
// With -support DIR, -model is an embedding exported by a transfer run
// (protocol transfer, RUN/export) and DIR a new task's support set, one
// sub-folder of images per class: the support images are embedded, the
// LFD is solved on them and the inputs are classified among DIR's classes
// (predict.LoadEmbedding, Embedding.FitFolder). Support and query images
// are prepared alike (-invert applies to both) and listed by the same rule
// as -images folders (the image-folder reader's: hidden and non-image
// files skipped). Classes are the support folder's sub-folders sorted by
// name, or in the order -classes gives; class ties go to the lowest
// index, so a transfer run's predictions on its task t are reproduced
// with -classes set to results.json's episodes[t].class_names.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/predict"
)

const usage = "usage: drknn-predict -model DIR [-support DIR [-classes A,B,…]] (-images PATH… | -csv FILE | -npy X.npy | -embeddings Q.npy) [-k K] [-method drknn|drknn_truncated|embedding_knn|kernel_smoothing] [-format csv|text|json] [-out FILE]"

func main() { cli.Main("drknn-predict", run) }

// failedInputs reports inputs that could not be classified (exit status 1;
// everything else that stops the command is bad usage or input, status 2).
type failedInputs struct{ failed, total int }

func (e failedInputs) Error() string {
	return fmt.Sprintf("%d of %d inputs could not be classified (each is named above; its output row has no prediction)", e.failed, e.total)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := predictCmd(ctx, args, stdout, stderr)
	var fi failedInputs
	if errors.Is(err, context.Canceled) {
		// exit status 130 (cli.Code), as drknn-train's
		return fmt.Errorf("interrupted: %w; nothing written", err)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.As(err, &fi) {
		return cli.Usage(err)
	}
	return err
}

func predictCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-predict", flag.ContinueOnError)
	var dir string
	fs.StringVar(&dir, "model", "", "export folder written by drknn-train (RUN/export, or RUN/repeats/NN/export)")
	fs.StringVar(&dir, "export", "", "the same as -model")
	image := fs.String("images", "", "image file or folder to classify (more may follow the flags)")
	support := fs.String("support", "", "a new task's support set, DIR/<class>/<images>, for an embedding exported by a transfer run (-model)")
	classes := fs.String("classes", "", "with -support: the class folders' names in label order, comma-separated (default: sorted by name); class ties go to the lowest index, so a transfer run's task t is reproduced with its order, results.json episodes[t].class_names")
	var in predict.Inputs
	fs.StringVar(&in.CSV, "csv", "", "CSV of feature rows to classify")
	fs.StringVar(&in.CSV, "features", "", "the same as -csv")
	fs.StringVar(&in.NPY, "npy", "", ".npy of samples to classify (n×F, n×H×W, n×C×H×W or n×H×W×C)")
	fs.StringVar(&in.Embeddings, "embeddings", "", "nq×d float64 .npy of embeddings to classify")
	k := fs.Int("k", 0, "neighbours (default: the model's k)")
	method := fs.String("method", "drknn", "classifier: "+strings.Join(predict.Methods(), ", "))
	format := fs.String("format", "csv", "output format: csv, text or json")
	outPath := fs.String("out", "", "write the output to this file instead of standard output")
	invert := fs.Bool("invert", false, "invert image polarity (1 − v) of a built-in data set's model; default: on for Omniglot models only; refused for image-folder and NumPy models")
	// Flags and paths may be mixed: parse again after each non-flag argument.
	var paths []string
	for rest := args; ; rest = fs.Args()[1:] {
		if err := cli.Parse(fs, rest, usage, stderr); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
	}
	kSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "invert":
			in.Invert = invert
		case "k":
			kSet = true
		}
	})
	if *image != "" {
		in.Images = append([]string{*image}, paths...)
	} else if len(paths) > 0 {
		return fmt.Errorf("unexpected argument %q (image paths follow -images); %s", paths[0], usage)
	}
	f := predict.Format(*format)
	switch {
	case dir == "":
		return fmt.Errorf("-model is required; %s", usage)
	case kSet && *k < 1:
		return fmt.Errorf("-k %d: want ≥ 1 (leave -k out for the model's own k)", *k)
	case f != predict.CSV && f != predict.Text && f != predict.JSON:
		return fmt.Errorf("-format %q: want csv, text or json", *format)
	}
	if err := in.Check(); err != nil {
		return fmt.Errorf("%v; %s", err, usage)
	}
	var order []string
	if *classes != "" {
		if *support == "" {
			return fmt.Errorf("-classes orders the class folders of -support, which is not given; %s", usage)
		}
		for _, c := range strings.Split(*classes, ",") {
			if c = strings.TrimSpace(c); c == "" {
				return fmt.Errorf("-classes %q: an empty class name", *classes)
			}
			order = append(order, c)
		}
	}
	// Before any work: an -out that is an input, or inside the model's
	// export, would destroy it; one in a missing folder failed at the end.
	if err := predict.CheckOutput(*outPath, in, dir, *support); err != nil {
		return err
	}
	var m *predict.Model
	if *support != "" {
		e, err := predict.LoadEmbedding(dir)
		if err != nil {
			return err
		}
		if m, err = e.FitFolderContext(ctx, *support, predict.SupportOptions{Invert: in.Invert, Classes: order}); err != nil {
			return err
		}
	} else {
		e, err := predict.Load(dir)
		if err != nil {
			return err
		}
		m = e.Model
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	preds, err := m.PredictFilesContext(ctx, in, predict.Options{Method: *method, K: *k})
	if err != nil {
		return err
	}
	for _, p := range preds {
		switch {
		case p.Error != "":
			fmt.Fprintf(stderr, "drknn-predict: %s\n", p.Error)
		case p.Warning != "":
			fmt.Fprintf(stderr, "drknn-predict: warning: %s\n", p.Warning)
		}
	}
	var buf bytes.Buffer
	if err := predict.Write(&buf, preds, m.Classes(), f); err != nil {
		return err
	}
	// Interrupted while the output was made: the previous -out stays.
	if err := ctx.Err(); err != nil {
		return err
	}
	if *outPath != "" {
		err = atomicfile.WriteBytes(*outPath, buf.Bytes())
	} else {
		_, err = stdout.Write(buf.Bytes())
	}
	if err != nil {
		return err
	}
	if n := predict.Failed(preds); n > 0 {
		return failedInputs{n, len(preds)}
	}
	return nil
}

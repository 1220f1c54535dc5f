// Command drknn-predict classifies new inputs with a model exported by
// drknn-train (the folder runs/NAME/repeats/NN/export).
//
//	drknn-predict -export DIR (-images FILE… | -embeddings Q.npy | -features ROWS.csv)
//	              [-k K] [-method drknn|drknn_truncated|embedding_knn|kernel_smoothing]
//	              [-format text|csv|json] [-out FILE] [-invert=true|false]
//
// -images takes PNG or JPEG files (decoded by content; the remaining
// arguments after the flags are more image files). They are converted to
// the network's channels (grey luma or RGB), stretched to its H×W by area
// averaging and scaled to [0, 1], as the data set readers do; Omniglot
// models invert the polarity (-invert overrides). -embeddings takes an
// nq×d float64 .npy of embeddings made by the same network (for example
// the export's query_embeddings.npy). -features takes CSV rows of F numbers
// for feature-row models, scaled as the reader scales them (Lung Cancer:
// attribute/3). The work is predict.Load and Model.PredictFiles.
//
// For each input the output gives the predicted class (index and name)
// and the class votes p̃_m. Errors — unreadable or inconsistent export,
// inputs whose shape or channels do not fit the model — give one line on
// standard error and exit status 2.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"

	"github.com/drknn/drknn/cmd/internal/cli"
	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/predict"
)

const usage = "usage: drknn-predict -export DIR (-images FILE… | -embeddings Q.npy | -features ROWS.csv) [-k K] [-method drknn|drknn_truncated|embedding_knn|kernel_smoothing] [-format text|csv|json] [-out FILE]"

func main() { cli.Main("drknn-predict", run) }

// run fails with usage errors only: every failure is bad input (status 2).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := predictCmd(args, stdout, stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return cli.Usage(err)
	}
	return err
}

func predictCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-predict", flag.ContinueOnError)
	exportDir := fs.String("export", "", "export folder written by drknn-train (…/repeats/NN/export)")
	image := fs.String("images", "", "PNG or JPEG file to classify (more files may follow the flags)")
	var in predict.Inputs
	fs.StringVar(&in.Embeddings, "embeddings", "", "nq×d float64 .npy of embeddings to classify")
	fs.StringVar(&in.Features, "features", "", "CSV of feature rows to classify (MLP models)")
	k := fs.Int("k", 0, "neighbours (default: the exported run's k)")
	method := fs.String("method", "drknn", "classifier: "+strings.Join(predict.Methods(), ", "))
	format := fs.String("format", "text", "output format: text, csv or json")
	outPath := fs.String("out", "", "write the output to this file instead of standard output")
	invert := fs.Bool("invert", false, "invert image polarity (1 − v); default: on for Omniglot models only")
	// Flags and image file names may be mixed: parse again after each
	// non-flag argument.
	var files []string
	for rest := args; ; rest = fs.Args()[1:] {
		if err := cli.Parse(fs, rest, usage, stderr); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "invert" {
			in.Invert = invert
		}
	})
	if *image != "" {
		in.Images = append([]string{*image}, files...)
	} else if len(files) > 0 {
		return cli.Usagef("unexpected argument %q (image files follow -images); %s", files[0], usage)
	}
	f := predict.Format(*format)
	switch {
	case *exportDir == "":
		return cli.Usagef("-export is required; %s", usage)
	case *k < 0:
		return cli.Usagef("-k %d: want ≥ 1", *k)
	case f != predict.Text && f != predict.CSV && f != predict.JSON:
		return cli.Usagef("-format %q: want text, csv or json", *format)
	}
	if err := in.Check(); err != nil {
		return cli.Usagef("%v; %s", err, usage)
	}
	e, err := predict.Load(*exportDir)
	if err != nil {
		return err
	}
	preds, err := e.PredictFiles(in, predict.Options{Method: *method, K: *k})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := predict.Write(&buf, preds, e.ClassNames, f); err != nil {
		return err
	}
	if *outPath != "" {
		return atomicfile.WriteBytes(*outPath, buf.Bytes())
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

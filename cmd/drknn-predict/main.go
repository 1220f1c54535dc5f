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
// attribute/3).
//
// For each input the output gives the predicted class (index and name)
// and the class votes p̃_m. Errors — unreadable or inconsistent export,
// inputs whose shape or channels do not fit the model — give one line on
// standard error and exit status 2.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/drknn/drknn/internal/atomicfile"
	"github.com/drknn/drknn/internal/npy"
	"github.com/drknn/drknn/predict"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = "usage: drknn-predict -export DIR (-images FILE… | -embeddings Q.npy | -features ROWS.csv) [-k K] [-method drknn|drknn_truncated|embedding_knn|kernel_smoothing] [-format text|csv|json] [-out FILE]"

func run(args []string, stdout, stderr io.Writer) int {
	if err := predictCmd(args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
		fmt.Fprintln(stderr, "drknn-predict: "+msg)
		return 2
	}
	return 0
}

func predictCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drknn-predict", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	exportDir := fs.String("export", "", "export folder written by drknn-train (…/repeats/NN/export)")
	images := fs.String("images", "", "PNG or JPEG file to classify (more files may follow the flags)")
	embPath := fs.String("embeddings", "", "nq×d float64 .npy of embeddings to classify")
	featPath := fs.String("features", "", "CSV of feature rows to classify (MLP models)")
	k := fs.Int("k", 0, "neighbours (default: the exported run's k)")
	method := fs.String("method", "drknn", "classifier: "+strings.Join(predict.Methods(), ", "))
	format := fs.String("format", "text", "output format: text, csv or json")
	outPath := fs.String("out", "", "write the output to this file instead of standard output")
	invert := fs.Bool("invert", false, "invert image polarity (1 − v); default: on for Omniglot models only")
	// Flags and image file names may be mixed: parse again after each
	// non-flag argument.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(stderr, usage)
				fs.SetOutput(stderr)
				fs.PrintDefaults()
				return err
			}
			return fmt.Errorf("%v; %s", err, usage)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *images != "" {
		files = append([]string{*images}, files...)
	} else if len(files) > 0 {
		return fmt.Errorf("unexpected argument %q (image files follow -images); %s", files[0], usage)
	}
	sources := 0
	for _, s := range []bool{len(files) > 0, *embPath != "", *featPath != ""} {
		if s {
			sources++
		}
	}
	switch {
	case *exportDir == "":
		return fmt.Errorf("-export is required; %s", usage)
	case sources != 1:
		return fmt.Errorf("give exactly one of -images, -embeddings and -features; %s", usage)
	case *k < 0:
		return fmt.Errorf("-k %d: want ≥ 1", *k)
	case set["invert"] && len(files) == 0:
		return errors.New("-invert applies only to -images")
	}
	f := predict.Format(*format)
	if f != predict.Text && f != predict.CSV && f != predict.JSON {
		return fmt.Errorf("-format %q: want text, csv or json", *format)
	}

	e, err := predict.Load(*exportDir)
	if err != nil {
		return err
	}
	var q []float64
	var nq int
	var names []string
	switch {
	case *embPath != "":
		var d int
		q, nq, d, err = npy.ReadMatrix(*embPath, true)
		if err != nil {
			return err
		}
		if d != e.D {
			return fmt.Errorf("%s: embeddings of width %d, the exported model's are %d", *embPath, d, e.D)
		}
	case *featPath != "":
		net, err := e.Net()
		if err != nil {
			return err
		}
		cfg := net.Config()
		if len(cfg.InShape) != 1 {
			return fmt.Errorf("%s: the exported model takes images of shape %v, not feature rows (use -images)", *featPath, cfg.InShape)
		}
		fh, err := os.Open(*featPath)
		if err != nil {
			return err
		}
		x, n, err := predict.ReadFeatureCSV(fh, *featPath, cfg.InShape[0])
		fh.Close()
		if err != nil {
			return err
		}
		if q, err = e.Embed(x, n); err != nil {
			return err
		}
		nq = n
		for i := 0; i < n; i++ {
			names = append(names, fmt.Sprintf("%s:%d", *featPath, i+1))
		}
	default:
		s, err := e.ImageSettings()
		if err != nil {
			return err
		}
		if set["invert"] {
			s.Invert = *invert
		}
		x := make([]float32, 0, len(files)*s.Channels*s.Height*s.Width)
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			v, err := predict.Image(data, s)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			x = append(x, v...)
		}
		nq = len(files)
		if q, err = e.Embed(x, nq); err != nil {
			return err
		}
		names = files
	}
	preds, err := e.Classify(q, nq, names, predict.Options{Method: *method, K: *k})
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

// Command drknn-data downloads the data sets of the Dr.k-NN experiments from
// their upstream locations into the layout the datasets readers read, and
// verifies what is there.
//
//	drknn-data get NAME... [-dir DIR] [-base-url URL] [-retries N] [-keep-archives]
//	drknn-data verify [-dir DIR]
//	drknn-data list
//
// NAME is mnist, cifar10, omniglot, lung-cancer, covid-ct or all. Exit
// status: 0 success, 1 failure, 2 bad usage.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/drknn/drknn/datasets"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := datasets.RunDataCommand(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

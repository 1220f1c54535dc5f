//go:build unix

package experiment

import (
	"fmt"
	"math"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/drknn/drknn/datasets"
	"github.com/drknn/drknn/predict"
)

// BenchmarkFitMNIST measures protocol fit at scale (README "Fit at n =
// 5,000"): MNIST t10k split into its first n images (training) and its
// last 5,000 (test), the shipped fit-images.yaml settings, the test-time
// LFD solved whole (block=0) or in blocks of at most block points. One fit
// per benchmark iteration; it reports the test accuracy and log-loss of
// Dr.k-NN, the seconds of each part of the fit, predict time per sample
// (embedding + vote, batches of 1,000) and the Go heap's peak. Run:
//
//	go test -run '^$' -bench 'FitMNIST/n=5000' -benchtime 1x -timeout 1h ./experiment
//	go test -run '^$' -bench 'FitMNIST/n=2000' -benchtime 1x -timeout 1h ./experiment
//
// (the n = 2000 cases compare the blocked LFD with the exact one).
func BenchmarkFitMNIST(b *testing.B) {
	for _, c := range []struct{ n, block int }{{2000, 0}, {2000, 500}, {2000, 1000}, {5000, 1000}, {5000, 0}} {
		b.Run(fmt.Sprintf("n=%d/block=%d", c.n, c.block), func(b *testing.B) {
			cfg, err := LoadConfig("../configs/fit-images.yaml", []string{"dataset=mnist", "data_dir=", "data.size=0", fmt.Sprintf("eval.lfd_block=%d", c.block)})
			if err != nil {
				b.Fatal(err)
			}
			d, err := LoadData(cfg)
			if err != nil {
				b.Fatal(err)
			}
			const test = 5000
			d.Test = make([]bool, d.Len())
			for i := d.Len() - test; i < d.Len(); i++ {
				d.Test[i] = true
			}
			keep := make([]int, 0, c.n+test)
			for i := 0; i < c.n; i++ {
				keep = append(keep, i)
			}
			for i := d.Len() - test; i < d.Len(); i++ {
				keep = append(keep, i)
			}
			d = d.Subset(keep)
			for i := 0; i < b.N; i++ {
				var ms runtime.MemStats
				runtime.GC()
				stop := make(chan struct{})
				peak := make(chan uint64)
				go func() { // sample the heap while the fit runs
					var top uint64
					t := time.NewTicker(50 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							peak <- top
							return
						case <-t.C:
							runtime.ReadMemStats(&ms)
							top = max(top, ms.HeapInuse)
						}
					}
				}()
				fcfg, fd := mustForFit(b, cfg, d)
				trainIdx, testIdx := fd.Split()
				t0, c0 := time.Now(), cpuSeconds()
				fm, err := FitAll(b.Context(), fcfg, fd, trainIdx, testIdx, Options{}, nil)
				fitSec, fitCPU := time.Since(t0).Seconds(), cpuSeconds()-c0
				close(stop)
				heap := <-peak
				if err != nil {
					b.Fatal(err)
				}
				sum := fm.Summary
				b.ReportMetric(sum.Scores["drknn"].Accuracy, "accuracy")
				b.ReportMetric(sum.Scores["drknn"].LogLoss, "log-loss")
				b.ReportMetric(sum.Scores["embedding_knn"].Accuracy, "knn-accuracy")
				b.ReportMetric(fitSec, "fit-s")
				b.ReportMetric(fitCPU, "fit-cpu-s")
				for _, part := range []string{"train", "embed", "lfd"} {
					b.ReportMetric(sum.Seconds[part], part+"-s")
				}
				b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MB")
				b.ReportMetric(sum.LFDRelGap, "lfd-relgap")
				// Predict through the Model API: 1,000 test images embedded
				// and voted on.
				x := fd.Subset(testIdx[:1000]).X
				t0, c0 = time.Now(), cpuSeconds()
				q, err := fm.Model.Embed(x, 1000)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := fm.Model.Classify(q, 1000, nil, predict.Options{}); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(time.Since(t0).Seconds()/1000*1e6, "predict-µs/sample")
				b.ReportMetric((cpuSeconds()-c0)/1000*1e6, "predict-cpu-µs/sample")
				// The test-time LFD alone, again on the trained embedding.
				m := fm.Model
				t0, c0 = time.Now(), cpuSeconds()
				if _, err := SolveLFD(fcfg, m.TrainEmb, m.N, m.D, m.TrainLabels, sum.Theta); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(time.Since(t0).Seconds(), "lfd-again-s")
				b.ReportMetric(cpuSeconds()-c0, "lfd-cpu-s")
			}
		})
	}
}

func mustForFit(b *testing.B, cfg Config, d *datasets.Dataset) (Config, *datasets.Dataset) {
	cfg, d, err := ForData(cfg, d)
	if err != nil {
		b.Fatal(err)
	}
	tr, _ := d.Split()
	if cfg, err = forFit(cfg, d, tr); err != nil {
		b.Fatal(err)
	}
	return cfg, d
}

// cpuSeconds is the CPU time (user + system) of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

package experiment

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/train"
	"github.com/schollz/progressbar/v3"
)

// progress is the progress bar of a run: steps over all repeats, with the
// latest risk and mean certified gap. A nil writer shows nothing.
type progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, total, repeats int) *progress {
	if w == nil {
		return &progress{}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("training"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
	return &progress{bar: bar}
}

func (p *progress) step(r int, st train.StepStats) {
	if p == nil || p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Describe(fmt.Sprintf("repeat %d step %d risk %.4f gap %.1e", r+1, st.Step, st.Risk, st.MeanRelGap))
	p.bar.Add(1)
}

func (p *progress) finish() {
	if p == nil || p.bar == nil {
		return
	}
	p.bar.Finish()
}

// versions names what produced an export.
func versions() map[string]string {
	v := map[string]string{"go": runtime.Version(), "blas": model.BLAS,
		"model_format": fmt.Sprint(model.FormatVersion), "export_format": fmt.Sprint(ExportFormat)}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v["drknn"] = bi.Main.Version
		for _, dep := range bi.Deps {
			switch dep.Path {
			case "gorgonia.org/gorgonia", "gonum.org/v1/gonum":
				v[dep.Path] = dep.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v["commit"] = s.Value
			}
		}
	}
	return v
}

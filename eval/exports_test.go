package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drknn/drknn/internal/npy"
)

// export is one repeat's export written by drknn-train (repeats/NN/export).
type export struct {
	x, q   []float64
	y, yq  []int
	p      []float64
	n, d   int
	nq, m  int
	k      int
	tau    float64
	folder string
}

func readExport(dir string) (*export, error) {
	var man struct {
		Config struct {
			Ways int `json:"ways"`
			Eval struct {
				K   int     `json:"k"`
				Tau float64 `json:"tau"`
			} `json:"eval"`
		} `json:"config"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	e := &export{m: man.Config.Ways, k: man.Config.Eval.K, tau: man.Config.Eval.Tau, folder: dir}
	ints := func(name string) ([]int, error) {
		v, err := npy.ReadInt64(filepath.Join(dir, name))
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out, err
	}
	if e.x, e.n, e.d, err = npy.ReadMatrix(filepath.Join(dir, "train_embeddings.npy"), true); err != nil {
		return nil, err
	}
	if e.q, e.nq, _, err = npy.ReadMatrix(filepath.Join(dir, "query_embeddings.npy"), true); err != nil {
		return nil, err
	}
	if e.p, _, _, err = npy.ReadMatrix(filepath.Join(dir, "lfd_weights.npy"), true); err != nil {
		return nil, err
	}
	if e.y, err = ints("train_labels.npy"); err != nil {
		return nil, err
	}
	if e.yq, err = ints("query_labels.npy"); err != nil {
		return nil, err
	}
	return e, nil
}

// TestExportsTruncation evaluates Dr.k-NN and truncated Dr.k-NN on the
// exports of drknn-train runs: every folder RUN below $DRKNN_EXPORTS with
// RUN/repeats/NN/export. Per run it reports the mean accuracy of both (and
// of truncation with GuardFloor), how many repeats fell back to the full
// vote, the fractions of training points in Ξ̃ and kept, Dr.k-NN's
// log-loss and ECE, and on training sets of 1,000 points or more the
// prediction time per query on one goroutine (best of 3). It fails when
// truncated Dr.k-NN is more than 0.01 below Dr.k-NN. Make the exports with
// validation seeds (1001…), e.g.
//
//	drknn-train -config configs/mnist.yaml -set ways=2 -set shots=10 \
//	    -set seed=1001 -set repeats=5 -out $DRKNN_EXPORTS/mnist-2w10s
//	DRKNN_EXPORTS=… go test -run TestExportsTruncation -v ./eval/
func TestExportsTruncation(t *testing.T) {
	root := os.Getenv("DRKNN_EXPORTS")
	if root == "" {
		t.Skip("set DRKNN_EXPORTS to a folder of drknn-train runs")
	}
	runs, err := filepath.Glob(filepath.Join(root, "*", "repeats"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no runs below %s (%v)", root, err)
	}
	sort.Strings(runs)
	var b strings.Builder
	b.WriteString("| run | n | drknn | drknn_truncated | Δ | fell back | in Ξ̃ | kept | floor: accuracy (kept) | drknn log-loss / ECE | predict µs/query: drknn / truncated |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range runs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(run), "results.json")); err != nil {
			continue // still running
		}
		dirs, _ := filepath.Glob(filepath.Join(run, "*", "export"))
		sort.Strings(dirs)
		var acc, accTr, accFloor, inTau, kept, keptFloor, ll, ece, tPlain, tTrunc float64
		fell, used, n := 0, 0, 0
		for _, dir := range dirs {
			e, err := readExport(dir)
			if err != nil {
				t.Fatal(err)
			}
			used, n = used+1, e.n
			score := func(c Voter) Scores {
				s, _, _, err := EvaluateScores(c, e.x, e.n, e.d, e.y, e.m, e.q, e.nq, e.yq)
				if err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				return s
			}
			plain := &DrKNN{K: e.k, P: e.p, Workers: 1}
			s := score(plain)
			acc, ll, ece = acc+s.Accuracy, ll+s.LogLoss, ece+s.ECE
			tr := &TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p, Workers: 1}, Tau: e.tau}
			accTr += score(tr).Accuracy
			info := tr.Truncation()
			inTau += float64(info.ByTau) / float64(e.n)
			kept += float64(info.Kept) / float64(e.n)
			if info.FellBack {
				fell++
			}
			fl := &TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p}, Tau: e.tau, Guard: GuardFloor}
			accFloor += score(fl).Accuracy
			keptFloor += float64(fl.Truncation().Kept) / float64(e.n)
			if e.n >= 1000 {
				tPlain += predictMicros(plain, e.q, e.nq)
				tTrunc += predictMicros(tr, e.q, e.nq)
			}
		}
		if used == 0 {
			continue
		}
		u := float64(used)
		times := "–"
		if n >= 1000 {
			times = fmt.Sprintf("%.0f / %.0f", tPlain/u, tTrunc/u)
		}
		name := filepath.Base(filepath.Dir(run))
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %+.3f | %d of %d | %.2f | %.2f | %.3f (%.2f) | %.3f / %.3f | %s |\n",
			name, n, acc/u, accTr/u, (accTr-acc)/u, fell, used, inTau/u, kept/u, accFloor/u, keptFloor/u, ll/u, ece/u, times)
		if n >= 1000 {
			tauSweep(t, name, dirs)
		}
		if accTr/u < acc/u-0.01 {
			t.Errorf("%s: truncated Dr.k-NN %.3f is more than 0.01 below Dr.k-NN %.3f", name, accTr/u, acc/u)
		}
	}
	t.Log("\n" + b.String())
}

// predictMicros is the best of three timings of c.Predict on the nq
// queries, in µs per query.
func predictMicros(c Classifier, q []float64, nq int) float64 {
	best := math.Inf(1)
	for r := 0; r < 3; r++ {
		start := time.Now()
		if _, err := c.Predict(q, nq); err != nil {
			return math.NaN()
		}
		best = math.Min(best, float64(time.Since(start).Microseconds())/float64(nq))
	}
	return best
}

// tauSweep logs, for a large training set, truncated Dr.k-NN at lower
// thresholds τ: accuracy, fraction kept, fall-backs and prediction time.
func tauSweep(t *testing.T, name string, dirs []string) {
	for _, tau := range []float64{0.5, 0.2, 0.1} {
		var acc, kept, micros float64
		fell := 0
		for _, dir := range dirs {
			e, err := readExport(dir)
			if err != nil {
				t.Fatal(err)
			}
			tr := &TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p, Workers: 1}, Tau: tau}
			a, _, err := Evaluate(tr, e.x, e.n, e.d, e.y, e.m, e.q, e.nq, e.yq)
			if err != nil {
				t.Fatal(err)
			}
			info := tr.Truncation()
			acc += a
			kept += float64(info.Kept) / float64(e.n)
			if info.FellBack {
				fell++
			}
			micros += predictMicros(tr, e.q, e.nq)
		}
		u := float64(len(dirs))
		t.Logf("%s τ = %.1f: truncated accuracy %.3f, kept %.1f%%, fell back %d of %d, %.0f µs/query", name, tau, acc/u, 100*kept/u, fell, len(dirs), micros/u)
	}
}

// BenchmarkExportPredict times Predict on one drknn-train export
// ($DRKNN_EXPORT, a repeats/NN/export folder), on one goroutine: plain
// Dr.k-NN and truncated Dr.k-NN at the export's τ and at lower τ, per
// query. For the README's n = 2,000 figures:
//
//	drknn-train -config configs/mnist.yaml -set ways=5 -set shots=400 -set seed=1001 \
//	    -set repeats=2 -set train.miniset_size=50 -out /tmp/n2000
//	DRKNN_EXPORT=/tmp/n2000/repeats/01/export go test ./eval -run '^$' -bench ExportPredict -count 5
func BenchmarkExportPredict(b *testing.B) {
	dir := os.Getenv("DRKNN_EXPORT")
	if dir == "" {
		b.Skip("set DRKNN_EXPORT to a drknn-train export folder")
	}
	e, err := readExport(dir)
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, c Voter) {
		if err := c.Fit(e.x, e.n, e.d, e.y, e.m); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := c.Predict(e.q, e.nq); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*e.nq), "µs/query")
		})
	}
	run("drknn", &DrKNN{K: e.k, P: e.p, Workers: 1})
	for _, tau := range []float64{e.tau, 0.5, 0.2} {
		tr := &TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p, Workers: 1}, Tau: tau}
		if err := tr.Fit(e.x, e.n, e.d, e.y, e.m); err != nil {
			b.Fatal(err)
		}
		info := tr.Truncation()
		run(fmt.Sprintf("truncated_tau=%g_kept=%d_of_%d", tau, info.Kept, info.N), tr)
	}
}

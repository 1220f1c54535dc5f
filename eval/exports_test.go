package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
// RUN/repeats/NN/export. It reports per run the mean accuracy of both, the
// fraction of training points kept (by τ alone and with the per-class
// floor), and fails when truncated Dr.k-NN is more than 0.01 below Dr.k-NN.
// Make the exports with validation seeds (1001…), e.g.
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
	b.WriteString("| run | repeats | drknn | drknn_truncated | Δ | kept by τ | kept | truncated, no floor (fails) | truncated, log M |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range runs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(run), "results.json")); err != nil {
			continue // still running
		}
		dirs, _ := filepath.Glob(filepath.Join(run, "*", "export"))
		sort.Strings(dirs)
		var acc [4]float64
		var fracTau, fracKept float64
		strictFails, used := 0, 0
		for _, dir := range dirs {
			e, err := readExport(dir)
			if err != nil {
				t.Fatal(err)
			}
			used++
			score := func(c Voter) float64 {
				a, _, err := Evaluate(c, e.x, e.n, e.d, e.y, e.m, e.q, e.nq, e.yq)
				if err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				return a
			}
			acc[0] += score(&DrKNN{K: e.k, P: e.p})
			tr := &TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p}, Tau: e.tau}
			acc[1] += score(tr)
			n, byTau, kept := tr.Truncation()
			fracTau += float64(byTau) / float64(n)
			fracKept += float64(kept) / float64(n)
			strict := &TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p}, Tau: e.tau, Strict: true}
			if a, _, err := Evaluate(strict, e.x, e.n, e.d, e.y, e.m, e.q, e.nq, e.yq); err != nil {
				strictFails++
			} else {
				acc[2] += a
			}
			acc[3] += score(&TruncatedDrKNN{DrKNN: DrKNN{K: e.k, P: e.p}, Tau: e.tau, Norm: NormLogM})
		}
		if used == 0 {
			continue
		}
		u := float64(used)
		strictCell := "–"
		if strictFails < used {
			strictCell = fmt.Sprintf("%.3f", acc[2]/float64(used-strictFails))
		}
		name := filepath.Base(filepath.Dir(run))
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %+.3f | %.2f | %.2f | %s (%d) | %.3f |\n", name, used, acc[0]/u, acc[1]/u,
			(acc[1]-acc[0])/u, fracTau/u, fracKept/u, strictCell, strictFails, acc[3]/u)
		if acc[1]/u < acc[0]/u-0.01 {
			t.Errorf("%s: truncated Dr.k-NN %.3f is more than 0.01 below Dr.k-NN %.3f", name, acc[1]/u, acc[0]/u)
		}
	}
	t.Log("\n" + b.String())
}

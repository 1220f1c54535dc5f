// Command transfergeom is a diagnostic of protocol transfer's base-class
// training (README, CIFAR-10 transfer results): it trains the embedding of
// a transfer config (-obj drknn or proto, -steps, -set overrides as for
// drknn-train) and every -every steps prints the geometry of the embedding
// of the validation part and of 500 fixed training samples, both in
// inference mode:
//
//	g_w, g_b   ∂risk/∂cost × the mean cost, averaged over within-class and
//	           between-class pairs (10 five-class episodes of 10 samples)
//	corr(g,c)  the correlation of that gradient with the cost
//	|e|        mean embedding norm; dead: dimensions with zero variance
//	PR         participation ratio (tr C)²/‖C‖²_F of the covariance
//	W/B        mean within-class ÷ mean between-class distance
//	cv         coefficient of variation of the pairwise distances
//	nn/mean    mean nearest-neighbour distance ÷ mean distance
//	1nn        leave-one-out 1-NN accuracy among the samples
//	risk       worst-case risk of 20 five-class episodes of 10 samples
//	           (the config's training ϑ, metric and normalisation)
//
// go run ./internal/tools/transfergeom -config configs/cifar10-transfer.yaml -steps 300 -every 50
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"

	"github.com/drknn/drknn/experiment"
	"github.com/drknn/drknn/model"
	"github.com/drknn/drknn/optlayer"
	"github.com/drknn/drknn/optlayer/gop"
	"github.com/drknn/drknn/train"
)

type sets []string

func (s *sets) String() string     { return strings.Join(*s, ",") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var over sets
	cfgPath := flag.String("config", "configs/cifar10-transfer.yaml", "")
	steps := flag.Int("steps", 300, "")
	every := flag.Int("every", 50, "")
	obj := flag.String("obj", "drknn", "")
	flag.Var(&over, "set", "")
	flag.Parse()
	cfg, err := experiment.LoadConfig(*cfgPath, over)
	must(err)
	d, err := experiment.LoadTransferData(cfg)
	must(err)
	split, err := experiment.TransferSplitOf(cfg, d)
	must(err)
	net, err := model.New(cfg.NetConfig(d.Shape), cfg.Seed)
	must(err)
	s := cfg.EpisodicSettings(*obj)
	s.Steps = *steps
	tr, err := train.NewEpisodicTrainer(net, d, split.Base, split.TrainIndex, s)
	must(err)
	ls := cfg.EpisodicSettings("drknn").LFD
	// a fixed subset of training samples (500) for a train-vs-val comparison
	rng := rand.New(rand.NewSource(7))
	tri := append([]int(nil), split.TrainIndex...)
	rng.Shuffle(len(tri), func(i, j int) { tri[i], tri[j] = tri[j], tri[i] })
	tri = tri[:500]
	sort.Ints(tri)
	report := func(step int, lossAvg float64) {
		v := stats(net, d.X, d.Labels, d.SampleSize(), split.ValIndex, ls)
		t := stats(net, d.X, d.Labels, d.SampleSize(), tri, ls)
		fmt.Printf("step %4d loss %.4f | val: %s | train(inf): %s\n", step, lossAvg, v, t)
	}
	report(0, math.NaN())
	var sum float64
	var cnt int
	for st := 1; st <= *steps; st++ {
		r, err := tr.Step()
		must(err)
		sum += r.Risk
		cnt++
		if st%*every == 0 {
			report(st, sum/float64(cnt))
			sum, cnt = 0, 0
		}
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func stats(net *model.Net, X []float32, labels []int, size int, idx []int, ls gop.Settings) string {
	x := make([]float32, 0, len(idx)*size)
	lab := make([]int, len(idx))
	for r, i := range idx {
		x = append(x, X[i*size:(i+1)*size]...)
		lab[r] = labels[i]
	}
	n := len(idx)
	e, err := net.Embed(x, n)
	must(err)
	dim := net.Dim()
	// norms, dead dims, participation ratio
	var norm float64
	mean := make([]float64, dim)
	for i := 0; i < n; i++ {
		var s float64
		for k := 0; k < dim; k++ {
			v := e[i*dim+k]
			s += v * v
			mean[k] += v / float64(n)
		}
		norm += math.Sqrt(s) / float64(n)
	}
	cov := make([]float64, dim*dim)
	for i := 0; i < n; i++ {
		for a := 0; a < dim; a++ {
			da := e[i*dim+a] - mean[a]
			if da == 0 {
				continue
			}
			for b := 0; b < dim; b++ {
				cov[a*dim+b] += da * (e[i*dim+b] - mean[b]) / float64(n)
			}
		}
	}
	var tr, fr float64
	dead := 0
	for a := 0; a < dim; a++ {
		tr += cov[a*dim+a]
		if cov[a*dim+a] < 1e-12 {
			dead++
		}
		for b := 0; b < dim; b++ {
			fr += cov[a*dim+b] * cov[a*dim+b]
		}
	}
	pr := tr * tr / fr
	// distances
	dist := make([]float64, n*n)
	var win, btw float64
	var nw, nb int
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < dim; k++ {
				t := e[i*dim+k] - e[j*dim+k]
				s += t * t
			}
			dist[i*n+j] = math.Sqrt(s)
			if i == j {
				continue
			}
			if lab[i] == lab[j] {
				win += dist[i*n+j]
				nw++
			} else {
				btw += dist[i*n+j]
				nb++
			}
		}
	}
	win /= float64(nw)
	btw /= float64(nb)
	// LOO 1-NN
	ok := 0
	for i := 0; i < n; i++ {
		best, bj := math.Inf(1), -1
		for j := 0; j < n; j++ {
			if j != i && dist[i*n+j] < best {
				best, bj = dist[i*n+j], j
			}
		}
		if lab[bj] == lab[i] {
			ok++
		}
	}
	// coefficient of variation of off-diagonal distances; nearest-neighbour distance / mean distance
	var m1, m2, nn float64
	for i := 0; i < n; i++ {
		best := math.Inf(1)
		for j := 0; j < n; j++ {
			if i != j {
				v := dist[i*n+j]
				m1 += v
				m2 += v * v
				best = math.Min(best, v)
			}
		}
		nn += best / float64(n)
	}
	np := float64(n * (n - 1))
	m1 /= np
	m2 /= np
	cv := math.Sqrt(m2-m1*m1) / m1
	// held-out risk: 20 episodes of 5 classes × 10 samples
	byClass := map[int][]int{}
	for r := range idx {
		byClass[lab[r]] = append(byClass[lab[r]], r)
	}
	var classes []int
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Ints(classes)
	rng := rand.New(rand.NewSource(11))
	var risk float64
	const eps = 20
	for ep := 0; ep < eps; ep++ {
		rows, ml := drawEpisode(rng, e, dim, byClass, classes)
		ix := make([]int, len(ml))
		for i := range ix {
			ix[i] = i
		}
		res, err := gop.WorstCaseRisk(rows, len(ml), dim, []gop.MiniSet{{Index: ix, Labels: ml}}, ls)
		must(err)
		risk += res.Risk / eps
	}
	gs := gradSplit(e, dim, byClass, classes, ls)
	return gs + fmt.Sprintf(" |e| %.3g dead %d PR %.1f W/B %.3f cv %.3f nn/mean %.3f 1nn %.3f risk %.3f",
		norm, dead, pr, win/btw, cv, nn/m1, float64(ok)/float64(n), risk)
}

// drawEpisode draws a five-class episode of 10 embedded samples per class
// (the first five of classes): their rows of e and labels 0…4.
func drawEpisode(rng *rand.Rand, e []float64, dim int, byClass map[int][]int, classes []int) (rows []float64, labels []int) {
	for ci, c := range classes[:5] {
		rs := byClass[c]
		for _, q := range rng.Perm(len(rs))[:10] {
			rows = append(rows, e[rs[q]*dim:(rs[q]+1)*dim]...)
			labels = append(labels, ci)
		}
	}
	return rows, labels
}

// gradSplit: ∂risk/∂c (scale-free: × mean cost) on 10 episodes: mean over
// within-class pairs, over cross-class pairs, and its correlation with the cost.
func gradSplit(e []float64, dim int, byClass map[int][]int, classes []int, ls gop.Settings) string {
	rng := rand.New(rand.NewSource(13))
	var gw, gb, corr float64
	const eps = 10
	for ep := 0; ep < eps; ep++ {
		rows, ml := drawEpisode(rng, e, dim, byClass, classes)
		n := len(ml)
		c, err := optlayer.Costs(rows, n, dim, ls.Metric)
		must(err)
		raw := append([]float64(nil), c...)
		mean, err := optlayer.NormalizeCosts(c)
		must(err)
		st := ls.Solver
		res, err := optlayer.Solve(&optlayer.Problem{N: n, Cost: c, Labels: ml, Theta: ls.Theta}, &st)
		must(err)
		gp := make([]float64, res.M*n)
		for i := 0; i < n; i++ {
			b := 0
			for m := 1; m < res.M; m++ {
				if res.PReg[m*n+i] > res.PReg[b*n+i] {
					b = m
				}
			}
			gp[b*n+i] = -1
		}
		g, err := res.VJP(gp)
		must(err)
		optlayer.NormalizeCostsVJP(g, c, mean)
		var sw, sb float64
		var nw, nb int
		var mg, mc float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i == j {
					continue
				}
				v := g[i*n+j] * mean
				mg += v
				mc += raw[i*n+j]
				if ml[i] == ml[j] {
					sw += v
					nw++
				} else {
					sb += v
					nb++
				}
			}
		}
		np := float64(n * (n - 1))
		mg /= np
		mc /= np
		var sgc, sgg, scc float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j {
					a, b := g[i*n+j]*mean-mg, raw[i*n+j]-mc
					sgc += a * b
					sgg += a * a
					scc += b * b
				}
			}
		}
		gw += sw / float64(nw) / eps
		gb += sb / float64(nb) / eps
		corr += sgc / math.Sqrt(sgg*scc) / eps
	}
	return fmt.Sprintf("g_w %+.2e g_b %+.2e corr(g,c) %+.2f", gw, gb, corr)
}

package train

import (
	"math"
	"testing"

	"github.com/drknn/drknn/datasets"
)

// Gathering embeds only the step's mini-sets (2 × 6 = 12 rows of 60
// samples) and must give the ungathered step's risk and gradient: the same
// risks and, after several Adam steps, the same weights up to rounding.
func TestTrainerGatherMatchesFullEmbedding(t *testing.T) {
	d, err := datasets.SyntheticImages(datasets.SyntheticSettings{Classes: 2, PerClass: 60, Size: 16, Noise: 0.3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := datasets.NewEpisode(d, datasets.EpisodeSettings{Ways: 2, Shots: 30, Queries: 10, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	s := trainSettings(6, 1)
	s.Minisets = 2
	full, trFull := newTestTrainer(t, d, ep, s)
	s.Gather = true
	gathered, trGath := newTestTrainer(t, d, ep, s)
	if trGath.rows != 12 || trFull.rows != 60 {
		t.Fatalf("input rows %d gathered, %d full; want 12 and 60", trGath.rows, trFull.rows)
	}
	finish(t, trFull)
	finish(t, trGath)
	hf, hg := trFull.History(), trGath.History()
	for i := range hf {
		if math.Abs(hf[i].Risk-hg[i].Risk) > 1e-9*math.Max(1, math.Abs(hf[i].Risk)) {
			t.Fatalf("step %d: risk %v gathered, %v full", i+1, hg[i].Risk, hf[i].Risk)
		}
	}
	if hf[0].Risk == hf[len(hf)-1].Risk {
		t.Fatal("the weights never changed: the comparison proves nothing")
	}
	wf, wg := weightsOf(full), weightsOf(gathered)
	for i := range wf {
		if math.Abs(wf[i]-wg[i]) > 1e-7*math.Max(1, math.Abs(wf[i])) {
			t.Fatalf("weight %d: %v gathered, %v full", i, wg[i], wf[i])
		}
	}
}

// With augmentation the gathered rows are transformed; the run is still a
// function of the seed (two runs agree bit for bit).
func TestTrainerGatherAugment(t *testing.T) {
	d, ep := trainFixture(t, 2)
	s := augSettings(3)
	s.Gather, s.MinisetSize = true, 4
	a, tra := newTestTrainer(t, d, ep, s)
	b, trb := newTestTrainer(t, d, ep, s)
	finish(t, tra)
	finish(t, trb)
	if tra.rows != s.Minisets*4 {
		t.Fatalf("rows %d", tra.rows)
	}
	wa, wb := weightsOf(a), weightsOf(b)
	for i := range wa {
		if wa[i] != wb[i] {
			t.Fatalf("weight %d differs between identical runs", i)
		}
	}
}

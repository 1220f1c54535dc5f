package eval

import (
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestPCAKnownDecomposition(t *testing.T) {
	// x_i = μ + a_i v1 + b_i v2 with orthonormal v1, v2 and uncorrelated,
	// centred a, b with var(a) > var(b): the principal directions are v1,
	// v2 and the scores are a, b.
	mu := []float64{1, 2, 3}
	v1 := []float64{1 / math.Sqrt2, 1 / math.Sqrt2, 0}
	v2 := []float64{0, 0, 1}
	a := []float64{-3, -1, 1, 3}
	b := []float64{1, -1, -1, 1}
	x := make([]float64, 12)
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			x[i*3+j] = mu[j] + a[i]*v1[j] + b[i]*v2[j]
		}
	}
	y := []int{0, 0, 1, 1}
	p := &PCA{OutDim: 2}
	if err := p.FitProjection(x, 4, 3, y, 2); err != nil {
		t.Fatal(err)
	}
	w, mean := p.Components()
	for j := 0; j < 3; j++ {
		if !near(mean[j], mu[j], 1e-12) || !near(w.At(j, 0), v1[j], 1e-12) || !near(w.At(j, 1), v2[j], 1e-12) {
			t.Fatalf("components %v mean %v, want v1=%v v2=%v μ=%v", mat.Formatted(w), mean, v1, v2, mu)
		}
	}
	z, err := p.Transform(x, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if !near(z[2*i], a[i], 1e-12) || !near(z[2*i+1], b[i], 1e-12) {
			t.Fatalf("scores %v, want a=%v b=%v", z, a, b)
		}
	}
	// Rank of the centred data is n−1 = 3 at most; asking for more fails.
	if err := (&PCA{OutDim: 4}).FitProjection(x, 4, 3, y, 2); err == nil {
		t.Error("PCA dimension 4 > min(n−1, d) = 3 accepted")
	}
	if err := (&PCA{OutDim: -1}).FitProjection(x, 4, 3, y, 2); err == nil {
		t.Error("PCA dimension −1 accepted")
	}
	if d := (&PCA{}); d.FitProjection(x, 4, 3, y, 2) != nil || d.Dim() != 3 {
		t.Errorf("default PCA dimension %d, want min(n−1, d, 10) = 3", d.Dim())
	}
}

func TestPCAMatchesGonumStat(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	n, d := 12, 6
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64() * float64(1+i%d)
	}
	y := make([]int, n)
	p := &PCA{OutDim: 4}
	if err := p.FitProjection(x, n, d, y, 1); err != nil {
		t.Fatal(err)
	}
	w, _ := p.Components()
	var pc stat.PC
	if !pc.PrincipalComponents(mat.NewDense(n, d, x), nil) {
		t.Fatal("gonum stat.PC failed")
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	for c := 0; c < 4; c++ {
		dotp := 0.0
		for j := 0; j < d; j++ {
			dotp += w.At(j, c) * vecs.At(j, c)
		}
		if !near(math.Abs(dotp), 1, 1e-10) {
			t.Fatalf("component %d: |⟨ours, stat.PC⟩| = %v, want 1", c, math.Abs(dotp))
		}
	}
}

func TestSVDHandWorked(t *testing.T) {
	// Rows (3, 0) and (0, 1): right singular vectors e1 (σ = 3), e2 (σ = 1).
	x := []float64{3, 0, 0, 1}
	y := []int{0, 1}
	s := &SVD{OutDim: 1}
	if err := s.FitProjection(x, 2, 2, y, 2); err != nil {
		t.Fatal(err)
	}
	z, _ := s.Transform([]float64{1, 2}, 1)
	if !near(z[0], 1, 1e-14) {
		t.Fatalf("SVD projection of (1, 2) = %v, want 1", z[0])
	}
	// PCA centres first: mean (1.5, 0.5), direction (3, −1)/√10, so
	// (1, 2) projects to ((1−1.5)·3 + (2−0.5)·(−1))/√10 = −3/√10.
	p := &PCA{OutDim: 1}
	if err := p.FitProjection(x, 2, 2, y, 2); err != nil {
		t.Fatal(err)
	}
	z, _ = p.Transform([]float64{1, 2}, 1)
	if !near(z[0], -3/math.Sqrt(10), 1e-14) {
		t.Fatalf("PCA projection of (1, 2) = %v, want %v", z[0], -3/math.Sqrt(10))
	}
	if err := (&SVD{OutDim: 3}).FitProjection(x, 2, 2, y, 2); err == nil {
		t.Error("SVD dimension 3 > min(n, d) accepted")
	}
	// Against the eigenvectors of XᵀX on random data.
	rng := rand.New(rand.NewSource(7))
	n, d := 9, 5
	xr := make([]float64, n*d)
	for i := range xr {
		xr[i] = rng.NormFloat64() + float64(i%d)
	}
	s = &SVD{OutDim: 3}
	if err := s.FitProjection(xr, n, d, make([]int, n), 1); err != nil {
		t.Fatal(err)
	}
	X := mat.NewDense(n, d, xr)
	var xtx mat.SymDense
	xtx.SymOuterK(1, X.T())
	var eig mat.EigenSym
	if !eig.Factorize(&xtx, true) {
		t.Fatal("eigendecomposition failed")
	}
	var ev mat.Dense
	eig.VectorsTo(&ev) // ascending eigenvalues
	w := s.Components()
	for c := 0; c < 3; c++ {
		dotp := 0.0
		for j := 0; j < d; j++ {
			dotp += w.At(j, c) * ev.At(j, d-1-c)
		}
		if !near(math.Abs(dotp), 1, 1e-10) {
			t.Fatalf("SVD component %d vs eigenvector: |dot| = %v", c, math.Abs(dotp))
		}
	}
}

func TestProjectedKNN(t *testing.T) {
	// PCA to one dimension then 1-NN equals 1-NN on the hand-computed
	// scores.
	x := []float64{3, 0, 0, 1, 2, 2, -1, 0}
	y := []int{0, 1, 1, 0}
	c := &ProjectedKNN{Proj: &PCA{OutDim: 1}, KNN: KNN{K: 1}}
	if err := c.Fit(x, 4, 2, y, 2); err != nil {
		t.Fatal(err)
	}
	q := []float64{2.5, 0.5, 0, 0, 1, 1}
	pred, _ := c.Predict(q, 3)
	z, _ := c.Proj.Transform(x, 4)
	zq, _ := c.Proj.Transform(q, 3)
	ref := &KNN{K: 1}
	ref.Fit(z, 4, 1, y, 2)
	want, _ := ref.Predict(zq, 3)
	for i := range want {
		if pred[i] != want[i] {
			t.Fatalf("projected predictions %v, want %v", pred, want)
		}
	}
	if _, err := (&ProjectedKNN{Proj: &PCA{}, KNN: KNN{K: 1}}).Predict(q, 3); err == nil {
		t.Error("predict before fit accepted")
	}
	if err := (&ProjectedKNN{Proj: &PCA{}, KNN: KNN{K: 5}}).Fit(x, 4, 2, y, 2); err == nil {
		t.Error("k > n accepted")
	}
	if _, err := c.Predict([]float64{1, 2, 3}, 1); err == nil {
		t.Error("query of the wrong dimension accepted")
	}
}

func TestNCAGradient(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	n, d, p := 9, 5, 3
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y := []int{0, 1, 2, 0, 1, 2, 0, 1, 2}
	obj := &ncaObjective{x: mat.NewDense(n, d, x), y: y, n: n, d: d, p: p}
	a := make([]float64, p*d)
	for i := range a {
		a[i] = 0.5 * rng.NormFloat64()
	}
	g := make([]float64, len(a))
	f := obj.eval(a, g)
	if f <= 0 || f >= 1 {
		t.Fatalf("objective %v outside (0, 1)", f)
	}
	const h = 1e-6
	for i := range a {
		ap := append([]float64(nil), a...)
		am := append([]float64(nil), a...)
		ap[i] += h
		am[i] -= h
		fd := (obj.eval(ap, nil) - obj.eval(am, nil)) / (2 * h)
		if !near(g[i], fd, 1e-7+1e-6*math.Abs(fd)) {
			t.Fatalf("∂f/∂A[%d]: analytic %v, finite difference %v", i, g[i], fd)
		}
	}
}

// looAccuracy is the hard leave-one-out 1-NN accuracy of rows z (n×d).
func looAccuracy(z []float64, n, d int, y []int) float64 {
	hit := 0
	for i := 0; i < n; i++ {
		best, arg := math.Inf(1), -1
		for j := 0; j < n; j++ {
			if j != i {
				if dd := sqDist(z[i*d:(i+1)*d], z[j*d:(j+1)*d]); dd < best {
					best, arg = dd, j
				}
			}
		}
		if y[arg] == y[i] {
			hit++
		}
	}
	return float64(hit) / float64(n)
}

// noisyClasses draws n points in d dimensions whose class (0 or 1) shows
// only in coordinate 0 (c + 0.1·noise); the other coordinates are noise
// with standard deviation 3, which swamps raw Euclidean distances.
func noisyClasses(rng *rand.Rand, n, d int) ([]float64, []int) {
	x := make([]float64, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % 2
		x[i*d] = float64(y[i]) + 0.1*rng.NormFloat64()
		for j := 1; j < d; j++ {
			x[i*d+j] = 3 * rng.NormFloat64()
		}
	}
	return x, y
}

func TestNCAFixesRawKNN(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		ncaFixesRawKNN(t, seed)
	}
}

func ncaFixesRawKNN(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	n, d, nq := 40, 3, 400
	x, y := noisyClasses(rng, n, d)
	q, yq := noisyClasses(rng, nq, d)
	rawLOO := looAccuracy(x, n, d, y)
	raw := &KNN{K: 1}
	rawAcc, _, err := Evaluate(raw, x, n, d, y, 2, q, nq, yq)
	if err != nil {
		t.Fatal(err)
	}
	if rawLOO > 0.8 || rawAcc > 0.8 {
		t.Fatalf("test premise: raw 1-NN should fail (LOO %v, test %v)", rawLOO, rawAcc)
	}
	for _, init := range []NCAInit{NCAInitPCA, NCAInitRandom} {
		nca := &NCA{Settings: NCASettings{OutDim: 2, Init: init, Seed: 1}}
		c := &ProjectedKNN{Proj: nca, KNN: KNN{K: 1}}
		acc, _, err := Evaluate(c, x, n, d, y, 2, q, nq, yq)
		if err != nil {
			t.Fatal(err)
		}
		z, _ := nca.Transform(x, n)
		loo := looAccuracy(z, n, 2, y)
		r := nca.Result
		t.Logf("seed %d init %d: expected LOO %.3f → %.3f, hard LOO %.3f (raw %.3f), test %.3f (raw %.3f), %d iterations, %s",
			seed, init, r.Initial, r.Final, loo, rawLOO, acc, rawAcc, r.Iterations, r.Status)
		if !(r.Final > r.Initial) || r.Final < 0.9 || loo < 0.9 || acc < 0.9 {
			t.Errorf("seed %d init %d: NCA did not fix k-NN: expected LOO %v→%v, LOO %v, test %v", seed, init, r.Initial, r.Final, loo, acc)
		}
	}
}

func TestNCADeterministicAndErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	x, y := noisyClasses(rng, 12, 3)
	fit := func(s NCASettings) *NCAResult {
		r, err := FitNCA(x, 12, 3, y, 2, s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, s := range []NCASettings{{}, {Init: NCAInitRandom, Seed: 3}} {
		a, b := fit(s), fit(s)
		if !mat.Equal(a.A, b.A) {
			t.Fatalf("settings %+v: two fits differ", s)
		}
	}
	if r := fit(NCASettings{}); r.A.RawMatrix().Rows != 3 {
		t.Errorf("default output dimension %d, want min(n−1, d, 10) = 3", r.A.RawMatrix().Rows)
	}
	for name, s := range map[string]NCASettings{
		"dim > d":     {OutDim: 4},
		"dim < 0":     {OutDim: -2},
		"maxiter < 0": {MaxIter: -1},
		"gradtol < 0": {GradTol: -1},
		"init":        {Init: 7},
	} {
		if _, err := FitNCA(x, 12, 3, y, 2, s); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := FitNCA(x[:3], 1, 3, y[:1], 2, NCASettings{}); err == nil {
		t.Error("n = 1 accepted")
	}
	bad := append([]float64(nil), x...)
	bad[4] = math.NaN()
	if _, err := FitNCA(bad, 12, 3, y, 2, NCASettings{}); err == nil {
		t.Error("NaN accepted")
	}
}

func TestFullRankProjectionKeepsNeighbours(t *testing.T) {
	// PCA onto all n−1 directions of the centred data (or SVD onto all n
	// right singular vectors) keeps every query's distances to the
	// training points up to a common additive constant, so 1-NN
	// predictions equal those on the raw data. (Hence pca_knn with the
	// default dimension is plain k-NN whenever n−1 ≤ DefaultDim.)
	n, nq, d, m := 8, 200, 30, 3
	x, y, _, q := randomProblem(12, n, nq, d, m)
	raw := &KNN{K: 3}
	raw.Fit(x, n, d, y, m)
	want, _ := raw.Votes(q, nq)
	for name, proj := range map[string]Projector{"pca": &PCA{OutDim: n - 1}, "svd": &SVD{OutDim: n}} {
		c := &ProjectedKNN{Proj: proj, KNN: KNN{K: 3}}
		if err := c.Fit(x, n, d, y, m); err != nil {
			t.Fatal(err)
		}
		got, _ := c.Votes(q, nq)
		checkVotes(t, name, got, want)
	}
	// With fewer directions the neighbours do change.
	c := &ProjectedKNN{Proj: &PCA{OutDim: 2}, KNN: KNN{K: 3}}
	c.Fit(x, n, d, y, m)
	got, _ := c.Votes(q, nq)
	same := true
	for i := range got {
		same = same && got[i] == want[i]
	}
	if same {
		t.Error("2-D PCA gave the same votes as raw k-NN on every query")
	}
}

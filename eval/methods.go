package eval

import "fmt"

// Method names, as used in configuration files and result tables.
const (
	MethodDrKNN           = "drknn"
	MethodDrKNNTruncated  = "drknn_truncated"
	MethodKernelSmoothing = "kernel_smoothing"
	MethodEmbeddingKNN    = "embedding_knn"
	MethodPCAKNN          = "pca_knn"
	MethodSVDKNN          = "svd_knn"
	MethodNCAKNN          = "nca_knn"
	// MethodNearestCentroid is the nearest class mean on the embedding.
	MethodNearestCentroid = "nearest_centroid"
)

// Methods lists the method names New accepts.
func Methods() []string {
	return []string{MethodDrKNN, MethodDrKNNTruncated, MethodKernelSmoothing,
		MethodEmbeddingKNN, MethodPCAKNN, MethodSVDKNN, MethodNCAKNN, MethodNearestCentroid}
}

// NeedsP reports whether the method votes with the least-favourable
// distributions P* (and so needs them passed to New).
func NeedsP(method string) bool {
	switch method {
	case MethodDrKNN, MethodDrKNNTruncated, MethodKernelSmoothing:
		return true
	}
	return false
}

// OnRawPixels reports whether the method is a baseline that is fitted on
// the raw training samples (flattened pixels) rather than the embedding.
func OnRawPixels(method string) bool {
	switch method {
	case MethodPCAKNN, MethodSVDKNN, MethodNCAKNN:
		return true
	}
	return false
}

// Settings gathers the knobs of every method; each method reads the ones
// it needs.
type Settings struct {
	K         int         // neighbours (all but kernel_smoothing)
	Metric    string      // "euclidean" (default), "sqeuclidean", "manhattan", "cosine"
	Tie       TieRule     // drknn, drknn_truncated
	Tau       float64     // drknn_truncated
	Norm      EntropyNorm // drknn_truncated
	Guard     TruncGuard  // drknn_truncated
	Bandwidth float64     // kernel_smoothing; 0 = median heuristic
	OutDim    int         // pca_knn, svd_knn, nca_knn; 0 = default
	NCA       NCASettings // nca_knn (its OutDim is overridden by OutDim when set)
	SumTol    float64     // tolerance on the row sums of P
	Workers   int
}

// New returns the named classifier configured by s. p is the M×n
// least-favourable-distribution matrix for the methods that need it
// (NeedsP) and ignored otherwise; it is checked against the training set
// at Fit.
func New(method string, s Settings, p []float64) (Voter, error) {
	metric, err := ParseMetric(s.Metric)
	if err != nil {
		return nil, err
	}
	if NeedsP(method) && p == nil {
		return nil, fmt.Errorf("eval: method %s needs the least-favourable distributions P", method)
	}
	knn := KNN{K: s.K, Metric: metric, Workers: s.Workers}
	dr := DrKNN{K: s.K, Metric: metric, Tie: s.Tie, P: p, SumTol: s.SumTol, Workers: s.Workers}
	switch method {
	case MethodDrKNN:
		return &dr, nil
	case MethodDrKNNTruncated:
		return &TruncatedDrKNN{DrKNN: dr, Tau: s.Tau, Norm: s.Norm, Guard: s.Guard}, nil
	case MethodKernelSmoothing:
		return &KernelSmoothing{H: s.Bandwidth, P: p, SumTol: s.SumTol, Workers: s.Workers}, nil
	case MethodEmbeddingKNN:
		return &knn, nil
	case MethodPCAKNN:
		return &ProjectedKNN{Proj: &PCA{OutDim: s.OutDim}, KNN: knn}, nil
	case MethodSVDKNN:
		return &ProjectedKNN{Proj: &SVD{OutDim: s.OutDim}, KNN: knn}, nil
	case MethodNCAKNN:
		ns := s.NCA
		if s.OutDim != 0 {
			ns.OutDim = s.OutDim
		}
		return &ProjectedKNN{Proj: &NCA{Settings: ns}, KNN: knn}, nil
	case MethodNearestCentroid:
		if _, ok := metric.(Euclidean); !ok {
			return nil, fmt.Errorf("eval: method %s is Euclidean only (metric %q)", method, s.Metric)
		}
		return &NearestCentroid{Workers: s.Workers}, nil
	}
	return nil, fmt.Errorf("eval: unknown method %q (want one of %v)", method, Methods())
}

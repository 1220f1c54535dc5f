// Package eval holds the classifiers that act on embeddings — Dr.k-NN, its
// truncated variant, kernel smoothing and the paper's baselines — with a
// fit/predict shape, plus accuracy summaries and the paper's table.
//
// # Conventions
//
// Points are row-major float64 slices (n rows of d values); labels are
// 0-based class indices in [0, M). Every classifier implements Voter:
// Fit(x, n, d, y, M), Predict(q, nq), Votes(q, nq), returning the vote
// vector p̃(ξ) of each query (nq rows of M values) whose argmax Predict
// returns, and Proba(q, nq), the class probabilities (rows summing to 1)
// derived from the votes. Bad input — wrong lengths, NaN/Inf, k ∉ [1, n], labels
// outside [0, M), a malformed P — is an error, never a panic. Results do not
// depend on the number of goroutines (Workers).
//
// # Classifiers
//
//   - DrKNN (method "drknn"): p̃_m(ξ) = (1/k) Σ P*_m(neighbour) over the k
//     nearest training points, eq. (4). P* (M×n, row m = class m's
//     least-favourable distribution) is data: the optlayer package solves it
//     on the whole training set and the caller passes it in, so eval does
//     not import the solver.
//   - TruncatedDrKNN ("drknn_truncated"): the same vote restricted to the
//     training points whose min–max normalised entropy over classes is ≥ τ
//     (Appendix B); when that set leaves a class fewer than min(k, n_m)
//     points the vote falls back to every point.
//   - KernelSmoothing ("kernel_smoothing"): p̃_m(ξ) = Σ_i P*_m(ξⁱ) κ_h(ξ−ξⁱ)
//     with a Gaussian kernel, in the log domain.
//   - KNN ("embedding_knn"): vanilla majority vote.
//   - ProjectedKNN with PCA, SVD or NCA ("pca_knn", "svd_knn", "nca_knn"):
//     the pixel baselines, a learned linear map then k-NN.
//   - NearestCentroid ("nearest_centroid"): the nearest class mean.
//
// New builds any of them by name from one Settings struct.
//
// # Scores
//
// Accuracy, LogLoss (clipped at ε = 1e-15) and ECE (15 equal-width bins)
// measure predictions and probabilities; Score computes the three and
// EvaluateScores fits, predicts and scores in one call.
//
// # Determinism and ties
//
// Neighbours are ordered by (distance, training index): of two equidistant
// points the lower index is nearer. Class ties (votes within a relative
// 1e-12 of the maximum) follow TieRule: the default for Dr.k-NN takes the
// class with more of the k neighbours labelled with it, then the lowest
// index; the other classifiers take the lowest index. The paper's tie rule
// (4) allows any distribution over the tied classes; these are members of
// it.
package eval

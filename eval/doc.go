// Package eval holds the classifiers that act on embeddings — Dr.k-NN, its
// truncated variant, kernel smoothing and the paper's baselines — with a
// fit/predict shape, plus accuracy summaries and the paper's table.
package eval

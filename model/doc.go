// Package model is the Dr.k-NN feature extractor written with Gorgonia: one
// 3×3 convolution (stride 1), ReLU, 2×2 max-pool, flatten and a linear map to
// the embedding width d (400 in the paper), or an MLP body for feature rows.
// Weights save and load in a versioned, shape-checked format.
package model

// Package model is the Dr.k-NN feature extractor written with Gorgonia: one
// 3×3 convolution (stride 1, zero padding 1 by default), ReLU, 2×2 max-pool,
// flatten and a linear map to the embedding width d (400 in the paper) for
// images of any C×H×W (Kind CNN), an MLP body (linear–ReLU–linear) for rows
// of features (MLP), or the standard few-shot Conv-4 backbone (Conv4: four
// blocks of 3×3 convolution, batch normalisation, ReLU and 2×2 max-pool,
// flattened). Weights are float32 or float64 (Config.DType), initialised
// from a seed (He-normal before a ReLU, Glorot-uniform otherwise).
//
// Batch normalisation (Conv4) has two explicit modes: Graph.ApplyMode(x,
// Train) — also Apply and Build — normalises with the batch statistics and
// updates the running statistics (Net.Buffers, saved with the weights, never
// learnable) each time the forward op runs; Inference and Net.Embed use the
// running statistics.
//
// Training: Net.Build (or Net.NewGraph and Graph.Apply) adds the forward
// pass for a batch input node to a Gorgonia graph and returns the embedding
// node and the learnable nodes, whose values are the Net's own storage.
// Append a loss and call NewMinimiser (G.Grad, a TapeMachine, and an Adam
// that reads the gradient nodes — no dual values to accumulate into and
// zero again); run the machine and take Adam steps (Adam.Step), which
// update the weights in place.
// The layers are custom Gorgonia ops with hand-written backward ops (a fused
// convolution–ReLU–pool op and a linear op) whose products run on the
// package's AVX2+FMA kernels (or OpenBLAS with the openblas build tag).
// Ops reuse their output buffers across runs: copy values you keep.
//
// Evaluation: Net.Embed maps samples to embeddings with the same kernels,
// without a graph.
//
// Weights save and load (Net.Save, Load, Net.LoadWeights) in a versioned,
// checksummed, shape-checked format; see io.go for the layout.
package model

// Package train runs Algorithm 1 of the Dr.k-NN paper: it draws mini-sets
// from an episode's training samples, embeds them, solves the LFD of each
// mini-set with the differentiable optimisation layer and takes Adam steps on
// the mean worst-case risk M − Σ_i max_m P*_m(i). It takes only what the
// algorithm needs (Settings), writes and restores checkpoints, and reports
// each step's statistics to its caller; the experiment configuration lives
// in package experiment.
package train

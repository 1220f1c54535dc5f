//go:build !unix

package experiment

// processCPU is 0 where the process's CPU time is not available.
func processCPU() float64 { return 0 }

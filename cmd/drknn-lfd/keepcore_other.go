//go:build !linux

package main

// keepCore does nothing outside Linux, where a thread's priority cannot be
// set by its id (see keepcore_linux.go).
func keepCore() int { return 0 }

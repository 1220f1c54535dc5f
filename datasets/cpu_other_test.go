//go:build !unix

package datasets

import (
	"testing"
	"time"
)

func cpuTime() time.Duration                                      { return 0 }
func reportCPU(b *testing.B, cpu0 time.Duration, wall0 time.Time) {}

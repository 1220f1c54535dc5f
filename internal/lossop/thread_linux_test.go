package lossop

import (
	"syscall"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"gorgonia.org/tensor"
)

// TestRunAllDoesNotLockThread checks the one change in drknn's copy of
// Gorgonia (internal/gorgonia/README.md): a tape machine's RunAll must
// not lock the calling goroutine to its OS thread. RunAll runs the program
// on a new goroutine and waits for it; under upstream's LockOSThread the
// caller's thread belongs to the caller alone, so the program never runs
// on it. Unlocked, the waiting caller's thread picks the program's
// goroutine up next, so in 50 runs it must run there at least once.
func TestRunAllDoesNotLockThread(t *testing.T) {
	var tid int
	l := New("tid", func(e []float64, n, d int) (float64, []float64, error) {
		tid = syscall.Gettid()
		return 0, make([]float64, len(e)), nil
	})
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))))
	if _, err := l.Apply(x); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	same := 0
	for range 50 {
		caller := syscall.Gettid()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Reset()
		if tid == caller {
			same++
		}
	}
	if same == 0 {
		t.Fatal("RunAll never ran the program on the caller's thread in 50 runs: it locks the thread (see internal/gorgonia/README.md)")
	}
	t.Logf("the program ran on the caller's thread in %d of 50 runs", same)
}

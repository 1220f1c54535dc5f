package vmerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	G "github.com/drknn/drknn/internal/gorgonia"
	"github.com/drknn/drknn/internal/lossop"
	"gorgonia.org/tensor"
)

var errBoom = errors.New("boom: the loss is NaN")

// machineFailure runs a graph whose loss op fails with errBoom and returns
// the tape machine's error.
func machineFailure(t *testing.T) error {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"), G.WithInit(G.RangedFrom(0)))
	l := lossop.New("Boom", func(e []float64, n, d int) (float64, []float64, error) { return 0, nil, errBoom })
	if _, err := l.Apply(x); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	err := vm.RunAll()
	if err == nil {
		t.Fatal("the machine ran a failing op without an error")
	}
	return err
}

// The machine's dump of the failing instruction (its program counter,
// registers and flags, "Failed to carry op.Do()") leaves the message; the
// op's error and the context around the machine's error stay, and the
// machine's error is still reached through errors.Unwrap.
func TestCleanKeepsTheOpsError(t *testing.T) {
	raw := machineFailure(t)
	wrapped := fmt.Errorf("train: step 2: %w", raw)
	if !strings.Contains(wrapped.Error(), "Failed to execute instruction") {
		t.Fatalf("the fixture does not fail inside the machine: %v", wrapped)
	}
	got := Clean(wrapped)
	if want := "train: step 2: " + errBoom.Error(); got.Error() != want {
		t.Fatalf("Clean: %q, want %q", got, want)
	}
	if errors.Unwrap(got) != wrapped {
		t.Fatalf("errors.Unwrap(Clean(err)) is not err")
	}
	me, op, ok := Find(got)
	if !ok || op != errBoom || !strings.Contains(me.Error(), "PC ") {
		t.Fatalf("Find: %v, %v, %v", me, op, ok)
	}
	if again := Clean(got); again != got {
		t.Fatalf("Clean of a cleaned error changed it: %q", again)
	}
}

// worded says what failed in its own words and wraps the machine's error.
type worded struct{ err error }

func (e worded) Error() string { return "training diverged at step 2" }
func (e worded) Unwrap() error { return e.err }

// An error without the machine's, and nil, pass as they are; so does one
// whose message does not hold the machine's (it words the failure itself).
func TestCleanLeavesOtherErrors(t *testing.T) {
	w := fmt.Errorf("repeat 1: %w", worded{machineFailure(t)})
	if Clean(w) != w {
		t.Fatalf("Clean changed a worded error: %q", Clean(w))
	}
	plain := fmt.Errorf("train: step 2: %w", errBoom)
	if Clean(plain) != plain || Clean(nil) != nil {
		t.Fatal("Clean changed an error without a machine error")
	}
	if _, _, ok := Find(plain); ok {
		t.Fatal("Find found a machine error in a plain error")
	}
}

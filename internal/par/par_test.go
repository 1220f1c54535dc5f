package par

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestForEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{-1, 0, 1, 2, 7, 100} {
		const n = 50
		var hits [n]atomic.Int32
		if err := For(n, workers, func(i int) error { hits[i].Add(1); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("workers %d: index %d ran %d times", workers, i, h)
			}
		}
	}
	if err := For(0, 4, func(int) error { return errors.New("ran") }); err != nil {
		t.Fatal(err)
	}
}

// TestForLowestError: whatever the workers, the error is the lowest failing
// index's.
func TestForLowestError(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		for rep := 0; rep < 20; rep++ {
			err := For(40, workers, func(i int) error {
				if i%7 == 5 {
					return fmt.Errorf("index %d", i)
				}
				return nil
			})
			if err == nil || err.Error() != "index 5" {
				t.Fatalf("workers %d: %v, want index 5", workers, err)
			}
		}
	}
}

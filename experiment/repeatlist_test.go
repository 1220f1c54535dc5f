package experiment

import "testing"

func TestRepeatList(t *testing.T) {
	for _, tc := range []struct {
		rs   []int
		want string
	}{
		{[]int{3}, "repeat 3"},
		{[]int{1, 2}, "repeats 1, 2"},
		{[]int{1, 2, 3, 4, 7}, "repeats 1–4, 7"},
		{[]int{2, 4, 5, 6, 9, 10}, "repeats 2, 4–6, 9, 10"},
	} {
		if got := repeatList(tc.rs); got != tc.want {
			t.Errorf("repeatList(%v) = %q, want %q", tc.rs, got, tc.want)
		}
	}
}

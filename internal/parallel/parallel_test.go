package parallel

import (
	"sync/atomic"
	"testing"
)

// TestForRanges: every index is visited once, in ranges that tile [0, n)
// in order of k, for any number of workers (one: on the caller).
func TestForRanges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ n, workers int }{{0, 1}, {1, 4}, {10, 1}, {10, 3}, {10, 10}, {7, 16}, {100000, 2}} {
		seen := make([]atomic.Int32, c.n)
		los := make([]int, max(1, c.workers))
		his := make([]int, max(1, c.workers))
		ForRanges(c.n, c.workers, func(k, lo, hi int) {
			los[k], his[k] = lo, hi
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("n %d, %d workers: index %d visited %d times", c.n, c.workers, i, seen[i].Load())
			}
		}
		for k := 1; k < len(los); k++ {
			if los[k] != his[k-1] {
				t.Fatalf("n %d, %d workers: range %d starts at %d, range %d ended at %d", c.n, c.workers, k, los[k], k-1, his[k-1])
			}
		}
	}
}

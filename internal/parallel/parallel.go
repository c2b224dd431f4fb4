// Package parallel splits a loop over the cores: the one helper render
// and inspect use for their large tables and merges.
package parallel

import "sync"

// ForRanges splits [0, n) into workers contiguous ranges and runs fn(k,
// lo, hi) for the k-th, all at once, and waits for them (one range, on the
// calling goroutine, when workers <= 1). A range may be empty.
func ForRanges(n, workers int, fn func(k, lo, hi int)) {
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(k, min(k*per, n), min((k+1)*per, n))
		}()
	}
	wg.Wait()
}

package inspect

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortKeysIsAFullSort: sorting the entries and the rest apart and
// merging them gives what one sort of all the keys gives, for sorted,
// shuffled, overlapping and empty parts.
func TestSortKeysIsAFullSort(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		nHead, nTail := r.IntN(50), r.IntN(50)
		if trial%7 == 0 {
			nHead = 0
		}
		keys := make([]groupKey, 0, nHead+nTail)
		for i := range nHead + nTail {
			keys = append(keys, groupKey{fmt.Sprintf("g-%02d", r.IntN(30)), i})
		}
		if trial%3 == 0 { // entries already in order, as kaas writes them
			slices.SortFunc(keys[:nHead], func(a, b groupKey) int { return compareKeys(a, b) })
			for i := range nHead {
				keys[i].src = i
			}
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, compareKeys)
		sortKeys(keys, nHead)
		if !slices.Equal(keys, want) {
			t.Fatalf("trial %d (%d + %d keys):\n got %v\nwant %v", trial, nHead, nTail, keys, want)
		}
	}
}

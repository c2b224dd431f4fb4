//go:build realkaas && unix

package realkaas

import (
	"testing"
)

// forFlavours runs scenario once per kaas generation, as parallel subtests
// named by the flavour ("go", "rust-0.2.18"): every existing scenario
// runs on both brokers.
func forFlavours(t *testing.T, scenario func(t *testing.T, f Flavour)) {
	t.Helper()
	for _, f := range Flavours {
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			scenario(t, f)
		})
	}
}

// newFlavourCluster starts a 3-broker cluster of flavour f for t.
func newFlavourCluster(t *testing.T, f Flavour, topics string) *Cluster {
	t.Helper()
	return startCluster(t, Options{Flavour: f, Topics: topics})
}

package exporter

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCConcat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][2]int{{0, 0}, {0, 5}, {7, 0}, {1, 1}, {100, 3}, {5, 70 << 10}, {40 << 10, 33 << 10}} {
		a, b := make([]byte, sizes[0]), make([]byte, sizes[1])
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crcConcat(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), len(b)); got != want {
			t.Errorf("sizes %v: crcConcat %08x, want %08x", sizes, got, want)
		}
	}
}

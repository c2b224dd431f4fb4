package inspect

import (
	"fmt"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// benchAppendJSON measures the per-key cost of the streaming fast path.
func benchAppendJSON(b *testing.B, a *volume.Assignment) {
	wh, err := NewWhois(a, KindGroup, WhatIf{})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "orders-consumer-%d", i)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = wh.AppendJSON(buf[:0], keys[i&1023])
	}
}

// BenchmarkAppendJSON: dead and draining brokers and explicit entries, so
// many keys carry warnings.
func BenchmarkAppendJSON(b *testing.B) { benchAppendJSON(b, whoisAssignment()) }

// BenchmarkAppendJSONHealthy is the common case: every broker alive, no entry.
func BenchmarkAppendJSONHealthy(b *testing.B) {
	a := whoisAssignment()
	for i := range a.Brokers {
		a.Brokers[i].Health = "alive"
	}
	a.ConsumerGroups = nil
	benchAppendJSON(b, a)
}

package inspect

import (
	"fmt"
	"testing"
)

// BenchmarkAppendJSON is the per-key cost of the streaming fast path.
func BenchmarkAppendJSON(b *testing.B) {
	wh, err := NewWhois(whoisAssignment(), KindGroup, WhatIf{})
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

// BenchmarkAppendJSONHealthy is the common case: every broker alive, no entry.
func BenchmarkAppendJSONHealthy(b *testing.B) {
	a := whoisAssignment()
	for i := range a.Brokers {
		a.Brokers[i].Health = "alive"
	}
	a.ConsumerGroups = nil
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

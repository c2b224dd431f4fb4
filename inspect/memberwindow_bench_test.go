package inspect

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// The memory the membership history costs per group, at the exporter's
// scale: every group observed at each refresh, two members each (franz-go
// member ids: the client id and a UUID), and in the churned case every
// group changed generation within the window at each of the refreshes
// (a member replaced: one left, one joined), so each keeps its last
// change with its members and a mark per change. bytes/group is the heap
// the window holds after the refreshes, divided by the groups (the group
// names are the caller's and not counted).
func BenchmarkMemberWindowMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, churn := range []bool{false, true} {
			name := fmt.Sprintf("groups=%d/steady", n)
			if churn {
				name = fmt.Sprintf("groups=%d/churned", n)
			}
			b.Run(name, func(b *testing.B) { benchMemberWindow(b, n, churn) })
		}
	}
}

func benchMemberWindow(b *testing.B, n int, churn bool) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("orders-app-%06d", i)
	}
	member := func(g, k int) MemberInfo {
		return MemberInfo{ID: fmt.Sprintf("orders-consumer-%06d-%08x-1f3c-4b2a-9e7d-0c5a6b7d8e9f", g, k), ClientID: "orders-consumer"}
	}
	const refreshes = 8
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var perGroup float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := &MemberWindow{Window: 10 * time.Minute}
		for r := range refreshes {
			at := t0.Add(time.Duration(r) * 30 * time.Second)
			for g, name := range names {
				k := 0
				if churn {
					k = r
				}
				s := MemberSample{Time: at, Coordinator: "kaas-1", State: "Stable", Members: []MemberInfo{member(g, 0), member(g, k+1)}}
				w.Observe(name, s, nil)
			}
			w.Sweep()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if st := w.Stats(names[0]); st == nil || (churn && st.ObservedGeneration != refreshes-1) {
			b.Fatalf("stats %+v", st)
		}
		perGroup = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
		runtime.KeepAlive(w)
	}
	b.ReportMetric(perGroup, "bytes/group")
	b.ReportMetric(perGroup*float64(n)/(1<<20), "MiB")
}

package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gogc reads the collector's current GOGC.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// A run starts at GOGC 3200 and goes on at 400 once the first collection
// has happened; a command that chose its own GOGC before that keeps it.
// Not parallel: GOGC is the process's.
func TestTuneRuntimeStartsHighThenSettles(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: Start leaves it")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	Start()
	if got := gogc(); got != startGCPercent {
		t.Fatalf("GOGC after Start = %d, want %d", got, startGCPercent)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gogc() != runGCPercent {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d after collections, want %d", gogc(), runGCPercent)
		}
		runtime.GC() // the sentinel's cleanup runs after a collection
		runtime.Gosched()
	}

	Start()
	if !LargeInput(LargeInputBytes) {
		t.Fatal("an input of LargeInputBytes is not large")
	}
	settleGC() // as the first collection would
	if got := gogc(); got != 100 {
		t.Errorf("GOGC after a large input and the first collection = %d, want 100", got)
	}
}

// The sandbox collects at runGCPercent with no soft memory limit, whatever
// Start set. Not parallel: GOGC is the process's.
func TestSandboxLiftsTheMemoryLimit(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set in the environment: Sandbox leaves them")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	Start()
	Sandbox()
	if got := gogc(); got != runGCPercent {
		t.Errorf("GOGC after Sandbox = %d, want %d", got, runGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("soft memory limit after Sandbox = %d, want none", got)
	}
	runtime.GC()
	settleGC()
	if got := gogc(); got != runGCPercent {
		t.Errorf("GOGC after the first collection = %d, want %d", got, runGCPercent)
	}
}

// A served exporter's limit follows the largest of its last peaks: a
// quarter above it plus 16 MiB, so a larger selection raises it at once
// and a smaller one lowers it only once the larger has left the last
// eight. Not parallel: the limit is the process's.
func TestServerMemoryFollowsThePeaks(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set in the environment: ServerMemory leaves it")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var m ServerMemory
	base := m.Peak()
	if got := debug.SetMemoryLimit(-1); got != m.Limit || got < 64<<20 {
		t.Fatalf("limit %d after a peak of %d bytes (Limit %d)", got, base, m.Limit)
	}
	held := make([]byte, 96<<20)
	for i := range held {
		held[i] = byte(i)
	}
	peak := m.Peak()
	if want := int64(peak+peak/4) + 16<<20; peak < 96<<20 || m.Limit != want {
		t.Fatalf("with 96 MiB held: peak %d, limit %d, want %d", peak, m.Limit, want)
	}
	runtime.KeepAlive(held)
	held = nil
	for range 7 {
		m.Peak()
	}
	if m.Limit < 96<<20 {
		t.Errorf("limit %d lowered before the large peak left the last eight", m.Limit)
	}
	m.Peak()
	if m.Limit >= 96<<20 {
		t.Errorf("limit %d still set from a peak no longer among the last eight", m.Limit)
	}
}

// A served exporter collects at servedGCPercent; once a refresh ends,
// Settle gives back what it freed: the heap keeps no free pages worth
// speaking of (they were 64 MiB of garbage). Not parallel: GOGC and the
// heap are the process's.
func TestServerMemoryStartAndSettle(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: Start leaves it")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var m ServerMemory
	m.Start()
	if got := gogc(); got != servedGCPercent {
		t.Fatalf("GOGC after Start = %d, want %d", got, servedGCPercent)
	}
	free := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	garbage := make([][]byte, 64)
	for i := range garbage {
		garbage[i] = make([]byte, 1<<20)
		for j := range garbage[i] {
			garbage[i][j] = byte(j)
		}
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	runtime.GC()
	before := free()
	m.Settle()
	if after := free(); after > 8<<20 {
		t.Errorf("free heap kept after Settle: %d bytes (%d before)", after, before)
	}
}

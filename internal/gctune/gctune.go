// Package gctune sets the garbage collector for kaasctl's runs: short
// commands, commands reading one large input, and the long-lived exporter.
package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Start sets the garbage collector for kaasctl's work: short runs
// over large inputs (100,000 offset files, 1 GB of logs, 100,000-entry
// assignments) collect less often (GOGC 400) within a 448 MiB soft memory
// limit, so a million-entry assignment lists in under 512 MB. Until the
// first collection GOGC is startGCPercent: most runs end before the heap
// reaches its first goal of about 130 MB and never collect (a live list
// of 10,000 groups allocates about 15 MB, one of 100,000 about 125 MB:
// collecting at 64 MB freed nothing its peak needed, and cost it a sixth
// of its CPU); a run that gets there collects once and goes on at 400. GOGC and GOMEMLIMIT in the environment still
// win. main calls it (through commands.TuneRuntime); the benchmarks call
// it too, so they measure what the binary does.
func Start() {
	if os.Getenv("GOGC") == "" {
		gcSettled.Store(false)
		debug.SetGCPercent(startGCPercent)
		// The sentinel becomes garbage at once, so its cleanup runs after
		// the first collection.
		runtime.AddCleanup(new([16]byte), func(struct{}) { settleGC() }, struct{}{})
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(448 << 20)
	}
}

const (
	// startGCPercent is GOGC until the first collection: the runtime's
	// 4 MB minimum heap times 33.
	startGCPercent = 3200
	// runGCPercent is GOGC after it.
	runGCPercent = 400
)

// gcSettled is set once GOGC no longer starts high: after the first
// collection, or when a command chose its own (LargeInput, Server),
// which the first collection then leaves alone.
var gcSettled atomic.Bool

// settleGC brings GOGC from startGCPercent to runGCPercent, unless it is
// settled already.
func settleGC() {
	if gcSettled.CompareAndSwap(false, true) {
		debug.SetGCPercent(runGCPercent)
	}
}

// LargeInputBytes is the input size above which collecting often costs less
// than the memory it saves: past it, LargeInput brings GOGC back to 100.
const LargeInputBytes = 16 << 20

// LargeInput is called before a command reads an input of size bytes that
// it keeps in memory (an assignment with a million entries): past
// LargeInputBytes the collector runs at GOGC 100, so the peak is about
// twice what is live (a million-entry list in under 256 MB) without the
// soft memory limit doing the work. A GOGC in the environment still wins.
// It reports whether the input counts as large; the caller then calls
// InputRead once the input is parsed.
func LargeInput(size int64) bool {
	if size < LargeInputBytes {
		return false
	}
	if os.Getenv("GOGC") == "" {
		gcSettled.Store(true)
		debug.SetGCPercent(100) // idempotent: a second large input changes nothing
	}
	return true
}

// InputRead collects once after a large input is parsed: its raw
// bytes are garbage now, and the collector's next goal is set from what
// stays live rather than from the parse's peak.
func InputRead() { runtime.GC() }

// Server is the collector setting for the exporter, which lives for
// days and holds a refresh's observations between refreshes: GOGC 100
// (the peak is about twice what is live) instead of the short commands'
// 400, whose heap would grow to five times a 100,000-group refresh. A GOGC
// in the environment still wins; the soft memory limit stays. A served
// exporter goes on at GOGC 50 (ServerMemory.Start).
func Server() {
	if os.Getenv("GOGC") == "" {
		gcSettled.Store(true)
		debug.SetGCPercent(100)
	}
}

// Sandbox is the collector setting for 'kaasctl sandbox', which serves for
// hours and keeps every group a user seeds in memory (a 100,000-group
// sandbox holds about 200 MB live and allocates over 100 MB answering
// one client's listing): GOGC runGCPercent from the start, and no soft
// memory limit. At the short commands' 448 MiB such a sandbox would reach
// the limit on nearly every listing and collect once a client round, in
// step with a benchmark's alternating runs, so that whichever client ran
// second paid for the first one's garbage. GOGC and GOMEMLIMIT in the
// environment still win.
func Sandbox() {
	if os.Getenv("GOGC") == "" {
		gcSettled.Store(true)
		debug.SetGCPercent(runGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// ServerMemory is a served exporter's collector: its soft memory limit
// set from what its refreshes hold, and the memory each refresh took
// given back when it ends.
//
// GOGC 100 alone lets the heap grow to twice what was live at the last
// collection, and a collection in the middle of a refresh counts its
// whole observation: a 100,000-group exporter holding 120 MB between
// refreshes and 200 MB at a refresh's peak grew to 450 MB resident. A
// fixed limit below that peak makes the collector run continuously
// instead. So after each refresh's observation the exporter collects once
// (Peak), and the limit is set a quarter above the largest of the last
// peaks, plus 16 MiB (at least 64 MiB): the collector works harder only
// near the peak, and a larger selection raises the limit at its first
// refresh. GOMEMLIMIT in the environment wins.
//
// Until the first peak there is no limit to keep the heap near what is
// live, and the first refresh's heap grew to twice its observation (280
// MB resident at 100,000 groups, against 250 MB at later refreshes): a
// served exporter collects at GOGC 50 (Start), half again what is live.
//
// Once the refresh is published, its observation and the page's scratch
// are garbage, and until the next refresh, most of the interval, the
// exporter holds only its windows and its snapshot. Left to itself the
// runtime keeps those pages: its scavenger returns only what exceeds the
// heap goal of the last collection, which Peak made while the observation
// was live, so the process stayed resident at about its refresh's peak
// (60 MB at 10,000 groups that hold 13 MB between refreshes). Settle
// collects once more and returns what is free to the system.
type ServerMemory struct {
	peaks [8]uint64
	n     int
	// Limit is the soft memory limit last set (0: none, GOMEMLIMIT set).
	Limit int64
}

// servedGCPercent is a served exporter's GOGC.
const servedGCPercent = 50

// Start sets GOGC for a served exporter (a GOGC in the environment still
// wins), before its first refresh.
func (m *ServerMemory) Start() {
	if os.Getenv("GOGC") == "" {
		gcSettled.Store(true)
		debug.SetGCPercent(servedGCPercent)
	}
}

// Peak collects, notes what is live as this refresh's peak and sets the
// limit; it returns the live heap in bytes.
func (m *ServerMemory) Peak() uint64 {
	runtime.GC()
	live := heapLive()
	m.peaks[m.n%len(m.peaks)] = live
	m.n++
	m.setLimit()
	return live
}

// Settle ends a refresh, once it is published and its observation
// dropped: it collects and returns the memory freed to the system
// (debug.FreeOSMemory), so that resident memory between refreshes is what
// the exporter keeps and the heap goal is set from that. It costs one
// collection a refresh of what is live between refreshes.
func (m *ServerMemory) Settle() { debug.FreeOSMemory() }

// setLimit sets the limit from the last peaks.
func (m *ServerMemory) setLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var most uint64
	for _, p := range m.peaks {
		most = max(most, p)
	}
	m.Limit = max(64<<20, int64(most+most/4)+16<<20)
	debug.SetMemoryLimit(m.Limit)
}

// heapLive is the heap the last collection found live, in bytes.
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

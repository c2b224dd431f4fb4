package commands

import (
	"os"
	"runtime"
	"runtime/debug"
)

// TuneRuntime sets the garbage collector for kaasctl's work: short runs
// over large inputs (100,000 offset files, 1 GB of logs, 100,000-entry
// assignments) collect less often (GOGC 400) within a 448 MiB soft memory
// limit, so a million-entry assignment lists in under 512 MB. GOGC and GOMEMLIMIT in the environment still win. main calls it;
// the benchmarks call it too, so they measure what the binary does.
func TuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(448 << 20)
	}
}

// largeInputBytes is the input size above which collecting often costs less
// than the memory it saves: past it, LargeInput brings GOGC back to 100.
const largeInputBytes = 16 << 20

// LargeInput is called before a command reads an input of size bytes that
// it keeps in memory (an assignment with a million entries): past
// largeInputBytes the collector runs at GOGC 100, so the peak is about
// twice what is live (a million-entry list in under 256 MB) without the
// soft memory limit doing the work. A GOGC in the environment still wins.
// It reports whether the input counts as large; the caller then calls
// LargeInputRead once the input is parsed.
func LargeInput(size int64) bool {
	if size < largeInputBytes {
		return false
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100) // idempotent: a second large input changes nothing
	}
	return true
}

// LargeInputRead collects once after a large input is parsed: its raw
// bytes are garbage now, and the collector's next goal is set from what
// stays live rather than from the parse's peak.
func LargeInputRead() { runtime.GC() }

// ServerRuntime is the collector setting for the exporter, which lives for
// days and holds a refresh's observations between refreshes: GOGC 100
// (the peak is about twice what is live) instead of the short commands'
// 400, whose heap would grow to five times a 100,000-group refresh. A GOGC
// in the environment still wins; the soft memory limit stays.
func ServerRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
}

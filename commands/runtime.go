package commands

import (
	"os"
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

package commands

import "github.com/kaasctl/kaasctl/internal/gctune"

// TuneRuntime sets the garbage collector for a kaasctl run (gctune.Start);
// main calls it, and the benchmarks, so they measure what the binary does.
func TuneRuntime() { gctune.Start() }

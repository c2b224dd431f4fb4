// Command kaasctl is the operations toolkit for kaas.
package main

import (
	"os"
	"runtime/debug"

	"github.com/kaasctl/kaasctl/commands"
)

func main() {
	// kaasctl runs briefly over large inputs (100,000 offset files, 1 GB of
	// logs, 100,000-entry assignments): collect garbage less often, within
	// a soft memory limit. GOGC and GOMEMLIMIT still win when set.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
	os.Exit(commands.Main(os.Args, commands.System()))
}

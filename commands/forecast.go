package commands

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/exit"
)

// drainWindowFlag is --drain-window of the live listings, bound to dest:
// time to drain and the retention forecast need the group observed over
// a window.
func drainWindowFlag(dest *time.Duration) cli.Flag {
	return completion.DurationFlag(dest, "drain-window", 0, "observe the groups over `D` (4 observations, D/3 apart) for the time to drain and the retention forecast (0: not estimated)")
}

// checkDrainWindow holds --drain-window to what four observations need.
func checkDrainWindow(w time.Duration) error {
	if w < 0 {
		return exit.UsageErrorf("--drain-window must not be negative")
	}
	if w > 0 && w < 300*time.Millisecond {
		return exit.UsageErrorf("--drain-window %s is too short for four observations (at least 300ms)", w)
	}
	return nil
}

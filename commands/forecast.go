package commands

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// drainWindowFlag is --drain-window of the live listings: time to drain and
// the retention forecast need the group observed over a window.
func drainWindowFlag() cli.Flag {
	return durationFlag("drain-window", 0, "observe the groups over `D` (4 observations, D/3 apart) for the time to drain and the retention forecast (0: not estimated)")
}

// drainWindow reads --drain-window.
func drainWindow(c *cli.Context) (time.Duration, error) {
	w := flagDuration(c, "drain-window")
	if w < 0 {
		return 0, exit.UsageErrorf("--drain-window must not be negative")
	}
	if w > 0 && w < 300*time.Millisecond {
		return 0, exit.UsageErrorf("--drain-window %s is too short for four observations (at least 300ms)", w)
	}
	return w, nil
}

// observeForecasts observes groups (the volume when l is set, and the
// brokers) four times over window and returns each group's forecast
// (exporter.ObserveForecasts).
func observeForecasts(ctx context.Context, g *Globals, l *volume.Layout, cl *wire.Client, groups []string, window time.Duration) map[string]*inspect.GroupForecast {
	return exporter.ObserveForecasts(ctx, l, cl, groups, window, g)
}

package commands

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
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
// brokers) four times over window and returns each group's forecast.
func observeForecasts(ctx context.Context, g *Globals, l *volume.Layout, cl *wire.Client, groups []string, window time.Duration) map[string]*inspect.GroupForecast {
	only := make(map[string]bool, len(groups))
	for _, n := range groups {
		only[n] = true
	}
	src := &observe.Source{Client: cl, Only: only}
	if l != nil {
		wl := l.WithGeneration()
		src.Layout = &wl
	}
	interval := window / (inspect.MinForecastSamples)
	out := map[string]*inspect.GroupForecast{}
	healths, _ := observeHealth(ctx, g, src, window, interval, inspect.HealthOptions{}, nil)
	for _, h := range healths {
		out[h.Group] = h.Forecast()
	}
	return out
}

// drainSummary is the time to drain for humans, with the window it used.
func drainSummary(f *inspect.GroupForecast) string {
	if f == nil {
		return "- (observe with --drain-window D: the estimate needs " + strconv.Itoa(inspect.MinForecastSamples) + " observations)"
	}
	d := f.Drain
	if d == nil || !d.Known {
		return "- (fewer than " + strconv.Itoa(inspect.MinForecastSamples) + " observations with a known lag)"
	}
	return fmt.Sprintf("%s  (consumed %.1f/s, produced %.1f/s over %s, %d observations)", d.Text(), d.ConsumeRate, d.ProduceRate,
		inspect.FormatSeconds(d.WindowSeconds), d.Samples)
}

// retentionSummary is the retention forecast for humans.
func retentionSummary(f *inspect.GroupForecast) string {
	if f == nil || f.Retention == nil {
		return "-"
	}
	r := f.Retention
	switch {
	case !r.Known:
		return fmt.Sprintf("no log start advancing toward an unread record over %s (kaas moves it only on DeleteRecords)", inspect.FormatSeconds(r.WindowSeconds))
	case r.Breached:
		return "records of " + r.Partition + " were deleted before the group read them (committed offset below the log start)"
	}
	for _, p := range r.Partitions {
		if p.Partition == r.Partition {
			return fmt.Sprintf("the log start passes the committed offset of %s in %s (log start %d, committed %d, log start +%.1f/s over %s)",
				r.Partition, inspect.FormatSeconds(r.Seconds), p.Start, p.Committed, p.StartRate, inspect.FormatSeconds(r.WindowSeconds))
		}
	}
	return r.Text()
}

// forecastDrainCell is the DRAIN column: the estimate, "not draining",
// "caught up", "keeping up", or "-" (not observed, or too few observations).
func forecastDrainCell(f *inspect.GroupForecast) string {
	if f == nil {
		return "-"
	}
	return f.Drain.Text()
}

// forecastRetentionCell is the RETENTION column.
func forecastRetentionCell(f *inspect.GroupForecast) string {
	if f == nil {
		return "-"
	}
	return f.Retention.Text()
}

package watchrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// volumeNotThereYet reports whether resolving the volume failed only
// because its directories do not exist yet.
func volumeNotThereYet(err error) bool {
	var fe *volume.FileError
	if !errors.As(err, &fe) {
		return false
	}
	return strings.Contains(fe.Problem, "does not exist") || strings.Contains(fe.Problem, "holds neither")
}

// LayoutOrWait resolves the volume (resolve); a cluster not created yet is waited
// for (without --once), as the watch waits for a missing assignment.json
// (its help promises to retry).
func LayoutOrWait(ctx context.Context, resolve func() (volume.Layout, error), g render.Notes, once bool, interval time.Duration) (volume.Layout, error) {
	l, err := resolve()
	if err != nil && !once && volumeNotThereYet(err) {
		g.Notef("%v; waiting for it to appear (Ctrl-C to stop)", err)
		if l, err = waitForVolume(ctx, resolve, interval); err == nil {
			g.Notef("the volume appeared: cluster dir %s", l.ClusterDir)
		}
	}
	return l, err
}

// waitForVolume resolves the volume every interval until it exists (or
// ctx ends: then the last error).
func waitForVolume(ctx context.Context, resolve func() (volume.Layout, error), interval time.Duration) (volume.Layout, error) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l, err := resolve()
			if err == nil {
				return l, nil
			}
			return l, fmt.Errorf("%w (the watch ended before the volume appeared)", err)
		case <-tick.C:
			l, err := resolve()
			if err == nil || !volumeNotThereYet(err) {
				return l, err
			}
		}
	}
}

// AssignmentPath is the file a watch follows: path (--assignment), or,
// with a volume, its assignment.json (a volume not created yet is waited
// for, as LayoutOrWait does); the layout is the volume's (zero without
// one).
func AssignmentPath(ctx context.Context, path string, hasVolume bool, resolve func() (volume.Layout, error), g render.Notes, once bool, interval time.Duration) (string, volume.Layout, error) {
	var layout volume.Layout
	if hasVolume {
		var err error
		if layout, err = LayoutOrWait(ctx, resolve, g, once, interval); err != nil {
			return "", layout, err
		}
		if path == "" {
			path = layout.AssignmentPath()
		}
	}
	if path == "" {
		return "", layout, exit.UsageErrorf("nothing to watch: give --data-dir/--cluster-dir (or KAAS_DATA_DIR) or --assignment FILE")
	}
	return path, layout, nil
}

// Mode says how a watch learns of changes: fsnotify events (unless
// pollOnly) and a poll every interval.
func Mode(pollOnly bool, interval time.Duration) string {
	if pollOnly {
		return "poll every " + interval.String()
	}
	return "fsnotify + poll every " + interval.String()
}

// Context is ctx ended by the first SIGINT or SIGTERM, or after timeout
// (0: none): how a watch stops.
func Context(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	if timeout > 0 {
		tctx, cancel := context.WithTimeout(ctx, timeout)
		return tctx, func() { cancel(); stop() }
	}
	return ctx, stop
}

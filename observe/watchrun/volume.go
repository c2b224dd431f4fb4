package watchrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

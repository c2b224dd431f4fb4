package commands

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kaasctl/kaasctl/internal/stopsignal"
)

// A write run (offsets reset/delete --execute) and SIGINT/SIGTERM: the
// first signal lets the group being written finish (each write is atomic
// and verified; cutting it would leave its outcome unknown), writes
// nothing more, and says so; the run then ends with the record of what was
// written. A second signal is not caught: it ends the process at once, and
// the temp file a write may leave then is removed by the next run
// (repair's sweep of kaasctl's own temp files).

type interruptWatch struct {
	g    *Globals
	sig  *stopsignal.Watch // nil: the run is not the process's own
	said bool
}

// requested reports whether a signal arrived; the first time it does, it
// says so (from the writing goroutine, so stderr has one writer).
func (w *interruptWatch) requested() bool {
	s := w.sig.Signal()
	if s == nil {
		return false
	}
	if !w.said {
		w.said = true
		fmt.Fprintf(w.g.IO.Err, "kaasctl: %v: stopping after the group that was being written; nothing more is written (send it again to quit at once)\n", s)
	}
	return true
}

// release stops catching.
func (w *interruptWatch) release() { w.sig.Release() }

// onInterrupt catches the first SIGINT or SIGTERM for the rest of the
// write run (only for the process's own streams); release stops catching.
func onInterrupt(g *Globals) *interruptWatch {
	w := &interruptWatch{g: g}
	if g.IO.Process {
		w.sig = stopsignal.Catch()
	}
	return w
}

// untilSignal is ctx ended by the first SIGINT or SIGTERM: how a
// long-running command (exporter, sandbox, watch) stops cleanly. A write
// run uses onInterrupt instead, which lets the group in flight finish.
func untilSignal(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// Package stopsignal catches the first SIGINT or SIGTERM of a run that
// must not be cut in the middle (a bulk write of offsets): the signal is
// recorded for the worker to poll between units of work, and a second one
// takes the default action again (the process ends at once).
package stopsignal

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// Watch records the first SIGINT or SIGTERM until Release. The zero value
// and nil catch nothing (a run that is not the process's own, such as an
// in-process test, must not take another test's signal).
type Watch struct {
	sig  atomic.Pointer[os.Signal]
	ch   chan os.Signal
	done chan struct{}
	once sync.Once
}

// Catch starts catching SIGINT and SIGTERM; the caller must Release.
func Catch() *Watch {
	return catch(os.Interrupt, syscall.SIGTERM)
}

func catch(sigs ...os.Signal) *Watch {
	w := &Watch{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(w.ch, sigs...)
	go w.wait()
	return w
}

// wait keeps the first signal and stops catching, so that the next one
// ends the process.
func (w *Watch) wait() {
	select {
	case s := <-w.ch:
		w.sig.Store(&s)
		signal.Stop(w.ch)
	case <-w.done:
	}
}

// Signal is the signal that arrived, nil while none has.
func (w *Watch) Signal() os.Signal {
	if w == nil {
		return nil
	}
	if s := w.sig.Load(); s != nil {
		return *s
	}
	return nil
}

// Release stops catching (idempotent; nil-safe).
func (w *Watch) Release() {
	if w == nil || w.ch == nil {
		return
	}
	w.once.Do(func() {
		signal.Stop(w.ch)
		close(w.done)
	})
}

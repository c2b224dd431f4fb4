package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// StopReason says why Console returned.
type StopReason int

// The reasons a sandbox run stops.
const (
	StopCanceled StopReason = iota // the context ended (a signal)
	StopControl                    // quit was requested on the control endpoint
	StopTyped                      // "quit" was typed
)

// Console is the sandbox's foreground loop: it runs the commands read from
// in, one a line, writing each reply to out and each error to errOut, until
// ctx ends, quit is closed or "quit" is typed. When in ends the sandbox
// keeps running until one of the other two.
func (s *Sandbox) Console(ctx context.Context, in io.Reader, quit <-chan struct{}, out, errOut io.Writer) StopReason {
	lines := readLines(in)
	for {
		select {
		case <-ctx.Done():
			return StopCanceled
		case <-quit:
			return StopControl
		case line, ok := <-lines:
			if !ok {
				lines = nil // in ended: wait for a signal or the control endpoint
				continue
			}
			reply, err := s.Command(line)
			switch {
			case errors.Is(err, ErrQuit):
				return StopTyped
			case err != nil:
				fmt.Fprintf(errOut, "error: %v\n", err)
			case reply != "":
				fmt.Fprintf(out, "%s\n", reply)
			}
		}
	}
}

// readLines streams the lines of r until it ends; a nil r gives none. The
// reader is left blocked on r when the console returns first: stdin is
// the process's to close.
func readLines(r io.Reader) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		if r == nil {
			return
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	return out
}

// QuitRequest is a quit signal any number of callers may send (the
// control endpoint's /quit): Done is closed on the first Request.
type QuitRequest struct {
	done chan struct{}
	once sync.Once
}

// NewQuitRequest returns a quit signal not yet sent.
func NewQuitRequest() *QuitRequest { return &QuitRequest{done: make(chan struct{})} }

// Request sends the signal; later calls do nothing.
func (q *QuitRequest) Request() { q.once.Do(func() { close(q.done) }) }

// Done is closed once the signal is sent.
func (q *QuitRequest) Done() <-chan struct{} { return q.done }

package watch

import "context"

// Event is what a Follower hands over: a new version, or a problem with
// the file (OK: it is readable again).
type Event struct {
	Version *Version
	Problem string
	OK      bool
}

// Follower runs Run in its own goroutine and hands every version and
// problem over on Events, so the caller does its work (which may wait on
// other things) in its own goroutine while the file is still read: a
// version the controller replaces while the caller is busy is read and
// kept (up to the buffer; then Run waits for the caller).
type Follower struct {
	Events <-chan Event
	done   chan struct{}
	err    error
}

// Follow starts following opt.Path (opt.OnVersion and opt.OnProblem are
// replaced) until ctx is done; buffer is how many events may wait.
func Follow(ctx context.Context, opt Options, buffer int) *Follower {
	events := make(chan Event, max(buffer, 1))
	f := &Follower{Events: events, done: make(chan struct{})}
	send := func(e Event) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}
	opt.OnVersion = func(v Version) { send(Event{Version: &v}) }
	opt.OnProblem = func(msg string, ok bool) { send(Event{Problem: msg, OK: ok}) }
	go func() {
		defer close(f.done)
		f.err = Run(ctx, opt)
	}()
	return f
}

// Done is closed once the follow has ended (ctx done, or Run could not
// start); Err then says why.
func (f *Follower) Done() <-chan struct{} { return f.done }

// Err is Run's error once Done is closed (nil after ctx was done).
func (f *Follower) Err() error {
	<-f.done
	return f.err
}

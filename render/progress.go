package render

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress shows a one-line counter on stderr for long work: only on a
// terminal, only once the work has run for Delay, at most every Interval,
// and it erases itself when done. A nil *Progress is a valid no-op, so
// callers never branch on whether progress is shown.
type Progress struct {
	w        io.Writer
	label    string
	total    int64
	start    time.Time
	last     time.Time
	mu       sync.Mutex
	n        int64
	shown    bool
	now      func() time.Time
	Delay    time.Duration
	Interval time.Duration
}

// NewProgress returns a progress line for label, or nil when it must not
// show (not a terminal, or quiet). total <= 0 means unknown.
func NewProgress(w io.Writer, tty, quiet bool, label string, total int64) *Progress {
	if !tty || quiet || w == nil {
		return nil
	}
	return newProgress(w, label, total, time.Now)
}

func newProgress(w io.Writer, label string, total int64, now func() time.Time) *Progress {
	t := now()
	return &Progress{w: w, label: label, total: total, start: t, now: now, Delay: time.Second, Interval: 200 * time.Millisecond}
}

// Add counts n more items done.
func (p *Progress) Add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	t := p.now()
	if t.Sub(p.start) < p.Delay || t.Sub(p.last) < p.Interval {
		return
	}
	p.last = t
	p.shown = true
	if p.total > 0 {
		fmt.Fprintf(p.w, "\r\033[K%s: %d/%d (%d%%)", p.label, p.n, p.total, p.n*100/p.total)
	} else {
		fmt.Fprintf(p.w, "\r\033[K%s: %d", p.label, p.n)
	}
}

// Done erases the line if it was shown.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

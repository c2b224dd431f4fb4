package render

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	if p := NewProgress(&bytes.Buffer{}, false, false, "x", 0); p != nil {
		t.Error("progress on a non-terminal")
	}
	if p := NewProgress(&bytes.Buffer{}, true, true, "x", 0); p != nil {
		t.Error("progress with --quiet")
	}
	var nilP *Progress
	nilP.Add(1)
	nilP.Done()

	var b bytes.Buffer
	clock := time.Unix(0, 0)
	p := newProgress(&b, "scanning", 100, func() time.Time { return clock })
	p.Add(10)
	if b.Len() != 0 {
		t.Errorf("shown before the delay: %q", b.String())
	}
	clock = clock.Add(1500 * time.Millisecond)
	p.Add(10)
	if !strings.Contains(b.String(), "scanning: 20/100 (20%)") {
		t.Errorf("got %q", b.String())
	}
	n := b.Len()
	clock = clock.Add(50 * time.Millisecond)
	p.Add(1)
	if b.Len() != n {
		t.Error("redrawn within the interval")
	}
	p.Done()
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("not erased: %q", b.String())
	}
}

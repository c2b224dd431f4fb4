package sandbox

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func TestConsoleStops(t *testing.T) {
	t.Parallel()
	sb, err := New(Options{DataDir: t.TempDir(), Brokers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()

	// Typed commands are answered in order; an error goes to errOut;
	// "quit" stops.
	var out, errOut bytes.Buffer
	never := NewQuitRequest()
	r := sb.Console(context.Background(), strings.NewReader("status\nbogus\nquit\nstatus\n"), never.Done(), &out, &errOut)
	if r != StopTyped || !strings.Contains(out.String(), "kaas-0") || !strings.HasPrefix(errOut.String(), "error: ") {
		t.Fatalf("typed quit: %v\nout %q\nerr %q", r, out.String(), errOut.String())
	}
	if strings.Count(out.String(), "assignment v") != 1 {
		t.Fatalf("a line after quit was run: %q", out.String())
	}

	// stdin that ends keeps the sandbox running until the control
	// endpoint's quit (requested twice: the second is a no-op).
	q := NewQuitRequest()
	q.Request()
	q.Request()
	if r := sb.Console(context.Background(), strings.NewReader(""), q.Done(), io.Discard, io.Discard); r != StopControl {
		t.Fatalf("control quit: %v", r)
	}

	// A canceled context (a signal) stops it with no stdin at all.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := sb.Console(ctx, nil, never.Done(), io.Discard, io.Discard); r != StopCanceled {
		t.Fatalf("canceled: %v", r)
	}
}

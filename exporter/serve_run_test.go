package exporter

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/observe"
)

// Serve answers scrapes while it refreshes and, once its context is done,
// shuts the server down and returns nil: the port no longer answers.
func TestServeUntilDone(t *testing.T) {
	t.Parallel()
	e := New(Options{Source: &observe.Source{}, Interval: time.Hour})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln, ServeOptions{}) }()
	waitFor(t, "/healthz answers 200 after the first refresh", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after cancel: %v, want nil", err)
		}
	case <-time.After(ShutdownGrace + 20*time.Second):
		t.Fatal("Serve did not return after its context was done")
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the port still accepts connections after Serve returned")
	}
}

// A server whose listener breaks ends Serve with that error instead of
// leaving the refreshes running for nobody.
func TestServeStopsWhenTheListenerBreaks(t *testing.T) {
	t.Parallel()
	e := New(Options{Source: &observe.Source{}, Interval: time.Hour})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Serve(context.Background(), ln, ServeOptions{}) }()
	ln.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Serve returned nil after its listener broke")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve kept running after its listener broke")
	}
}

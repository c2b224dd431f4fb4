//go:build unix

package exporter

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/observe"
)

// bigSnapshot stands in for a refresh of many groups: a page far larger
// than the socket buffers, so a client that does not read blocks the write.
func bigSnapshot(e *Exporter, size int) {
	// 64 KiB of text compressed once, its piece repeated: pieces in a row
	// are one stream, so the page is size bytes of text.
	chunk := bytes.Repeat([]byte("kaas_group_lag{group=\"g\"} 1\n"), (64<<10)/28)
	z := newZseg()
	z.Write(chunk)
	z.end()
	var p zpage
	for range max(1, size/len(chunk)) {
		p.deflate = append(p.deflate, z.out.Bytes()...)
		p.crc = crcConcat(p.crc, z.crc, z.n)
		p.n += z.n
	}
	e.snap.Store(&snapshot{time: time.Now(), page: p})
}

// serveTest runs e's Server on loopback until the test ends.
func serveTest(t *testing.T, e *Exporter, so ServeOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, sln := e.Server(ln, so)
	go srv.Serve(sln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
	})
	return ln.Addr().String()
}

// slowReader sends GET path and then reads nothing (a 4 KiB receive
// buffer): the server's write of the page blocks.
func slowReader(t testing.TB, addr, path string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n", path)
	return c
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func get(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Slow readers hold at most --max-requests pages: the next request waits
// for a slot and gets 503; a client that does not read is cut off at the
// write timeout, which frees its slot; methods other than GET/HEAD are 405
// even while every slot is taken.
func TestServeSlowReadersBounded(t *testing.T) {
	t.Parallel()
	e := New(Options{Source: &observe.Source{}})
	bigSnapshot(e, 16<<20)
	addr := serveTest(t, e, ServeOptions{MaxRequests: 2, QueueWait: 200 * time.Millisecond, WriteTimeout: 2 * time.Second})
	base := "http://" + addr

	slow := []net.Conn{slowReader(t, addr, "/metrics"), slowReader(t, addr, "/metrics")}
	waitFor(t, "two slow readers in flight", func() bool { return e.InFlight() == 2 })

	code, h, body := get(t, "GET", base+"/metrics")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "--max-requests") {
		t.Errorf("third request while two are held: HTTP %d %v %q, want 503 with Retry-After", code, h, body)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		for _, p := range []string{"/metrics", "/api/health", "/"} {
			if code, h, _ := get(t, m, base+p); code != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: HTTP %d (Allow %q), want 405", m, p, code, h.Get("Allow"))
			}
		}
	}
	// The write timeout cuts the slow readers off and frees the slots.
	waitFor(t, "the slow readers cut off at the write timeout", func() bool { return e.InFlight() == 0 })
	for _, c := range slow {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		n, _ := io.Copy(io.Discard, c) // ends: the server closed the connection
		if n >= 16<<20 {
			t.Errorf("a slow reader got the whole page (%d bytes) despite the write timeout", n)
		}
	}
	if code, _, body := get(t, "GET", base+"/metrics"); code != 200 || !strings.HasPrefix(body, "kaas_group_lag") {
		t.Errorf("after the slow readers: HTTP %d", code)
	}
	if v := e.rejected.Load(); v != 1 {
		t.Errorf("rejected %d, want 1", v)
	}
}

// Connections beyond --max-connections are answered 503 and closed; one
// that never finishes its request headers is closed at the header timeout.
func TestServeConnectionCap(t *testing.T) {
	t.Parallel()
	e := New(Options{Source: &observe.Source{}})
	bigSnapshot(e, 1<<10)
	addr := serveTest(t, e, ServeOptions{MaxConns: 3, ReadHeaderTimeout: time.Second})
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		idle = append(idle, c)
	}
	waitFor(t, "three connections accepted", func() bool { return e.Conns() == 3 })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("fourth connection: %v %v, want 503", resp, err)
	}
	// The idle ones never sent a request: closed at the header timeout.
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("an idle connection: %v, want EOF (closed by the server)", err)
		}
	}
	waitFor(t, "the connections counted closed", func() bool { return e.Conns() == 0 })
	if code, _, _ := get(t, "GET", "http://"+addr+"/healthz"); code != 200 {
		t.Errorf("after the cap: HTTP %d", code)
	}
}

// /api/health is encoded once per refresh and shared: concurrent requests
// return the same bytes without encoding again.
func TestHealthDocumentSharedPerRefresh(t *testing.T) {
	t.Parallel()
	e := New(Options{Source: &observe.Source{}})
	bigSnapshot(e, 1<<10)
	sn := e.snap.Load()
	a, b := e.healthPage(sn), e.healthPage(sn)
	if a == nil || a != b || a.n == 0 {
		t.Fatal("the health document was encoded twice for one refresh")
	}
}

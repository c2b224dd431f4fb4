package exporter

import (
	"compress/flate"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// What an HTTP client can hold. A scrape is served from the refresh's
// shared page (its text and gzip, written once per refresh and never copied
// per request), but a client that reads slowly keeps that page alive while
// refreshes replace it: forty such clients held forty pages. So requests
// in flight are capped (more wait briefly for a slot, then get 503),
// writes have a deadline, idle and half-sent requests are dropped, and
// connections beyond a cap are answered 503 and closed.

// ServeOptions bound the exporter's HTTP server. Zero values take the
// defaults below.
type ServeOptions struct {
	// MaxRequests is how many requests for /metrics or /api/health are
	// served at once; QueueWait how long one more waits for a slot before
	// a 503 with Retry-After.
	MaxRequests int
	QueueWait   time.Duration
	// MaxConns caps open connections; one more is answered 503 and closed.
	MaxConns int
	// WriteTimeout bounds reading a request and writing its answer
	// (a client that does not read within it is cut off and the page it
	// held is released). ReadHeaderTimeout bounds the request headers,
	// IdleTimeout a kept-alive connection between requests.
	WriteTimeout, ReadHeaderTimeout, IdleTimeout time.Duration
}

// Serving defaults: two Prometheus servers (an HA pair) scraping, plus a
// few people running 'groups health --exporter', fit in MaxRequests.
const (
	DefaultMaxRequests       = 4
	DefaultQueueWait         = 5 * time.Second
	DefaultMaxConns          = 64
	DefaultWriteTimeout      = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = time.Minute
)

func (so ServeOptions) withDefaults() ServeOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if so.MaxRequests <= 0 {
		so.MaxRequests = DefaultMaxRequests
	}
	if so.MaxConns <= 0 {
		so.MaxConns = DefaultMaxConns
	}
	def(&so.QueueWait, DefaultQueueWait)
	def(&so.WriteTimeout, DefaultWriteTimeout)
	def(&so.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&so.IdleTimeout, DefaultIdleTimeout)
	return so
}

// Server is the exporter's HTTP server on ln (see ServeOptions); the
// caller runs Serve on the listener it returns and Shutdown at the end.
func (e *Exporter) Server(ln net.Listener, so ServeOptions) (*http.Server, net.Listener) {
	so = so.withDefaults()
	e.serve = so
	e.slots = make(chan struct{}, so.MaxRequests)
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: so.ReadHeaderTimeout, ReadTimeout: so.WriteTimeout,
		WriteTimeout: so.WriteTimeout, IdleTimeout: so.IdleTimeout}
	return srv, &limitListener{Listener: ln, max: int64(so.MaxConns), conns: &e.conns, rejected: &e.rejected}
}

// ShutdownGrace is how long Serve lets requests in flight finish once
// its context is done.
const ShutdownGrace = 5 * time.Second

// Serve serves e's endpoints on ln (bounded by so) while Run refreshes,
// until ctx is done; then requests in flight get ShutdownGrace to finish.
// A server that fails (its listener broke) stops the refreshes too, so
// the exporter does not go on refreshing for nobody: the error is the
// server's, else Run's.
func (e *Exporter) Serve(ctx context.Context, ln net.Listener, so ServeOptions) error {
	srv, sln := e.Server(ln, so)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		err := srv.Serve(sln)
		if !errors.Is(err, http.ErrServerClosed) {
			cancel()
		}
		served <- err
	}()
	runErr := e.Run(ctx)
	sctx, stop := context.WithTimeout(context.Background(), ShutdownGrace)
	defer stop()
	srv.Shutdown(sctx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return runErr
}

// InFlight is the number of requests being served (for tests and the
// exporter's own metrics); Conns the open connections.
func (e *Exporter) InFlight() int { return int(e.inFlight.Load()) }
func (e *Exporter) Conns() int    { return int(e.conns.Load()) }

// limited serves h within a request slot: it waits up to QueueWait for
// one, else answers 503. Without a Server (tests calling Handler
// directly) there is no limit.
func (e *Exporter) limited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if e.slots != nil {
			t := time.NewTimer(e.serve.QueueWait)
			select {
			case e.slots <- struct{}{}:
				t.Stop()
				defer func() { <-e.slots }()
			case <-t.C:
				// Waited QueueWait for a slot.
				e.rejected.Add(1)
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(e.serve.QueueWait/time.Second))))
				http.Error(w, "too many requests in flight (--max-requests); retry later", http.StatusServiceUnavailable)
				return
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		e.inFlight.Add(1)
		defer e.inFlight.Add(-1)
		h(w, r)
	}
}

// readOnly answers 405 to anything but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, r.Method+" is not allowed: the exporter is read-only (GET or HEAD)", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// limitListener answers connections beyond max with a 503 and closes them.
type limitListener struct {
	net.Listener
	max             int64
	conns, rejected *atomic.Int64
}

const overConnsReply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 55\r\n\r\ntoo many connections to the exporter (--max-connections)"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.conns.Add(1) > l.max {
			l.conns.Add(-1)
			l.rejected.Add(1)
			go func() {
				c.SetWriteDeadline(time.Now().Add(time.Second))
				io.WriteString(c, overConnsReply)
				c.Close()
			}()
			continue
		}
		return &countedConn{Conn: c, conns: l.conns}, nil
	}
}

type countedConn struct {
	net.Conn
	conns *atomic.Int64
	once  sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.conns.Add(-1) })
	return c.Conn.Close()
}

// serveHealth serves /api/health (gzipped when the client accepts it) from
// the snapshot's compressed document.
func (e *Exporter) serveHealth(w http.ResponseWriter, r *http.Request) {
	p := e.healthPage(e.snap.Load())
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		fw := deflatePool.Get().(*flate.Writer)
		p.writeGzip(w, nil, fw)
		fw.Reset(io.Discard)
		deflatePool.Put(fw)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(p.n))
	writeText(w, p)
}

// copyBufPool serves the uncompressed page from its compressed form.
var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// deflatePool reuses the writers that compress the exporter's own metrics
// after the page in each gzip scrape.
var deflatePool = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(io.Discard, flate.BestSpeed)
	return fw
}}

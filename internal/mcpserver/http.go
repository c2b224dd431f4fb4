package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// Handler is the streamable HTTP endpoint: stateless (every request
// stands alone, so a client of any protocol version is served and no
// session state piles up), JSON responses, bodies bounded to
// MaxRequestBytes, and the SDK's DNS-rebinding protection (a request to a
// loopback address must name a loopback host).
func (s *Server) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: s.opt.MaxRequestBytes})
	mux := http.NewServeMux()
	mux.Handle(Path, s.bodyLimit(h))
	return mux
}

// bodyLimit refuses a request body over MaxRequestBytes with 413 (the
// SDK reads at most that much of one without a length either).
func (s *Server) bodyLimit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opt.MaxRequestBytes {
			http.Error(w, fmt.Sprintf("request body of %d bytes: at most %d (kaasctl mcp --max-request-bytes)", r.ContentLength, s.opt.MaxRequestBytes), http.StatusRequestEntityTooLarge)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// CheckBind refuses to listen beyond loopback unless allowRemote: the
// tools read the volume and the brokers with the credentials kaasctl was
// started with, so anyone who can reach the endpoint can read them too.
// A host must be an IP address or "localhost" (a name could resolve
// anywhere).
func CheckBind(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %v (give HOST:PORT, e.g. 127.0.0.1:8750)", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	what := "a non-loopback address"
	switch {
	case host == "":
		what = "every interface"
	case net.ParseIP(host) == nil:
		what = "a host name (it could resolve beyond loopback)"
	}
	return fmt.Errorf("--http %s listens on %s: anyone who can reach it reads the volume and the brokers with this process's credentials; bind 127.0.0.1 or localhost, or pass --allow-remote to accept that", addr, what)
}

// ServeHTTP serves the endpoint on ln until ctx is done, with the
// server's bounds on headers, reads and writes.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: s.opt.CallTimeout + 30*time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

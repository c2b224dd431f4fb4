package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaasctl/kaasctl/internal/exit"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testArgs struct {
	Wait     string `json:"wait,omitempty"`
	Password string `json:"password,omitempty"`
	Fail     bool   `json:"fail,omitempty"`
}

type testDoc struct {
	Group string `json:"group"`
}

// testServer serves one tool that waits, fails or answers, over an
// in-memory connection.
func testServer(t *testing.T, opt Options) (*mcp.ClientSession, chan struct{}) {
	cs, _, release := testServerOf(t, opt)
	return cs, release
}

// testServerOf is testServer with the server, for more sessions.
func testServerOf(t *testing.T, opt Options) (*mcp.ClientSession, *Server, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	in, err := InputSchema(reflect.TypeFor[testArgs]())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := DocumentSchema(reflect.TypeFor[testDoc](), 2)
	if err != nil {
		t.Fatal(err)
	}
	tool := Tool{Name: "probe", InputSchema: in, OutputSchema: OutputSchema(doc, false),
		Call: func(ctx context.Context, raw json.RawMessage) (Result, error) {
			var a testArgs
			json.Unmarshal(raw, &a)
			if a.Fail {
				return Result{}, exit.Refusedf("refused, secret hunter2 named")
			}
			if a.Wait != "" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return Result{Structured: Output{Tool: "probe", Command: "kaasctl probe hunter2", Outcome: "ok", Notes: []string{},
				Result: json.RawMessage(`{"schemaVersion":2,"group":"g","groupBase64":"Zw=="}`)}}, nil
		}}
	s := New(opt, []Tool{tool})
	return connect(t, s), s, release
}

// connect is a new client session of s over an in-memory connection.
func connect(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close(); cancel() })
	return cs
}

// Calls beyond MaxCalls are refused as busy, a call past CallTimeout is an
// error, a typed error keeps its exit meaning, and the log and results
// never carry a redacted secret or a password argument.
func TestServerBoundsAndLog(t *testing.T) {
	t.Parallel()
	log := &lockedBuffer{}
	cs, srv, release := testServerOf(t, Options{Name: "t", MaxCalls: 1, CallTimeout: 5 * time.Second, Log: log,
		Redact: func(s string) string { return strings.ReplaceAll(s, "hunter2", "********") }})
	other := connect(t, srv) // a second client: the bound is the server's
	ctx := context.Background()
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		for {
			r, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"wait": "yes"}})
			if r != nil && r.IsError && strings.Contains(text(r), "busy") {
				continue // a probe of the other client took the slot first
			}
			first <- r
			return
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"password": "pw-in-args"}})
		if err == nil && r.IsError && strings.Contains(text(r), "busy") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never busy: %v %+v", err, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if r := <-first; r == nil || r.IsError {
		t.Fatalf("the waiting call: %+v", r)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"fail": true}})
	if err != nil || !r.IsError || !strings.HasPrefix(text(r), "refused (exit 4): refused, secret ******** named") {
		t.Errorf("typed error: %v %q", err, text(r))
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	if err != nil || r.IsError || strings.Contains(text(r), "hunter2") {
		t.Errorf("answer: %v %q", err, text(r))
	}
	if b, _ := json.Marshal(r.StructuredContent); !strings.Contains(string(b), `"groupBase64"`) || !strings.Contains(string(b), `"command":"kaasctl probe ********"`) {
		t.Errorf("structured %s", b)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"unknown": 1}}); err != nil || !r.IsError {
		t.Errorf("an unknown argument: %v %+v", err, r)
	}
	l := log.String()
	if strings.Contains(l, "hunter2") || strings.Contains(l, "pw-in-args") || !strings.Contains(l, `"outcome":"busy"`) || !strings.Contains(l, `"outcome":"refused"`) || !strings.Contains(l, `"password":"********"`) {
		t.Errorf("log:\n%s", l)
	}
}

// A call that outlives CallTimeout ends with an error saying so.
func TestServerCallTimeout(t *testing.T) {
	t.Parallel()
	cs, _ := testServer(t, Options{Name: "t", CallTimeout: 200 * time.Millisecond})
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{"wait": "yes"}})
	if err != nil || !r.IsError || !strings.Contains(text(r), "longer than its bound of 200ms") {
		t.Errorf("%v %q", err, text(r))
	}
}

func TestCheckBind(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{"127.0.0.1:1": true, "127.5.0.1:1": true, "[::1]:1": true, "localhost:1": true,
		"0.0.0.0:1": false, ":1": false, "10.0.0.1:1": false, "kaas.example:1": false, "nonsense": false} {
		if err := CheckBind(addr, false); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := CheckBind("0.0.0.0:1", true); err != nil {
		t.Errorf("--allow-remote: %v", err)
	}
}

func text(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

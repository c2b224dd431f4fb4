package commands

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaasctl/kaasctl/internal/mcpserver"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/when"
)

// mcpToolCalls are one call of every tool against the sandbox's groups.
var mcpToolCalls = map[string]map[string]any{
	"whois":               {"keys": []string{"idle", "lagging"}},
	"groups_list":         {},
	"groups_describe":     {"groups": []string{"lagging"}},
	"groups_explain":      {"window": "0"},
	"groups_health":       {"groups": []string{"idle"}, "window": "400ms", "interval": "200ms"},
	"doctor":              {},
	"volume_check":        {"severity": "warning"},
	"takeover_trace":      {},
	"plan_restart":        {},
	"plan_assignment":     {"group": "lagging", "members": 2, "add": 1},
	"offsets_history":     {"group": "lagging"},
	"offsets_reset_plan":  {"groups": []string{"lagging"}, "topics": []string{"orders"}, "toEarliest": true},
	"offsets_delete_plan": {"groups": []string{"idle"}, "topics": []string{"orders:1"}},
	"volume_repair_plan":  {},
}

// mcpSandbox is a sandbox with an idle and a lagging group (no member, so
// the plans are for Empty groups).
func mcpSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "idle", map[int32]int64{0: 20, 1: 20, 2: 20, 3: 20})
	commitAdmin(t, sb, "lagging", map[int32]int64{0: 2, 1: 20, 2: 20, 3: 20})
	return sb
}

// volumeDigest hashes every file of the volume (path, mode, bytes).
func volumeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %x\n", p, len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// validateOutput checks a tool result's structured content against the
// output schema the tool declared (as the client received it).
func validateOutput(t *testing.T, tool *mcp.Tool, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: structured content is not an object: %s", tool.Name, b)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: result does not match its output schema: %v\n%s", tool.Name, err, b)
	}
	return v
}

// exerciseTools lists the tools over cs and calls each, checking each
// result against its schema; the plans leave the volume byte for byte as
// it was and return the command that applies them.
func exerciseTools(t *testing.T, cs *mcp.ClientSession, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		args, ok := mcpToolCalls[tool.Name]
		if !ok {
			t.Errorf("tool %s has no test call", tool.Name)
			continue
		}
		before := volumeDigest(t, data)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
		if err != nil || res.IsError {
			t.Errorf("%s %v: %v %s", tool.Name, args, err, contentText(res))
			continue
		}
		v := validateOutput(t, tool, res)
		doc, _ := v["result"].(map[string]any)
		if code := v["exitCode"].(float64); code != 0 && code != 3 || !strings.HasPrefix(v["command"].(string), "kaasctl ") {
			t.Errorf("%s: exit %v command %v", tool.Name, code, v["command"])
		}
		if doc == nil && tool.Name != "whois" || doc != nil && doc["schemaVersion"] != 1.0 {
			t.Errorf("%s: document %v", tool.Name, v["result"])
		}
		// Every tool's document is about the volume or the cluster: it
		// names the generation assumed, and its schema declares it.
		if gen, _ := doc["generation"].(map[string]any); doc != nil && gen["generation"] == nil {
			t.Errorf("%s: no generation in %v", tool.Name, v["result"])
		}
		if sj, _ := json.Marshal(tool.OutputSchema); !strings.Contains(string(sj), `"liveOffsetsDir"`) {
			t.Errorf("%s: the output schema declares no generation", tool.Name)
		}
		if strings.HasSuffix(tool.Name, "_plan") {
			if after := volumeDigest(t, data); after != before {
				t.Errorf("%s changed the volume", tool.Name)
			}
			if ex, _ := v["execute"].(string); !strings.HasSuffix(ex, " --execute") || !tool.Annotations.ReadOnlyHint {
				t.Errorf("%s: execute %q, annotations %+v", tool.Name, ex, tool.Annotations)
			}
		}
	}
	if len(names) != len(mcpToolCalls) {
		t.Errorf("tools %v, want %d", names, len(mcpToolCalls))
	}
}

func contentText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Over stdio, with the SDK's client running kaasctl mcp as a process:
// every tool listed and called against the sandbox, each result valid
// against its declared schema, the plans writing nothing; one log line
// per call.
func TestMCPStdioTools(t *testing.T) {
	t.Parallel()
	sb := mcpSandbox(t)
	data := sb.Layout().DataDir
	dir, env := cliOnPath(t)
	logPath := filepath.Join(t.TempDir(), "mcp.log")
	cmd := exec.Command(filepath.Join(dir, "kaasctl"), "mcp", "--data-dir", data, "-b", strings.Join(sb.Bootstrap(), ","), "--timeout", "3s", "--log-file", logPath)
	cmd.Env = append(os.Environ(), env...)
	client := mcp.NewClient(&mcp.Implementation{Name: "kaasctl-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exerciseTools(t, cs, data)
	cs.Close()
	logged, _ := os.ReadFile(logPath)
	lines := strings.Split(strings.TrimSpace(string(logged)), "\n")
	if len(lines) != len(mcpToolCalls) {
		t.Fatalf("%d log lines for %d calls:\n%s", len(lines), len(mcpToolCalls), logged)
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["tool"] == nil || rec["durationMs"] == nil || rec["outcome"] == nil || rec["args"] == nil {
			t.Errorf("log line %q: %v", l, err)
		}
	}
}

// startMCPHTTP runs kaasctl mcp's HTTP server in this process on a
// loopback port and returns its endpoint.
func startMCPHTTP(t *testing.T, o mcpOptions, args ...string) (string, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.listener = ln
	logs := &syncBuffer{}
	g, err := GlobalsFor(&IOStreams{Out: &bytes.Buffer{}, Err: logs, Getenv: func(string) string { return "" }}, args...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runMCP(ctx, g, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("mcp server: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp", logs
}

// syncBuffer is a buffer the server goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func httpSession(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "kaasctl-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Over streamable HTTP with the SDK's client: the same tools, results and
// plans; a write slipped in is refused with the refusal's exit meaning; a
// window longer than the call's bound is a usage error.
func TestMCPHTTPTools(t *testing.T) {
	t.Parallel()
	sb := mcpSandbox(t)
	data := sb.Layout().DataDir
	endpoint, logs := startMCPHTTP(t, mcpOptions{maxCalls: 4, callTimeout: time.Minute, maxRequest: 1 << 20},
		"--data-dir", data, "-b", strings.Join(sb.Bootstrap(), ","), "--timeout", "3s")
	cs := httpSession(t, endpoint)
	exerciseTools(t, cs, data)
	ctx := context.Background()
	for name, args := range map[string]map[string]any{
		"offsets_reset_plan": {"groups": []string{"lagging"}, "topics": []string{"orders"}, "toEarliest": true, "execute": true},
		"groups_explain":     {"window": "2m"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(contentText(res), "usage (exit 2)") && !strings.Contains(contentText(res), "execute") {
			t.Errorf("%s %v: %v %+v %s", name, args, err, res, contentText(res))
		}
	}
	if !strings.Contains(logs.String(), `"tool":"groups_explain"`) || !strings.Contains(logs.String(), `"outcome":"usage"`) {
		t.Errorf("log:\n%s", logs.String())
	}
}

// The server's bounds: a request body over --max-request-bytes is
// refused; a call beyond --max-calls at once is refused as busy; a
// non-loopback bind needs --allow-remote.
func TestMCPBounds(t *testing.T) {
	t.Parallel()
	sb := mcpSandbox(t)
	data := sb.Layout().DataDir
	endpoint, _ := startMCPHTTP(t, mcpOptions{maxCalls: 1, callTimeout: time.Minute, maxRequest: 4 << 10}, "--data-dir", data, "-b", strings.Join(sb.Bootstrap(), ","))
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whois","arguments":{"keys":["` + strings.Repeat("g", 8<<10) + `"]}}}`
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("an 8 KiB body with --max-request-bytes 4KiB: HTTP %d", resp.StatusCode)
	}
	cs := httpSession(t, endpoint)
	// The slow call holds the one slot for 8 s: long enough for a whois on
	// a loaded machine to find it taken. A whois may take the slot first
	// and the slow call come back busy itself: then it is called again.
	type ended struct {
		res *mcp.CallToolResult
		err error
	}
	slow := make(chan ended, 1)
	callSlow := func() {
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "groups_health", Arguments: map[string]any{"window": "8s", "interval": "1s"}})
			slow <- ended{res, err}
		}()
	}
	isBusy := func(res *mcp.CallToolResult, err error) bool {
		return err == nil && res.IsError && strings.Contains(contentText(res), "busy")
	}
	callSlow()
	deadline := time.Now().Add(30 * time.Second)
	busy, slowEnded := false, false
	var last ended
	for !busy && time.Now().Before(deadline) {
		select {
		case last = <-slow:
			if isBusy(last.res, last.err) {
				callSlow()
				continue
			}
			slowEnded = true
		default:
		}
		if slowEnded {
			break
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whois", Arguments: map[string]any{"keys": []string{"idle"}}})
		busy = isBusy(res, err)
		if !busy {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !busy {
		t.Error("a second call while groups_health ran with --max-calls 1 was not refused as busy")
	}
	if !slowEnded {
		last = <-slow
	}
	if last.err != nil || last.res.IsError {
		t.Errorf("groups_health: %v %s", last.err, contentText(last.res))
	}
	for addr, ok := range map[string]bool{"127.0.0.1:0": true, "localhost:8750": true, "[::1]:8750": true, "0.0.0.0:8750": false, ":8750": false, "kaas.example:8750": false} {
		r := runCLI(t, "", nil, "mcp", "--data-dir", data, "--http", addr, "--max-calls", "0")
		refusedBind := r.Code == 2 && strings.Contains(r.Err, "--allow-remote")
		if refusedBind == ok {
			t.Errorf("--http %s: exit %d %q", addr, r.Code, r.Err)
		}
	}
}

// Secrets never leave the server: a password given where a variable's
// name belongs is masked in every result (the commands the tools print
// repeat the flags given) and in the log.
func TestMCPRedactsSecrets(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	const secret = "hunter2-Sup3rSecret"
	endpoint, logs := startMCPHTTP(t, mcpOptions{maxCalls: 2, callTimeout: time.Minute, maxRequest: 1 << 20},
		"--data-dir", data, "--sasl-mechanism", "PLAIN", "--sasl-user", "svc", "--sasl-password-env", secret)
	cs := httpSession(t, endpoint)
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"volume_check", map[string]any{}}, {"groups_explain", map[string]any{"window": "0"}}, {"whois", map[string]any{"keys": []string{secret}}}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s: the secret is in the result:\n%s", call.name, b)
		}
		if !strings.Contains(string(b), "--sasl-password-env ********") {
			t.Errorf("%s: the command line is not masked: %s", call.name, b)
		}
	}
	if strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), `"tool":"whois"`) {
		t.Errorf("log:\n%s", logs.String())
	}
}

// FuzzMCPToolArguments: any arguments a client sends become only the
// flags the tool's type declares, as --name=value (a value never reads as
// another flag: "--execute" given as a group is a group), positional ones
// after "--"; the command's flags parse them or refuse them, never crash.
func FuzzMCPToolArguments(f *testing.F) {
	for _, s := range []string{`{"keys":["g"]}`, `{"groups":["-x","--execute"],"window":"0"}`, `{"window":"99999h"}`,
		`{"toOffset":"--execute","groups":["g"],"topics":["t"]}`, `{"group":"--all-groups"}`, `{"members":-1,"add":3}`} {
		f.Add(s)
	}
	tools := mcpTools(false)
	f.Fuzz(func(t *testing.T, raw string) {
		for _, tool := range tools {
			in := reflect.New(reflect.TypeOf(tool.Input))
			if json.Unmarshal([]byte(raw), in.Interface()) != nil {
				continue
			}
			args := mcpserver.Args(in.Elem())
			declared := map[string]bool{}
			for i := range in.Elem().NumField() {
				if n, ok := in.Elem().Type().Field(i).Tag.Lookup("flag"); ok {
					declared[n] = true
				}
			}
			for i, a := range args {
				if a == "--" {
					break
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !strings.HasPrefix(a, "--") || !declared[name] {
					t.Fatalf("%s: argument %d %q of %q is not a declared flag", tool.Name, i, a, args)
				}
			}
			_ = mcpserver.FitsCall(args, time.Minute, when.ParseDuration)
			if c, err := mcpContext(tool.Path, args, &Globals{IO: &IOStreams{}}); err == nil && c.Bool("execute") {
				t.Fatalf("%s: %q parses as --execute", tool.Name, args)
			}
		}
	})
}

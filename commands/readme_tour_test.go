package commands

import (
	"bufio"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
)

// The README's tour, followed literally on the sandbox it starts (kaasctl
// sandbox --demo): every "$ kaasctl ..." line from "## A tour" to
// "## Commands" runs as written, with only the tour's own paths and
// addresses mapped to the test's (/tmp/X under a temp dir, 127.0.0.1:19092
// to the sandbox, testdata/ to the repository's). A "$ curl" to the
// sandbox's control endpoint does what it asks; a trailing "&" runs the
// command beside the next ones; "$ echo $?" checks the exit code the line
// after it gives. Every other kaasctl line must exit 0. A code block after
// the line "<!-- not the tour -->" is another cluster's example.
func TestREADMETourLiterally(t *testing.T) {
	t.Parallel()
	steps := readmeTour(t)
	if len(steps) < 15 {
		t.Fatalf("only %d tour steps found in README.md", len(steps))
	}
	root := t.TempDir()
	topics, err := sandbox.TopicsOf(nil, true) // what kaasctl sandbox --demo seeds
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Options{Brokers: 3, DataDir: filepath.Join(root, "kaas"), Placement: sandbox.PlacementRendezvous,
		Failover: sandbox.FailoverReload, Topics: topics, AutoCreateTopics: true, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	if err := sb.StartDemo(); err != nil {
		t.Fatal(err)
	}
	tour := &tourRun{t: t, sb: sb, root: root, env: map[string]string{"KAASCTL_BROKERS": strings.Join(sb.Bootstrap(), ","), "KAASCTL_TIMEOUT": "5s"}}
	// The demo's groups have committed (the tour's groups list shows their
	// 5 offset files) before the tour starts.
	sb.WaitFor(t, "the demo groups' offset files", 60*time.Second, func() bool {
		for _, g := range sandbox.DemoGroupNames() {
			if _, err := os.Stat(filepath.Join(sb.Layout().OffsetsPath(), g+".json")); err != nil {
				return false
			}
		}
		return true
	})
	for _, s := range steps {
		tour.step(s)
	}
	tour.wait()
}

// tourStep is one "$ " line of the tour and, for "echo $?", the code the
// next line shows.
type tourStep struct {
	line string
	code int
}

// readmeTour reads the tour's "$ " lines from ../README.md.
func readmeTour(t *testing.T) []tourStep {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []tourStep
	in, block, skip, skipNext, echo := false, false, false, false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## A tour"):
			in = true
		case strings.HasPrefix(line, "## Commands"):
			in = false
		case !in:
		case strings.TrimSpace(line) == "<!-- not the tour -->":
			skipNext = true
		case strings.HasPrefix(line, "```"):
			block = !block
			if block {
				skip, skipNext = skipNext, false
			}
		case !block || skip:
		case echo:
			code, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("README: %q after 'echo $?' is no exit code", line)
			}
			steps[len(steps)-1].code = code
			echo = false
		case strings.HasPrefix(line, "$ echo $?"):
			echo = true
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, tourStep{line: strings.TrimPrefix(line, "$ ")})
		}
	}
	return steps
}

// tourRun is a tour in progress: the sandbox, where /tmp/ maps to, the
// environment the tour exported, and a command running beside the others.
type tourRun struct {
	t    *testing.T
	sb   *sandbox.Sandbox
	root string
	env  map[string]string
	bg   chan cliResult
	bgOf string
	// last is the last kaasctl run in the foreground, for "echo $?".
	last cliResult
}

func (r *tourRun) step(s tourStep) {
	t := r.t
	args := r.words(s.line)
	switch args[0] {
	case "curl":
		r.control(args[len(args)-1])
		return
	case "kaasctl":
	default:
		t.Fatalf("README tour: %q is neither kaasctl nor the sandbox's control endpoint", s.line)
	}
	if args[len(args)-1] == "&" {
		r.background(s.line, args[1:len(args)-1])
		return
	}
	r.wait()
	res := runCLI(t, "", r.env, args[1:]...)
	if testing.Verbose() {
		t.Logf("$ %s\n%s%s", s.line, res.Out, res.Err)
	}
	if res.Code != s.code || strings.Contains(res.Err, "unknown flag") {
		t.Errorf("README tour: %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.line, res.Code, s.code, res.Out, res.Err)
	}
}

// background runs a tour command beside the next ones: a watch with a
// journal has read the current version once its journal holds a file.
func (r *tourRun) background(line string, args []string) {
	r.wait()
	r.bg, r.bgOf = make(chan cliResult, 1), line
	go func() { r.bg <- runCLI(r.t, "", r.env, args...) }()
	for i, a := range args {
		if a == "--journal" && i+1 < len(args) {
			dir := args[i+1]
			r.sb.WaitFor(r.t, "the journal of "+line, 30*time.Second, func() bool {
				es, _ := os.ReadDir(dir)
				return len(es) > 0
			})
		}
	}
}

// wait waits for the command running beside the others to end.
func (r *tourRun) wait() {
	if r.bg == nil {
		return
	}
	select {
	case res := <-r.bg:
		if res.Code != 0 {
			r.t.Errorf("README tour: %s\nexit %d\n%s\n%s", r.bgOf, res.Code, res.Out, res.Err)
		}
	case <-time.After(60 * time.Second):
		r.t.Fatalf("README tour: %s did not end", r.bgOf)
	}
	r.bg = nil
}

// control does what a curl to the sandbox's control endpoint asks.
func (r *tourRun) control(raw string) {
	u, err := url.Parse(strings.Trim(raw, `'"`))
	if err != nil {
		r.t.Fatal(err)
	}
	q := u.Query()
	switch u.Path {
	case "/stop":
		_, err = r.sb.StopBroker(q.Get("broker"))
	case "/start":
		_, err = r.sb.StartBroker(q.Get("broker"))
	case "/consumers/stop":
		_, err = r.sb.StopDemoConsumers(q.Get("group"))
	case "/consumers/start":
		_, err = r.sb.StartDemoConsumers(q.Get("group"))
	default:
		r.t.Fatalf("README tour: control %s is not one the test knows", u.Path)
	}
	if err != nil {
		r.t.Fatalf("README tour: %s: %v", raw, err)
	}
}

// words splits a tour line as a shell would (quotes, a trailing comment),
// mapping /tmp/X to the test's dir, the tour's broker address to the
// sandbox and testdata/ to the repository's.
func (r *tourRun) words(line string) []string {
	var out []string
	var cur strings.Builder
	quote, has := byte(0), false
	flush := func() {
		if has {
			out = append(out, r.mapWord(cur.String()))
		}
		cur.Reset()
		has = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, has = c, true
		case c == '#' && !has:
			flush()
			return out
		case c == ' ' || c == '\t':
			flush()
		default:
			cur.WriteByte(c)
			has = true
		}
	}
	flush()
	return out
}

func (r *tourRun) mapWord(w string) string {
	switch {
	case strings.HasPrefix(w, "/tmp/"):
		return filepath.Join(r.root, strings.TrimPrefix(w, "/tmp/"))
	case strings.HasPrefix(w, "testdata/"):
		return filepath.Join("..", w)
	case strings.HasPrefix(w, "http://127.0.0.1:19099/"):
		return w
	}
	return strings.ReplaceAll(w, "127.0.0.1:19092", r.sb.Bootstrap()[0])
}

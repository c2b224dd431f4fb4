package commands

import (
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kaasctl/kaasctl/views"
)

// silentBroker listens on loopback and accepts connections that it never
// answers (a broker wedged after accept): every request to it can only
// end by its deadline.
func silentBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Every live command goes on when one listed broker accepts connections
// and never answers: that broker gets its own short deadline, metadata and
// FindCoordinator come from a broker that answers, and doctor reports the
// silent one as a finding. The silent broker is listed first so no luck of
// ordering hides it.
func TestLiveCommandsTolerateASilentBroker(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	for _, g := range []string{"hung-a", "hung-b", "hung-c"} {
		commitAdmin(t, sb, g, map[int32]int64{0: 3})
	}
	silent := silentBroker(t)
	// Three seconds, not 300ms: on a loaded 2-core machine the sandbox's
	// own brokers (in this process, beside the package's other tests)
	// missed 300ms, and at load 16 once 1s, and looked as silent as it.
	env := map[string]string{"KAASCTL_BROKERS": strings.Join(append([]string{silent}, sb.Bootstrap()...), ","), "KAASCTL_TIMEOUT": "3s"}
	run := func(args ...string) cliResult { return runCLI(t, "", env, args...) }
	dd := sb.Layout().DataDir

	r := run("groups", "list", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("groups list: exit %d\n%s", r.Code, r.Err)
	}
	lv := decodeJSON[views.GroupsListView](t, r)
	for _, g := range []string{"hung-a", "hung-b", "hung-c"} {
		if row := rowOf(t, lv, g); row.Live == nil || row.Live.WireCoordinator == "" {
			t.Errorf("groups list: %s has no live coordinator: %+v", g, row.Live)
		}
	}
	if !strings.Contains(r.Err, silent) {
		t.Errorf("groups list does not name the silent broker %s on stderr:\n%s", silent, r.Err)
	}

	r = run("groups", "describe", "--all", "--data-dir", dd, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("groups describe --all: exit %d\n%s", r.Code, r.Err)
	}
	dv := decodeJSON[views.GroupsDescribeLiveView](t, r)
	if d := describeOf(t, dv, "hung-b"); len(d.Partitions) == 0 || d.Partitions[0].Committed != 3 {
		t.Errorf("describe hung-b: %+v", d.Partitions)
	}

	r = run("groups", "describe", "hung-c", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("groups describe hung-c: exit %d\n%s", r.Code, r.Err)
	}

	r = run("whois", "--live", "--data-dir", dd, "hung-a", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Out, `"hung-a"`) {
		t.Fatalf("whois --live: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}

	r = run("doctor", "--data-dir", dd, "-o", "json")
	if r.Code != 0 && r.Code != 3 {
		t.Fatalf("doctor: exit %d\n%s", r.Code, r.Err)
	}
	doc := decodeJSON[doctorJSON](t, r)
	f := findingOf(t, doc, "live.seedSilent")
	if !slices.Contains(f.Subjects, silent) || !strings.Contains(f.Fix, "does not answer") {
		t.Errorf("the silent broker is not the subject of the finding: %+v", f)
	}
	for _, o := range doc.Findings {
		if o.Code == "live.seedUnreachable" {
			t.Errorf("a seed that connects is reported unreachable: %+v", o)
		}
	}
	// A seed that cannot be reached at all keeps its own code.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	r = runCLI(t, "", map[string]string{"KAASCTL_BROKERS": strings.Join(append([]string{closed}, sb.Bootstrap()...), ","), "KAASCTL_TIMEOUT": "300ms"}, "doctor", "--data-dir", dd, "-o", "json")
	if r.Code != 0 && r.Code != 3 {
		t.Fatalf("doctor: exit %d\n%s", r.Code, r.Err)
	}
	if f := findingOf(t, decodeJSON[doctorJSON](t, r), "live.seedUnreachable"); !slices.Contains(f.Subjects, closed) {
		t.Errorf("the closed port is not the subject of live.seedUnreachable: %+v", f)
	}
	ran := false
	for _, c := range doc.Checks {
		ran = ran || (c.Name == "live" && c.Ran)
	}
	if !ran || doc.Mode != "merged" {
		t.Errorf("doctor did not go on with the live checks: mode %s, checks %+v", doc.Mode, doc.Checks)
	}
}

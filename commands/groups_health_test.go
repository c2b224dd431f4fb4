package commands

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// groups health observes for its window: a group nobody commits for shows
// STOP, one whose commits arrive without moving shows STALL, a caught-up
// one OK; each with its evidence.
func TestGroupsHealthOneShot(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "stopped", map[int32]int64{0: 5, 1: 5, 2: 5, 3: 5})
	commitAdmin(t, sb, "stalled", map[int32]int64{0: 7, 1: 7, 2: 7, 3: 7})
	commitAdmin(t, sb, "idle", map[int32]int64{0: 20, 1: 20, 2: 20, 3: 20})

	// A consumer stuck on its records: it commits the same offsets again and again.
	adm := kadm.NewClient(sbClient(t, sb))
	offs := kadm.Offsets{}
	for p := range int32(4) {
		offs.AddOffset("orders", p, 7, -1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var err error
		for ctx.Err() == nil && err == nil {
			if err = adm.CommitAllOffsets(ctx, "stalled", offs); ctx.Err() != nil {
				err = nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		done <- err
	}()
	r := live(t, sb, "groups", "health", "--data-dir", sb.Layout().DataDir, "--window", "1500ms", "--interval", "500ms", "-o", "json")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stuck consumer's commit: %v", err)
	}
	if r.Code != 3 {
		t.Fatalf("exit %d (want 3: groups not OK): %s", r.Code, r.Err)
	}
	v := decodeJSON[views.GroupsHealthView](t, r)
	byGroup := map[string]inspect.GroupHealth{}
	for _, h := range v.Groups {
		byGroup[h.Group] = h
	}
	want := map[string]string{"stopped": inspect.HealthStop, "stalled": inspect.HealthStall, "idle": inspect.HealthOK}
	for g, st := range want {
		h := byGroup[g]
		if h.State != st {
			t.Errorf("%s: %s, want %s; evidence %+v", g, h.State, st, h.Evidence)
			continue
		}
		if h.Samples != 4 {
			t.Errorf("%s: %d samples, want 4 (1.5s every 500ms)", g, h.Samples)
		}
		if st == inspect.HealthOK {
			continue
		}
		e := h.Evidence[0]
		if e.File != filepath.Join(sb.Layout().OffsetsPath(), g+".json") || !strings.HasPrefix(e.Partition, "orders/") || e.Before < 0 {
			t.Errorf("%s evidence %+v", g, e)
		}
	}
	if v.States[inspect.HealthStop] != 1 || v.States[inspect.HealthStall] != 1 || v.Source != "observed" {
		t.Errorf("view %+v", v)
	}

	// The human table names the state and the evidence.
	r = live(t, sb, "groups", "health", "--data-dir", sb.Layout().DataDir, "--window", "500ms", "--interval", "250ms", "stopped", "missing-group")
	if testing.Verbose() {
		t.Log(r.Out + r.Err)
	}
	if r.Code != 1 || !strings.Contains(r.Out, "STOP") || !strings.Contains(r.Out, "no commit for") || !strings.Contains(r.Err, "missing-group") {
		t.Errorf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
}

// groups health --exporter for a group the exporter leaves out by
// --max-groups says so (it used to say the group has no offset file,
// entry or broker listing), and the same for --group-regex.
func TestGroupsHealthExporterSaysWhatItLeftOut(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	for _, g := range []string{"app-a", "app-b", "app-c", "app-d"} {
		commitAdmin(t, sb, g, map[int32]int64{0: 0})
	}
	l := sb.Layout()
	e := exporter.New(exporter.Options{Source: &observe.Source{Layout: &l, MaxGroups: 2, Filter: regexp.MustCompile(`^app-`)}})
	e.Refresh(context.Background())
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	r := runCLI(t, "", nil, "groups", "health", "--exporter", srv.URL, "app-a", "app-d", "other", "-o", "json")
	if r.Code != 1 || !strings.Contains(r.Err, `"app-d" (left out by --max-groups 2: 2 matching groups`) || !strings.Contains(r.Err, `"other" (left out by --group-regex "^app-")`) {
		t.Errorf("exit %d: %s", r.Code, r.Err)
	}
	if v := decodeJSON[views.GroupsHealthView](t, r); len(v.Groups) != 1 || v.Groups[0].Group != "app-a" {
		t.Errorf("groups %+v", v.Groups)
	}
	// Observed by groups health itself, a named group is observed whatever --max-groups.
	r = runCLI(t, "", nil, "groups", "health", "--data-dir", l.DataDir, "--max-groups", "1", "--window", "200ms", "--interval", "100ms", "app-d", "-o", "json")
	if v := decodeJSON[views.GroupsHealthView](t, r); r.Code == 1 || len(v.Groups) != 1 {
		t.Errorf("observed app-d with --max-groups 1: exit %d %s %+v", r.Code, r.Err, v.Groups)
	}
}

// groups health refuses a window and interval that take more observations
// than it bounds (--interval 1ns never ended) and says what would do; what
// it accepts it says it will do.
func TestGroupsHealthBoundsItsObservations(t *testing.T) {
	t.Parallel()
	dd := t.TempDir()
	writeFile(t, dd, "__cluster/assignment.json", `{"controllerEpoch":1,"assignmentVersion":1,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}]}`)
	for _, args := range [][]string{{"--interval", "1ns"}, {"--window", "1h", "--interval", "1s"}, {"--window", "1s", "--interval", "1ms"}} {
		r := runCLI(t, "", nil, append([]string{"groups", "health", "--data-dir", dd}, args...)...)
		if r.Code != 2 || !strings.Contains(r.Err, "groups health takes at most 1000") || !strings.Contains(r.Err, "--interval") {
			t.Errorf("%v: exit %d %q", args, r.Code, r.Err)
		}
	}
	r := runCLI(t, "", nil, "groups", "health", "--data-dir", dd, "--window", "40ms", "--interval", "20ms")
	if r.Code != 0 || !strings.Contains(r.Err, "observing for 40ms (3 observations, every 20ms)") {
		t.Errorf("exit %d %q", r.Code, r.Err)
	}
}

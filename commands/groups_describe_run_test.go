package commands

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// describeDirect runs runGroupsDescribe with Globals from args (no
// cli.Context) and returns stdout, stderr and the error.
func describeDirect(t *testing.T, o groupsDescribeOptions, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	g := mustGlobals(t, &IOStreams{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}, args...)
	err := runGroupsDescribe(context.Background(), g, o)
	return out.String(), errb.String(), err
}

// The run function alone, offline: the document the CLI prints, csv one
// row per partition, a missing group's error, --drain-window without
// brokers refused as a usage error.
func TestRunGroupsDescribeOffline(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	common := []string{"--data-dir", vol, "--kaas-version", "0.2.18"}
	out, errOut, err := describeDirect(t, groupsDescribeOptions{sel: observe.Selection{Names: []string{"lagging", "plain"}}}, nil, append(common, "-o", "json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var v views.GroupsDescribeView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	lags := map[string]int64{}
	for _, d := range v.Groups {
		lags[d.Group] = d.TotalLag
	}
	// plain is a plain map, which 0.2.18 brokers read as empty: its
	// consumers start per auto.offset.reset, so its lag is unknown.
	if len(v.Groups) != 2 || lags["lagging"] != 80 || lags["plain"] != 0 || v.Groups[1].LagKnown || len(v.NotFound) != 0 || v.Sources.Generation == nil {
		t.Errorf("groups %v notFound %v", lags, v.NotFound)
	}
	// The same document as through the CLI.
	cliOut, _, code := runVol(t, append([]string{"groups", "describe", "lagging", "plain", "-o", "json"}, common...)...)
	if code != 0 || cliOut != out {
		t.Errorf("direct run and CLI differ (exit %d)", code)
	}

	out, _, err = describeDirect(t, groupsDescribeOptions{sel: observe.Selection{Names: []string{"lagging", "plain"}}}, nil, append(common, "-o", "csv")...)
	rows, cerr := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || cerr != nil || len(rows) != 1+5+4 || rows[0][0] != "GROUP" || rows[0][4] != "LOG-START" || rows[1][0] != "lagging" || rows[6][0] != "plain" {
		t.Errorf("csv (%v, %v):\n%s", err, cerr, out)
	}

	re := regexp.MustCompile("^(good|plain)$")
	out, _, err = describeDirect(t, groupsDescribeOptions{sel: observe.Selection{Regex: re}, summaryOnly: true}, nil, append(common, "-o", "csv")...)
	rows, _ = csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][1] != "STATE" || rows[1][0] != "good" || rows[2][0] != "plain" {
		t.Errorf("--regex --summary csv (%v):\n%s", err, out)
	}

	_, _, err = describeDirect(t, groupsDescribeOptions{sel: observe.Selection{Names: []string{"lagging", "nobody"}}}, nil, common...)
	if err == nil || !strings.Contains(err.Error(), `no offset file and no explicit entry for "nobody"`) || strings.Contains(err.Error(), "lagging") {
		t.Errorf("missing group: %v", err)
	}
	_, _, err = describeDirect(t, groupsDescribeOptions{sel: observe.Selection{All: true}, drainWindow: 1e9}, nil, common...)
	if exit.Code(err) != exit.Usage {
		t.Errorf("--drain-window offline: %v (exit %d)", err, exit.Code(err))
	}
}

// The run function alone against the sandbox: --all finds the groups the
// brokers hold and those only on the volume, lag is live, and csv has the
// live columns.
func TestRunGroupsDescribeSandbox(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "run-held", map[int32]int64{0: 4, 1: 10})
	l := sb.Layout()
	writeFile(t, l.OffsetsPath(), "run-file-only.json", `{"offsets":{"orders/2":3}}`)
	env := map[string]string{"KAASCTL_BROKERS": strings.Join(sb.Bootstrap(), ","), "KAASCTL_TIMEOUT": "3s"}
	re := regexp.MustCompile("^run-")
	o := groupsDescribeOptions{sel: observe.Selection{Regex: re}}
	out, errOut, err := describeDirect(t, o, env, "--data-dir", l.DataDir, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var v views.GroupsDescribeLiveView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	by := map[string]inspect.LiveDescription{}
	for _, d := range v.Groups {
		by[d.Group] = d
	}
	held, fileOnly := by["run-held"], by["run-file-only"]
	if len(v.Groups) != 2 || v.Sources.Mode != "merged" || len(v.Sources.Brokers) != 3 || len(v.Requests) == 0 {
		t.Fatalf("groups %d mode %q brokers %d requests %v", len(v.Groups), v.Sources.Mode, len(v.Sources.Brokers), v.Requests)
	}
	if !held.LagKnown || held.TotalLag != 6 || held.State != "Empty" {
		t.Errorf("run-held: lag %d known %v state %q", held.TotalLag, held.LagKnown, held.State)
	}
	// Its file commits orders/2 only: the other partitions of orders are
	// shown without an offset (a consumer starts them per auto.offset.reset).
	if len(fileOnly.Partitions) != 4 || fileOnly.Partitions[2].LagFrom != "file" || fileOnly.TotalLag != 7 || fileOnly.LagUnknown != 3 || len(fileOnly.Incidents) != 1 {
		t.Errorf("run-file-only: %+v", fileOnly.Partitions)
	}
	if !strings.Contains(errOut, "live: 2 groups described with") {
		t.Errorf("no requests note:\n%s", errOut)
	}
	out, _, err = describeDirect(t, o, env, "--data-dir", l.DataDir, "-o", "csv")
	rows, cerr := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || cerr != nil || len(rows) != 1+8 || rows[0][4] != "FILE-COMMITTED" || rows[0][13] != "NOTE" {
		t.Errorf("csv (%v, %v):\n%s", err, cerr, out)
	}
	// Named, brokers only: a group nobody knows is not found.
	_, _, err = describeDirect(t, groupsDescribeOptions{sel: observe.Selection{Names: []string{"run-held", "run-nobody"}}}, env)
	if err == nil || !strings.Contains(err.Error(), `no such group on the brokers or the volume: "run-nobody"`) {
		t.Errorf("unknown group: %v", err)
	}
}

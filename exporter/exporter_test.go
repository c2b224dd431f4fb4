package exporter

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
)

// With the brokers unreachable the exporter still serves: the volume's
// groups (health ERR, naming the brokers' failure), the brokers it saw
// before as down, and one log line per change of the problem.
func TestExporterBrokersUnreachable(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}}})
	ctx := context.Background()
	if err := sb.Commit(ctx, "g1", map[string]map[int32]int64{"orders": {0: 0}}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now
	cl, err := wire.NewClient(&wire.Settings{Brokers: []string{dead}, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	l := sb.Layout()
	var logs []string
	e := New(Options{Source: &observe.Source{Layout: &l, Client: cl}, PartitionMetrics: true, Logf: func(f string, a ...any) { logs = append(logs, f) }})
	o := e.Refresh(ctx)
	e.Refresh(ctx)
	if o.WireErr == "" || len(o.Groups) != 1 || !strings.Contains(o.Groups[0].Sample.Err, "brokers") {
		t.Fatalf("observation %+v", o)
	}
	if h := e.Health(); len(h) != 1 || h[0].State != inspect.HealthErr {
		t.Fatalf("health %+v", h)
	}
	if len(logs) != 1 {
		t.Fatalf("logged %d times for one unchanged problem: %v", len(logs), logs)
	}
	var b bytes.Buffer
	if err := e.WriteMetrics(&b, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`kaas_group_health{group="g1",state="ERR"} 1`, `kaas_broker_up{broker="kaas-0"} 0`, `kaas_assignment_version `} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// WARN from the scenario that causes it: the group commits at every
// refresh, but records arrive faster than it consumes them.
func TestExporterHealthWarnOnGrowingLag(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 2, Topics: []sandbox.Topic{{Name: "orders", Partitions: 1}}})
	ctx := context.Background()
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	l := sb.Layout()
	e := New(Options{Source: &observe.Source{Layout: &l, Client: cl}, Window: time.Hour})
	var h inspect.GroupHealth
	for i := range 4 {
		if err := sb.Produce(ctx, "orders", 1, 10); err != nil {
			t.Fatal(err)
		}
		if err := sb.Commit(ctx, "slow", map[string]map[int32]int64{"orders": {0: int64(i + 1)}}); err != nil {
			t.Fatal(err)
		}
		e.Refresh(ctx)
		h = e.Health()[0]
	}
	if h.State != inspect.HealthWarn || h.Evidence[0].Before >= h.Evidence[0].After {
		t.Fatalf("health %+v, want WARN with the lag growing", h)
	}
}

package exporter

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
)

// An exporter started while a broker is down knows it from --brokers
// alone (kaas dropped it from brokers[] and from its metadata):
// kaas_broker_up says 0 for it, so KaasBrokerDown can fire. Once it is
// back, its address's series goes and the broker's own says 1.
func TestExporterLearnsABrokerDownAtStart(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}}})
	victim := sb.BrokerIDs()[2]
	addr, _ := sb.Addr(victim)
	if _, err := sb.StopBroker(victim); err != nil {
		t.Fatal(err)
	}
	cl, err := wire.NewClient(&wire.Settings{Brokers: append(sb.Bootstrap(), addr), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	l := sb.Layout()
	e := New(Options{Source: &observe.Source{Layout: &l, Client: cl}})
	ctx := context.Background()
	metrics := func() string {
		var b bytes.Buffer
		if err := e.WriteMetrics(&b, nil); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	e.Refresh(ctx)
	if m := metrics(); !strings.Contains(m, `kaas_broker_up{broker="`+addr+`"} 0`) || !strings.Contains(m, `kaas_broker_reachable{broker="`+addr+`"} 0`) {
		t.Fatalf("no down series for %s (%s, stopped before the exporter started):\n%s", addr, victim, grepLines(m, "kaas_broker_"))
	}
	if _, err := sb.StartBroker(victim); err != nil {
		t.Fatal(err)
	}
	e.Refresh(ctx)
	m := metrics()
	if strings.Contains(m, `broker="`+addr+`"`) || !strings.Contains(m, `kaas_broker_up{broker="`+victim+`"} 1`) {
		t.Fatalf("after %s came back:\n%s", victim, grepLines(m, "kaas_broker_"))
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

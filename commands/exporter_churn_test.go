package commands

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
)

// The exporter's membership series and CHURN on the sandbox, refreshed by
// hand: members joining and leaving between refreshes count generation
// changes by cause, and more than --churn-rebalances of them in the
// window is CHURN; a group whose member stays is not.
func TestExporterChurn(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 5)
	commitAdmin(t, sb, "storm", map[int32]int64{0: 0})
	l := sb.Layout()
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	e := exporter.New(exporter.Options{Source: &observe.Source{Layout: &l, Client: cl}, Window: time.Minute, Members: exporter.MembersOptions{Rebalances: 2}})
	metrics := func() string {
		var b bytes.Buffer
		if err := e.WriteMetrics(&b, nil); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	e.Refresh(context.Background())
	// Three members come and go, one at a time: each join and each
	// leave is a generation change seen at the next refresh.
	for range 3 {
		m := joinMember(t, sb, "storm")
		waitRefresh(t, e, metrics, `kaas_group_members{group="storm"} 1`)
		m.Close()
		waitRefresh(t, e, metrics, `kaas_group_members{group="storm"} 0`)
	}
	text := metrics()
	for _, w := range []string{
		`kaas_group_condition{group="storm",condition="CHURN"} 1`,
		`kaas_group_rebalances_total{group="storm",cause="member_joined"} 3`,
		`kaas_group_rebalances_total{group="storm",cause="member_left"} 3`,
		`kaas_exporter_churn_rebalances 2`,
	} {
		if !strings.Contains(text, w) {
			t.Errorf("metrics lack %s:\n%s", w, metricLines(text, "storm", "churn"))
		}
	}
	// The generation the coordinator reports after the last member left
	// is 5 or 6 (whether the broker bumps it for the group going Empty
	// before the refresh asks): the six changes are the counters above.
	if !strings.Contains(text, `kaas_group_observed_generation{group="storm"} 5`) && !strings.Contains(text, `kaas_group_observed_generation{group="storm"} 6`) {
		t.Errorf("observed generation after three joins and three leaves:\n%s", metricLines(text, "storm", "churn"))
	}
}

// waitRefresh refreshes e until its metrics hold want.
func waitRefresh(t *testing.T, e *exporter.Exporter, metrics func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		e.Refresh(context.Background())
		if strings.Contains(metrics(), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics never held %s", want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metricLines are the lines of text holding any of words.
func metricLines(text string, words ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) && !strings.HasPrefix(l, "#") {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

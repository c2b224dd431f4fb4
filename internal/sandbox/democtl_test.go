package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Stopping a demo group's consumers empties the group (what an operator
// needs before 'kaasctl offsets reset'); starting them brings it back.
func TestDemoConsumersStopStart(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Brokers: 2, Topics: DemoTopics})
	if _, err := s.Command("consumers stop orders-app"); err == nil || !strings.Contains(err.Error(), "--demo") {
		t.Fatalf("without the demo: %v", err)
	}
	if err := s.StartDemo(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	state := func(g string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ds, err := adm.DescribeGroups(ctx, g)
		if err != nil {
			return ""
		}
		return ds[g].State
	}
	s.WaitFor(t, "orders-app Stable", 30*time.Second, func() bool { return state("orders-app") == "Stable" })

	out, err := s.Command("consumers stop orders-app")
	if err != nil || !strings.Contains(out, "stopped the consumers of orders-app") {
		t.Fatalf("stop: %q %v", out, err)
	}
	s.WaitFor(t, "orders-app Empty", 30*time.Second, func() bool { return state("orders-app") == "Empty" })
	if out, _ := s.Command("consumers stop orders-app"); !strings.Contains(out, "nothing to stop") {
		t.Errorf("second stop: %q", out)
	}
	if _, err := s.Command("consumers stop nope"); !errors.Is(err, ErrUnknownDemoGroup) {
		t.Errorf("unknown group: %v", err)
	}
	list, _ := s.Command("consumers")
	if !strings.Contains(list, "orders-app") || !strings.Contains(list, "stopped") || !strings.Contains(list, "running") {
		t.Errorf("list:\n%s", list)
	}

	// Over HTTP.
	cs, err := s.ServeControl("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	resp, err := http.Post(cs.URL()+"/consumers/stop?group=billing", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Result    string
		Consumers []DemoConsumer
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(body.Result, "billing") || len(body.Consumers) != 4 {
		t.Errorf("HTTP stop: %d %+v", resp.StatusCode, body)
	}
	resp, _ = http.Post(cs.URL()+"/consumers/stop?group=nope", "", nil)
	if resp.StatusCode != 404 {
		t.Errorf("HTTP unknown group: %d", resp.StatusCode)
	}
	resp.Body.Close()

	if out, err := s.Command("consumers start orders-app"); err != nil || !strings.Contains(out, "started") {
		t.Fatalf("start: %q %v", out, err)
	}
	s.WaitFor(t, "orders-app Stable again", 30*time.Second, func() bool { return state("orders-app") == "Stable" })
}

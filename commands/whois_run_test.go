package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
)

func TestRunWhoisDirect(t *testing.T) {
	t.Parallel()
	dir := labCluster(t)
	var out, errb bytes.Buffer
	g := mustGlobals(t, &IOStreams{Out: &out, Err: &errb}, "--data-dir", dir, "--kaas-version", "go", "-o", "json")
	o := whoisOptions{Keys: []string{"g-beta", "lab-group"}, WhatIf: inspect.WhatIf{Down: []string{"skafka-0"}}}
	if err := runWhois(context.Background(), g, o); err != nil {
		t.Fatal(err)
	}
	var rs []inspect.WhoisResult
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatal(err)
	}
	// The failover model comes from the pinned generation when the
	// options do not name one: the Go flavour drops every entry.
	if len(rs) != 2 || rs[0].Key != "g-beta" || rs[0].Tier != "hash" || rs[0].Coordinator != "skafka-2" {
		t.Fatalf("%+v", rs)
	}
	if !strings.Contains(errb.String(), "no consumerGroups: all 2 explicit entries dropped") {
		t.Fatalf("scenario not noted on stderr: %s", errb.String())
	}
	if err := runWhois(context.Background(), g, whoisOptions{}); exit.Code(err) != exit.Usage {
		t.Fatalf("no keys: %v", err)
	}
	if err := runWhois(context.Background(), g, whoisOptions{Keys: []string{"g"}, Live: true}); exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "--live needs brokers") {
		t.Fatalf("live without brokers: %v", err)
	}
}

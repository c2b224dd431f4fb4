package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

func whoisAssignment() *volume.Assignment {
	return &volume.Assignment{
		AssignmentVersion: 4, ControllerEpoch: 1, Controller: "kaas-0",
		Brokers: []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "dead"}, {ID: "kaas-10", Health: "alive"}, {ID: "kaas-2", Health: "draining"}},
		ConsumerGroups: []volume.GroupEntry{
			{GroupID: "pinned", Broker: "kaas-10"}, {GroupID: "on-dead", Broker: "kaas-1"}, {GroupID: "ghost", Broker: "kaas-7"},
		},
	}
}

// The streaming fast path must print exactly what render.WriteJSON prints
// for the same answer (keyBase64 included for a key that is not UTF-8).
func checkAppendJSON(t *testing.T, wh *Whois, key string) {
	t.Helper()
	fast := wh.AppendJSON(nil, []byte(key))
	var want bytes.Buffer
	if err := render.WriteJSON(&want, wh.Resolve(key), false); err != nil {
		t.Fatal(err)
	}
	if string(fast) != want.String() {
		t.Fatalf("key %q:\nfast %s\njson %s", key, fast, want.String())
	}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	keys := []string{"", "pinned", "on-dead", "ghost", "billing", "a/b", "../x", "/abs", "quote\"back\\slash", "ctl\x00\x01\x1f\n\t\r\b\f",
		"<html>&amp;", "ünïcødé", "bad\xffutf8\xc3", "line\u2028sep\u2029", strings.Repeat("x", 300)}
	for i := 0; i < 100; i++ {
		keys = append(keys, fmt.Sprintf("group-%d", i))
	}
	for _, kind := range []Kind{KindGroup, KindTxn} {
		for _, wi := range []WhatIf{{}, {Down: []string{"kaas-10"}}, {Down: []string{"kaas-0"}, KeepListed: true}, {Brokers: []string{"kaas-3", "kaas-4"}},
			{Down: []string{"kaas-10"}, Placement: "rendezvous"}, {Down: []string{"kaas-0"}, Placement: "hash"}} {
			if kind == KindTxn && wi.Placement != "" {
				continue
			}
			wh, err := NewWhois(whoisAssignment(), kind, wi)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				checkAppendJSON(t, wh, k)
			}
		}
	}
}

func FuzzWhoisJSON(f *testing.F) {
	for _, s := range []string{"", "pinned", "a/b", "bad\xff", "\u2028", "ctl\x00"} {
		f.Add(s, false)
	}
	wh, _ := NewWhois(whoisAssignment(), KindGroup, WhatIf{})
	whTxn, _ := NewWhois(whoisAssignment(), KindTxn, WhatIf{Down: []string{"kaas-0"}})
	f.Fuzz(func(t *testing.T, key string, txn bool) {
		w := wh
		if txn {
			w = whTxn
		}
		checkAppendJSON(t, w, key)
		var v map[string]any
		if err := json.Unmarshal(w.AppendJSON(nil, []byte(key)), &v); err != nil {
			t.Fatalf("invalid JSON for %q: %v", key, err)
		}
	})
}

func TestGroupIDProblem(t *testing.T) {
	t.Parallel()
	for id, bad := range map[string]bool{
		"orders-app": false, "ünïcødé": false, "a.b": false, "..x": false,
		"": true, "a/b": true, "../x": true, "x/../y": true, "/abs": true, "a\x00b": true, "bad\xff": true,
		strings.Repeat("g", 246): false, strings.Repeat("g", 247): true,
	} {
		if got := GroupIDProblem([]byte(id)) != ""; got != bad {
			t.Errorf("GroupIDProblem(%.20q) = %v, want %v", id, got, bad)
		}
	}
}

func TestWhatIfRetiresEntriesOnDownBrokers(t *testing.T) {
	t.Parallel()
	wh, err := NewWhois(whoisAssignment(), KindGroup, WhatIf{Down: []string{"kaas-10"}})
	if err != nil {
		t.Fatal(err)
	}
	r := wh.Resolve("pinned")
	if r.Tier == "explicit" || r.Coordinator == "kaas-10" || *r.CurrentCoordinator != "kaas-10" || !*r.Moves {
		t.Errorf("entry on a down broker must be retired: %+v", r)
	}
	if r.NumBrokers != 3 {
		t.Errorf("down broker must leave brokers[]: %d listed", r.NumBrokers)
	}
	wh, _ = NewWhois(whoisAssignment(), KindGroup, WhatIf{Down: []string{"kaas-10"}, KeepListed: true})
	if r := wh.Resolve("pinned"); r.NumBrokers != 4 {
		t.Errorf("--keep-listed must keep the divisor: %d", r.NumBrokers)
	}
	if _, err := NewWhois(whoisAssignment(), KindGroup, WhatIf{Down: []string{"nope"}}); err == nil {
		t.Error("unknown broker accepted")
	}
}

func TestScanKeyHashIsFNV(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "a", "foobar", "g1", "bad\xff", strings.Repeat("z", 999)} {
		if h, _ := scanKey([]byte(k)); h != grouphash.FNV1a32(k) {
			t.Errorf("scanKey(%q) hash %#x, want %#x", k, h, grouphash.FNV1a32(k))
		}
	}
}

func TestWhatIfPlacement(t *testing.T) {
	t.Parallel()
	wh, err := NewWhois(whoisAssignment(), KindGroup, WhatIf{Down: []string{"kaas-10"}, Placement: "rendezvous"})
	if err != nil {
		t.Fatal(err)
	}
	alive := []string{"kaas-0"} // kaas-1 dead, kaas-2 draining, kaas-10 down
	placed, fellBack := 0, 0
	for i := 0; i < 40; i++ {
		g := fmt.Sprintf("group-%d", i)
		r := wh.Resolve(g)
		if *r.CurrentCoordinator == "kaas-10" {
			// Its coordinator went down: not reported active, no new entry.
			fellBack++
			if r.Tier == "explicit" {
				t.Errorf("%s was on the down broker but got an entry: %+v", g, r)
			}
			continue
		}
		placed++
		if r.Tier != "explicit" || r.Coordinator != grouphash.Rendezvous(g, alive) {
			t.Errorf("%s: %+v, want an entry on %s", g, r, grouphash.Rendezvous(g, alive))
		}
	}
	if placed == 0 || fellBack == 0 {
		t.Errorf("placed %d, fell back %d: both cases must be exercised", placed, fellBack)
	}
	wh, _ = NewWhois(whoisAssignment(), KindGroup, WhatIf{Brokers: []string{"kaas-0", "kaas-1", "kaas-2"}, Placement: "rendezvous"})
	if r := wh.Resolve("on-dead"); r.Coordinator != "kaas-1" || r.ExplicitBroker != "kaas-1" {
		t.Errorf("an entry on a surviving broker is kept: %+v", r)
	}
	if _, err := NewWhois(whoisAssignment(), KindGroup, WhatIf{Placement: "rendezvous"}); err == nil {
		t.Error("--placement without a what-if accepted")
	}
	if _, err := NewWhois(whoisAssignment(), KindGroup, WhatIf{Down: []string{"kaas-0"}, Placement: "random"}); err == nil {
		t.Error("unknown placement accepted")
	}
}

// A Rust controller failover: an entry the reload keeps is lost when the
// broker reporting its group connects to the new controller last, and the
// answer says where the group goes then (the hash tier); the Go model,
// which drops every entry, has no such alternative. The fast path prints it
// exactly as Resolve's JSON.
func TestWhatIfLastToConnect(t *testing.T) {
	t.Parallel()
	a := &volume.Assignment{AssignmentVersion: 7, ControllerEpoch: 2, Controller: "kaas-0",
		Brokers:        []volume.BrokerEntry{{ID: "kaas-0", Health: "alive"}, {ID: "kaas-1", Health: "alive"}, {ID: "kaas-2", Health: "alive"}},
		ConsumerGroups: []volume.GroupEntry{{GroupID: "kept", Broker: "kaas-2"}, {GroupID: "on-ctrl", Broker: "kaas-0"}}}
	rust, _ := volume.Gen018.Spec()
	wh, err := NewWhois(a, KindGroup, WhatIf{Down: []string{"kaas-0"}, Failover: FailoverReload, Rule: rust.Failover})
	if err != nil {
		t.Fatal(err)
	}
	if !wh.Failover.LastToConnect || !strings.Contains(wh.Failover.Text, "last broker to connect") || !strings.Contains(wh.Failover.Text, "stale controller epoch") {
		t.Errorf("failover: %+v", wh.Failover)
	}
	r := wh.Resolve("kept")
	alt := r.IfLastToConnect
	if r.Coordinator != "kaas-2" || r.Tier != "explicit" || alt == nil || alt.Broker != "kaas-2" || alt.Tier != "hash" || alt.Coordinator != r.HashCoordinator {
		t.Errorf("kept: %+v, if last to connect %+v", r, alt)
	}
	if r := wh.Resolve("on-ctrl"); r.IfLastToConnect != nil {
		t.Errorf("an entry on the stopped controller is retired either way: %+v", r.IfLastToConnect)
	}
	checkAppendJSON(t, wh, "kept")
	goRow, _ := volume.GenGo.Spec()
	wh, _ = NewWhois(a, KindGroup, WhatIf{Down: []string{"kaas-0"}, Failover: FailoverDrop, Rule: goRow.Failover})
	if r := wh.Resolve("kept"); r.IfLastToConnect != nil || wh.Failover.LastToConnect {
		t.Errorf("Go drops every entry: %+v", r)
	}
	if !strings.Contains(wh.Failover.Text, "one version more") {
		t.Errorf("Go failover does not name the extra version of a graceful stop: %s", wh.Failover.Text)
	}
}

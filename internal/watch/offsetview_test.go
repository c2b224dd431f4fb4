package watch

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/anomaly"
)

func TestChangeOfKinds(t *testing.T) {
	t.Parallel()
	prev := &anomaly.Observation{Group: "g", File: "/o/g.json", Offsets: map[string]int64{"t/0": 5}}
	for _, c := range []struct {
		name string
		ev   OffsetEvent
		kind string
	}{
		{"first sight", OffsetEvent{Cur: anomaly.Observation{Group: "g", Offsets: map[string]int64{"t/0": 5}}}, RecSnapshot},
		{"change", OffsetEvent{Prev: prev, Cur: anomaly.Observation{Group: "g"}, Changed: map[string]int64{"t/0": 7}}, RecChange},
		{"corrupt", OffsetEvent{Prev: prev, Cur: anomaly.Observation{Group: "g", Corrupt: true, Problem: "bad json"}}, RecCorrupt},
		{"missing", OffsetEvent{Prev: prev, Cur: anomaly.Observation{Group: "g", Missing: true}, Removed: []string{"t/0"}}, RecMissing},
	} {
		ch := ChangeOf(c.ev)
		if ch.Kind != c.kind {
			t.Errorf("%s: kind %q, want %q", c.name, ch.Kind, c.kind)
		}
		if ch.Changed == nil || ch.Removed == nil || ch.Anomalies == nil {
			t.Errorf("%s: a nil list (JSON null): %+v", c.name, ch)
		}
	}
	if ch := ChangeOf(OffsetEvent{Cur: anomaly.Observation{Offsets: map[string]int64{"t/0": 5, "t/1": 9}}}); len(ch.Changed) != 2 {
		t.Errorf("a snapshot lists every offset: %+v", ch.Changed)
	}
}

func TestOffsetSelection(t *testing.T) {
	t.Parallel()
	obs := func(group string) anomaly.Observation {
		return anomaly.Observation{Group: group, File: "/o/" + group + ".json"}
	}
	prev := func(group string) *anomaly.Observation { o := obs(group); return &o }
	rewind := []anomaly.Anomaly{{Kind: "REWIND", Group: "orders"}}
	baseline := []OffsetEvent{{Cur: obs("orders"), Initial: true}, {Cur: obs("billing"), Initial: true}, {Cur: obs("audit"), Initial: true}}

	s := OffsetSelection{Match: func(g string) bool { return !strings.HasPrefix(g, "audit") }, Max: 2}
	s.Seen([]anomaly.Observation{obs("gone")})
	got := s.Take(baseline)
	if len(got.Changes) != 0 || got.Baseline != 2 || got.Done {
		t.Fatalf("baseline: %+v", got)
	}
	if s.Files() != 4 || !s.SeenAny() {
		t.Fatalf("files %d", s.Files())
	}
	got = s.Take([]OffsetEvent{{Prev: prev("orders"), Cur: obs("orders"), Anomalies: rewind}, {Prev: prev("audit"), Cur: obs("audit")}})
	if len(got.Changes) != 1 || got.Changes[0].Group != "orders" || got.Done || s.Anomalies != 1 {
		t.Fatalf("filtered change: %+v (anomalies %d)", got, s.Anomalies)
	}
	// A new file is shown but not counted; the second change reaches Max
	// and what follows in the batch is dropped.
	missing := obs("billing")
	missing.Missing = true
	got = s.Take([]OffsetEvent{{Cur: obs("new")}, {Prev: prev("billing"), Cur: missing}, {Prev: prev("orders"), Cur: obs("orders")}})
	if len(got.Changes) != 2 || got.Changes[0].Kind != RecSnapshot || got.Changes[1].Kind != RecMissing || !got.Done || s.Shown != 2 {
		t.Fatalf("max: %+v (shown %d)", got, s.Shown)
	}
	if s.Files() != 4 { // gone, orders, audit, new (billing removed)
		t.Fatalf("files after removal %d", s.Files())
	}

	only := OffsetSelection{AnomaliesOnly: true, ShowBaseline: true}
	got = only.Take(append(baseline, OffsetEvent{Prev: prev("orders"), Cur: obs("orders"), Anomalies: rewind}, OffsetEvent{Prev: prev("billing"), Cur: obs("billing")}))
	if len(got.Changes) != 1 || got.Changes[0].Kind != RecChange || got.Baseline != 3 {
		t.Fatalf("anomalies only: %+v", got)
	}
	shown := OffsetSelection{ShowBaseline: true}
	if got = shown.Take(baseline); len(got.Changes) != 3 || got.Changes[0].Kind != RecSnapshot || shown.Shown != 0 {
		t.Fatalf("baseline shown: %+v", got)
	}
}

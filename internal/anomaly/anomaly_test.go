package anomaly

import (
	"testing"
	"time"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	prev := Observation{Time: t0, Group: "g", File: "g.json", Format: "envelope",
		Offsets: map[string]int64{"orders/0": 10, "orders/1": 20, "orders/2": 30}}
	cur := Observation{Time: t0.Add(time.Second), Group: "g", File: "g.json", Format: "envelope",
		Offsets: map[string]int64{"orders/0": 11, "orders/1": 5}}
	got := Compare(prev, cur, true)
	if len(got) != 2 || got[0].Kind != Rewind || got[0].Partition != "orders/1" || got[0].Before != 20 || got[0].After != 5 ||
		got[1].Kind != Vanished || got[1].Partition != "orders/2" || got[1].Before != 30 {
		t.Fatalf("anomalies = %+v", got)
	}
	// Forward progress is no anomaly.
	if a := Compare(cur, Observation{Group: "g", Format: "envelope", Offsets: map[string]int64{"orders/0": 12, "orders/1": 6}}, true); len(a) != 0 {
		t.Fatalf("progress flagged: %+v", a)
	}
	// A plain map is flagged only where the generation reads it as empty.
	pm := cur
	pm.Format = "plainMap"
	pm.Offsets = map[string]int64{"orders/0": 11, "orders/1": 5}
	if a := Compare(cur, pm, false); len(a) != 0 {
		t.Fatalf("plain map flagged on a generation that reads it: %+v", a)
	}
	if a := Compare(cur, pm, true); len(a) != 1 || a[0].Kind != PlainMap {
		t.Fatalf("plain map on 0.2.18 = %+v", a)
	}
	bad := Observation{Group: "g", Corrupt: true, Problem: "unexpected end"}
	if a := Compare(cur, bad, true); len(a) != 1 || a[0].Kind != Corrupt {
		t.Fatalf("corrupt = %+v", a)
	}
}

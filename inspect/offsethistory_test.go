package inspect

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/watch"
)

// A timeline of snapshot, rewind, vanish, gap and recovery: rows are the
// partitions that moved (in partition order, orders/10 after orders/2),
// anomalies are counted per partition, the gap lasts until the first
// sound point, and the summary holds first/last/min/max.
func TestBuildOffsetHistory(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	pts := []watch.HistoryPoint{
		{Time: at(0), Source: "journal", Kind: watch.RecSnapshot, Offsets: map[string]int64{"orders/2": 10, "orders/10": 5, "audit/0": 1}},
		{Time: at(1), Source: "journal", Kind: watch.RecChange, Changed: map[string]int64{"orders/2": 3}, Offsets: map[string]int64{"orders/2": 3, "orders/10": 5, "audit/0": 1},
			Anomalies: []watch.JournalAnomaly{{Kind: "REWIND", Partition: "orders/2", Before: 10, After: 3, Detail: "10 → 3"}}},
		{Time: at(2), Source: "journal", Kind: watch.RecChange, Removed: []string{"orders/10", "audit/0"}, Offsets: map[string]int64{"orders/2": 3},
			Anomalies: []watch.JournalAnomaly{{Kind: "VANISHED", Partition: "orders/10"}, {Kind: "VANISHED", Partition: "audit/0"}}},
		{Time: at(3), Source: "journal", Kind: watch.RecGap, Problem: "unreadable record", Unsound: true, Offsets: map[string]int64{"orders/2": 3}},
		{Time: at(4), Source: "journal", Kind: watch.RecChange, Unsound: true, Offsets: map[string]int64{"orders/2": 7}},
		{Time: at(5), Source: "journal", Kind: watch.RecSnapshot, Offsets: map[string]int64{"orders/2": 20, "orders/10": 6}},
	}
	keep := func(k string) bool { return k != "audit/0" }
	v := BuildOffsetHistory(OffsetHistoryInput{Group: "g", Journal: "/j", Backups: []string{}, Warnings: []string{}, Points: pts}, keep)

	if len(v.Points) != 6 || !v.First.Equal(at(0)) || !v.Last.Equal(at(5)) {
		t.Fatalf("points %d first %v last %v", len(v.Points), v.First, v.Last)
	}
	if len(v.Gaps) != 1 || v.Gaps[0].Until == nil || !v.Gaps[0].Until.Equal(at(5)) || v.Gaps[0].Problem != "unreadable record" {
		t.Fatalf("gaps %+v", v.Gaps)
	}
	var kinds []string
	for _, a := range v.Anomalies {
		kinds = append(kinds, a.Kind+":"+a.Partition)
	}
	if !slices.Equal(kinds, []string{"REWIND:orders/2", "VANISHED:orders/10"}) {
		t.Fatalf("anomalies %v (audit/0 is filtered out)", kinds)
	}
	if got := v.Points[2].Removed; !slices.Equal(got, []string{"orders/10"}) {
		t.Fatalf("removed %v", got)
	}
	var rows []string
	for _, r := range v.Rows {
		rows = append(rows, r.Time.Format("04")+" "+r.Topic+"/"+strconv.Itoa(int(r.Partition)))
	}
	want := []string{"00 orders/2", "00 orders/10", "01 orders/2", "02 orders/10", "04 orders/2", "05 orders/2", "05 orders/10"}
	if !slices.Equal(rows, want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	if len(v.Partitions) != 2 || v.Partitions[0].Partition != 2 || v.Partitions[1].Partition != 10 {
		t.Fatalf("partitions %+v", v.Partitions)
	}
	p2, p10 := v.Partitions[0], v.Partitions[1]
	if *p2.First != 10 || *p2.Last != 20 || p2.Min != 3 || p2.Max != 20 || p2.Changes != 4 || p2.Anomalies != 1 || p2.Spark == "" {
		t.Errorf("orders/2 %+v", p2)
	}
	if *p10.First != 5 || *p10.Last != 6 || p10.Changes != 3 || p10.Anomalies != 1 {
		t.Errorf("orders/10 %+v", p10)
	}
	if r := v.Rows[3]; r.Offset != nil || r.Previous == nil || *r.Previous != 5 || r.Anomaly != "VANISHED" {
		t.Errorf("vanished row %+v", r)
	}
}

func TestCompareOffsetKeys(t *testing.T) {
	t.Parallel()
	ks := []string{"b/1", "a/10", "a/2", "junk", "a/1"}
	slices.SortFunc(ks, CompareOffsetKeys)
	if !slices.Equal(ks, []string{"a/1", "a/2", "a/10", "b/1", "junk"}) {
		t.Fatal(ks)
	}
}

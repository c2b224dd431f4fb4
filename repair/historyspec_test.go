package repair

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
)

var h0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func pt(sec int, offs map[string]int64, anomalies ...string) watch.HistoryPoint {
	p := watch.HistoryPoint{Time: h0.Add(time.Duration(sec) * time.Second), Source: "journal", Kind: watch.RecChange, Offsets: offs}
	for _, a := range anomalies {
		kind, part, _ := strings.Cut(a, ":")
		p.Anomalies = append(p.Anomalies, watch.JournalAnomaly{Kind: kind, Partition: part})
	}
	return p
}

func history() GroupHistory {
	return GroupHistory{Group: "app", Points: []watch.HistoryPoint{
		pt(0, map[string]int64{"orders/0": 10, "orders/1": 10}),
		pt(10, map[string]int64{"orders/0": 20, "orders/1": 20}),
		pt(20, map[string]int64{"orders/0": 20, "orders/1": 5}, "REWIND:orders/1"),
		pt(30, map[string]int64{"orders/0": 25, "orders/1": 6}),
		pt(40, map[string]int64{"orders/0": 25}, "VANISHED:orders/1"),
	}}
}

func TestTargetAt(t *testing.T) {
	t.Parallel()
	h := history()
	tg, err := TargetAt(h, h0.Add(15*time.Second))
	if err != nil || tg.Offsets["orders/1"] != 20 || !tg.Point.Time.Equal(h0.Add(10*time.Second)) {
		t.Errorf("%+v %v", tg, err)
	}
	if _, err := TargetAt(h, h0.Add(-time.Second)); err == nil || !strings.Contains(err.Error(), "history starts at") {
		t.Errorf("before the history: %v", err)
	}
	if _, err := TargetAt(GroupHistory{Group: "x"}, h0); err == nil || !strings.Contains(err.Error(), "no history") {
		t.Errorf("empty history: %v", err)
	}
}

func TestTargetBeforeAnomaly(t *testing.T) {
	t.Parallel()
	h := history()
	// The latest incident is the wipe at 40: the state before it (at 30),
	// not the state before the rewind at 20, which was followed by a good
	// commit (the group had recovered, or was restored).
	tg, err := TargetBeforeAnomaly(h, time.Time{})
	if err != nil || tg.Offsets["orders/1"] != 6 || tg.Anomaly.Kind != "VANISHED" || tg.Later != 0 || tg.EarlierIncidents != 1 {
		t.Errorf("%+v %v", tg, err)
	}
	// Since before the rewind: the same answer.
	tg, err = TargetBeforeAnomaly(h, h0.Add(15*time.Second))
	if err != nil || tg.Offsets["orders/1"] != 6 || tg.Anomaly.Kind != "VANISHED" {
		t.Errorf("%+v %v", tg, err)
	}
	// Since before the rewind, history until before the wipe: the rewind.
	h2 := history()
	h2.Points = h2.Points[:4]
	tg, err = TargetBeforeAnomaly(h2, time.Time{})
	if err != nil || tg.Offsets["orders/1"] != 20 || tg.Anomaly.Kind != "REWIND" || tg.EarlierIncidents != 0 {
		t.Errorf("%+v %v", tg, err)
	}
	if _, err := TargetBeforeAnomaly(h, h0.Add(time.Minute)); err == nil || !strings.Contains(err.Error(), "no anomaly") {
		t.Errorf("no anomaly: %v", err)
	}
	h.Points = h.Points[4:]
	if _, err := TargetBeforeAnomaly(h, time.Time{}); err == nil || !strings.Contains(err.Error(), "first point") {
		t.Errorf("anomaly first: %v", err)
	}
}

// Anomalies with no good observation between them are one incident: the
// restore goes back to before the first of them.
func TestTargetBeforeAnomalyOneIncident(t *testing.T) {
	t.Parallel()
	h := GroupHistory{Group: "app", Points: []watch.HistoryPoint{
		pt(0, map[string]int64{"orders/0": 10, "orders/1": 10}),
		pt(10, map[string]int64{"orders/0": 3, "orders/1": 10}, "REWIND:orders/0"),
		pt(20, map[string]int64{"orders/0": 20, "orders/1": 20}),
		pt(30, map[string]int64{"orders/0": 20, "orders/1": 19}, "REWIND:orders/1"),
		pt(40, map[string]int64{"orders/0": 20, "orders/1": 18}, "REWIND:orders/1"),
		pt(50, map[string]int64{"orders/0": 20}, "VANISHED:orders/1", "EMPTIED:"),
	}}
	tg, err := TargetBeforeAnomaly(h, time.Time{})
	if err != nil || tg.Offsets["orders/1"] != 20 || !tg.Point.Time.Equal(h0.Add(20*time.Second)) || tg.Anomaly.Kind != "REWIND" || !tg.AnomalyTime.Equal(h0.Add(30*time.Second)) || tg.Later != 3 || tg.EarlierIncidents != 1 {
		t.Errorf("%+v %v", tg, err)
	}
	// Since inside the incident: only the anomalies from then on count.
	tg, err = TargetBeforeAnomaly(h, h0.Add(35*time.Second))
	if err != nil || tg.Offsets["orders/1"] != 19 || tg.Later != 2 {
		t.Errorf("since inside: %+v %v", tg, err)
	}
}

func TestHistorySpec(t *testing.T) {
	t.Parallel()
	tg, _ := TargetAt(history(), h0.Add(15*time.Second))
	sp, _, err := HistorySpec([]HistoryTarget{tg}, nil, "--to-history X")
	if err != nil || sp.Kind != FromFile || len(sp.File.Rows) != 2 || sp.String() != "--to-history X" {
		t.Fatalf("%+v %v", sp, err)
	}
	rows := Plan("app", sp, []PartitionInfo{{Topic: "orders", Partition: 1, Committed: 5, HasCommitted: true, LogEnd: 30, HasLog: true}})
	if rows[0].New != 20 || !rows[0].Changed {
		t.Errorf("plan %+v", rows)
	}
	sp, _, _ = HistorySpec([]HistoryTarget{tg}, []TopicScope{{Topic: "orders", Partitions: []int32{1}}}, "")
	if len(sp.File.Rows) != 1 || sp.File.Rows[0].Partition != 1 {
		t.Errorf("scoped %+v", sp.File.Rows)
	}
	if _, _, err := HistorySpec([]HistoryTarget{tg}, []TopicScope{{Topic: "audit"}}, ""); err == nil {
		t.Error("a scope outside the history was accepted")
	}
}

// rewrittenGroup is group app's offset file on a 0.2.18 volume, written
// as first and rewritten as second at h0 through the safe write path (one
// backup of first): kaasctl's history of the group. now is h0.
func rewrittenGroup(t *testing.T, first, second string) (l volume.Layout, p string, now func() time.Time) {
	t.Helper()
	cd := t.TempDir()
	os.MkdirAll(filepath.Join(cd, volume.OffsetsDir), 0o755)
	l = volume.Layout{ClusterDir: cd}.PinnedTo(volume.Gen018, "test")
	p, err := GroupFilePath(l, "app")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(first), 0o644)
	now = func() time.Time { return h0 }
	if _, err := WriteFileAtomic(p, []byte(second), WriteOptions{Backup: true, Now: now}); err != nil {
		t.Fatal(err)
	}
	return l, p, now
}

func TestListBackupsAndHistory(t *testing.T) {
	t.Parallel()
	l, p, now := rewrittenGroup(t, `{"offsets":{"orders/0":1}}`, `{"offsets":{"orders/0":2}}`)
	if _, err := WriteFileAtomic(p, []byte(`{"offsets":{"orders/0":3}}`), WriteOptions{Backup: true, Now: now}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p+BackupSuffix+"garbage", []byte("x"), 0o644)
	bs, err := ListBackups(p)
	if err != nil || len(bs) != 2 || !bs[0].Time.Equal(h0) {
		t.Fatalf("%+v %v", bs, err)
	}
	h, err := LoadGroupHistory(HistorySource{Layout: l}, "app")
	// The oldest copy stands for the time before the first rewrite; each
	// rewrite is followed by the next copy, the last by the file itself.
	if err != nil || len(h.Points) != 3 || h.Points[0].Source != "backup" || h.Points[0].Kind != KindBeforeRewrite ||
		h.Points[2].Source != "file" || len(h.Backups) != 2 {
		t.Fatalf("%+v %v", h, err)
	}
	// At h0 both rewrites had happened: the file held 3 (not a backup's 2).
	tg, err := TargetAt(h, h0)
	if err != nil || tg.Offsets["orders/0"] != 3 {
		t.Errorf("at the rewrites: %+v %v", tg, err)
	}
	// Before them it held 1: the oldest copy, with a note that its start is unknown.
	tg, err = TargetAt(h, h0.Add(-time.Hour))
	if err != nil || tg.Offsets["orders/0"] != 1 || len(tg.Notes) != 1 {
		t.Errorf("before the rewrites: %+v %v", tg, err)
	}
	// The same through a time-bounded load, as offsets reset --to-history loads it.
	hb, err := LoadGroupHistory(HistorySource{Layout: l, Since: h0.Add(-time.Hour), Until: h0.Add(-time.Hour)}, "app")
	if err != nil {
		t.Fatal(err)
	}
	if tg, err := TargetAt(hb, h0.Add(-time.Hour)); err != nil || tg.Offsets["orders/0"] != 1 {
		t.Errorf("bounded load before the rewrites: %+v %v", tg, err)
	}
}

// A rewind both the journal and the backups saw is counted once (the
// journal's); one only the backups saw is marked on the backup point.
func TestMarkBackupAnomaliesNoDoubleCount(t *testing.T) {
	t.Parallel()
	chain := []watch.HistoryPoint{
		pt(0, map[string]int64{"orders/0": 10}),
		pt(10, map[string]int64{"orders/0": 4}),
		pt(20, map[string]int64{"orders/0": 2}),
	}
	for i := range chain {
		chain[i].Source, chain[i].Anomalies = "backup", []watch.JournalAnomaly{}
	}
	journal := []watch.HistoryPoint{pt(11, map[string]int64{"orders/0": 4})}
	journal[0].Anomalies = []watch.JournalAnomaly{{Kind: "REWIND", Partition: "orders/0", Before: 10, After: 4}}
	markBackupAnomalies(chain, journal, "app", false)
	if len(chain[1].Anomalies) != 0 {
		t.Errorf("the journal's rewind counted again on the backup point: %+v", chain[1].Anomalies)
	}
	if a := chain[2].Anomalies; len(a) != 1 || a[0].Kind != "REWIND" || a[0].Before != 4 || a[0].After != 2 {
		t.Errorf("the rewind only the backups saw: %+v", a)
	}
}

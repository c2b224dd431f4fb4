package watch

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// FuzzParseJournalRecord: any line either is refused or decodes to a
// record that writes back to a line decoding to the same record.
func FuzzParseJournalRecord(f *testing.F) {
	for _, s := range []string{
		`{"kind":"segment","time":"2026-11-30T10:00:00Z","dir":"/data/__cluster/__consumer_offsets","version":1}`,
		`{"kind":"snapshot","time":"2026-11-30T10:00:00.123Z","group":"orders-app","format":"envelope","offsets":{"orders/0":10,"orders/1":20}}`,
		`{"kind":"snapshot","time":"2026-11-30T10:00:00Z","group":"empty","offsets":{}}`,
		`{"time":"2026-11-30T10:00:01Z","group":"orders-app","changed":{"orders/1":5},"anomalies":[{"kind":"REWIND","partition":"orders/1","before":20,"after":5,"detail":"moved back"}]}`,
		`{"time":"2026-11-30T10:00:02Z","group":"g","changed":{"a/b/0":1},"removed":["orders/2"]}`,
		`{"kind":"corrupt","time":"2026-11-30T10:00:03Z","group":"g","problem":"invalid JSON"}`,
		`{"kind":"missing","time":"2026-11-30T10:00:04Z","group":"g","removed":["orders/0"],"file":"/x/g.json"}`,
		`{"kind":"change","time":"2026-11-30T10:00:05Z","group":"g","chan`,
		`{"kind":"segment","time":"2026-11-30T10:00:00Z","version":2}`,
		// A segment header with its sequence, a writer's second segment
		// after the clock stepped back (named earlier than the first).
		`{"kind":"segment","time":"2026-11-30T09:58:00.000Z","dir":"/data/__cluster/__consumer_offsets","version":1,"seq":2}`,
		`{"kind":"segment","time":"2026-11-30T10:00:00Z","version":1,"seq":-3}`,
		// A record labeled in the future (a clock far ahead).
		`{"time":"2999-12-31T23:59:59.999Z","group":"g","changed":{"orders/0":7}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseJournalRecord(line)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		writeRecord(&buf, r)
		r2, err := ParseJournalRecord(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if err != nil {
			t.Fatalf("%s re-encoded as %s: %v", line, buf.Bytes(), err)
		}
		r.Time = r.Time.UTC().Truncate(1e6)
		if r.Kind == RecSnapshot && r.Offsets == nil {
			r.Offsets = map[string]int64{}
		}
		norm := func(x *JournalRecord) {
			if len(x.Offsets) == 0 && x.Kind != RecSnapshot {
				x.Offsets = nil
			}
			if len(x.Changed) == 0 {
				x.Changed = nil
			}
			if len(x.Removed) == 0 {
				x.Removed = nil
			}
			if len(x.Anomalies) == 0 {
				x.Anomalies = nil
			}
			if x.Kind == RecSnapshot && x.Offsets == nil {
				x.Offsets = map[string]int64{}
			}
		}
		norm(&r)
		norm(&r2)
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip:\n%+v\n%+v", r, r2)
		}
	})
}

// FuzzReadOffsetJournal: any two segments (the second named earlier, as a
// writer names a segment after its clock stepped back) read without a
// panic; a bounded read is the full read cut at its last record at or
// before the bound; every group replays.
func FuzzReadOffsetJournal(f *testing.F) {
	h1 := `{"kind":"segment","time":"2026-11-30T10:00:00.000Z","dir":"/d","version":1,"seq":1}` + "\n"
	h2 := `{"kind":"segment","time":"2026-11-30T09:58:00.000Z","dir":"/d","version":1,"seq":2}` + "\n"
	f.Add([]byte(h1+`{"kind":"snapshot","time":"2026-11-30T10:00:00.000Z","group":"g","offsets":{"orders/0":10}}`+"\n"+`{"time":"2026-11-30T10:01:00.000Z","group":"g","changed":{"orders/0":20}}`+"\n"),
		[]byte(h2+`{"kind":"snapshot","time":"2026-11-30T09:58:00.000Z","group":"g","offsets":{"orders/0":20}}`+"\n"+`{"time":"2026-11-30T09:59:00.000Z","group":"g","changed":{"orders/0":2},"anomalies":[{"kind":"REWIND","partition":"orders/0","before":20,"after":2,"detail":"x"}]}`+"\n"))
	f.Add([]byte(h1), []byte(`{"kind":"segment","time":"2026-11-30T09:58:00.000Z","version":1}`+"\n"+`{"time":"2999-01-01T00:00:00Z","group":"g","changed":{"t/0":1}}`))
	f.Add([]byte{}, []byte("not json\n"))
	f.Fuzz(func(t *testing.T, seg1, seg2 []byte) {
		dir := t.TempDir()
		for _, s := range []struct {
			at   time.Time
			data []byte
		}{{time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), seg1}, {time.Date(2026, 11, 30, 9, 58, 0, 0, time.UTC), seg2}} {
			if err := os.WriteFile(filepath.Join(dir, JournalSegmentName(s.at)), s.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		full, err := ReadOffsetJournal(dir, JournalReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		until := time.Date(2026, 11, 30, 10, 0, 30, 0, time.UTC)
		cut, err := ReadOffsetJournal(dir, JournalReadOptions{Until: until})
		if err != nil {
			t.Fatal(err)
		}
		// Both segments start at or before the bound, so both are read.
		want := full.Records[:lastAtOrBefore(full.Records, until)+1]
		if !reflect.DeepEqual(cut.Records, want) {
			t.Fatalf("bounded read %d records, the full read cut there %d", len(cut.Records), len(want))
		}
		if segs := mustList(t, dir); len(segs) != 2 {
			t.Fatalf("%d segments listed", len(segs))
		}
		for _, r := range full.Records {
			ReplayGroup(full.Records, r.Group)
		}
	})
}

func mustList(t *testing.T, dir string) []segmentInfo {
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

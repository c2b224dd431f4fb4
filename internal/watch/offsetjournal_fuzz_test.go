package watch

import (
	"bytes"
	"reflect"
	"testing"
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

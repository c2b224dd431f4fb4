package repair

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// Whatever an offset file holds, the envelope kaasctl writes back from the
// entries it could read parses cleanly to exactly those entries (no
// partial or lossy rewrite), and a merge keeps every entry it does not
// change.
func FuzzEnvelopeRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"offsets":{"orders/0":12,"a/b/1":3},"metadata":{"orders/0":"m"}}`,
		`{"orders/0":12,"orders/1":7}`,
		`{"offsets":{"t/0":-1,"t/x":2,"noslash":1}}`,
		`{"offsets":{"\u00e9/0":1},"metadata":{"\u00e9/0":"\u0000\ud800"}}`,
		`{"offsets":{}}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s), int32(0), int64(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, part int32, off int64) {
		of, _, err := volume.ParseOffsetFile("g.json", data)
		if err != nil {
			return
		}
		enc := EncodeEnvelope(of.Entries)
		back, fs, err := volume.ParseOffsetFile("g.json", enc)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", enc, err)
		}
		for _, f := range fs {
			if f.Severity == volume.SevError {
				t.Fatalf("kaasctl wrote a file kaas cannot decode: %s: %s", enc, f.Message)
			}
		}
		want := dedupeLast(of.Entries)
		if !slices.Equal(back.Entries, want) {
			t.Fatalf("round trip lost data:\n%v\n%v", want, back.Entries)
		}
		if part < 0 {
			part = -part
		}
		merged := MergeEntries(of.Entries, []PlanRow{{Topic: "fz", Partition: part & 0xffff, New: off}}, nil)
		if len(merged) != len(want)+1-countKey(want, "fz", part&0xffff) {
			t.Fatalf("merge changed the set size: %d → %d", len(want), len(merged))
		}
	})
}

func dedupeLast(es []volume.OffsetEntry) []volume.OffsetEntry {
	m := map[string]int{}
	var out []volume.OffsetEntry
	for _, e := range es {
		k := fmt.Sprintf("%s/%d", e.Topic, e.Partition)
		if i, ok := m[k]; ok {
			out[i] = e
			continue
		}
		m[k] = len(out)
		out = append(out, e)
	}
	return out
}

func countKey(es []volume.OffsetEntry, t string, p int32) int {
	for _, e := range es {
		if e.Topic == t && e.Partition == p {
			return 1
		}
	}
	return 0
}

// BenchmarkMergeEncode: one reset of a group with 10,000 partitions
// (merge the change into the full set, encode the envelope).
func BenchmarkMergeEncode(b *testing.B) {
	file := make([]volume.OffsetEntry, 0, 10000)
	for t := range 100 {
		for p := range 100 {
			file = append(file, volume.OffsetEntry{Topic: fmt.Sprintf("topic-%03d", t), Partition: int32(p), Offset: int64(t*p + 1), Metadata: "m"})
		}
	}
	rows := make([]PlanRow, 0, 100)
	for p := range 100 {
		rows = append(rows, PlanRow{Topic: "topic-007", Partition: int32(p), New: 0})
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(EncodeEnvelope(MergeEntries(file, rows, nil)))
	}
	b.ReportMetric(float64(n), "bytes/file")
	b.ReportMetric(10000, "partitions")
}

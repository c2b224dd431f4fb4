package watch

import (
	"bytes"
	"testing"
)

// FuzzParseEventRecord: any line of an events journal either is refused
// or decodes to a record that writes back to a line decoding to a record
// of the same kind, group, condition and members.
func FuzzParseEventRecord(f *testing.F) {
	for _, s := range []string{
		`{"kind":"segment","time":"2026-11-30T10:00:00Z","version":1,"observer":"exporter","interval":"15s"}`,
		`{"kind":"members","time":"2026-11-30T10:00:01Z","group":"app","state":"Stable","coordinator":"kaas-0","members":[{"memberId":"m-a","clientId":"app"}]}`,
		`{"kind":"members","time":"2026-11-30T10:02:30Z","group":"app","state":"Stable","members":[],"change":{"since":"2026-11-30T10:02:20Z","observedGeneration":1,"causes":["member_left"],"left":["m-b"]}}`,
		`{"kind":"condition","time":"2026-11-30T10:03:05Z","group":"app","condition":"REWIND","entered":true,"detail":"orders/1 moved back"}`,
		`{"kind":"unobserved","time":"2026-11-30T10:10:00Z","since":"2026-11-30T10:05:00Z","problem":"brokers: connection refused"}`,
		`{"kind":"unobserved","time":"2026-11-30T10:00:00Z","since":"2026-11-30T10:05:00Z"}`,
		`{"kind":"alive","time":"2026-11-30T10:00:30Z"}`,
		// A stretch shorter than a millisecond: the time is written to the
		// millisecond, its since must stay no later.
		`{"kind":"gap","time":"2026-11-30T10:00:00.0009Z","since":"2026-11-30T10:00:00.0005Z"}`,
		`{"kind":"segment","time":"2026-11-30T10:00:00Z","version":9}`,
		`{"kind":"members","time":"2026-11-30T10:00:01Z","group":"app"} {"kind":"alive"}`,
		`{"kind":"condition","time":"2026-11-30T10:00:01Z","group":"app"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseEventRecord(line)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		writeEvent(&buf, r)
		r2, err := ParseEventRecord(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if err != nil {
			t.Fatalf("%s re-encoded as %s: %v", line, buf.Bytes(), err)
		}
		if r2.Kind != r.Kind || r2.Group != r.Group || r2.Condition != r.Condition || r2.Entered != r.Entered || len(r2.Members) != len(r.Members) {
			t.Fatalf("%s re-encoded as %s: %+v, want %+v", line, buf.Bytes(), r2, r)
		}
	})
}

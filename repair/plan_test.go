package repair

import (
	"strings"
	"testing"
)

func parts() []PartitionInfo {
	return []PartitionInfo{
		{Topic: "orders", Partition: 1, Committed: 50, HasCommitted: true, LogStart: 10, LogEnd: 100, HasLog: true, TimeOffset: 70, HasTimeOffset: true},
		{Topic: "orders", Partition: 0, Committed: 5, HasCommitted: true, LogStart: 10, LogEnd: 100, HasLog: true},
		{Topic: "audit", Partition: 0, LogStart: 0, LogEnd: 7, HasLog: true},
		{Topic: "offline", Partition: 0, Committed: 3, HasCommitted: true},
	}
}

func row(rows []PlanRow, topic string, p int32) PlanRow {
	for _, r := range rows {
		if r.Topic == topic && r.Partition == p {
			return r
		}
	}
	return PlanRow{Error: "missing"}
}

func TestPlanSpecs(t *testing.T) {
	t.Parallel()
	type want struct {
		topic string
		p     int32
		new   int64
		err   string
		warn  string
	}
	for _, tc := range []struct {
		spec Spec
		want []want
	}{
		{Spec{Kind: ToEarliest}, []want{{"orders", 0, 10, "", ""}, {"audit", 0, 0, "", ""}, {"offline", 0, 0, "unknown", ""}}},
		{Spec{Kind: ToLatest}, []want{{"orders", 1, 100, "", ""}}},
		{Spec{Kind: ToCurrent}, []want{{"orders", 1, 50, "", ""}, {"audit", 0, 7, "", "gives it the log end"}, {"offline", 0, 3, "", ""}}},
		{Spec{Kind: ToOffset, Offset: 60}, []want{{"orders", 1, 60, "", ""}, {"audit", 0, 7, "", "higher than the latest"}}},
		{Spec{Kind: ToOffset, Offset: 2}, []want{{"orders", 0, 10, "", "lower than the earliest"}}},
		{Spec{Kind: ShiftBy, Shift: -45}, []want{{"orders", 1, 10, "", "lower than the earliest"}, {"audit", 0, 0, "no current committed offset", ""}, {"offline", 0, 0, "log end unknown", ""}}},
		{Spec{Kind: ShiftBy, Shift: -45, AllowUnverifiedLogEnd: true}, []want{{"offline", 0, 0, "", "negative"}}},
		{Spec{Kind: ShiftBy, Shift: 10}, []want{{"orders", 1, 60, "", ""}}},
		{Spec{Kind: ToDatetime}, []want{{"orders", 1, 70, "", ""}, {"orders", 0, 100, "", "nothing in the log"}, {"offline", 0, 0, "need live brokers", ""}}},
		{Spec{Kind: FromFile, File: FilePlan{Rows: []FileRow{{Topic: "orders", Partition: 1, Offset: 99}}}}, []want{{"orders", 1, 99, "", ""}, {"orders", 0, 0, "not in the plan file", ""}}},
	} {
		rows := Plan("g", tc.spec, parts())
		if len(rows) != 4 || rows[0].Topic != "audit" || rows[1].Partition != 0 {
			t.Fatalf("%s: rows not sorted: %+v", tc.spec, rows)
		}
		for _, w := range tc.want {
			r := row(rows, w.topic, w.p)
			if w.err != "" {
				if !strings.Contains(r.Error, w.err) {
					t.Errorf("%s %s-%d: error %q, want %q", tc.spec, w.topic, w.p, r.Error, w.err)
				}
				continue
			}
			if r.Error != "" || r.New != w.new {
				t.Errorf("%s %s-%d: new %d err %q, want %d", tc.spec, w.topic, w.p, r.New, r.Error, w.new)
			}
			if w.warn != "" && !strings.Contains(strings.Join(r.Warnings, ";"), w.warn) {
				t.Errorf("%s %s-%d: warnings %v, want %q", tc.spec, w.topic, w.p, r.Warnings, w.warn)
			}
		}
	}
}

func TestPlanChangedAndErrors(t *testing.T) {
	t.Parallel()
	rows := Plan("g", Spec{Kind: ToCurrent}, parts())
	if r := row(rows, "orders", 1); r.Changed || r.Current == nil || *r.Current != 50 {
		t.Errorf("to-current must not change a committed partition: %+v", r)
	}
	if r := row(rows, "audit", 0); !r.Changed || r.Current != nil || r.New != 7 {
		t.Errorf("--to-current gives a partition without a commit the log end: %+v", r)
	}
	if n := PlanErrors(Plan("g", Spec{Kind: ToEarliest}, parts())); n != 1 {
		t.Errorf("PlanErrors = %d", n)
	}
}

// TestPlanUnverifiedLogEnd: a log end from manifest.json (the segments
// could not be read) or none at all never decides an offset: every spec
// that clamps to it, or is it, refuses the row naming the evidence;
// --to-current keeps committed offsets; the override plans without clamping.
func TestPlanUnverifiedLogEnd(t *testing.T) {
	t.Parallel()
	stale := []PartitionInfo{
		{Topic: "orders", Partition: 0, Committed: 785, HasCommitted: true, LogStart: 0, LogEnd: 0, HasLog: true, LogSource: "manifest", LogUnknown: "the segment files could not be read (no segment files)"},
		{Topic: "orders", Partition: 1, Committed: 640, HasCommitted: true, LogStart: 0, LogEnd: 1576, HasLog: true, LogSource: "segments"},
	}
	for _, spec := range []Spec{{Kind: ToLatest}, {Kind: ToEarliest}, {Kind: ToOffset, Offset: 700}, {Kind: ShiftBy, Shift: 10}, {Kind: FromFile, File: FilePlan{Rows: []FileRow{{Topic: "orders", Partition: 0, Offset: 9}}}}} {
		rows := Plan("g", spec, stale)
		r := row(rows, "orders", 0)
		if r.Changed || !strings.Contains(r.Error, "log end unverified") || !strings.Contains(r.Error, "manifest.json says 0") || !strings.Contains(r.Error, UnverifiedFlag) {
			t.Errorf("%s: a manifest log end decided the row: %+v", spec, r)
		}
		if r1 := row(rows, "orders", 1); r1.Error != "" && spec.Kind != FromFile {
			t.Errorf("%s: a segments log end refused: %+v", spec, r1)
		}
	}
	// A partition without a commit would get the log end: unverified,
	// it is refused like every other spec's row.
	noCommit := PartitionInfo{Topic: "orders", Partition: 2, LogEnd: 30, HasLog: true, LogSource: "manifest", LogUnknown: "no segment files"}
	if r := row(Plan("g", Spec{Kind: ToCurrent}, append([]PartitionInfo{noCommit}, stale...)), "orders", 2); r.Changed || !strings.Contains(r.Error, "log end unverified") {
		t.Errorf("--to-current planned a manifest log end: %+v", r)
	}
	rows := Plan("g", Spec{Kind: ToCurrent}, stale)
	for _, r := range rows {
		if r.Changed || r.Error != "" || r.Clamped || r.New != *r.Current {
			t.Errorf("--to-current changed %s/%d: %+v", r.Topic, r.Partition, r)
		}
	}
	rows = Plan("g", Spec{Kind: ToOffset, Offset: 700, AllowUnverifiedLogEnd: true}, stale)
	if r := row(rows, "orders", 0); r.Error != "" || r.New != 700 || r.Clamped || !strings.Contains(strings.Join(r.Warnings, ";"), "UNVERIFIED") {
		t.Errorf("the override clamped to the manifest or refused: %+v", r)
	}
	if r := row(rows, "orders", 1); r.New != 700 || r.LogSource != "segments" {
		t.Errorf("segments row: %+v", r)
	}
	rows = Plan("g", Spec{Kind: ToOffset, Offset: 2000}, stale[1:])
	if r := row(rows, "orders", 1); r.New != 1576 || !r.Clamped {
		t.Errorf("clamping uses the segments' log end: %+v", r)
	}
}

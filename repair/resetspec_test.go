package repair

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseTopicScope(t *testing.T) {
	t.Parallel()
	ts, err := ParseTopicScope("orders:5,0,2,2")
	if err != nil || ts.Topic != "orders" || len(ts.Partitions) != 3 || ts.Partitions[0] != 0 || ts.Partitions[2] != 5 {
		t.Errorf("%+v %v", ts, err)
	}
	if ts, err := ParseTopicScope("orders"); err != nil || ts.Partitions != nil {
		t.Errorf("%+v %v", ts, err)
	}
	for _, bad := range []string{"", ":1", "orders:", "orders:a", "orders:-1", "a/b", "#x"} {
		if _, err := ParseTopicScope(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestResetCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rows := []PlanRow{
		{Group: "g1", Topic: "orders", Partition: 0, New: 5},
		{Group: "g1", Topic: "orders", Partition: 1, New: 7},
		{Group: "g2", Topic: "audit", Partition: 0, New: 0},
		{Group: "g2", Topic: "audit", Partition: 1, Error: "nope"},
	}
	for _, multi := range []bool{false, true} {
		var b bytes.Buffer
		if err := ExportCSV(&b, rows[:2+2*btoi(multi)], multi); err != nil {
			t.Fatal(err)
		}
		fp, err := ParseResetCSV(&b, "plan.csv")
		if err != nil {
			t.Fatal(err)
		}
		if fp.MultiGroup != multi {
			t.Errorf("layout detection: %v", fp.MultiGroup)
		}
		if got := fp.ForGroup("g1"); len(got) != 2 || got[1].Offset != 7 {
			t.Errorf("g1 rows: %+v", got)
		}
		if multi && (len(fp.ForGroup("g2")) != 1 || len(fp.Groups()) != 2) {
			t.Errorf("g2 rows: %+v", fp)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParseResetCSVErrors(t *testing.T) {
	t.Parallel()
	ok := "topic,partition,offset\n# a comment\norders,0,5\n\n"
	if fp, err := ParseResetCSV(strings.NewReader(ok), "f"); err != nil || len(fp.Rows) != 1 {
		t.Errorf("header/comment/blank: %+v %v", fp, err)
	}
	for in, want := range map[string]string{
		"":                           "no offsets",
		"orders,0\n":                 "2 fields",
		"orders,x,5\n":               `partition "x"`,
		"orders,0,-5\n":              `offset "-5"`,
		"orders,0,5\norders,0,6\n":   "listed twice",
		"orders,0,5\ng,orders,1,6\n": "one file holds one layout",
		",0,5\n":                     "not a valid topic name",
		"\"unterminated,0,5\n":       "f:",
	} {
		_, err := ParseResetCSV(strings.NewReader(in), "f")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func FuzzParseResetCSV(f *testing.F) {
	f.Add("orders,0,5\norders,1,6\n")
	f.Add("group,topic,partition,offset\ng,orders,0,5\n")
	f.Add("\"a\nb\",0,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		fp, err := ParseResetCSV(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var rows []PlanRow
		for _, r := range fp.Rows {
			if r.Offset < 0 || r.Partition < 0 || r.Topic == "" {
				t.Fatalf("bad row accepted: %+v", r)
			}
			rows = append(rows, PlanRow{Group: r.Group, Topic: r.Topic, Partition: r.Partition, New: r.Offset})
		}
		var b bytes.Buffer
		if err := ExportCSV(&b, rows, fp.MultiGroup); err != nil {
			t.Fatal(err)
		}
		back, err := ParseResetCSV(&b, "fuzz.csv")
		if err != nil || len(back.Rows) != len(fp.Rows) {
			t.Fatalf("export did not round-trip: %v (%d vs %d rows)", err, len(back.Rows), len(fp.Rows))
		}
	})
}

// Groups lists the groups a multi-group file names, in file order.
func (fp FilePlan) Groups() []string {
	var gs []string
	seen := map[string]bool{}
	for _, r := range fp.Rows {
		if r.Group != "" && !seen[r.Group] {
			seen[r.Group] = true
			gs = append(gs, r.Group)
		}
	}
	return gs
}

package repair

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func rollbackLines(recs ...RollbackRecord) string {
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

var rbHeader = RollbackRecord{Kind: RollbackHeader, Format: PruneRollbackFormat, Version: RollbackVersion, Planned: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}

// A rollback file reads back its groups (the last record of a group
// wins) and outcomes; damage is an error naming the line.
func TestParseRollback(t *testing.T) {
	t.Parallel()
	before := []byte(`{"offsets":{"orders/0":1}}`)
	g := RollbackRecord{Kind: RollbackGroup, Group: "g", Path: "/d/g.json", Action: "remove", Mode: 0o644, Before: before, BeforeSHA256: sum(before)}
	rb, err := ParseRollback(strings.NewReader(rollbackLines(rbHeader, g, RollbackRecord{Kind: RollbackOutcome, Group: "g", Outcome: OutcomeWritten})), "rb")
	if err != nil || len(rb.Groups) != 1 || !bytes.Equal(rb.Groups[0].Before, before) || rb.Outcomes["g"] != OutcomeWritten {
		t.Fatalf("%+v %v", rb, err)
	}
	bad := g
	bad.Before = []byte("changed")
	for name, c := range map[string]struct{ text, want string }{
		"no header":   {rollbackLines(g), "rb:1: the first record"},
		"sha":         {rollbackLines(rbHeader, bad), "rb:2: group \"g\": its saved file does not match"},
		"not json":    {rollbackLines(rbHeader) + "{\n", "rb:2: not a rollback record"},
		"empty":       {"", "no kaasctl-prune-rollback header"},
		"bad action":  {rollbackLines(rbHeader, RollbackRecord{Kind: RollbackGroup, Group: "g", Path: "p", Action: "zap", BeforeSHA256: sum(nil)}), "action \"zap\""},
		"bad kind":    {rollbackLines(rbHeader, RollbackRecord{Kind: "other"}), "record kind \"other\""},
		"new version": {rollbackLines(RollbackRecord{Kind: RollbackHeader, Format: PruneRollbackFormat, Version: 9}), "version 9"},
	} {
		if _, err := ParseRollback(strings.NewReader(c.text), "rb"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func FuzzParseRollback(f *testing.F) {
	before := []byte(`{"offsets":{"orders/0":1}}`)
	f.Add(rollbackLines(rbHeader, RollbackRecord{Kind: RollbackGroup, Group: "g", Path: "/d/g.json", Action: "rewrite", Mode: 0o600, Before: before, BeforeSHA256: sum(before), AfterSHA256: sum(nil)}))
	f.Add(rollbackLines(rbHeader, RollbackRecord{Kind: RollbackOutcome, Group: "g", Outcome: "written"}))
	f.Add(`{"kind":"header","format":"kaasctl-prune-rollback","version":1}` + "\n" + `{"kind":"group","group":"g","path":"p","action":"remove","mode":4294967295}`)
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		rb, err := ParseRollback(strings.NewReader(s), "rb")
		if err != nil {
			return
		}
		for _, g := range rb.Groups {
			if sum(g.Before) != g.BeforeSHA256 || g.Group == "" || (g.Action != "remove" && g.Action != "rewrite") || g.Mode > 0o777 {
				t.Fatalf("accepted %+v", g)
			}
		}
	})
}

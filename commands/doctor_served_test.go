package commands

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

// On the sandbox (a kaas 0.2.18 volume, pinned: detection cannot tell it
// from 0.2.16): while the offset files match what
// the coordinators serve, doctor finds nothing; once a group's file lacks
// partitions its coordinator still serves from memory (the write that
// should have carried them was lost), doctor reports the group, the
// partitions, the generation it assumed and that generation's cause.
func TestDoctorServedNotFiled018(t *testing.T) {
	t.Parallel()
	if sandbox.DefaultGeneration != volume.Gen018 {
		t.Fatalf("the sandbox lays out generation %s; this test assumes 0.2.18", sandbox.DefaultGeneration)
	}
	sb := liveSB(t)
	produceOrders(t, sb, 20)
	commitAdmin(t, sb, "app", map[int32]int64{0: 5, 1: 6, 2: 7, 3: 8})
	commitAdmin(t, sb, "whole", map[int32]int64{0: 1, 1: 1})
	dd := sb.Layout().DataDir
	r := live(t, sb, "doctor", "--data-dir", dd, "-o", "json")
	if d := decodeJSON[views.DoctorView](t, r); r.Code != 0 || slices.ContainsFunc(d.Findings, func(f inspect.DoctorFinding) bool { return f.Code == inspect.DocServedNotFiled }) {
		t.Fatalf("files matching the coordinators: exit %d, findings %+v\n%s", r.Code, d.Findings, r.Err)
	}

	// The lost write: app's file holds partitions 0 and 1 only.
	writeFile(t, sb.Layout().OffsetsPath(), "app.json", `{"offsets":{"orders/0":5,"orders/1":6}}`)
	r = live(t, sb, "doctor", "--data-dir", dd, "--kaas-version", "0.2.18", "-o", "json")
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", r.Code, r.Out, r.Err)
	}
	var found *inspect.DoctorFinding
	for _, f := range decodeJSON[views.DoctorView](t, r).Findings {
		if f.Code == inspect.DocServedNotFiled {
			found = &f
		}
	}
	if found == nil {
		t.Fatalf("no %s finding:\n%s", inspect.DocServedNotFiled, r.Out)
	}
	if !slices.Equal(found.Subjects, []string{"app"}) || found.Severity != volume.SevError {
		t.Errorf("finding %+v", found)
	}
	for _, w := range []string{"app lacks orders/2, orders/3", "2 partitions", "assuming kaas generation " + volume.Gen018.Label(), "swallows a failed write"} {
		if !strings.Contains(found.Message, w) {
			t.Errorf("message lacks %q: %s", w, found.Message)
		}
	}
}

package repair

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// ApplyOffsets' contract offline: per group, a skipped group and one that
// cannot be planned are not written, a refused group only with Force, the
// others are written and verified; the error carries the exit code.
func TestApplyOffsetsPerGroup(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	os.WriteFile(filepath.Join(l.OffsetsPath(), "g2.json"), []byte(offlineOld), 0o644)
	os.MkdirAll(filepath.Join(l.DataDir, "audit", "0"), 0o755)
	os.WriteFile(filepath.Join(l.DataDir, "audit", "0", "manifest.json"), []byte(`{"epoch":1,"highWatermark":9,"logStartOffset":1}`), 0o644)
	writeLog(t, filepath.Join(l.DataDir, "audit", "0"), 1, 9)
	ctx := context.Background()
	plan := func() []*GroupPlan {
		plans, err := PlanGroups(ctx, Inputs{Layout: l}, ResetOptions{Groups: []string{"g", "g2", "nothing"}, AllTopics: true, Spec: Spec{Kind: ToEarliest}})
		if err != nil {
			t.Fatal(err)
		}
		return plans
	}
	plans := plan()
	if plans[2].Skipped == "" {
		t.Fatalf("a group without offsets under --all-topics is not skipped: %+v", plans[2])
	}
	plans[1].Refused = InactiveRefusal("g2", "Stable") // as describeStates would
	// A dry-run decides the outcomes and writes nothing.
	res, err := ApplyOffsets(ctx, plans, ApplyOptions{Command: "reset"})
	if exit.Code(err) != exit.Refused || res.Planned != 1 || res.Refused != 1 || res.Skipped != 1 || plans[0].Executed {
		t.Fatalf("dry-run: %v %+v", err, res)
	}
	if !plans[0].Writable() || plans[1].Writable() || plans[2].Writable() {
		t.Error("Writable disagrees with the outcomes")
	}
	// Execute: g is written and verified, g2 refused (exit 4), nothing kept from it.
	res, err = ApplyOffsets(ctx, plans, ApplyOptions{Command: "reset", Execute: true})
	if exit.Code(err) != exit.Refused || res.Written != 1 || plans[0].Outcome != OutcomeWritten || plans[1].Rows[0].Result != ResultRefused {
		t.Fatalf("execute: %v %+v %+v", err, res, plans[1].Rows)
	}
	for _, r := range plans[0].Rows {
		if r.Result != ResultOK {
			t.Errorf("g row %+v", r)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.OffsetsPath(), "g2.json")); string(b) != offlineOld {
		t.Errorf("the refused group was written: %s", b)
	}
	// Force writes the refused group; a group that cannot be planned stays out (exit 1).
	plans = plan()
	plans[1].Refused = InactiveRefusal("g2", "Stable")
	plans[0].Error = "unreadable"
	res, err = ApplyOffsets(ctx, plans, ApplyOptions{Command: "reset", Execute: true, Force: true})
	if exit.Code(err) != exit.Error || res.Errors != 1 || res.Written != 1 || plans[1].Outcome != OutcomeWritten || plans[0].Executed {
		t.Fatalf("force: %v %+v", err, res)
	}
	// A refused timestamp answer is exit 4 even beside a written group.
	plans = plan()
	plans[1].Error, plans[1].TimeRefused = "refused: ...", true
	if _, err := ApplyOffsets(ctx, plans, ApplyOptions{Command: "reset"}); exit.Code(err) != exit.Refused {
		t.Errorf("time refusal: %v", err)
	}
}

package commands

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/repair"
	"github.com/kaasctl/kaasctl/views"
)

// Each command's run function called directly, with Globals from
// GlobalsFor and a hand-built options struct: no cli.Context anywhere.

func mustVolNow(t *testing.T) time.Time {
	t.Helper()
	now, err := time.Parse(time.RFC3339, volNow)
	if err != nil {
		t.Fatal(err)
	}
	return now
}

func TestRunOffsetsResetDirect(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	g, out, errb := directGlobals(t, time.Now(), "--data-dir", data, "-o", "json")
	o := resetOptions{
		mode:   writeMode{execute: true, offline: true},
		spec:   repair.Spec{Kind: repair.ToOffset, Offset: 40},
		scopes: []repair.TopicScope{{Topic: "orders"}},
		groups: []string{"g"},
	}
	if err := runOffsetsReset(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	v := decodeOut[views.ResetView](t, out)
	if v.Mode != "execute" || v.Path != "offline" || v.Summary.Changed != 1 || len(v.Groups) != 1 || v.Groups[0].Rows[0].New != 40 {
		t.Fatalf("view %+v", v)
	}
	b, err := os.ReadFile(filepath.Join(cd, "__consumer_offsets", "g.json"))
	if err != nil || !strings.Contains(string(b), `"orders/0":40`) {
		t.Fatalf("offset file %s %v", b, err)
	}
	// A --to-group source among the groups reset is a usage error before
	// anything is read (from the parse, so the run never sees it); a
	// from-file plan naming no group with several groups is refused by the run.
	plan := writeFile(t, t.TempDir(), "plan.csv", "orders,0,7\n")
	o = resetOptions{spec: repair.Spec{Kind: repair.FromFile}, fromFile: plan, groups: []string{"g", "h"}, multi: true}
	if err := runOffsetsReset(context.Background(), g, o); exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "name no group") {
		t.Fatalf("from-file without groups for two groups: %v", err)
	}
}

func TestRunOffsetsDeleteDirect(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	before, _ := os.ReadFile(filepath.Join(cd, "__consumer_offsets", "g.json"))
	g, out, errb := directGlobals(t, time.Now(), "--data-dir", data, "-o", "json")
	o := deleteOptions{mode: writeMode{offline: true}, groups: []string{"g"}, scopes: []repair.TopicScope{{Topic: "orders"}}}
	if err := runOffsetsDelete(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	v := decodeOut[views.ResetView](t, out)
	if v.Command != "delete" || v.Mode != "dry-run" || v.Summary.Changed != 1 {
		t.Fatalf("view %+v", v)
	}
	if after, _ := os.ReadFile(filepath.Join(cd, "__consumer_offsets", "g.json")); !bytes.Equal(before, after) {
		t.Fatalf("a dry run wrote the file: %s", after)
	}
	if !strings.Contains(errb.String(), "--execute option is missing") {
		t.Errorf("stderr %s", errb)
	}
}

func TestRunOffsetsHistoryDirect(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	g, _, errb := directGlobals(t, time.Now(), "--data-dir", data, "-q")
	o := resetOptions{mode: writeMode{execute: true, offline: true}, spec: repair.Spec{Kind: repair.ToOffset, Offset: 30},
		scopes: []repair.TopicScope{{Topic: "orders"}}, groups: []string{"g"}}
	if err := runOffsetsReset(context.Background(), g, o); err != nil {
		t.Fatalf("reset: %v\n%s", err, errb)
	}
	g, out, errb := directGlobals(t, time.Now(), "--data-dir", data, "-o", "json")
	if err := runOffsetsHistory(context.Background(), g, offsetsHistoryOptions{group: "g"}); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	v := decodeOut[inspect.OffsetHistoryView](t, out)
	if len(v.Backups) != 1 || len(v.Partitions) != 1 {
		t.Fatalf("history %+v", v)
	}
	if p := v.Partitions[0]; p.First == nil || *p.First != 5 || p.Last == nil || *p.Last != 30 {
		t.Fatalf("orders/0 %+v", p)
	}
	// Nothing to read: no journal and no volume.
	g, _, _ = directGlobals(t, time.Now())
	if err := runOffsetsHistory(context.Background(), g, offsetsHistoryOptions{group: "g"}); exit.Code(err) != exit.Usage {
		t.Fatalf("no sources: %v", err)
	}
}

func TestRunVolumeCheckDirect(t *testing.T) {
	t.Parallel()
	g, out, _ := directGlobals(t, time.Now(), "--data-dir", copyVolume(t, "damaged"), "-o", "json")
	err := runVolumeCheck(context.Background(), g, volumeCheckOptions{min: volume.SevError, now: mustVolNow(t)})
	if exit.Code(err) != exit.Problems {
		t.Fatalf("damaged volume: %v", err)
	}
	rep := decodeOut[inspect.CheckReport](t, out)
	if rep.Summary.Errors == 0 || len(rep.Findings) == 0 {
		t.Fatalf("report %+v", rep.Summary)
	}
	for _, f := range rep.Findings {
		if f.Severity != volume.SevError {
			t.Errorf("--severity error shows %s %s", f.Severity, f.Code)
		}
	}
}

func TestRunVolumeRepairDirect(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	g, out, _ := directGlobals(t, time.Now(), "--data-dir", vol, "-o", "json")
	o := volumeRepairOptions{tmpOlderThan: time.Hour, now: mustVolNow(t)}
	_ = runVolumeRepair(context.Background(), g, o)
	rep := decodeOut[repair.RepairReport](t, out)
	if !rep.DryRun || rep.Changes == 0 {
		t.Fatalf("dry run %+v", rep)
	}
	for _, a := range rep.Actions {
		if a.Done {
			t.Fatalf("a dry run did %+v", a)
		}
	}
	g, out, _ = directGlobals(t, time.Now(), "--data-dir", vol, "-o", "json")
	o.execute = true
	_ = runVolumeRepair(context.Background(), g, o)
	if rep := decodeOut[repair.RepairReport](t, out); rep.DryRun || rep.Changes == 0 || rep.Failed != 0 {
		t.Fatalf("execute %+v", rep)
	}
}

func TestRunVolumeMigrateDirect(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "lab-phase1")
	g, out, errb := directGlobals(t, time.Now(), "--data-dir", vol, "-o", "json")
	o := volumeMigrateOptions{to: volume.Gen018, now: mustVolNow(t)}
	if err := runVolumeMigrate(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if rep := decodeOut[repair.MigrateReport](t, out); !rep.DryRun || rep.Changes == 0 {
		t.Fatalf("plan %+v", rep)
	}
	g, out, errb = directGlobals(t, time.Now(), "--data-dir", vol, "-o", "json")
	o.execute = true
	if err := runVolumeMigrate(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if rep := decodeOut[repair.MigrateReport](t, out); rep.DryRun || rep.Failed != 0 {
		t.Fatalf("execute %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(vol, "__cluster", "__consumer_offsets", "lab-group.json")); err != nil {
		t.Fatalf("not migrated: %v", err)
	}
}

func TestRunTxnDirect(t *testing.T) {
	t.Parallel()
	vol := copyVolume(t, "damaged")
	g, out, _ := directGlobals(t, time.Now(), "--data-dir", vol, "-o", "json", "-q")
	o := txnOptions{filter: inspect.TxnFilter{States: []string{volume.TxnOngoing}}, now: mustVolNow(t)}
	err := runTxn(context.Background(), g, o)
	v := decodeOut[views.TxnListView](t, out)
	if len(v.UnreadableSlots) > 0 && (err == nil || !strings.Contains(err.Error(), "could not be decoded")) {
		t.Fatalf("undecodable slots not reported: %v", err)
	}
	if v.Shown == 0 || v.Shown > v.Total {
		t.Fatalf("list %+v", v)
	}
	for _, r := range v.Transactions {
		if r.State != volume.TxnOngoing {
			t.Errorf("--state Ongoing shows %s %s", r.ID, r.State)
		}
	}
	// describe: the id found, and one that is not (exit 1, the slot named).
	g, out, _ = directGlobals(t, time.Now(), "--data-dir", vol, "-o", "json", "-q")
	err = runTxn(context.Background(), g, txnOptions{describe: true, filter: inspect.TxnFilter{IDs: []string{"tx-ongoing", "no-such-tx"}}, now: mustVolNow(t)})
	if err == nil || !strings.Contains(err.Error(), "no-such-tx") {
		t.Fatalf("describe: %v", err)
	}
	v = decodeOut[views.TxnListView](t, out)
	if len(v.Transactions) != 1 || v.Transactions[0].ID != "tx-ongoing" || len(v.NotFound) != 1 {
		t.Fatalf("describe %+v", v)
	}
}

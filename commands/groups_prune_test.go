package commands

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// pruneLab is a running sandbox whose volume tests write group files on.
type pruneLab struct {
	sb   *sandbox.Sandbox
	data string
	dir  string // the live offsets dir
}

func newPruneLab(t *testing.T, topics ...sandbox.Topic) *pruneLab {
	t.Helper()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: append([]sandbox.Topic{{Name: "orders", Partitions: 4}}, topics...)})
	produceOrders(t, sb, 10)
	return &pruneLab{sb: sb, data: sb.Layout().DataDir, dir: sb.Layout().OffsetsPath()}
}

// file writes a group's offset file last written age ago (a file-only
// group: no broker has it in memory).
func (lab *pruneLab) file(t *testing.T, group, content string, age time.Duration) string {
	t.Helper()
	p := writeFile(t, lab.dir, group+".json", content)
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

func (lab *pruneLab) prune(t *testing.T, args ...string) cliResult {
	t.Helper()
	return live(t, lab.sb, append([]string{"groups", "prune", "--data-dir", lab.data}, args...)...)
}

// pruneDoc decodes a prune's -o json.
func pruneDoc(t *testing.T, r cliResult) (GroupsPruneView, map[string]*inspect.PruneGroup) {
	t.Helper()
	v := decodeJSON[GroupsPruneView](t, r)
	by := map[string]*inspect.PruneGroup{}
	for _, pg := range v.Groups {
		by[pg.Group] = pg
	}
	return v, by
}

func rowOfPrune(pg *inspect.PruneGroup, topic string, p int32) *inspect.PruneRow {
	for i := range pg.Rows {
		if pg.Rows[i].Topic == topic && pg.Rows[i].Partition == p {
			return &pg.Rows[i]
		}
	}
	return nil
}

// Empty groups past the age and offsets on deleted topics: planned (each
// row explained, the age's source named), written through the write path
// (backups, the rollback file), and put back byte-identical by --restore.
func TestSandboxPruneEmptyAndDeleted(t *testing.T) {
	t.Parallel()
	lab := newPruneLab(t)
	oldEmpty := lab.file(t, "old-empty", `{"offsets":{"orders/0":5}}`, 40*24*time.Hour)
	lab.file(t, "young", `{"offsets":{"orders/0":5}}`, time.Hour)
	mixed := lab.file(t, "mixed", `{"offsets":{"orders/0":3,"gone/0":7,"gone/1":2}}`, time.Hour)
	onlyGone := lab.file(t, "only-gone", `{"offsets":{"gone/0":1}}`, time.Hour)
	before := map[string][]byte{}
	for _, p := range []string{oldEmpty, mixed, onlyGone} {
		before[p], _ = os.ReadFile(p)
	}

	r := lab.prune(t, "--empty-for", "30d", "--deleted-topics", "-o", "json")
	v, by := pruneDoc(t, r)
	if r.Code != 0 || !strings.Contains(r.Err, "nothing was written") {
		t.Fatalf("dry run: exit %d\n%s", r.Code, r.Err)
	}
	if _, ok := by["young"]; ok || len(v.Groups) != 3 || v.Summary.Remove != 2 || v.Summary.Rewrite != 1 {
		t.Fatalf("plan %+v", v.Summary)
	}
	e := by["old-empty"]
	if e.Action != inspect.PruneRemove || e.Selector != inspect.PruneEmpty || e.AgeSource != inspect.AgeMtime || !strings.Contains(e.Reason, "no member and no commit for 40d") || !strings.Contains(e.Reason, "offset file was last written") {
		t.Errorf("old-empty: %+v", e)
	}
	m := by["mixed"]
	if m.Action != inspect.PruneRewrite || m.Kept != 1 || len(m.Rows) != 2 || rowOfPrune(m, "gone", 0) == nil || rowOfPrune(m, "orders", 0) != nil {
		t.Fatalf("mixed: %+v", m)
	}
	if row := rowOfPrune(m, "gone", 1); row.Selector != inspect.PruneDeleted || !strings.Contains(row.Reason, "the brokers do not know it") || !strings.Contains(row.Reason, "holds no partition dir") {
		t.Errorf("mixed gone/1: %+v", row)
	}
	if g := by["only-gone"]; g.Action != inspect.PruneRemove || !strings.Contains(g.Reason, "every partition") {
		t.Errorf("only-gone: %+v", g)
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Fatalf("the dry run changed %s", p)
		}
	}

	rollback := filepath.Join(t.TempDir(), "rollback.jsonl")
	r = lab.prune(t, "--empty-for", "30d", "--deleted-topics", "--execute", "--export-rollback", rollback, "-o", "json")
	v, by = pruneDoc(t, r)
	if r.Code != 0 || v.Summary.Written != 3 {
		t.Fatalf("execute: exit %d %+v\n%s", r.Code, v.Summary, r.Err)
	}
	for _, g := range []string{"old-empty", "only-gone"} {
		if _, err := os.Lstat(filepath.Join(lab.dir, g+".json")); !os.IsNotExist(err) || by[g].Backup == "" {
			t.Errorf("%s: file still there (%v) or no backup %q", g, err, by[g].Backup)
		}
		for _, row := range by[g].Rows {
			if row.Result != "OK" {
				t.Errorf("%s row %+v", g, row)
			}
		}
	}
	if got, _ := os.ReadFile(mixed); string(got) != `{"offsets":{"orders/0":3}}` {
		t.Errorf("mixed after the prune: %s", got)
	}
	if b, _ := os.ReadFile(by["old-empty"].Backup); !bytes.Equal(b, before[oldEmpty]) {
		t.Errorf("backup %s: %q", by["old-empty"].Backup, b)
	}

	// The rollback puts every file back byte for byte; a second restore
	// finds them as before.
	r = lab.prune(t, "--restore", rollback)
	if r.Code != 0 || strings.Count(r.Out, "planned") != 3 {
		t.Fatalf("restore dry run: exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	r = lab.prune(t, "--restore", rollback, "--execute", "-o", "json")
	rv := decodeJSON[PruneRestoreView](t, r)
	if r.Code != 0 || rv.Summary.Restored != 3 {
		t.Fatalf("restore: exit %d %+v\n%s", r.Code, rv.Summary, r.Err)
	}
	for p, b := range before {
		if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, b) {
			t.Errorf("%s after the restore: %q (%v), want %q", p, now, err, b)
		}
	}
	if r = lab.prune(t, "--restore", rollback, "--execute", "-o", "json"); decodeJSON[PruneRestoreView](t, r).Summary.Unchanged != 3 {
		t.Errorf("second restore: %s", r.Out)
	}
}

var _ = context.Background
var _ = kgo.NewClient
var _ = volume.DisplayName

package repair

import (
	"slices"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
)

// A restore from kaasctl's backups: the target at a moment, the partitions
// it moves back and the ones committed since (kept), and the from-file
// spec; a group with no history at all is an error, not an empty restore.
func TestResolveGroupRestore(t *testing.T) {
	t.Parallel()
	l, _, _ := rewrittenGroup(t, `{"offsets":{"orders/0":10}}`, `{"offsets":{"orders/0":50,"orders/1":7}}`)
	req := HistoryRestore{Layout: l, Spec: Spec{Kind: ToHistory, Time: h0.Add(-time.Hour), Origin: "--to-history X"}}
	gr, err := ResolveGroupRestore(req, "app")
	if err != nil {
		t.Fatal(err)
	}
	if gr.Target.Offsets["orders/0"] != 10 || !slices.Equal(gr.MovedBack, []string{"orders/0 50→10"}) || !slices.Equal(gr.Extra, []string{"orders/1"}) {
		t.Fatalf("restore %+v", gr)
	}
	sp, _, err := HistoryRestoreSpec([]HistoryTarget{gr.Target}, nil, req.Spec.Origin)
	if err != nil || sp.Kind != FromFile || len(sp.File.Rows) != 1 || sp.File.Rows[0].Offset != 10 || sp.Origin != "--to-history X" {
		t.Fatalf("spec %+v %v", sp, err)
	}
	// A scope that names none of the restored partitions is a usage error.
	if _, _, err := HistoryRestoreSpec([]HistoryTarget{gr.Target}, []TopicScope{{Topic: "audit"}}, req.Spec.Origin); exit.Code(err) != exit.Usage {
		t.Fatalf("empty scope: %v", err)
	}
	if _, err := ResolveGroupRestore(req, "nobody"); err == nil {
		t.Fatal("a group with no history restored")
	}
}

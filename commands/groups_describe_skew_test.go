package commands

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/views"
)

// groups describe of a live group whose lag sits on one partition: the
// spread says so (max over mean, coefficient of variation, the partition)
// and the ownership, which the sandbox's broker reports, has an owner for
// every partition.
func TestDescribeLagSpreadAndOwnership(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Brokers: 3, Topics: []sandbox.Topic{{Name: "orders", Partitions: 4}}})
	produceTo(t, sb, "orders", 4, 10)
	consumeAndCommit(t, sb, "skewed", 40, map[int32]int64{0: 10, 1: 10, 2: 10, 3: 1})
	r := live(t, sb, "groups", "describe", "skewed", "-o", "json")
	v := decodeJSON[views.GroupsDescribeLiveView](t, r)
	if r.Code != 0 || len(v.Groups) != 1 {
		t.Fatalf("exit %d, %d groups\n%s", r.Code, len(v.Groups), r.Err)
	}
	d := v.Groups[0]
	s := d.Spread
	if s == nil || s.Partitions != 4 || s.Total != 9 || s.MaxPartition != "orders/3" || s.MaxOverMean != 4 || !s.Skewed() || s.CV < 1.7 || s.CV > 1.8 {
		t.Fatalf("spread %+v", s)
	}
	o := d.Ownership
	if o == nil || !o.Reported || len(o.Unowned) != 0 || len(o.Idle) != 0 {
		t.Fatalf("ownership %+v", o)
	}
	r = live(t, sb, "groups", "describe", "skewed")
	for _, w := range []string{"lag spread", "max/mean 4.00", "most on orders/3 (9 of 9, 100%): skewed", "every lagging partition has an owner"} {
		if !strings.Contains(r.Out, w) {
			t.Errorf("table lacks %q:\n%s", w, r.Out)
		}
	}
}

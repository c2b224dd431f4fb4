package inspect

import (
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// The finding names the generation it assumes and that generation's cause.
func TestAddServedNotFiledNamesTheGeneration(t *testing.T) {
	t.Parallel()
	lost := []ServedNotFiled{{Group: "app", Missing: []string{"orders/1", "orders/2"}}, {Group: "b", Missing: []string{"t/0"}}}
	for _, c := range []struct {
		gen  volume.Generation
		want string
	}{
		{volume.GenGo, "<group>.tmp"},
		{volume.Gen018, "swallows a failed write"},
		{volume.GenUnknown, "cause not established"},
	} {
		var r DoctorReport
		r.AddServedNotFiled(lost, c.gen, " --data-dir /d", " --brokers k:9092")
		r.AddServedNotFiled(nil, c.gen, "", "")
		if len(r.Findings) != 1 {
			t.Fatalf("%s: %d findings", c.gen, len(r.Findings))
		}
		f := r.Findings[0]
		if f.Code != DocServedNotFiled || f.Severity != volume.SevError || f.BlastRadius != 2 || !slices.Equal(f.Subjects, []string{"app", "b"}) {
			t.Errorf("%s: %+v", c.gen, f)
		}
		for _, w := range []string{c.want, "generation " + c.gen.Label(), "3 partitions", "app lacks orders/1, orders/2"} {
			if !strings.Contains(f.Message, w) {
				t.Errorf("%s: message lacks %q: %s", c.gen, w, f.Message)
			}
		}
	}
}

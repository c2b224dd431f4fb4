package inspect

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

func TestVersionWarnings(t *testing.T) {
	t.Parallel()
	v := func(epoch, version int64) *volume.Assignment {
		return &volume.Assignment{ControllerEpoch: epoch, AssignmentVersion: version}
	}
	for _, c := range []struct {
		name      string
		prev, cur *volume.Assignment
		rewritten bool
		want      []string
	}{
		{"first", nil, v(1, 1), false, nil},
		{"next version", v(1, 1), v(1, 2), false, nil},
		{"new epoch, version reset", v(1, 9), v(2, 1), false, nil},
		{"same version, new bytes", v(1, 2), v(1, 2), true, []string{"rewritten with the same epoch 1 and version 2"}},
		{"older version", v(1, 3), v(1, 2), false, []string{"went backwards: epoch 1 v2 after epoch 1 v3"}},
		{"older epoch", v(2, 1), v(1, 7), false, []string{"went backwards: epoch 1 v7 after epoch 2 v1"}},
	} {
		got := VersionWarnings("/cd/assignment.json", c.prev, c.cur, c.rewritten)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q", c.name, got)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: %q lacks %q", c.name, got[i], c.want[i])
			}
		}
	}
}

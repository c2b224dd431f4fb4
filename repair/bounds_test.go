package repair

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// A live reset never uses bounds no log can have, nor what a broker
// serves for a partition whose segments hold a bound kaas could never
// have written; sound bounds pass.
func TestServedBoundsProblem(t *testing.T) {
	t.Parallel()
	l := offlineVolume(t)
	sound := volume.ReadLogBounds(l, "orders", 0)
	dir := filepath.Join(l.DataDir, "orders", "1")
	os.Remove(filepath.Join(dir, volume.SegmentLogName(3, 1)))
	os.WriteFile(filepath.Join(dir, volume.SegmentLogName(3, 1)), append(volume.EncodeBatch(3, 2, 1, nil), volume.EncodeBatch(math.MinInt64+5, 2, 1, nil)...), 0o644)
	bad := volume.ReadLogBounds(l, "orders", 1)
	for _, c := range []struct {
		name string
		lo   wire.LogOffsets
		b    *volume.LogBounds
		want string
	}{
		{"sound", wire.LogOffsets{Start: 2, End: 30}, sound, ""},
		{"negative start", wire.LogOffsets{Start: -4, End: 30}, sound, "no log can have"},
		{"end before start", wire.LogOffsets{Start: 40, End: 30}, sound, "no log can have"},
		{"negative end", wire.LogOffsets{Start: 0, End: math.MinInt64 + 7}, sound, "no log can have"},
		{"impossible segments", wire.LogOffsets{Start: 3, End: 5}, bad, "could never have written"},
	} {
		got := servedBoundsProblem(c.lo, c.b, volume.GenerationInfo{})
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

package inspect

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/volume"
)

func TestServedBehindLog(t *testing.T) {
	t.Parallel()
	seg := &volume.LogBounds{End: &volume.Fact{Value: 30, Source: volume.SourceSegments}, Manifest: &volume.Manifest{Epoch: 1, HighWatermark: 0}}
	man := &volume.LogBounds{End: &volume.Fact{Value: 30, Source: volume.SourceManifest}}
	var gen volume.GenerationInfo
	for _, c := range []struct {
		name   string
		served int64
		b      *volume.LogBounds
		want   []string
	}{
		{"served at the segments' end", 30, seg, nil},
		{"served past it (records since the read)", 31, seg, nil},
		{"no bounds", 0, nil, nil},
		{"unknown end", 0, &volume.LogBounds{Unknown: "no segment files"}, nil},
		{"a manifest is no evidence", 0, man, nil},
		{"stale", 0, seg, []string{"serves log end 0", "segments end at 30", "manifest.json says 0 at epoch 1", "30 records short", "kaas generation undetermined", "restart the partition's leader"}},
	} {
		got := ServedBehindLog(c.served, c.b, gen)
		if (got == "") != (c.want == nil) {
			t.Errorf("%s: got %q", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
}

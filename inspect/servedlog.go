package inspect

import (
	"fmt"

	"github.com/kaasctl/kaasctl/internal/volume"
)

// ServedBehindLog compares the log end a broker served with the log end
// the partition's segments gave when they were read before the broker was
// asked. A healthy leader serves at least that much (kaas advances its high
// watermark as soon as a batch is in the segment file), so a lower answer
// is a stale high watermark: the Go flavour takes a partition over without
// re-scanning its segments when the epoch in manifest.json is already the
// assignment's, and then serves the manifest's value, which trails the log
// (a full restart after a broker's shutdown flush wrote a stale manifest
// does it). It returns "" when the served end is not behind, or when the
// segments could not be read (only the segments are evidence here: a
// manifest trails the log by design).
func ServedBehindLog(served int64, b *volume.LogBounds, gen volume.GenerationInfo) string {
	if b == nil || b.End == nil || b.End.Source != volume.SourceSegments || served >= b.End.Value {
		return ""
	}
	man := ""
	if b.Manifest != nil {
		man = fmt.Sprintf(", manifest.json says %d at epoch %d", b.Manifest.HighWatermark, b.Manifest.Epoch)
	}
	return fmt.Sprintf("the broker serves log end %d but the partition's segments end at %d (read before asking%s): its leader serves a stale high watermark, %d records short; a broker that takes a partition over at the epoch its manifest already holds keeps the manifest's value instead of re-scanning the segments, and consumers cannot fetch past it (%s); restart the partition's leader so the next takeover, at a new epoch, re-scans the segments",
		served, b.End.Value, man, b.End.Value-served, gen.Assumes())
}

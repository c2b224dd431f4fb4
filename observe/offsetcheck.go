package observe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// OffsetCheck is volume check's check of committed offsets against the
// log, through the read model: each group's offset file that the brokers
// load (volume.ScanOptions.OnCounted) becomes its offline state, and the
// incidents of its partitions become findings, one per partition and kind
// naming the groups. Not safe for concurrent use (the scan calls it in
// order).
type OffsetCheck struct {
	Gen volume.GenerationInfo
	by  map[incidentKey]*incidentGroups
}

type incidentKey struct {
	code  string
	topic string
	part  int32
}

type incidentGroups struct {
	groups []string
	// max is the largest committed offset, end the log end (for the
	// message), start the log start.
	max, end, start int64
}

// offsetFindings are the incidents volume check reports, by finding code
// and severity (the rest are the segment reader's and the scan's own).
var offsetFindings = map[string]struct {
	code string
	sev  volume.Severity
}{
	inspect.IncPastLogEnd:    {volume.CodeOffsetsBeyondLogEnd, volume.SevWarning},
	inspect.IncBelowLogStart: {volume.CodeOffsetsBelowLogStart, volume.SevWarning},
}

// Add checks one counted offset file (OnCounted's signature).
func (c *OffsetCheck) Add(it *volume.OffsetScanItem, bounds func(topic string, partition int32) *volume.LogBounds) {
	if it.File == nil {
		return
	}
	g := inspect.GroupFacts{Gen: c.Gen, Volume: true, File: inspect.ReadingOf(it.File, false, c.Gen)}
	parts := make([]inspect.PartitionFacts, 0, len(it.File.Entries))
	for _, e := range it.File.Entries {
		parts = append(parts, inspect.PartitionFacts{Topic: e.Topic, Partition: e.Partition,
			File: &volume.Fact{Value: e.Offset, Source: volume.SourceFile, Path: it.Path}, Segments: bounds(e.Topic, e.Partition)})
	}
	gs := inspect.BuildGroup(it.Group, g, parts, nil)
	for i := range gs.Partitions {
		p := &gs.Partitions[i]
		for _, in := range p.Incidents {
			if _, ok := offsetFindings[in.Code]; ok {
				c.note(in.Code, it.Group, p)
			}
		}
	}
}

func (c *OffsetCheck) note(code, group string, p *inspect.PartitionState) {
	if c.by == nil {
		c.by = map[incidentKey]*incidentGroups{}
	}
	k := incidentKey{code, p.Topic, p.Partition}
	ig := c.by[k]
	if ig == nil {
		ig = &incidentGroups{end: p.LogEnd.Value, start: p.LogStart.Value}
		c.by[k] = ig
	}
	ig.groups = append(ig.groups, volume.DisplayName(group))
	ig.max = max(ig.max, p.Resume.Value)
}

// Findings are the incidents found, one per partition and kind, sorted.
func (c *OffsetCheck) Findings() []volume.Finding {
	keys := make([]incidentKey, 0, len(c.by))
	for k := range c.by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b incidentKey) int {
		if a.code != b.code {
			return strings.Compare(a.code, b.code)
		}
		return inspect.CompareOffsetKeys(a.topic+"/"+strconv.Itoa(int(a.part)), b.topic+"/"+strconv.Itoa(int(b.part)))
	})
	out := make([]volume.Finding, 0, len(keys))
	for _, k := range keys {
		out = append(out, c.finding(k, c.by[k]))
	}
	return out
}

func (c *OffsetCheck) finding(k incidentKey, ig *incidentGroups) volume.Finding {
	slices.Sort(ig.groups)
	key := k.topic + "/" + strconv.Itoa(int(k.part))
	of := offsetFindings[k.code]
	f := volume.Finding{Severity: of.sev, Code: of.code, Path: key}
	switch k.code {
	case inspect.IncPastLogEnd:
		f.Message = fmt.Sprintf("%s: committed offsets of %s (up to %d) are beyond the log end %d the segments give: their consumers' next fetch gets OFFSET_OUT_OF_RANGE and they fall back to auto.offset.reset (earliest re-reads the partition, latest skips what is produced meanwhile) (%s)",
			key, strings.Join(ig.groups, ", "), ig.max, ig.end, c.Gen.Assumes())
		f.Fix = fmt.Sprintf("with the group stopped, set the offsets deliberately: kaasctl offsets reset -g GROUP --topic %s:%d --to-latest (or --to-offset N) --execute", k.topic, k.part)
	case inspect.IncBelowLogStart:
		f.Message = fmt.Sprintf("%s: committed offsets of %s are below the log start %d the segments give: those records were deleted, and their consumers' next fetch gets OFFSET_OUT_OF_RANGE and falls back to auto.offset.reset (%s)",
			key, strings.Join(ig.groups, ", "), ig.start, c.Gen.Assumes())
		f.Fix = fmt.Sprintf("decide where the groups resume and set it with the group stopped: kaasctl offsets reset -g GROUP --topic %s:%d --to-earliest (or --to-offset N) --execute", k.topic, k.part)
	}
	return f
}

// CheckVolume is volume check with the read model's check of committed
// offsets against the log (OffsetCheck), the probe's canaries left out:
// what 'volume check' and doctor run.
func CheckVolume(l volume.Layout, now time.Time, scan volume.ScanOptions) (*volume.CheckResult, error) {
	l = l.WithGeneration()
	oc := &OffsetCheck{Gen: l.Gen}
	scan.SkipGroup, scan.OnCounted = inspect.IsCanary, oc.Add
	res, err := volume.CheckVolume(l, now, scan)
	if err != nil {
		return nil, err
	}
	res.Findings = inspect.WithoutCanaryFindings(append(res.Findings, oc.Findings()...))
	return res, nil
}

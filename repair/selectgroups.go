package repair

import (
	"context"
	"fmt"
	"io"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// AllGroups is what --all-groups writes: the groups with a file in the
// live offsets dir and, with brokers, the groups they list, less the names
// no offset file can be written for (told to notes).
func AllGroups(ctx context.Context, l volume.Layout, cl *wire.Client, notes render.Notes) ([]string, error) {
	var onVolume []string
	_, err := volume.ScanOffsets(l, volume.ScanOptions{NamesOnly: true}, func(it *volume.OffsetScanItem) error {
		if it.Layout == volume.OffsetsCurrent && len(it.NameProblems) == 0 {
			onVolume = append(onVolume, it.Group)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var listings []wire.BrokerGroups
	if cl != nil {
		gg, err := cl.GatherGroups(ctx, wire.GroupRounds{})
		if err != nil {
			return nil, fmt.Errorf("listing groups: %w", err)
		}
		listings = gg.Listings
	}
	out := []string{}
	for _, gr := range inspect.UnionGroupNames(onVolume, listings) {
		if _, err := GroupFilePath(l, gr); err != nil {
			notes.Warnf("--all-groups: skipping %v", err)
			continue
		}
		out = append(out, gr)
	}
	if len(out) == 0 {
		dir, derr := l.LiveOffsetsDir()
		if derr != nil {
			dir = l.OffsetsDirsText()
		}
		return nil, fmt.Errorf("--all-groups: no group found on the volume (%s) or on the brokers", dir)
	}
	return out, nil
}

// ExportPlan writes the rows of the groups that are (or would be)
// written to w, in Kafka's layout: group,topic,partition,offset whenever
// several groups are in play, topic,partition,offset for one.
func ExportPlan(w io.Writer, plans []*GroupPlan, multi bool) error {
	var rows []PlanRow
	for _, gp := range plans {
		if !gp.Writable() {
			continue
		}
		for _, r := range gp.Rows {
			rows = append(rows, r.PlanRow)
		}
	}
	return ExportCSV(w, rows, multi)
}

package repair

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// sourceOffsets resolves --to-group SRC: the committed offsets of the
// source group, read from its offset file and, with live brokers, from its
// coordinator (OffsetFetch by explicit partitions: the file's, and every
// partition of the topics in scope). Where both answer and differ, the
// coordinator's answer wins (it is what a consumer would resume from) and
// a warning names the partitions. The rows use the one-group layout of a
// plan file, so the plan treats them as a --from-file for every target.
func sourceOffsets(ctx context.Context, in Inputs, opts ResetOptions) ([]FileRow, []string, error) {
	src := opts.Spec.Source
	var warns []string
	fileOff := map[tpKey]int64{}
	if _, err := GroupFilePath(in.Layout, src); err != nil {
		return nil, nil, fmt.Errorf("--to-group: %v", err)
	}
	gf, err := ReadGroupFile(in.Layout, src)
	if err != nil {
		return nil, nil, fmt.Errorf("--to-group %s: %v", volume.DisplayName(src), err)
	}
	for _, e := range gf.Entries() {
		fileOff[tpKey{e.Topic, e.Partition}] = e.Offset
	}
	wireOff := map[tpKey]int64{}
	if in.Client != nil {
		if wireOff, err = sourceOnWire(ctx, in.Client, src, fileOff, opts.Scopes); err != nil {
			return nil, nil, err
		}
	}
	merged := map[tpKey]int64{}
	var differ []string
	for k, o := range fileOff {
		merged[k] = o
	}
	for k, o := range wireOff {
		if f, ok := fileOff[k]; ok && f != o {
			differ = append(differ, fmt.Sprintf("%s/%d file %d, coordinator %d", k.topic, k.part, f, o))
		} else if !ok {
			differ = append(differ, fmt.Sprintf("%s/%d only on the coordinator (%d)", k.topic, k.part, o))
		}
		merged[k] = o
	}
	if len(differ) > 0 {
		slices.Sort(differ)
		warns = append(warns, fmt.Sprintf("source group '%s': the coordinator's offsets differ from its file (%s); copying the coordinator's", volume.DisplayName(src), strings.Join(differ, "; ")))
	}
	if len(merged) == 0 {
		return nil, nil, fmt.Errorf("--to-group: group '%s' has no committed offsets (file %s%s)", volume.DisplayName(src), gf.Path, map[bool]string{true: ", nor on its coordinator", false: ""}[in.Client != nil])
	}
	rows := make([]FileRow, 0, len(merged))
	for k, o := range merged {
		rows = append(rows, FileRow{Topic: k.topic, Partition: k.part, Offset: o})
	}
	slices.SortFunc(rows, func(a, b FileRow) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return rows, warns, nil
}

// sourceOnWire is what the source group's coordinator answers for the
// partitions of its file and every partition of the topics in scope (one
// metadata request, one FindCoordinator, one OffsetFetch): the partitions
// with a committed offset.
func sourceOnWire(ctx context.Context, cl *wire.Client, src string, fileOff map[tpKey]int64, scopes []TopicScope) (map[tpKey]int64, error) {
	wireOff := map[tpKey]int64{}
	want := wire.TopicPartitions{}
	for k := range fileOff {
		want.Add(k.topic, k.part)
	}
	var names []string
	for _, s := range scopes {
		names = append(names, s.Topic)
	}
	if len(names) > 0 {
		md, err := cl.Metadata(ctx, names)
		if err != nil {
			return nil, fmt.Errorf("--to-group: topic metadata: %w", err)
		}
		for _, tm := range md.Topics {
			if tm.Err != "" {
				continue
			}
			for p := range tm.Partitions {
				if !slices.Contains(want[tm.Topic], p) {
					want.Add(tm.Topic, p)
				}
			}
		}
	}
	if len(want) == 0 {
		return wireOff, nil
	}
	coords, err := cl.FindCoordinators(ctx, []string{src}, false)
	if err != nil {
		return nil, fmt.Errorf("--to-group: finding the coordinator of %s: %w", volume.DisplayName(src), err)
	}
	got := cl.FetchCommitted(ctx, map[string]wire.TopicPartitions{src: want}, coords)[src]
	if got.Err != "" {
		return nil, fmt.Errorf("--to-group: OffsetFetch of %s: %s", volume.DisplayName(src), got.Err)
	}
	for t, ps := range got.Offsets {
		for p, c := range ps {
			if c.Err == "" && c.Offset >= 0 {
				wireOff[tpKey{t, p}] = c.Offset
			}
		}
	}
	return wireOff, nil
}

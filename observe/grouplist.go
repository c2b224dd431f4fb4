package observe

import (
	"context"
	"slices"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// groups list's reading of the volume: every offset file into a small
// summary, and with --topic the groups with committed offsets on the
// topics, in the offset files (fully parsed, so the scan keeps each
// file's topics) and, with brokers, on the coordinators (OffsetFetch by
// explicit partition, batched per coordinator: kaas answers nothing to
// OffsetFetch-all).

// ProgressFunc starts a progress line for total items (a no-op one when
// nobody watches).
type ProgressFunc func(label string, total int64) *render.Progress

// GroupFiles streams every offset file into a small summary each, with
// a progress line while the scan takes a while.
func GroupFiles(l volume.Layout, opts volume.ScanOptions, progress ProgressFunc) ([]inspect.GroupFile, volume.ScanResult, error) {
	opts.SummaryOnly = true
	var out []inspect.GroupFile
	var prog *render.Progress
	opts.OnListed = func(n int) {
		out = make([]inspect.GroupFile, 0, n)
		prog = progress("reading offset files", int64(n))
	}
	sr, err := volume.ScanOffsets(l, opts, func(it *volume.OffsetScanItem) error {
		out = append(out, inspect.SummarizeOffsetItem(it))
		prog.Add(1)
		return nil
	})
	prog.Done()
	return out, sr, err
}

// ListGroupFiles reads the offset files for groups list: summaries only
// (GroupFiles), or with topics (--topic) every file parsed and its
// partitions counted per topic (GroupFilesTopics).
func ListGroupFiles(l volume.Layout, topics []string, progress ProgressFunc) ([]inspect.GroupFile, map[string]map[string]int, volume.ScanResult, error) {
	if len(topics) == 0 {
		files, sr, err := GroupFiles(l, volume.ScanOptions{}, progress)
		return files, nil, sr, err
	}
	return GroupFilesTopics(l, topics, progress)
}

// GroupFilesTopics is GroupFiles with each group's committed partitions
// per asked topic, counted in the file brokers load (the cluster-dir one,
// else the legacy one).
func GroupFilesTopics(l volume.Layout, topics []string, progress ProgressFunc) ([]inspect.GroupFile, map[string]map[string]int, volume.ScanResult, error) {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var out []inspect.GroupFile
	type counted struct {
		layout string
		n      map[string]int
	}
	per := map[string]counted{}
	var prog *render.Progress
	sr, err := volume.ScanOffsets(l, volume.ScanOptions{OnListed: func(n int) {
		out = make([]inspect.GroupFile, 0, n)
		prog = progress("reading offset files", int64(n))
	}}, func(it *volume.OffsetScanItem) error {
		out = append(out, inspect.SummarizeOffsetItem(it))
		prog.Add(1)
		if it.File == nil {
			return nil
		}
		prev, seen := per[it.Group]
		if seen && prev.layout == volume.OffsetsCurrent {
			return nil // the live dir's file wins
		}
		c := counted{layout: it.Layout, n: map[string]int{}}
		for _, e := range it.File.Entries {
			if want[e.Topic] && e.Offset >= 0 {
				c.n[e.Topic]++
			}
		}
		if seen && it.Layout != volume.OffsetsCurrent {
			// Neither file is known to be the live one (the generation is
			// undetermined): a topic counts if either file has it.
			for t, n := range prev.n {
				c.n[t] = max(c.n[t], n)
			}
		}
		per[it.Group] = c
		return nil
	})
	prog.Done()
	byGroup := make(map[string]map[string]int, len(per))
	for grp, c := range per {
		if len(c.n) > 0 {
			byGroup[grp] = c.n
		}
	}
	return out, byGroup, sr, err
}

// LiveTopicCommits asks each group's coordinator for its committed offsets
// on every partition of the topics: group → topic → partitions with one.
func LiveTopicCommits(ctx context.Context, cl *wire.Client, groups []string, topics []string, coords map[string]wire.Coordinator) (map[string]map[string]int, error) {
	md, err := cl.Metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	tp := wire.TopicPartitions{}
	for _, t := range topics {
		if tm := md.Topics[t]; tm != nil {
			for p := range tm.Partitions {
				tp.Add(t, p)
			}
		}
	}
	out := map[string]map[string]int{}
	if len(tp) == 0 {
		return out, nil
	}
	want := make(map[string]wire.TopicPartitions, len(groups))
	for _, grp := range groups {
		if co, ok := coords[grp]; ok && co.Err == "" && co.NodeID >= 0 {
			want[grp] = tp
		}
	}
	for grp, fo := range cl.FetchCommitted(ctx, want, coords) {
		for t, ps := range fo.Offsets {
			for _, c := range ps {
				if c.Err == "" && c.Offset >= 0 {
					if out[grp] == nil {
						out[grp] = map[string]int{}
					}
					out[grp][t]++
				}
			}
		}
	}
	return out, nil
}

// LiveListing is what the live half of groups list gathered, merged with
// the volume: the brokers' answers, their listings, and every group's row
// (inspect.LiveGroupRows).
type LiveListing struct {
	Answers  *inspect.LiveAnswers
	Listings []wire.BrokerGroups
	Rows     []inspect.GroupRow
}

// ListLive asks the brokers and merges their answers with the volume's
// groups in (hasVolume false: brokers only); the volume's groups are
// looked up too. The rows are built from the listings while the lookups
// are still in flight.
func ListLive(ctx context.Context, cl *wire.Client, in inspect.GroupsInput, hasVolume bool) (*LiveListing, error) {
	var listed *inspect.ListedRows
	gg, err := cl.GatherGroups(ctx, wire.GroupRounds{Extra: inspect.VolumeGroupNames(in.Files, in.Assignment), Describe: true,
		OnListed: func(ls []wire.BrokerGroups) { listed = inspect.PrepareListedRows(in, hasVolume, ls) }})
	if err != nil {
		return nil, err
	}
	la := inspect.NewLiveAnswers(gg, in.Assignment)
	return &LiveListing{Answers: la, Listings: gg.Listings, Rows: inspect.MergeListedRows(listed, la)}, nil
}

// Filtered are the listing's rows that pass filter and are in one of
// states (none: any), with committed offsets on one of topics when some
// are given: on the volume (fileTopics) or live (LiveTopicCommits).
func (lr *LiveListing) Filtered(ctx context.Context, cl *wire.Client, filter inspect.GroupFilter, states, topics []string, fileTopics map[string]map[string]int) ([]inspect.GroupRow, error) {
	rows := inspect.FilterGroups(lr.Rows, filter)
	if len(states) > 0 {
		rows = slices.DeleteFunc(slices.Clone(rows), func(r inspect.GroupRow) bool { return !inspect.StateMatch(&r, states) })
	}
	if len(topics) == 0 {
		return rows, nil
	}
	names := make([]string, len(rows))
	for i := range rows {
		names[i] = rows[i].Group
	}
	liveTopics, err := LiveTopicCommits(ctx, cl, names, topics, lr.Answers.Coords())
	if err != nil {
		return nil, err
	}
	return inspect.MatchTopics(rows, topics, fileTopics, liveTopics), nil
}

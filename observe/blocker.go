package observe

import (
	"context"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// The blocker step of the read model: for every lagging partition of a
// group's state, the record at the offset its consumer resumes from and
// the batch headers after it (bounded reads of the segments), the
// transactions of the slot files and the marker queue, the last stable
// offset the leader serves, and what a window of observations saw;
// inspect.ClassifyBlocker names the blocker. Every surface (groups
// describe --why, txn list --hanging, health's BLOCKED, the exporter)
// reads this one answer.

// BlockerSources are the volume-wide facts every partition's blocker is
// classified with, read once per run (or per refresh).
type BlockerSources struct {
	Layout volume.Layout
	// Assignment routes groups to their coordinators (nil: unknown).
	Assignment *volume.Assignment
	Gen        volume.GenerationInfo
	Txns       []inspect.TxnRow
	Plumbing   *volume.Plumbing
	Limits     volume.RecordLimits
	Now        time.Time
	// Flags are the volume and connection flags a printed fix repeats.
	Flags string
	// Stable are the last stable offsets the leaders served (nil: not
	// asked).
	Stable map[volume.TopicPartition]int64
	// Stuck says what a window saw of one partition (nil: not watched).
	Stuck func(group, topic string, partition int32) *inspect.Stuck
	// Findings and Errors are the slot files' and the queue's problems.
	Findings []volume.Finding
	Errors   []*volume.FileError
	// BytesRead counts what the blockers read of the segments.
	BytesRead int64
	// reads are the run's reads by partition and offset, shared by every
	// group resuming from the same offset (at 100,000 groups committed to
	// a few offsets, a refresh read the same batch once for each group:
	// 2.4 s of its 3 s), at most maxSharedReads; segs the partitions'
	// segment listings.
	reads map[offsetAt]sharedRead
	segs  map[volume.TopicPartition]segListing
}

// offsetAt is one offset of one partition.
type offsetAt struct {
	tp     volume.TopicPartition
	offset int64
}

// sharedRead is one read at an offset: a record's preview (64 bytes of
// its key and value) and the walk of the batch headers after it (the
// transactions of at most 500 batches), which the blockers of every group
// resuming there share and do not change.
type sharedRead struct {
	rr *volume.RecordRead
	sc *volume.TxnScan
}

// segListing is a partition's segment listing, as ListSegments gave it.
type segListing struct {
	ls  volume.SegmentListing
	err error
}

// maxSharedReads bounds the reads a run keeps (past it, it starts over).
const maxSharedReads = 1024

// ReadBlockerSources reads the slot files and the marker queue of l (a
// its assignment, nil when unreadable) as of now.
func ReadBlockerSources(l volume.Layout, a *volume.Assignment, now time.Time, lim volume.RecordLimits) *BlockerSources {
	s := &BlockerSources{Layout: l, Assignment: a, Limits: lim, Now: now}
	if l.ClusterDir == "" {
		return s // no volume: the brokers' answers alone
	}
	l = l.WithGeneration()
	s.Layout, s.Gen = l, l.Gen
	slots, fs, errs := volume.ReadTxnState(l)
	s.Findings, s.Errors = fs, errs
	s.Txns = inspect.BuildTxnRows(slots, a, now)
	pl, pfs, perrs := volume.ReadPlumbing(l, now)
	s.Findings, s.Errors = append(s.Findings, pfs...), append(s.Errors, perrs...)
	s.Plumbing = pl
	inspect.MarkFinished(s.Txns, pl, l.Gen)
	return s
}

// Lagging are the partitions of gs a blocker is looked for: lag known and
// above 0, with an offset a consumer resumes from.
func Lagging(gs *inspect.GroupState) []*inspect.PartitionState {
	var out []*inspect.PartitionState
	for i := range gs.Partitions {
		p := &gs.Partitions[i]
		if p.LagKnown && p.Lag > 0 && p.Resume.Source != "" {
			out = append(out, p)
		}
	}
	return out
}

// Blockers is the blocker of every lagging partition of gs. live: the
// brokers were asked, and the group had members then.
func (s *BlockerSources) Blockers(gs *inspect.GroupState, live bool, members int) []inspect.PartitionBlocker {
	var out []inspect.PartitionBlocker
	for _, p := range Lagging(gs) {
		out = append(out, s.Blocker(gs.Group, p, live, members))
	}
	return out
}

// Blocker is one partition's blocker.
func (s *BlockerSources) Blocker(group string, p *inspect.PartitionState, live bool, members int) inspect.PartitionBlocker {
	f := inspect.BlockerFacts{Group: group, Part: p, Txns: s.Txns, Gen: s.Gen, Live: live, Members: members, Now: s.Now, Flags: s.Flags}
	if s.Plumbing != nil {
		f.Markers = s.Plumbing.Markers
	}
	tp := volume.TopicPartition{Topic: p.Topic, Partition: p.Partition}
	if v, ok := s.Stable[tp]; ok {
		f.Stable = &v
	}
	if s.Stuck != nil {
		f.Stuck = s.Stuck(group, p.Topic, p.Partition)
	}
	f.Record, f.Scan = s.readAt(p.Topic, p.Partition, p.Resume.Value)
	if f.Stable != nil && *f.Stable < p.Resume.Value {
		f.StableRecord, f.StableScan = s.readAt(p.Topic, p.Partition, *f.Stable)
	}
	return inspect.ClassifyBlocker(&f)
}

// readAt reads the record at offset and walks the headers after it (nil,
// nil without a data dir or a partition dir), once a run for each offset.
func (s *BlockerSources) readAt(topic string, part int32, offset int64) (*volume.RecordRead, *volume.TxnScan) {
	k := offsetAt{volume.TopicPartition{Topic: topic, Partition: part}, offset}
	if r, ok := s.reads[k]; ok {
		return r.rr, r.sc
	}
	rr, sc := s.read(k.tp, offset)
	if len(s.reads) >= maxSharedReads || s.reads == nil {
		s.reads = map[offsetAt]sharedRead{}
	}
	s.reads[k] = sharedRead{rr, sc}
	return rr, sc
}

// read is readAt's read of the segments.
func (s *BlockerSources) read(tp volume.TopicPartition, offset int64) (*volume.RecordRead, *volume.TxnScan) {
	dir := s.Layout.PartitionDir(tp.Topic, tp.Partition)
	if s.Layout.DataDir == "" || dir == "" {
		return nil, nil
	}
	seg, ok := s.segs[tp]
	if !ok {
		seg.ls, seg.err = volume.ListSegments(dir)
		if s.segs == nil {
			s.segs = map[volume.TopicPartition]segListing{}
		}
		s.segs[tp] = seg
	}
	ls, err := seg.ls, seg.err
	if err != nil {
		return &volume.RecordRead{Offset: offset, Records: []volume.Record{}, Problem: err.Error()}, nil
	}
	rr, err := volume.ReadRecordsAt(ls, offset, s.Limits)
	if err != nil {
		rr.Problem = err.Error()
		return rr, nil
	}
	sc := volume.ScanTransactions(ls, rr, s.Limits)
	s.BytesRead += rr.BytesRead
	if sc != nil {
		s.BytesRead += sc.BytesRead
	}
	return rr, sc
}

// AskStable asks the leaders for the last stable offset of every lagging
// partition of states (ListOffsets read_committed, one round); a
// partition whose leader did not answer is left out.
func (s *BlockerSources) AskStable(ctx context.Context, cl *wire.Client, states []*inspect.GroupState) error {
	want := wire.TopicPartitions{}
	for _, gs := range states {
		for _, p := range Lagging(gs) {
			want.Add(p.Topic, p.Partition)
		}
	}
	if len(want) == 0 {
		return nil
	}
	got, err := cl.ListStableOffsets(ctx, want)
	if err != nil {
		return err
	}
	if s.Stable == nil {
		s.Stable = map[volume.TopicPartition]int64{}
	}
	for t, ps := range got {
		for p, lo := range ps {
			if lo.Err == "" && lo.End >= 0 {
				s.Stable[volume.TopicPartition{Topic: t, Partition: p}] = lo.End
			}
		}
	}
	return nil
}

// VolumeBlockers is the blocker of every lagging partition of every group
// on the volume (offline), for the transactions' holds.
func (s *BlockerSources) VolumeBlockers(a *volume.Assignment) ([]inspect.PartitionBlocker, error) {
	if s.Layout.ClusterDir == "" {
		return nil, nil
	}
	vol, err := ReadVolume(s.Layout, a, Selection{All: true})
	if err != nil {
		return nil, err
	}
	var out []inspect.PartitionBlocker
	for _, g := range vol.KnownNames() {
		if inspect.IsCanary(g) {
			continue
		}
		out = append(out, s.Blockers(vol.State(g), false, 0)...)
	}
	inspect.LinkTxnGroups(out)
	return out, nil
}

// PendingTxnOffsets are the open transactions that staged offsets for
// group (inspect.PendingTxnOffsets), with its coordinator from the
// assignment.
func (s *BlockerSources) PendingTxnOffsets(group string) []inspect.PendingTxnOffset {
	coord := ""
	if s.Assignment != nil {
		coord = s.Assignment.Router().Group(group).Coordinator
	}
	return inspect.PendingTxnOffsets(group, coord, s.Txns)
}

// TxnHolds is, per producer id, the partitions of the volume's groups
// whose committed offset sits on that producer's open transaction: the
// blockers of every group, offline (flags: what a printed fix repeats).
func TxnHolds(l volume.Layout, a *volume.Assignment, now time.Time, flags string) (map[int64][]inspect.TxnHold, error) {
	src := ReadBlockerSources(l, a, now, volume.DefaultRecordLimits())
	src.Flags = flags
	bs, err := src.VolumeBlockers(a)
	if err != nil {
		return nil, err
	}
	return inspect.HoldsByProducer(bs), nil
}

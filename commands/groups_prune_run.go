package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/repair"
)

// pruneBatch is how many groups are read (and written) at a time: the
// memory a prune holds is that of one batch plus a small record per
// selected group, whatever the volume's size.
const pruneBatch = 1000

// pruneRecordBytes is about what the plan keeps a selected group (its
// record and rows; BenchmarkPrunePlan100k: 89 MB for 100,000 groups of 6
// partitions).
const pruneRecordBytes = 900

// pruneRun is one groups prune: its sources, then the plan and what was
// done.
type pruneRun struct {
	g   *Globals
	o   pruneOptions
	l   volume.Layout
	cl  *wire.Client
	a   *volume.Assignment
	gen volume.GenerationInfo
	// names names brokers as kaas does; journal the --journal's commit
	// times; listings every broker's ListGroups (live).
	names    *inspect.NodeNamer
	journal  *watch.CommitTimes
	listings []wire.BrokerGroups
	logs     *observe.Logs
	topics   map[string]inspect.TopicPresence
	names1   map[string]string // one copy of each topic name
	canaries map[string]string
	// groups are the selected groups, in group order; scanned counts the
	// groups read.
	groups  []*inspect.PruneGroup
	scanned int
	// unjudged are live groups whose members reported neither their
	// subscriptions nor their assignments (--unsubscribed cannot judge).
	unjudged []string
	// applied is what the writes did (execute); stillListed the brokers
	// still listing a pruned group afterwards.
	applied     pruneApplied
	stillListed map[string][]string
}

// newPruneRun gathers what every batch shares: assignment.json (broker
// names, the canaries in use), the journal, every broker's listing.
func newPruneRun(ctx context.Context, g *Globals, o pruneOptions, l volume.Layout, cl *wire.Client) (*pruneRun, error) {
	r := &pruneRun{g: g, o: o, l: l.WithGeneration(), cl: cl, topics: map[string]inspect.TopicPresence{}, canaries: map[string]string{}}
	r.gen = r.l.Gen
	if a, _, err := volume.ReadAssignment(l.AssignmentPath()); err == nil {
		r.a = a
		// The canaries the probe picks now: as it picks them, skipping
		// ids whose files hold offsets it did not commit.
		for _, c := range inspect.CanaryGroups(a, canaryOwner(l)) {
			if c.Group != "" {
				r.canaries[c.Group] = c.Broker
			}
		}
	} else if o.ask.Canary {
		g.Warnf("%v: which canaries the probe uses now is unknown, so none is pruned", err)
	}
	r.names = inspect.NewNodeNamer(r.a)
	if o.ask.Unsubscribed && cl == nil {
		g.Warnf("--unsubscribed: offline no broker says who the members are or what they subscribe to; it selects nothing")
	}
	if o.journal != "" {
		dir, err := watch.ResolveOffsetJournal(o.journal)
		if err != nil {
			return nil, err
		}
		if r.journal, err = watch.ReadCommitTimes(dir); err != nil {
			return nil, err
		}
		for _, w := range r.journal.Warnings {
			g.Warnf("journal: %s", w)
		}
		if err := checkJournalDirs(r.l, r.journal); err != nil {
			return nil, err
		}
	}
	if cl != nil {
		gg, err := cl.GatherGroups(ctx, wire.GroupRounds{})
		if err != nil {
			return nil, err
		}
		r.listings = gg.Listings
		for _, w := range inspect.UnlistedWarnings(gg.Listings) {
			g.Warnf("ListGroups: %s (a group it coordinates cannot be told held or not, and is refused)", w)
		}
	}
	return r, nil
}

// plan reads the volume's groups in batches and keeps what the selectors
// select, with a progress line on a terminal.
func (r *pruneRun) plan(ctx context.Context) error {
	names, scan, err := observe.GroupNames(r.l, r.o.picks)
	if err != nil {
		return err
	}
	if scan.Generation.Resolved() {
		r.gen = scan.Generation
	}
	// The plan keeps about pruneRecordBytes a selected group: a large
	// volume's plan is a large input kept in memory.
	gctune.LargeInput(int64(len(names)) * pruneRecordBytes)
	r.logs = observe.NewLogs(r.l)
	prog := r.g.Progress("planning (groups)", int64(len(names)))
	err = observe.ReadBatches(r.l, r.a, names, pruneBatch, r.logs, func(v *observe.VolumeRead, batch []string) error {
		err := r.planBatch(ctx, v, batch)
		prog.Add(int64(len(batch)))
		return err
	})
	prog.Done()
	if _, w := r.logs.Flush(); w != "" {
		r.g.Warnf("%s", w)
	}
	if n := len(r.unjudged); n > 0 {
		r.g.Warnf("--unsubscribed: the members of %s report neither their subscriptions nor their assignments (kaas may leave both empty), so none of their topics could be judged unsubscribed (%s)",
			render.Plural(n, "live group", "live groups"), render.Clean(strings.Join(r.unjudged[:min(n, 5)], ", ")))
	}
	return err
}

// planBatch builds the state of each group of the batch (offline, or
// with the brokers' answer) and applies the selectors.
func (r *pruneRun) planBatch(ctx context.Context, v *observe.VolumeRead, batch []string) error {
	r.scanned += len(batch)
	states := map[string]*inspect.GroupState{}
	var descs map[string]*wire.GroupDescription
	if r.cl != nil {
		ss, ds, warns, err := observe.LiveBatch(ctx, r.cl, v, batch, r.listings, r.g.Now())
		if err != nil {
			return err
		}
		for _, w := range warns {
			r.g.Warnf("%s", w)
		}
		for _, s := range ss {
			states[s.Group] = s
		}
		descs = ds
	} else {
		for _, gr := range batch {
			states[gr] = v.State(gr)
		}
	}
	r.lookUpBatch(ctx, v, batch)
	for _, gr := range batch {
		if pg := r.planGroup(v, states[gr], descs[gr]); pg != nil {
			r.groups = append(r.groups, pg)
		}
	}
	return nil
}

// planGroup is one group's prune (nil: nothing selected).
func (r *pruneRun) planGroup(v *observe.VolumeRead, gs *inspect.GroupState, d *wire.GroupDescription) *inspect.PruneGroup {
	if gs == nil {
		return nil
	}
	f, counts := observe.ShownFile(v.Files[gs.Group])
	if f == nil || !counts || f.File == nil {
		return nil
	}
	in := &inspect.PruneInput{State: gs, File: f.File, Path: f.Path, ModTime: f.ModTime, Live: r.cl != nil, Desc: d, Held: gs.Facts.Held,
		Journal: r.journal, FirstBatch: r.logs.FirstBatch, CanaryInUse: r.canaries, AssignmentRead: r.a != nil, Intern: r.intern}
	if d != nil && d.Coordinator >= 0 {
		in.CoordName = r.names.Name(d.Coordinator)
	}
	if d != nil && r.o.ask.Unsubscribed && d.Err == "" && len(d.Members) > 0 {
		if _, reported := inspect.MemberTopics(d.Members); !reported {
			r.unjudged = append(r.unjudged, gs.Group)
		}
	}
	in.Topics = r.topics
	pg := inspect.PlanPrune(in, r.o.ask)
	if pg != nil && pg.Writes() {
		if why := repair.WriteBlocked(r.l, gs.Group, f.Findings); why != "" {
			pg.Refused, pg.Outcome = why, "refused"
		}
	}
	return pg
}

// intern returns one copy of each topic name.
func (r *pruneRun) intern(s string) string {
	if c, ok := r.names1[s]; ok {
		return c
	}
	if r.names1 == nil {
		r.names1 = map[string]string{}
	}
	r.names1[s] = s
	return s
}

// lookUpBatch looks up the topics of the batch's files not seen yet
// (each topic once per run, the brokers asked in one Metadata request per
// batch).
func (r *pruneRun) lookUpBatch(ctx context.Context, v *observe.VolumeRead, batch []string) {
	if !r.o.ask.Deleted {
		return
	}
	var fresh []string
	seen := map[string]bool{}
	for _, gr := range batch {
		f, _ := observe.ShownFile(v.Files[gr])
		if f == nil || f.File == nil {
			continue
		}
		for _, e := range f.File.Entries {
			if _, ok := r.topics[e.Topic]; !ok && !seen[e.Topic] {
				seen[e.Topic] = true
				fresh = append(fresh, e.Topic)
			}
		}
	}
	if len(fresh) > 0 {
		r.lookUpTopics(ctx, fresh)
	}
}

// lookUpTopics records whether each topic is on the volume and on the
// brokers.
func (r *pruneRun) lookUpTopics(ctx context.Context, topics []string) {
	var md *wire.Metadata
	var mdErr error
	if r.cl != nil {
		md, mdErr = r.cl.Metadata(ctx, topics)
	}
	for _, t := range topics {
		tp := inspect.TopicPresence{VolumeRead: r.l.DataDir != ""}
		if tp.VolumeRead {
			tp.OnVolume = len(r.logs.TopicPartitions(t)) > 0
			if d := r.l.PartitionDir(t, 0); d != "" {
				tp.Dir = filepath.Dir(d)
			}
		}
		switch {
		case r.cl == nil:
		case mdErr != nil:
			tp.Asked, tp.BrokerErr = true, fmt.Sprintf("metadata: %v", mdErr)
		default:
			tp.Asked = true
			if tm := md.Topics[t]; tm == nil {
				tp.BrokerErr = inspect.UnknownTopic
			} else if tm.Err != "" {
				tp.BrokerErr = tm.Err
			} else {
				tp.OnBrokers = true
			}
		}
		r.topics[t] = tp
	}
}

// writable are the selected groups the prune writes.
func (r *pruneRun) writable() []*inspect.PruneGroup {
	var out []*inspect.PruneGroup
	for _, pg := range r.groups {
		if pg.Writes() {
			out = append(out, pg)
		}
	}
	return out
}

// checkCap refuses a plan that writes more groups than --max-groups.
func (r *pruneRun) checkCap() error {
	if n := len(r.writable()); n > r.o.maxGroups {
		return pruneCapError(n, r.o.maxGroups, r.o.mode.execute)
	}
	return nil
}

// checkJournalDirs refuses a journal that followed no offsets dir of this
// volume: another cluster's journal would date this volume's groups by
// another group's commits under the same name.
func checkJournalDirs(l volume.Layout, j *watch.CommitTimes) error {
	var here []string
	for _, d := range l.OffsetsDirs() {
		for _, jd := range j.Dirs {
			if volume.SameDir(jd, d.Path) {
				return nil
			}
		}
		here = append(here, d.Path)
	}
	recorded := "no offsets dir (its segment headers name none)"
	if len(j.Dirs) > 0 {
		recorded = strings.Join(j.Dirs, ", ")
	}
	return exit.Refusedf("the journal %s followed %s, not an offsets dir of this volume (%s): a journal of another cluster, or of this volume mounted elsewhere, would date these groups by other commits; nothing was planned. Pass the journal recorded for this volume", j.Dir, recorded, strings.Join(here, ", "))
}

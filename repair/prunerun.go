package repair

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/gctune"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// pruneBatch is how many groups are read (and written) at a time: the
// memory a prune holds is that of one batch plus a small record per
// selected group, whatever the volume's size.
const pruneBatch = 1000

// pruneRecordBytes is about what the plan keeps a selected group (its
// record and rows; BenchmarkPrunePlan100k: 89 MB for 100,000 groups of 6
// partitions).
const pruneRecordBytes = 900

// PruneConfig is what one groups prune is asked: the volume and the
// brokers (nil: offline), the selectors, the groups it may take, how it
// writes, and what it tells and asks its caller.
type PruneConfig struct {
	Layout volume.Layout
	Client *wire.Client
	Ask    inspect.PruneAsk
	// Journal is the offsets journal DIR (--journal; "": none); Picks
	// says which groups the filters take.
	Journal   string
	Picks     func(group string) bool
	MaxGroups int
	Execute   bool
	Policy    Policy
	// Rollback is the --export-rollback FILE ("": none), replaced only
	// with OverwriteRollback.
	Rollback          string
	OverwriteRollback bool
	// Notes are told the run's notes and warnings; Progress makes a
	// progress line; Now is the run's clock; Flags are repeated in the
	// restore command the rollback note prints.
	Notes    render.Notes
	Progress func(label string, total int64) ProgressLine
	Now      func() time.Time
	Flags    string
}

// ProgressLine counts work done on a progress line (a nil one does
// nothing).
type ProgressLine interface {
	Add(n int64)
	Done()
}

// PruneRun is one groups prune: its sources, then the plan and what was
// done.
type PruneRun struct {
	cfg PruneConfig
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
	// Groups are the selected groups, in group order; scanned counts the
	// groups read.
	Groups  []*inspect.PruneGroup
	scanned int
	// unjudged are live groups whose members reported neither their
	// subscriptions nor their assignments (--unsubscribed cannot judge).
	unjudged []string
	// applied is what the writes did (execute); stillListed the brokers
	// still listing a pruned group afterwards.
	applied     pruneApplied
	stillListed map[string][]string
}

// NewPruneRun gathers what every batch shares: assignment.json (broker
// names, the canaries in use), the journal, every broker's listing.
func NewPruneRun(ctx context.Context, cfg PruneConfig) (*PruneRun, error) {
	l, cl, o := cfg.Layout, cfg.Client, cfg
	r := &PruneRun{cfg: cfg, l: l.WithGeneration(), cl: cl, topics: map[string]inspect.TopicPresence{}, canaries: map[string]string{}}
	r.gen = r.l.Gen
	if a, _, err := volume.ReadAssignment(l.AssignmentPath()); err == nil {
		r.a = a
		// The canaries the probe picks now: as it picks them, skipping
		// ids whose files hold offsets it did not commit.
		for _, c := range inspect.CanaryGroups(a, CanaryOwner(l)) {
			if c.Group != "" {
				r.canaries[c.Group] = c.Broker
			}
		}
	} else if o.Ask.Canary {
		cfg.Notes.Warnf("%v: which canaries the probe uses now is unknown, so none is pruned", err)
	}
	r.names = inspect.NewNodeNamer(r.a)
	if o.Ask.Unsubscribed && cl == nil {
		cfg.Notes.Warnf("--unsubscribed: offline no broker says who the members are or what they subscribe to; it selects nothing")
	}
	if err := r.readJournal(); err != nil {
		return nil, err
	}
	if cl != nil {
		gg, err := cl.GatherGroups(ctx, wire.GroupRounds{})
		if err != nil {
			return nil, err
		}
		r.listings = gg.Listings
		for _, w := range inspect.UnlistedWarnings(gg.Listings) {
			cfg.Notes.Warnf("ListGroups: %s (a group it coordinates cannot be told held or not, and is refused)", w)
		}
	}
	return r, nil
}

// readJournal reads the --journal's commit times (a journal of another
// volume is refused).
func (r *PruneRun) readJournal() error {
	if r.cfg.Journal == "" {
		return nil
	}
	dir, err := watch.ResolveOffsetJournal(r.cfg.Journal)
	if err != nil {
		return err
	}
	if r.journal, err = watch.ReadCommitTimes(dir); err != nil {
		return err
	}
	for _, w := range r.journal.Warnings {
		r.cfg.Notes.Warnf("journal: %s", w)
	}
	return checkJournalDirs(r.l, r.journal)
}

// Plan reads the volume's groups in batches and keeps what the selectors
// select, with a progress line on a terminal.
func (r *PruneRun) Plan(ctx context.Context) error {
	names, scan, err := observe.GroupNames(r.l, r.cfg.Picks)
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
	prog := r.cfg.Progress("planning (groups)", int64(len(names)))
	err = observe.ReadBatches(r.l, r.a, names, pruneBatch, r.logs, func(v *observe.VolumeRead, batch []string) error {
		err := r.planBatch(ctx, v, batch)
		prog.Add(int64(len(batch)))
		return err
	})
	prog.Done()
	if _, w := r.logs.Flush(); w != "" {
		r.cfg.Notes.Warnf("%s", w)
	}
	if n := len(r.unjudged); n > 0 {
		r.cfg.Notes.Warnf("--unsubscribed: the members of %s report neither their subscriptions nor their assignments (kaas may leave both empty), so none of their topics could be judged unsubscribed (%s)",
			render.Plural(n, "live group", "live groups"), render.Clean(strings.Join(r.unjudged[:min(n, 5)], ", ")))
	}
	return err
}

// planBatch builds the state of each group of the batch (offline, or
// with the brokers' answer) and applies the selectors.
func (r *PruneRun) planBatch(ctx context.Context, v *observe.VolumeRead, batch []string) error {
	r.scanned += len(batch)
	states := map[string]*inspect.GroupState{}
	var descs map[string]*wire.GroupDescription
	if r.cl != nil {
		ss, ds, warns, err := observe.LiveBatch(ctx, r.cl, v, batch, r.listings, r.cfg.Now())
		if err != nil {
			return err
		}
		for _, w := range warns {
			r.cfg.Notes.Warnf("%s", w)
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
			r.Groups = append(r.Groups, pg)
		}
	}
	return nil
}

// planGroup is one group's prune (nil: nothing selected).
func (r *PruneRun) planGroup(v *observe.VolumeRead, gs *inspect.GroupState, d *wire.GroupDescription) *inspect.PruneGroup {
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
	if d != nil && r.cfg.Ask.Unsubscribed && d.Err == "" && len(d.Members) > 0 {
		if _, reported := inspect.MemberTopics(d.Members); !reported {
			r.unjudged = append(r.unjudged, gs.Group)
		}
	}
	in.Topics = r.topics
	pg := inspect.PlanPrune(in, r.cfg.Ask)
	if pg != nil && pg.Writes() {
		if why := WriteBlocked(r.l, gs.Group, f.Findings); why != "" {
			pg.Refused, pg.Outcome = why, "refused"
		}
	}
	return pg
}

// intern returns one copy of each topic name.
func (r *PruneRun) intern(s string) string {
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
func (r *PruneRun) lookUpBatch(ctx context.Context, v *observe.VolumeRead, batch []string) {
	if !r.cfg.Ask.Deleted {
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
func (r *PruneRun) lookUpTopics(ctx context.Context, topics []string) {
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
func (r *PruneRun) writable() []*inspect.PruneGroup {
	var out []*inspect.PruneGroup
	for _, pg := range r.Groups {
		if pg.Writes() {
			out = append(out, pg)
		}
	}
	return out
}

// CheckCap refuses a plan that writes more groups than --max-groups.
func (r *PruneRun) CheckCap() error {
	if n := len(r.writable()); n > r.cfg.MaxGroups {
		return pruneCapError(n, r.cfg.MaxGroups, r.cfg.Execute)
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

// pruneCapError is the refusal of a plan over --max-groups.
func pruneCapError(n, capN int, execute bool) error {
	what := "nothing would be written"
	if execute {
		what = "nothing was written"
	}
	return exit.Refusedf("the prune selects %d groups to write, more than --max-groups %d: %s; check the plan, then rerun with --max-groups %d to prune them all (or narrow it with --group-regex/--exclude)", n, capN, what, n)
}

// pruneApplied adds up what the write path did over the batches.
type pruneApplied struct {
	written, refused, errors, failed, cached, interrupted int
}

func (a *pruneApplied) add(res ApplyResult) {
	a.written += res.Written
	a.refused += res.Refused
	a.errors += res.Errors
	a.failed += res.Failed
	a.cached += res.Cached
	a.interrupted += res.Interrupted
}

// Apply writes the writable groups through the one write path, a batch
// at a time: each batch's files read again and planned (PlanPrune),
// recorded in the rollback file (synced) before any of them is written,
// then written and verified (ApplyOffsets), and the results copied
// into the plan. A signal ends the run after the group being written.
func (r *PruneRun) Apply(ctx context.Context, stop func() bool) error {
	rb, closeRB, err := r.openRollback()
	if err != nil {
		return err
	}
	defer closeRB()
	todo := r.writable()
	prog := r.cfg.Progress("pruning (groups)", int64(len(todo)))
	defer prog.Done()
	in := Inputs{Layout: r.l, Client: r.cl, Now: r.cfg.Now(), Policy: r.cfg.Policy}
	for i := 0; i < len(todo); i += pruneBatch {
		batch := todo[i:min(i+pruneBatch, len(todo))]
		if stop() {
			r.markInterrupted(todo[i:])
			break
		}
		plans := PlanPrune(in, pruneItems(batch))
		if rb != nil {
			if err := rb.Plans(plans); err != nil {
				return fmt.Errorf("--export-rollback %s: %w; nothing more was written", r.cfg.Rollback, err)
			}
		}
		opts := ApplyOptions{Command: "prune", Client: r.cl, Execute: true, Names: r.names, Stop: stop,
			Done: func(gp *GroupPlan) {
				prog.Add(1)
				if rb != nil {
					rb.Outcome(gp, r.cfg.Now())
				}
			}}
		res, _ := ApplyOffsets(ctx, plans, opts)
		r.applied.add(res)
		copyPruneResults(batch, plans)
	}
	r.checkStillListed(ctx, todo)
	if rb != nil && r.applied.written == 0 && r.applied.failed == 0 {
		// Nothing was written, so the file would restore nothing: it is
		// removed, and the same command can be run again as it was.
		closeRB()
		if err := os.Remove(r.cfg.Rollback); err == nil {
			r.cfg.Notes.Notef("rollback: nothing was written, so %s (which would restore nothing) was removed", r.cfg.Rollback)
		}
	}
	return nil
}

// openRollback creates the --export-rollback file (nil without it).
func (r *PruneRun) openRollback() (*RollbackWriter, func(), error) {
	if r.cfg.Rollback == "" {
		return nil, func() {}, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if r.cfg.OverwriteRollback {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(r.cfg.Rollback, flags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil, CheckRollbackTarget(r.cfg.Rollback, false)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--export-rollback: %w", err)
	}
	rb, err := NewRollbackWriter(f, r.cfg.Now(), r.gen)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("--export-rollback %s: %w", r.cfg.Rollback, err)
	}
	r.cfg.Notes.Notef("rollback: %s (every planned group's file, byte for byte; put them back with: kaasctl groups prune --restore %s%s --execute)", r.cfg.Rollback, render.ShellQuote(r.cfg.Rollback), r.cfg.Flags)
	closed := false
	return rb, func() {
		if !closed {
			closed = true
			rb.Sync()
			f.Close()
		}
	}, nil
}

// pruneItems are the write path's items for the groups.
func pruneItems(groups []*inspect.PruneGroup) []PruneItem {
	out := make([]PruneItem, 0, len(groups))
	for _, pg := range groups {
		it := PruneItem{Group: pg.Group, Remove: pg.Action == inspect.PruneRemove, State: pg.State, StateSource: "live", Coordinator: -1, Entries: len(pg.Rows) + pg.Kept}
		if pg.State == "unknown" {
			it.StateSource = "offline"
		}
		for _, row := range pg.Pruned() {
			it.Drop = append(it.Drop, volume.OffsetEntry{Topic: row.Topic, Partition: row.Partition, Offset: row.Offset})
		}
		out = append(out, it)
	}
	return out
}

// copyPruneResults copies each plan's outcome and rows' results into the
// prune's groups (plans are in the groups' order).
func copyPruneResults(groups []*inspect.PruneGroup, plans []*GroupPlan) {
	for i, gp := range plans {
		pg := groups[i]
		pg.Outcome, pg.Backup = gp.Outcome, gp.Backup
		pg.Warnings = append(pg.Warnings, gp.Warnings...)
		if gp.Error != "" {
			pg.Warnings = append(pg.Warnings, gp.Error)
		}
		if gp.Outcome == OutcomeRefused && pg.Refused == "" {
			pg.Refused = gp.Refused
		}
		res := map[string]ResetRow{}
		for _, row := range gp.Rows {
			res[row.Topic+"/"+strconv.Itoa(int(row.Partition))] = row
		}
		for j := range pg.Rows {
			row := &pg.Rows[j]
			if rr, ok := res[row.Topic+"/"+strconv.Itoa(int(row.Partition))]; ok {
				row.SetResult(rr.Result, rr.Detail)
			}
		}
	}
}

// markInterrupted marks the groups a signal left unwritten.
func (r *PruneRun) markInterrupted(groups []*inspect.PruneGroup) {
	for _, pg := range groups {
		pg.Outcome = OutcomeInterrupted
		pg.Warnings = append(pg.Warnings, "not written: the run was interrupted before this group")
		r.applied.interrupted++
	}
}

// checkStillListed asks every broker's ListGroups again after the writes:
// a broker that still lists a pruned group holds it in memory, and
// restarting that broker is what clears it.
func (r *PruneRun) checkStillListed(ctx context.Context, groups []*inspect.PruneGroup) {
	if r.cl == nil {
		return
	}
	var pruned []string
	for _, pg := range groups {
		if pg.Outcome == OutcomeWritten {
			pruned = append(pruned, pg.Group)
		}
	}
	if len(pruned) == 0 {
		return
	}
	gg, err := r.cl.GatherGroups(ctx, wire.GroupRounds{})
	if err != nil {
		r.cfg.Notes.Warnf("after the prune, ListGroups could not be asked (%v): a broker may still hold a pruned group in memory", err)
		return
	}
	r.stillListed = StillListed(gg.Listings, pruned, r.names.Name)
	for _, pg := range groups {
		if bs := r.stillListed[pg.Group]; len(bs) > 0 {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("pruned from the volume, but %s still list(s) the group (it is in memory there): a consumer that joins resumes from that memory and the group's next commit writes the offsets back; restart %s before any consumer of the group starts",
				render.Clean(joinNames(bs)), render.Clean(joinNames(bs))))
		}
	}
}

func joinNames(ns []string) string {
	if len(ns) == 1 {
		return "broker " + ns[0]
	}
	s := "brokers "
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// ExitErr is the run's exit: the cap's refusal, then (execute) what the
// writes did, then refused rows or groups (4), then offsets a broker
// still serves from memory (3).
func (r *PruneRun) ExitErr(capErr error) error {
	if capErr != nil {
		return capErr
	}
	a := r.applied
	refusedRows, refusedGroups := 0, 0
	for _, pg := range r.Groups {
		if n := pg.Refusals(); n > 0 {
			refusedRows += n
			refusedGroups++
		}
	}
	switch {
	case a.interrupted > 0:
		return fmt.Errorf("interrupted: %d group(s) pruned before the signal, %d not written (each group's outcome above says which); rerun the prune for the rest", a.written, a.interrupted)
	case a.failed > 0 || a.errors > 0:
		return &exit.CodedError{Code: exit.Error, Err: fmt.Errorf("%d group(s) could not be written and %d partition(s) failed or did not verify; see the warnings and RESULT", a.errors, a.failed)}
	case refusedGroups > 0:
		return exit.Refusedf("%s refused (%s kept although selected): each says why; nothing was written for them", render.Plural(refusedGroups, "group", "groups"), render.Plural(refusedRows, "partition or group", "partitions or groups"))
	case a.cached > 0 || len(r.stillListed) > 0:
		return &exit.CodedError{Code: exit.Problems, Err: fmt.Errorf("%d pruned offset(s) are still served by a coordinator's memory and %d pruned group(s) still listed by a broker; see the warnings: restart the brokers named", a.cached, len(r.stillListed))}
	}
	return nil
}

// PruneReport is 'groups prune -o json': the plan (dry-run) or what
// was written, a group at a time.
type PruneReport struct {
	Mode string `json:"mode"` // dry-run | execute
	// Path: live (the brokers were asked) or offline.
	Path       string                `json:"path"`
	Generation volume.GenerationInfo `json:"generation"`
	OffsetsDir string                `json:"offsetsDir"`
	Journal    string                `json:"journal,omitempty"`
	Selectors  []string              `json:"selectors"`
	MinAge     string                `json:"minAge,omitempty"`
	AgeFrom    string                `json:"ageFrom,omitempty"`
	MaxGroups  int                   `json:"maxGroups"`
	Rollback   string                `json:"rollback,omitempty"`
	Summary    PruneSummary          `json:"summary"`
	Groups     []*inspect.PruneGroup `json:"groups"`
}

// PruneSummary counts the plan and what was done.
type PruneSummary struct {
	// Scanned: groups read; Selected: groups some selector took; Remove
	// and Rewrite: the groups the plan writes, by action; Refused: groups
	// with something selected but refused; Partitions: the partitions that
	// go; RefusedPartitions those kept although selected.
	Scanned           int `json:"scanned"`
	Selected          int `json:"selected"`
	Remove            int `json:"remove"`
	Rewrite           int `json:"rewrite"`
	Refused           int `json:"refused"`
	Partitions        int `json:"partitions"`
	RefusedPartitions int `json:"refusedPartitions"`
	// After --execute.
	Written     int `json:"written"`
	Failed      int `json:"failed"`
	Cached      int `json:"cached"`
	StillListed int `json:"stillListed"`
	Interrupted int `json:"interrupted"`
}

// Report is the run's document: the plan, or what was written.
func (r *PruneRun) Report() *PruneReport {
	v := &PruneReport{Mode: "dry-run", Path: "live", Generation: r.gen, MaxGroups: r.cfg.MaxGroups, Rollback: r.cfg.Rollback, Groups: r.Groups, Selectors: r.cfg.Ask.Selectors()}
	if r.cfg.Execute {
		v.Mode = "execute"
	}
	if r.cl == nil {
		v.Path = "offline"
	}
	if v.Groups == nil {
		v.Groups = []*inspect.PruneGroup{}
	}
	v.OffsetsDir, _ = r.l.LiveOffsetsDir()
	if r.journal != nil {
		v.Journal = r.journal.Dir
	}
	if r.cfg.Ask.Empty {
		v.MinAge, v.AgeFrom = r.cfg.Ask.MinAge.String(), r.cfg.Ask.AgeFrom
	}
	s := &v.Summary
	s.Scanned, s.Selected = r.scanned, len(r.Groups)
	for _, pg := range r.Groups {
		switch {
		case !pg.Writes():
			s.Refused++
		case pg.Action == inspect.PruneRemove:
			s.Remove++
		default:
			s.Rewrite++
		}
		if pg.Refused == "" {
			s.RefusedPartitions += pg.Refusals()
		} else {
			s.RefusedPartitions += len(pg.Rows)
		}
		if pg.Writes() {
			s.Partitions += pg.PrunedRows()
		}
	}
	a := r.applied
	s.Written, s.Failed, s.Cached, s.Interrupted, s.StillListed = a.written, a.failed, a.cached, a.interrupted, len(r.stillListed)
	return v
}

package repair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
)

// Results of one executed partition.
const (
	ResultOK       = "OK"
	ResultMismatch = "MISMATCH"
	ResultFailed   = "FAILED"
)

// Group states in which Kafka tooling (and kaasctl) rewrites offsets.
const (
	StateEmpty   = "Empty"
	StateDead    = "Dead"
	StateUnknown = "unknown"
)

// ErrNotEmptyGroup is how a commit rejected because of live members reads.
const notEmptyGroup = "group is not empty (a consumer may have joined)"

// InactiveRefusal is Kafka's wording for a reset on a live group, plus
// what to do about it.
func InactiveRefusal(group, state string) string {
	return fmt.Sprintf("Assignments can only be reset if the group '%s' is inactive, but the current state is %s. Stop every consumer of the group first (kaas brokers do not fence admin commits, so a reset of a live group races its consumers).", volume.DisplayName(group), state)
}

// ResetOptions is one offsets reset as the user asked for it.
type ResetOptions struct {
	Groups    []string
	AllTopics bool
	Scopes    []TopicScope
	Spec      Spec
	// Delete plans the removal of the scoped partitions instead of a reset
	// (offsets delete); Spec is then ignored.
	Delete bool
}

// ResetRow is one partition of a plan and, after --execute, its result.
type ResetRow struct {
	PlanRow
	// Delete is true for offsets delete rows (New is meaningless then).
	Delete bool   `json:"delete,omitempty"`
	Result string `json:"result,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// GroupPlan is one group's part of a reset or delete.
type GroupPlan struct {
	Group string `json:"group"`
	Path  string `json:"path"`
	// State is the live state from DescribeGroups, or "unknown" offline.
	State       string `json:"state"`
	StateSource string `json:"stateSource"` // live | offline
	Coordinator int32  `json:"coordinator"` // node id, -1 when unknown
	// Refused is why the group may not be rewritten (an active group; its
	// state cannot be read). --force overrides it.
	Refused string `json:"refused,omitempty"`
	// Error stops this group even with --force (unreadable file, no
	// partitions in scope, a row that cannot be planned).
	Error string `json:"error,omitempty"`
	// TimeRefused marks an Error that is a refusal: the brokers' offsets
	// for a time contradict the records (exit 4, not 1).
	TimeRefused bool `json:"timeRefused,omitempty"`
	// LogRefused marks an Error that is a refusal: rows whose log end is
	// not verified (exit 4, not 1); --allow-unverified-log-end plans them.
	LogRefused bool `json:"logRefused,omitempty"`
	// Skipped says why the group has nothing to plan (Kafka skips it with
	// a message and goes on with the other groups).
	Skipped string `json:"skipped,omitempty"`
	// Outcome is set by ApplyOffsets: planned, written, unchanged,
	// refused, skipped or error.
	Outcome string     `json:"outcome"`
	Rows    []ResetRow `json:"rows"`
	// FilePartitions counts the partitions in the group's file before the
	// write; Kept those outside the plan, written back unchanged.
	FilePartitions int  `json:"filePartitions"`
	Kept           int  `json:"kept"`
	PlainMap       bool `json:"plainMap"`
	// Remove: the whole offset file is removed (groups prune), not
	// rewritten.
	Remove bool `json:"remove,omitempty"`
	// After --execute:
	Executed bool     `json:"executed"`
	Method   string   `json:"method,omitempty"` // commit | file
	Backup   string   `json:"backup,omitempty"`
	Failed   int      `json:"failed"`
	Warnings []string `json:"warnings"`

	file *GroupFile
	// pol is the user's --follow-symlinks / --keep-backups; root the
	// volume dir the file is in; log kaasctl's write log (writelog.go).
	pol  Policy
	root string
	log  string
}

// Inputs are the live sources a plan may use; a nil Client means offline.
type Inputs struct {
	Layout volume.Layout
	Client *wire.Client
	Now    time.Time
	// Policy: --follow-symlinks and --keep-backups for the writes.
	Policy Policy
	// Progress, when set, is told how many partitions each group's plan
	// covers as it is planned (a progress line for large plans).
	Progress func(partitions int)
}

// PlanGroups reads every group's file, asks the brokers for group states
// and log offsets (offline: the partitions' segment files; live: ListOffsets,
// checked against the segments), and computes the per-partition plan, each
// partition checked against the read model's incidents. It writes nothing.
func PlanGroups(ctx context.Context, in Inputs, opts ResetOptions) ([]*GroupPlan, error) {
	opts.Spec.File = opts.Spec.File.Indexed()
	var specWarns []string
	if opts.Spec.Kind == ToGroup && !opts.Delete {
		rows, warns, err := sourceOffsets(ctx, in, opts)
		if err != nil {
			return nil, err
		}
		opts.Spec.File, specWarns = FilePlan{Rows: rows}, warns
	}
	plans := make([]*GroupPlan, 0, len(opts.Groups))
	for _, g := range opts.Groups {
		plans = append(plans, readPlanFile(in, g, specWarns))
	}
	if in.Client != nil {
		if err := describeStates(ctx, in.Client, plans); err != nil {
			return nil, err
		}
	}
	parts, err := scopeParts(ctx, in, opts, plans)
	if err != nil {
		return nil, err
	}
	ev, err := gatherEvidence(ctx, in, opts, plans, parts)
	if err != nil {
		return nil, err
	}
	for _, gp := range plans {
		if (gp.Error != "" && gp.file == nil) || gp.Skipped != "" {
			continue
		}
		planGroup(gp, opts, parts[gp], ev)
		if in.Progress != nil {
			in.Progress(len(gp.Rows))
		}
	}
	return plans, nil
}

// PlanDelete plans offsets delete: the scoped partitions removed from
// each group's offset file (never kaas's OffsetDelete), refused for a live
// group that is not Empty or Dead, as Kafka's tool refuses it.
func PlanDelete(ctx context.Context, in Inputs, groups []string, scopes []TopicScope) ([]*GroupPlan, error) {
	plans, err := PlanGroups(ctx, in, ResetOptions{Groups: groups, Scopes: scopes, Delete: true})
	if err != nil {
		return nil, err
	}
	for _, gp := range plans {
		if gp.StateSource == "live" && gp.State != StateEmpty && gp.State != StateDead && gp.State != StateUnknown {
			gp.Refused = fmt.Sprintf("Deleting offsets of a consumer group '%s' is forbidden if the group is not empty (the current state is %s). Stop every consumer of the group first.", volume.DisplayName(gp.Group), gp.State)
		}
		if gp.Error == "" && gp.FilePartitions == 0 {
			gp.Warnings = append(gp.Warnings, "the group has no offset file (or no offsets in it): nothing to delete")
		}
	}
	return plans, nil
}

// readPlanFile reads one group's offset file for a plan.
func readPlanFile(in Inputs, g string, specWarns []string) *GroupPlan {
	gp := &GroupPlan{Group: g, State: StateUnknown, StateSource: "offline", Coordinator: -1, Rows: []ResetRow{}, Warnings: append([]string{}, specWarns...)}
	p, err := GroupFilePath(in.Layout, g)
	if err != nil {
		// The plan names the group: the reason alone.
		var gpe *GroupPathError
		if errors.As(err, &gpe) {
			err = gpe.Err
		}
		gp.Error = err.Error()
		return gp
	}
	gp.Path, gp.pol, gp.root, gp.log = p, in.Policy, VolumeRoot(in.Layout, p), in.Layout.WriteLogPath()
	gf, err := readGroupFile(in.Layout, g, in.Policy)
	if err == nil && !gf.State.Exists {
		// A group whose offsets live only in the legacy layout: writing a
		// current file now would shadow them for good. LegacyOffsetsPath
		// is set on Rust 0.2.18 only.
		l := in.Layout.WithGeneration()
		if leg := l.LegacyOffsetsPath(); leg != "" {
			lp := filepath.Join(leg, g+".json")
			if _, serr := os.Lstat(lp); serr == nil {
				err = fmt.Errorf("the group's offsets are only in the legacy file %s, which Rust 0.2.18 brokers no longer read (%s); run 'kaasctl volume repair --execute' to migrate it into the cluster dir first", lp, l.Gen.Assumes())
			}
		}
	}
	if err != nil {
		gp.Error = err.Error()
		return gp
	}
	gp.file = gf
	gp.FilePartitions = len(gf.Entries())
	gp.PlainMap = gf.PlainMap()
	return gp
}

// evidence is what a plan knows about the scoped partitions: the log
// bounds the brokers serve (live) and the segments hold (read first), the
// offsets for a time, and the partition dirs on the volume.
type evidence struct {
	cl                   *wire.Client
	gen                  volume.GenerationInfo
	needLog, beforeEpoch bool
	logs                 map[string]map[int32]wire.LogOffsets
	lr                   *volume.LogReader
	onVolume             volumePartitions
	timed                kadm.ListedOffsets
	timeBad, timeUnsure  map[tpKey]string
	now                  time.Time
}

// gatherEvidence reads the segments of the union of the scoped partitions
// (offline they are the log end; live, the floor a healthy leader serves:
// a broker answering less serves a stale high watermark), asks the
// brokers for their log offsets and, for a time spec, the offsets at it.
func gatherEvidence(ctx context.Context, in Inputs, opts ResetOptions, plans []*GroupPlan, parts map[*GroupPlan][]tpKey) (*evidence, error) {
	ev := &evidence{cl: in.Client, gen: in.Layout.WithGeneration().Gen, needLog: !opts.Delete, logs: map[string]map[int32]wire.LogOffsets{},
		onVolume: volumePartitions{l: in.Layout, topics: map[string]map[int32]bool{}}, now: in.Now}
	want := wire.TopicPartitions{}
	for _, gp := range plans {
		for _, k := range parts[gp] {
			want.Add(k.topic, k.part)
		}
	}
	if !ev.needLog || len(want) == 0 {
		return ev, nil
	}
	var tps []volume.TopicPartition
	for t, ps := range want {
		for _, p := range ps {
			tps = append(tps, volume.TopicPartition{Topic: t, Partition: p})
		}
	}
	ev.lr = volume.NewLogReader(in.Layout)
	ev.lr.Prefetch(tps, 16)
	var err error
	if ev.cl != nil {
		if ev.logs, err = ev.cl.ListLogOffsets(ctx, want); err != nil {
			return nil, fmt.Errorf("listing log offsets: %w", err)
		}
	}
	return ev, ev.lookupTime(ctx, opts.Spec, want)
}

// lookupTime asks the offsets for a time spec. A time before 1970 is
// before every record (record timestamps are epoch milliseconds, never
// negative), and a negative timestamp in ListOffsets is a special request
// (-1 the log end, -2 its start): it is never sent. Such a time resolves to
// the log start, as kafka-consumer-groups.sh resolves a time before the
// first record.
func (ev *evidence) lookupTime(ctx context.Context, spec Spec, want wire.TopicPartitions) error {
	ev.beforeEpoch = spec.NeedsTime() && spec.Time.UnixMilli() < 0
	if !spec.NeedsTime() || ev.beforeEpoch {
		return nil
	}
	if ev.cl == nil {
		return errors.New("--to-datetime and --by-duration look offsets up by timestamp, which needs live brokers (partition manifests hold no timestamps); run without --offline when the brokers are up")
	}
	cctx, cancel := ev.cl.WithTimeout(ctx)
	timed, err := ev.cl.Adm.ListOffsetsAfterMilli(cctx, spec.Time.UnixMilli(), want.Topics()...)
	cancel()
	if err != nil {
		return fmt.Errorf("listing offsets by time: %w", err)
	}
	ev.timed = timed
	ev.timeBad, ev.timeUnsure = checkTimeAnswers(ctx, ev.cl, spec.Time, timed, ev.logs)
	return nil
}

// partitionInfo is what the plan knows of one partition, and why it
// cannot be planned ("" when it can).
func (ev *evidence) partitionInfo(gp *GroupPlan, k tpKey) (PartitionInfo, string) {
	pi := PartitionInfo{Topic: k.topic, Partition: k.part}
	pi.Committed, pi.HasCommitted = gp.file.Committed(k.topic, k.part)
	var rowErr string
	switch {
	case ev.cl != nil:
		if lo, ok := ev.logs[k.topic][k.part]; ok && lo.Err == "" {
			pi.LogStart, pi.LogEnd, pi.HasLog, pi.LogSource = lo.Start, lo.End, true, volume.SourceWire
			rowErr = servedBoundsProblem(lo, ev.lr.Get(k.topic, k.part), ev.gen)
		} else if ok {
			rowErr = "log offsets: " + lo.Err
		} else if ev.needLog {
			rowErr = fmt.Sprintf("partition %s-%d does not exist", k.topic, k.part)
		}
	case ev.lr != nil:
		// Offline, a partition is checked against the partition dirs its
		// topic's dir holds, as the brokers check it online: a row naming
		// partition 2147483647 of a 4-partition topic is refused.
		if held, dir := ev.onVolume.holds(k.topic, k.part); held == partAbsent {
			rowErr = fmt.Sprintf("partition %s-%d is not on the volume: %s", k.topic, k.part, ev.onVolume.describe(k.topic, dir))
		} else if b := ev.lr.Get(k.topic, k.part); b.End != nil {
			pi.LogEnd, pi.HasLog, pi.LogSource = b.End.Value, true, b.End.Source
			pi.LogStart = b.End.Value
			if b.Start != nil {
				pi.LogStart = b.Start.Value
			}
			if b.End.Source == volume.SourceManifest {
				pi.LogUnknown = "its segment files could not be read: " + b.Fallback
			}
		} else {
			pi.LogUnknown = b.Unknown
		}
	}
	if ev.timed != nil {
		if lo, ok := ev.timed.Lookup(k.topic, k.part); ok && lo.Err == nil {
			pi.TimeOffset, pi.HasTimeOffset = lo.Offset, true
		}
	}
	if ev.beforeEpoch && pi.HasLog {
		pi.TimeOffset, pi.HasTimeOffset, pi.BeforeEveryRecord = pi.LogStart, true, true
	}
	return pi, rowErr
}

// planGroup plans one group's rows.
func planGroup(gp *GroupPlan, opts ResetOptions, keys []tpKey, ev *evidence) {
	infos := make([]PartitionInfo, 0, len(keys))
	rowErr := map[tpKey]string{}
	for _, k := range keys {
		pi, why := ev.partitionInfo(gp, k)
		if why == "" && ev.needLog {
			why = ev.readModelCheck(opts.Spec, pi, gp.Path)
		}
		if why != "" {
			rowErr[k] = why
		}
		infos = append(infos, pi)
	}
	if opts.Delete {
		gp.Rows = append(gp.Rows, deleteRows(gp.Group, infos)...)
	} else {
		var badParts []string
		for _, pr := range Plan(gp.Group, opts.Spec, infos) {
			k := tpKey{pr.Topic, pr.Partition}
			if e := rowErr[k]; e != "" {
				pr.Error = e
			} else if e := ev.timeBad[k]; e != "" {
				pr.Error = e
				badParts = append(badParts, fmt.Sprintf("%s/%d", pr.Topic, pr.Partition))
			} else if w := ev.timeUnsure[k]; w != "" {
				pr.Warnings = append(pr.Warnings, w)
			}
			gp.Rows = append(gp.Rows, ResetRow{PlanRow: pr})
		}
		if len(badParts) > 0 && gp.Error == "" {
			gp.Error, gp.TimeRefused = timeRefusal(badParts, ev.gen), true
		}
	}
	inPlan := map[tpKey]bool{}
	for _, r := range gp.Rows {
		inPlan[tpKey{r.Topic, r.Partition}] = true
	}
	for _, e := range gp.file.Entries() {
		if !inPlan[tpKey{e.Topic, e.Partition}] {
			gp.Kept++
		}
	}
	if n := PlanErrors(planRows(gp.Rows)); n > 0 && gp.Error == "" {
		gp.Error, gp.LogRefused = groupPlanError(gp.Rows, n)
	}
}

// deleteRows are an offsets delete's rows.
func deleteRows(group string, infos []PartitionInfo) []ResetRow {
	out := make([]ResetRow, 0, len(infos))
	for _, pi := range infos {
		r := ResetRow{PlanRow: PlanRow{Group: group, Topic: pi.Topic, Partition: pi.Partition, Warnings: []string{}}, Delete: true}
		if pi.HasCommitted {
			c := pi.Committed
			r.Current, r.Changed = &c, true
		} else {
			r.Warnings = append(r.Warnings, "no committed offset: nothing to delete")
		}
		out = append(out, r)
	}
	return out
}

// readModelCheck is what the read model's incidents of a partition forbid
// a plan ("" when nothing): a log an offset range was written twice in
// (a leader appended at a stale end) is moved only to an offset given
// explicitly (--to-offset, --from-file), since every other target counts
// from offsets that name two records; and --to-current does not keep a
// commit past a verified log end (its consumers cannot fetch from it:
// the operator picks the target).
func (ev *evidence) readModelCheck(spec Spec, pi PartitionInfo, path string) string {
	if !pi.HasLog {
		return ""
	}
	g := inspect.GroupFacts{Gen: ev.gen, Volume: true, File: inspect.FileOffsets}
	f := inspect.PartitionFacts{Topic: pi.Topic, Partition: pi.Partition}
	if pi.HasCommitted {
		f.File = &volume.Fact{Value: pi.Committed, Source: volume.SourceFile, Path: path}
	}
	if pi.LogSource == volume.SourceWire {
		g.Asked, g.Held = true, inspect.HeldNo
		f.Served = &inspect.ServedBounds{Start: pi.LogStart, End: pi.LogEnd, AsOf: ev.now}
	}
	if ev.lr != nil {
		f.Segments = ev.lr.Get(pi.Topic, pi.Partition)
	}
	st := inspect.BuildPartition(&g, &f)
	explicit := spec.Kind == ToOffset || spec.Kind == FromFile
	for _, in := range st.Incidents {
		switch {
		case in.Code == inspect.IncWrittenTwice && !explicit:
			return refusedPrefix + in.Detail + ": offsets there name two different records, so a target counted from them is not verified (" + ev.gen.Assumes() + "); check what the consumers read and set the offset with --to-offset N"
		case (in.Code == inspect.IncPastServedEnd || in.Code == inspect.IncPastLogEnd) && spec.Kind == ToCurrent:
			return refusedPrefix + in.Detail + "; --to-current would keep an offset no consumer can fetch from: choose --to-latest (the log end) or --to-offset N"
		}
	}
	return ""
}

// servedBoundsProblem is why a broker's log bounds for a partition are not
// evidence a reset may use: bounds no log can have (a negative start, an
// end before the start), segments that hold a bound kaas could never have
// written (what a broker recovered from them is not trusted), or an end
// served behind the segments (a stale high watermark); "" when usable.
func servedBoundsProblem(lo wire.LogOffsets, b *volume.LogBounds, gen volume.GenerationInfo) string {
	if lo.Start < 0 || lo.End < lo.Start {
		return fmt.Sprintf("%sthe broker answered log bounds no log can have (start %d, end %d): nothing is written for this partition", logUnverifiedPrefix, lo.Start, lo.End)
	}
	if why := b.Impossible(); why != "" {
		return fmt.Sprintf("%sthe partition's segments hold a bound kaas could never have written (%s), so the log end a broker serves for it is not evidence either: nothing is written for this partition", logUnverifiedPrefix, why)
	}
	if why := inspect.ServedBehindLog(lo.End, b, gen); why != "" {
		// A stale end: kaasctl knows the log reaches further and refuses
		// to count from what is served (exit 4), as it does offline.
		return refusedPrefix + why
	}
	return ""
}

// refusedPrefix starts the error of a row the read model's incidents
// refuse (a refusal, exit 4).
const refusedPrefix = "refused: "

// logUnverifiedPrefix starts the error of a row refused for want of a log
// end kaasctl can trust (PlanGroups counts such rows as refusals, exit 4).
const logUnverifiedPrefix = "log end unverified: "

// groupPlanError is the error of a group with n rows that cannot be
// planned: a refusal (exit 4) when every one lacks a log end kaasctl can
// trust, an error otherwise.
func groupPlanError(rows []ResetRow, n int) (string, bool) {
	var unverified, refused []string
	override := true
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.Error, "log end un"):
			unverified = append(unverified, fmt.Sprintf("%s/%d", r.Topic, r.Partition))
			override = override && strings.Contains(r.Error, UnverifiedFlag)
		case strings.HasPrefix(r.Error, refusedPrefix):
			refused = append(refused, fmt.Sprintf("%s/%d", r.Topic, r.Partition))
		}
	}
	if len(unverified)+len(refused) != n {
		return fmt.Sprintf("%d partitions cannot be planned (see the rows); nothing is written for this group", n), false
	}
	if len(refused) > 0 {
		return fmt.Sprintf("refused: %d partition(s) (%s) cannot be written safely (see the rows); nothing is written for this group", n, strings.Join(append(refused, unverified...), ", ")), true
	}
	if override {
		return fmt.Sprintf("refused: the log end of %d partition(s) (%s) is not verified (no broker answered and their segment files could not be read; see the rows); nothing is written for this group; %s plans them unchecked", n, strings.Join(unverified, ", "), UnverifiedFlag), true
	}
	return fmt.Sprintf("refused: the log end of %d partition(s) (%s) is not one kaas could have written (see the rows); nothing is written for this group", n, strings.Join(unverified, ", ")), true
}

func planRows(rs []ResetRow) []PlanRow {
	out := make([]PlanRow, len(rs))
	for i, r := range rs {
		out[i] = r.PlanRow
	}
	return out
}

// describeStates resolves every group's coordinator and live state.
func describeStates(ctx context.Context, cl *wire.Client, plans []*GroupPlan) error {
	groups := make([]string, 0, len(plans))
	for _, gp := range plans {
		groups = append(groups, gp.Group)
	}
	coords, err := cl.FindCoordinators(ctx, groups, false)
	if err != nil {
		return fmt.Errorf("finding the groups' coordinators: %w", err)
	}
	descs := cl.DescribeGroups(ctx, groups, coords)
	by := map[string]wire.DescribedGroup{}
	for _, d := range descs {
		by[d.Group] = d
	}
	for _, gp := range plans {
		gp.StateSource = "live"
		d, ok := by[gp.Group]
		if c, ok := coords[gp.Group]; ok {
			gp.Coordinator = c.NodeID
		}
		switch {
		case !ok:
			gp.Refused = fmt.Sprintf("cannot tell whether group '%s' is inactive: the brokers did not describe it", volume.DisplayName(gp.Group))
		case d.Err != "":
			gp.Refused = fmt.Sprintf("cannot tell whether group '%s' is inactive: %s", volume.DisplayName(gp.Group), d.Err)
		default:
			gp.State = d.State
			if d.State != StateEmpty && d.State != StateDead {
				gp.Refused = InactiveRefusal(gp.Group, d.State)
			}
		}
	}
	return nil
}

// scopeParts lists the partitions each group's plan covers.
func scopeParts(ctx context.Context, in Inputs, opts ResetOptions, plans []*GroupPlan) (map[*GroupPlan][]tpKey, error) {
	sc := &scoper{in: in, opts: opts, liveTopics: map[string]*wire.TopicMeta{}, topicParts: map[string][]int32{}}
	if err := sc.readTopics(ctx); err != nil {
		return nil, err
	}
	out := map[*GroupPlan][]tpKey{}
	for _, gp := range plans {
		if gp.file != nil {
			out[gp] = sc.groupParts(gp)
		}
	}
	return out, nil
}

// scoper is scopeParts' view of the topics the scopes name: their live
// metadata (with a client) and the partitions of the whole topics named
// (live metadata, else the data dir's partition dirs).
type scoper struct {
	in         Inputs
	opts       ResetOptions
	liveTopics map[string]*wire.TopicMeta
	topicParts map[string][]int32
}

// readTopics asks the brokers, when there is a client, for the metadata
// of every topic the scopes name, and lists the partitions of each topic
// named whole.
func (sc *scoper) readTopics(ctx context.Context) error {
	var wholeTopics []string
	for _, s := range sc.opts.Scopes {
		if s.Partitions == nil {
			wholeTopics = append(wholeTopics, s.Topic)
		}
	}
	if sc.in.Client != nil {
		var names []string
		for _, s := range sc.opts.Scopes {
			names = append(names, s.Topic)
		}
		if len(names) > 0 {
			md, err := sc.in.Client.Metadata(ctx, names)
			if err != nil {
				return fmt.Errorf("topic metadata: %w", err)
			}
			sc.liveTopics = md.Topics
		}
	}
	for _, t := range wholeTopics {
		if sc.in.Client == nil {
			sc.topicParts[t] = append(sc.topicParts[t], volume.TopicPartitionDirs(sc.in.Layout, t)...)
			continue
		}
		if tm := sc.liveTopics[t]; tm != nil && tm.Err == "" {
			for p := range tm.Partitions {
				sc.topicParts[t] = append(sc.topicParts[t], p)
			}
		}
	}
	return nil
}

// groupParts is the partitions gp's plan covers, sorted: the source
// group's (--to-group), the file's (--all-topics), the scopes' or the
// --from-file plan's for the group. A scope that covers nothing sets the
// plan's error, or skips the group, saying why.
func (sc *scoper) groupParts(gp *GroupPlan) []tpKey {
	opts := sc.opts
	set := map[tpKey]bool{}
	add := func(t string, p int32) { set[tpKey{t, p}] = true }
	switch {
	case opts.Spec.Kind == ToGroup:
		sc.toGroupParts(gp, add)
	case opts.AllTopics:
		for _, e := range gp.file.Entries() {
			add(e.Topic, e.Partition)
		}
		if len(set) == 0 {
			gp.Skipped = fmt.Sprintf("group '%s' has no committed offsets, so --all-topics covers nothing (name partitions with --topic to give it some)", volume.DisplayName(gp.Group))
		}
	case len(opts.Scopes) > 0:
		for _, s := range opts.Scopes {
			for _, p := range sc.scopedParts(gp, s) {
				add(s.Topic, p)
			}
		}
	case opts.Spec.Kind == FromFile:
		for _, r := range opts.Spec.File.ForGroup(gp.Group) {
			add(r.Topic, r.Partition)
		}
		if len(set) == 0 {
			gp.Skipped = fmt.Sprintf("No reset plan for group %s found", volume.DisplayName(gp.Group))
		}
	}
	keys := make([]tpKey, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b tpKey) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.part) - int(b.part)
	})
	return keys
}

// toGroupParts adds the source group's partitions (--to-group), narrowed
// by the scopes; a topic the source has no offsets for is an error.
func (sc *scoper) toGroupParts(gp *GroupPlan, add func(string, int32)) {
	opts := sc.opts
	src := opts.Spec.File.Rows
	if opts.AllTopics {
		for _, r := range src {
			add(r.Topic, r.Partition)
		}
	}
	for _, s := range opts.Scopes {
		if s.Partitions != nil {
			for _, p := range s.Partitions {
				add(s.Topic, p)
			}
			continue
		}
		n := 0
		for _, r := range src {
			if r.Topic == s.Topic {
				add(r.Topic, r.Partition)
				n++
			}
		}
		if n == 0 {
			gp.Error = fmt.Sprintf("--to-group: group '%s' has no committed offsets for topic %s", volume.DisplayName(opts.Spec.Source), s.Topic)
		}
	}
}

// scopedParts is the partitions one --topic scope covers for gp: those it
// names; for a whole topic, the group's own when deleting (nothing to
// delete is a warning), else the topic's plus the file's (a deleted
// topic's offsets, partitions without a manifest). A topic the brokers do
// not know, or without partitions, is the plan's error.
func (sc *scoper) scopedParts(gp *GroupPlan, s TopicScope) []int32 {
	if sc.in.Client != nil {
		if tm := sc.liveTopics[s.Topic]; tm == nil || tm.Err != "" {
			why := "does not exist"
			if tm != nil {
				why = tm.Err
			}
			if !sc.opts.Delete {
				gp.Error = fmt.Sprintf("topic %s: %s", s.Topic, why)
			}
		}
	}
	ps := s.Partitions
	if ps != nil {
		return ps
	}
	if !sc.opts.Delete {
		ps = sc.topicParts[s.Topic]
	}
	for _, e := range gp.file.Entries() {
		if e.Topic == s.Topic && !slices.Contains(ps, e.Partition) {
			ps = append(ps, e.Partition)
		}
	}
	switch {
	case len(ps) > 0:
	case sc.opts.Delete:
		gp.Warnings = append(gp.Warnings, fmt.Sprintf("no committed offsets for topic %s: nothing to delete", s.Topic))
	case gp.Error != "":
	case sc.in.Client != nil:
		gp.Error = fmt.Sprintf("topic %s has no partitions", s.Topic)
	default:
		gp.Error = fmt.Sprintf("topic %s: the partitions are unknown offline (no partition dir in the data dir and no committed offsets): name them with --topic %s:0,1,...", s.Topic, s.Topic)
	}
	return ps
}

// Blocked reports whether the group may not be written: an error always,
// a refusal unless forced.
func (gp *GroupPlan) Blocked(force bool) bool {
	return gp.Error != "" || (gp.Refused != "" && !force)
}

// FullSet is what a write of this plan puts in the file: every partition of
// the file, with the plan's changes applied.
func (gp *GroupPlan) FullSet() []volume.OffsetEntry {
	drop := map[tpKey]bool{}
	var set []PlanRow
	for _, r := range gp.Rows {
		if r.Delete {
			drop[tpKey{r.Topic, r.Partition}] = true
			continue
		}
		set = append(set, r.PlanRow)
	}
	return MergeEntries(gp.file.Entries(), set, drop)
}

// Changes reports whether executing the plan changes anything.
func (gp *GroupPlan) Changes() bool {
	if gp.Remove {
		return true
	}
	for _, r := range gp.Rows {
		if r.Changed {
			return true
		}
	}
	return gp.PlainMap
}

// CheckUnchanged aborts when the file changed since it was planned.
func (gp *GroupPlan) CheckUnchanged() error {
	now, err := readState(gp.Path, gp.pol.FollowSymlinks)
	if err != nil {
		return fmt.Errorf("%s: re-reading before the write: %w", gp.Path, err)
	}
	if !now.Same(gp.file.State) {
		return fmt.Errorf("%s: %w", gp.Path, ErrConcurrentWrite)
	}
	return nil
}

// ExecuteCommit commits the full set to the group's coordinator (kadm
// finds it), then re-reads the file and fetches the offsets back over the
// wire, and records every partition's result. Every failure counts in
// gp.Failed.
func ExecuteCommit(ctx context.Context, cl *wire.Client, gp *GroupPlan) {
	gp.Executed, gp.Method = true, "commit"
	full := gp.FullSet()
	if err := gp.CheckUnchanged(); err != nil {
		gp.failAll(err.Error())
		return
	}
	commitErr, err := commitFullSet(ctx, cl, gp.Group, full)
	if err != nil {
		gp.failAll("commit: " + commitErrText(err))
		return
	}
	v := verifyFile(gp.Path, full, gp.pol.FollowSymlinks)
	// Over the wire: what the coordinator now answers.
	want := wire.TopicPartitions{}
	for _, r := range gp.Rows {
		want.Add(r.Topic, r.Partition)
	}
	coords, cerr := cl.FindCoordinators(ctx, []string{gp.Group}, false)
	var fetched wire.GroupOffsets
	if cerr == nil {
		fetched = cl.FetchCommitted(ctx, map[string]wire.TopicPartitions{gp.Group: want}, coords)[gp.Group]
	}
	for i := range gp.Rows {
		r := &gp.Rows[i]
		k := tpKey{r.Topic, r.Partition}
		switch {
		case commitErr[k] != "":
			r.Result, r.Detail = ResultFailed, commitErr[k]
		case v.MismatchOf(r.Topic, r.Partition) != "":
			r.Result, r.Detail = ResultMismatch, v.MismatchOf(r.Topic, r.Partition)
		default:
			r.Result, r.Detail = fetchedResult(r, fetched, cerr)
		}
		if r.Result != ResultOK {
			gp.Failed++
		}
	}
	gp.finishKept(v, commitErr)
}

// commitFullSet commits full as group's offsets in one OffsetCommit and
// returns each partition's error; err is the request's own.
func commitFullSet(ctx context.Context, cl *wire.Client, group string, full []volume.OffsetEntry) (map[tpKey]string, error) {
	os := kadm.Offsets{}
	for _, e := range full {
		os.Add(kadm.Offset{Topic: e.Topic, Partition: e.Partition, At: e.Offset, LeaderEpoch: -1, Metadata: e.Metadata})
	}
	cctx, cancel := cl.WithTimeout(ctx)
	resp, err := cl.Adm.CommitOffsets(cctx, group, os)
	cancel()
	if err != nil {
		return nil, err
	}
	commitErr := map[tpKey]string{}
	for t, ps := range resp {
		for p, r := range ps {
			if r.Err != nil {
				commitErr[tpKey{t, p}] = commitErrText(r.Err)
			}
		}
	}
	return commitErr, nil
}

// fetchedResult is the result of a row whose file was verified, with what
// OffsetFetch answered for it: a mismatch when the coordinator holds
// another offset, otherwise OK with what could be checked over the wire.
func fetchedResult(r *ResetRow, fetched wire.GroupOffsets, cerr error) (result, detail string) {
	const verified = "file verified"
	switch {
	case cerr != nil:
		return ResultOK, verified + "; OffsetFetch not checked: " + cerr.Error()
	case fetched.Err != "":
		return ResultOK, verified + "; OffsetFetch: " + fetched.Err
	}
	c, ok := fetched.Offsets[r.Topic][r.Partition]
	switch {
	case !ok || c.Err != "":
		return ResultOK, verified + "; OffsetFetch: no answer for this partition " + c.Err
	case c.Offset != r.New:
		return ResultMismatch, fmt.Sprintf("file verified, but OffsetFetch answers %d", c.Offset)
	default:
		return ResultOK, verified + " and OffsetFetch"
	}
}

// WriteFile rewrites the group's file with the full set (offline resets,
// and every offsets delete): backup beside the file, unique temp, fsync,
// rename, fsync of the directory, aborting if the file changed since it
// was read; then re-reads and verifies it.
func WriteFile(gp *GroupPlan, now func() time.Time) {
	if gp.Remove {
		removeFile(gp, now)
		return
	}
	gp.Executed, gp.Method = true, "file"
	full := gp.FullSet()
	st := gp.file.State
	res, err := WriteFileAtomic(gp.Path, EncodeEnvelope(full), WriteOptions{Expect: &st, Backup: true, Now: now, Root: gp.root, Policy: gp.pol, afterStep: writeFileHook})
	gp.Backup = res.Backup
	if len(res.StaleTemps) > 0 {
		gp.Warnings = append(gp.Warnings, fmt.Sprintf("removed %d temp file(s) an interrupted kaasctl left in %s: %s", len(res.StaleTemps), filepath.Dir(gp.Path), strings.Join(res.StaleTemps, ", ")))
	}
	if err != nil {
		gp.failAll(err.Error())
		return
	}
	v := verifyFile(gp.Path, full, gp.pol.FollowSymlinks)
	for i := range gp.Rows {
		r := &gp.Rows[i]
		if r.Delete {
			if slices.Contains(v.Extra, r.Topic+"/"+strconv.Itoa(int(r.Partition))) {
				r.Result, r.Detail = ResultMismatch, "still in the file"
			} else if v.Err != nil {
				r.Result, r.Detail = ResultMismatch, v.Err.Error()
			} else {
				r.Result, r.Detail = ResultOK, "not in the file"
			}
		} else if m := v.MismatchOf(r.Topic, r.Partition); m != "" {
			r.Result, r.Detail = ResultMismatch, m
		} else {
			r.Result, r.Detail = ResultOK, "file verified"
		}
		if r.Result != ResultOK {
			gp.Failed++
		}
	}
	gp.finishKept(v, nil)
}

// writeFileHook, in tests, runs after each step of WriteFile's write.
var writeFileHook func(step string) error

// finishKept checks the partitions outside the plan.
func (gp *GroupPlan) finishKept(v Verification, commitErr map[tpKey]string) {
	inPlan := map[tpKey]bool{}
	for _, r := range gp.Rows {
		inPlan[tpKey{r.Topic, r.Partition}] = true
	}
	var bad []string
	for _, e := range gp.file.Entries() {
		k := tpKey{e.Topic, e.Partition}
		if inPlan[k] {
			continue
		}
		if m := commitErr[k]; m != "" {
			bad = append(bad, fmt.Sprintf("%s/%d: %s", e.Topic, e.Partition, m))
		} else if m := v.MismatchOf(e.Topic, e.Partition); m != "" {
			bad = append(bad, fmt.Sprintf("%s/%d: %s", e.Topic, e.Partition, m))
		}
	}
	if len(bad) > 0 {
		gp.Failed += len(bad)
		gp.Warnings = append(gp.Warnings, fmt.Sprintf("%d partitions outside the plan did not verify: %s", len(bad), strings.Join(bad, "; ")))
	}
	var extra []string
	for _, x := range v.Extra {
		t, p, err := volume.SplitOffsetKey(x)
		if err == nil && inPlan[tpKey{t, p}] {
			continue // a deleted row still present: already a row failure
		}
		extra = append(extra, x)
	}
	if len(extra) > 0 {
		gp.Warnings = append(gp.Warnings, fmt.Sprintf("the file now also holds %s, which kaasctl did not write: a broker's cached offsets came back with the commit", strings.Join(extra, ", ")))
	}
}

func (gp *GroupPlan) failAll(why string) {
	for i := range gp.Rows {
		gp.Rows[i].Result, gp.Rows[i].Detail = ResultFailed, why
	}
	gp.Failed += len(gp.Rows)
	if len(gp.Rows) == 0 {
		gp.Failed++
	}
	gp.Warnings = append(gp.Warnings, why)
}

// commitErrText turns a commit error into words an operator can act on.
func commitErrText(err error) string {
	switch {
	case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.RebalanceInProgress), errors.Is(err, kerr.FencedInstanceID):
		return notEmptyGroup + ": " + err.Error()
	case errors.Is(err, kerr.NotCoordinator), errors.Is(err, kerr.CoordinatorNotAvailable):
		return "the group's coordinator moved or is down: " + err.Error()
	}
	return err.Error()
}

// volumePartitions lists, once per topic, the partition dirs the data dir
// holds for it (DATA/<topic>/<partition>/, where kaas keeps a partition's
// log and manifest).
type volumePartitions struct {
	l      volume.Layout
	topics map[string]map[int32]bool // nil: the topic has no dir here
}

const (
	partPresent = iota
	partAbsent  // the topic's dir is here and does not hold the partition
	partUnknown // no dir for the topic in this data dir (another pool dir, a deleted topic): nothing to check against
)

func (vp volumePartitions) holds(topic string, part int32) (int, string) {
	pd := vp.l.PartitionDir(topic, 0)
	if pd == "" || vp.l.DataDir == "" {
		return partUnknown, ""
	}
	dir := filepath.Dir(pd)
	parts, ok := vp.topics[topic]
	if !ok {
		// The topic's partition dirs in the data dir and every pool dir.
		if ps := volume.TopicPartitionDirs(vp.l, topic); len(ps) > 0 {
			parts = map[int32]bool{}
			for _, p := range ps {
				parts[p] = true
			}
		}
		vp.topics[topic] = parts
	}
	switch {
	case parts == nil || len(parts) == 0:
		return partUnknown, dir
	case parts[part]:
		return partPresent, dir
	}
	return partAbsent, dir
}

// describe says which partitions the topic's dir holds ("0-3", or a count
// and the range when they are not contiguous).
func (vp volumePartitions) describe(topic, dir string) string {
	ps := make([]int32, 0, len(vp.topics[topic]))
	for p := range vp.topics[topic] {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	held := fmt.Sprintf("partitions %d-%d", ps[0], ps[len(ps)-1])
	if len(ps) == 1 {
		held = fmt.Sprintf("partition %d only", ps[0])
	} else if int(ps[len(ps)-1]-ps[0])+1 != len(ps) {
		held = fmt.Sprintf("%d partitions between %d and %d", len(ps), ps[0], ps[len(ps)-1])
	}
	return fmt.Sprintf("%s holds %s of %s (online, the brokers refuse a partition that does not exist; %s)", dir, held, topic, vp.l.PoolNote())
}

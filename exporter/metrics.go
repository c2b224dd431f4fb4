package exporter

import (
	"cmp"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/observe"
)

// Metric families. Names follow Prometheus conventions: the kaas_ prefix,
// base units (seconds), _total for counters, _info for info metrics.
// Lag in messages has no unit suffix (offsets are counts).
var (
	dAssignmentVersion   = fam(gaugeType, "kaas_assignment_version", "assignmentVersion of CD/assignment.json as last read.")
	dControllerEpoch     = fam(gaugeType, "kaas_assignment_controller_epoch", "controllerEpoch of CD/assignment.json as last read.")
	dAssignmentGenerated = fam(gaugeType, "kaas_assignment_generated_timestamp_seconds", "generatedAt of CD/assignment.json (Unix seconds).")
	dAssignmentReadable  = fam(gaugeType, "kaas_assignment_readable", "1 when CD/assignment.json could be read and parsed at the last refresh, else 0.")
	dAssignmentVersions  = fam(counterType, "kaas_assignment_versions_seen_total", "New versions of CD/assignment.json seen by the watch (fsnotify plus polling) since the exporter started.")
	dVersionsMissed      = fam(counterType, "kaas_assignment_versions_missed_total", "Versions of CD/assignment.json written and replaced before the watch read them, since the exporter started: versions are consecutive (one counter across controller epochs), so a jump from v6 to v8 is v7 missed, and a coordinator a group had only in v7 is not counted in kaas_coordinator_moves_total.")
	dVersionsBackwards   = fam(counterType, "kaas_assignment_versions_backwards_total", "Versions of CD/assignment.json the watch read that were older than the newest it had seen (a lower epoch, or a lower version in the same epoch: a stale controller, a restored file), since the exporter started: kaas's brokers never apply them, so no coordinator move is counted for them and the newest stays the one the next version is compared with.")
	dBrokersListed       = fam(gaugeType, "kaas_assignment_brokers_listed", "Brokers in brokers[] of CD/assignment.json.")
	dBrokersAlive        = fam(gaugeType, "kaas_assignment_brokers_alive", "Brokers in brokers[] of CD/assignment.json with health alive.")
	dExplicitEntries     = fam(gaugeType, "kaas_assignment_explicit_entries", "Explicit consumerGroups[] entries in CD/assignment.json.")
	dMoves               = fam(counterType, "kaas_coordinator_moves_total", "Group coordinator changes between consecutive versions of CD/assignment.json, by cause (the causes of 'kaasctl assignment diff').", "cause")
	dFindings            = fam(gaugeType, "kaas_volume_findings", "Volume findings at the last refresh (assignment.json, offsets dirs, every offset file), by severity and code.", "severity", "code")
	dGeneration          = fam(gaugeType, "kaas_volume_generation_info", "The kaas generation the exporter assumes for the volume (which offsets dir is live, what a plain-map file means): generation (go, 0.2.16, 0.2.18 or unknown) and source (detected, pinned or undetermined). Always 1.", "generation", "source")
	dBrokerUp            = fam(gaugeType, "kaas_broker_up", "1 when the broker is listed alive in CD/assignment.json (with a volume) and answered ListGroups (with brokers); 0 for a broker seen since the exporter started that is now missing or silent, and for a --brokers address that neither brokers[] nor the metadata lists and that does not answer (kaas drops a dead broker from both: one down when the exporter started is known from it alone; broker is the id its host names, else the address).", "broker")
	dBrokerListedAlive   = fam(gaugeType, "kaas_broker_assignment_alive", "1 when CD/assignment.json lists the broker with health alive, else 0 (with a volume).", "broker")
	dBrokerReachable     = fam(gaugeType, "kaas_broker_reachable", "1 when the broker answered ListGroups at the last refresh, else 0 (with brokers).", "broker")
	dBrokerGroups        = fam(gaugeType, "kaas_broker_listed_groups", "Groups the broker listed in its ListGroups answer (kaas lists what it holds in memory).", "broker")
	dPartitionIncidents  = fam(gaugeType, "kaas_partition_incident_groups", "Groups in which the read model finds an incident on the partition (incident: committedPastServedEnd, committedPastLogEnd, committedBelowLogStart, servedBehindLog, logWrittenTwice, servedNotFiled, fileCoordinatorDisagree, fileReadsEmpty); present while it holds.", "topic", "partition", "incident")
	dServedBehind        = fam(gaugeType, "kaas_partition_served_behind_log_records", "Records the partition's segment files held, read before the brokers were asked, past the log end its leader then served (with a volume and brokers; partitions an offset file names): a stale high watermark, which consumers cannot fetch past and under which every group's lag on the partition reads low (kaas's Go broker after a takeover at the epoch its manifest already held). Present while the cause holds (on Go until a takeover at a new epoch re-scans the segments), also after producers appended past what the segments held: then 0, and the offsets written twice are kaas_partition_incident_groups{incident=\"logWrittenTwice\"}.", "topic", "partition")

	dGroupState       = fam(gaugeType, "kaas_group_state", "The group's state on its coordinator (DescribeGroups), 1 for the current state.", "group", "state")
	dGroupMembers     = fam(gaugeType, "kaas_group_members", "Members of the group on its coordinator.", "group")
	dGroupCoordinator = fam(gaugeType, "kaas_group_coordinator_info", "The group's coordinator: broker (from the volume's two tiers; FindCoordinator, with tier wire, when there is no readable assignment.json), tier (explicit or hash), hash_broker (what the hash tier alone says), explicit_broker (the winning consumerGroups[] entry) and wire_broker (FindCoordinator).", "group", "broker", "tier", "hash_broker", "explicit_broker", "wire_broker")
	dTiersDisagree    = fam(gaugeType, "kaas_group_tiers_disagree", "1 while the group's explicit entry names another broker than the hash tier (retiring the entry moves the group); absent otherwise. Normal under kaas's rendezvous placement of entries: no alert reads it.", "group")
	dWireMismatch     = fam(gaugeType, "kaas_group_wire_mismatch", "1 while FindCoordinator names another broker than the volume's assignment.json; absent otherwise.", "group")
	dStaleListings    = fam(gaugeType, "kaas_group_stale_listings", "Brokers listing the group without coordinating it (a stale in-memory group: the deleted-group-reappears symptom); absent when none does.", "group")
	dFileOnly         = fam(gaugeType, "kaas_group_file_only", "1 while the group has committed offsets on the volume but its coordinator does not hold it; absent otherwise.", "group")
	dGroupLag         = fam(gaugeType, "kaas_group_lag", "Total lag of the group in messages (log end minus the committed offset a consumer resumes from, summed over partitions with a known lag; kaas_group_lag_unknown_partitions counts those it leaves out).", "group")
	dGroupLagUnknown  = fam(gaugeType, "kaas_group_lag_unknown_partitions", "Partitions of the group whose lag is unknown and which kaas_group_lag leaves out: no committed offset a consumer would get (it starts per auto.offset.reset: a partial rewrite of the offset file, a plain map 0.2.18 reads as empty), or no log end (the leader did not answer, the segments could not be read); absent when none.", "group")
	dGroupLagSeconds  = fam(gaugeType, "kaas_group_lag_seconds", "Largest partition lag of the group in seconds: the age of the record at the committed offset.", "group")
	dPartCommitted    = fam(gaugeType, "kaas_group_partition_committed_offset", "The committed offset a consumer of the group resumes from on the partition: the coordinator's while it holds the group, else the offset file's, which a joining consumer's coordinator loads (absent when there is none it would get).", "group", "topic", "partition")
	dPartLag          = fam(gaugeType, "kaas_group_partition_lag", "Lag of the group on the partition in messages.", "group", "topic", "partition")
	dPartLagSeconds   = fam(gaugeType, "kaas_group_partition_lag_seconds", "Age of the record at the group's committed offset on the partition, in seconds (0 when caught up).", "group", "topic", "partition")
	dHealth           = fam(gaugeType, "kaas_group_health", "The group's worst health condition over the window (kaasctl groups health), always 1; present only while it is not OK. Alert on kaas_group_condition: a worse condition hides the others here.", "group", "state")
	dCondition        = fam(gaugeType, "kaas_group_condition", "One series per active health condition of the group (REWIND, VANISHED, ERR, BLOCKED, STOP, STALL, WARN), always 1; absent while the condition is not. During ERR (the group cannot be observed) the conditions last known stay, see kaas_group_unknown_since_timestamp_seconds.", "group", "condition")
	dBlocked          = fam(gaugeType, "kaas_group_blocked_partitions", "Partitions of the group whose committed offset stayed since the refresh before while they lag, behind a blocker the read model names (kind: markersPending, abortedWithoutMarkers, markerMissing, overdueTransaction, openTransaction, corruptBatch, record; 'kaasctl groups describe GROUP --why' gives its evidence and fix); present only while one is (with a volume: the record at the committed offset is read from the segments).", "group", "kind")
	dUnknownSince     = fam(gaugeType, "kaas_group_unknown_since_timestamp_seconds", "Present while the group cannot be observed (ERR: the brokers or its coordinator did not answer): since when (Unix seconds). Its other kaas_group_condition series are the last known, carried through the outage.", "group")
	dDrainSeconds     = fam(gaugeType, "kaas_group_drain_seconds", "Estimated seconds until the group's lag is zero: its lag over the excess of its consume rate over its produce rate (each partition's fitted over the health window, summed: a consumer serving partitions in turns drains at group level); 0 when caught up or keeping up (a lag of at most 30 s of production, consumed about as fast as produced). Absent with fewer than 3 observations or while not draining (kaas_group_not_draining).", "group")
	dNotDraining      = fam(gaugeType, "kaas_group_not_draining", "1 while the group has lag and is not consumed faster than it is produced to over the health window (summed over its partitions), and its lag is more than a small steady one (30 s of production); absent while it drains, keeps up or is caught up (kaas_group_drain_seconds is then present) and with fewer than 3 observations.", "group")
	dPartDrainSeconds = fam(gaugeType, "kaas_group_partition_drain_seconds", "Estimated seconds until the group's lag on the partition is zero (see kaas_group_drain_seconds).", "group", "topic", "partition")
	dPartNotDraining  = fam(gaugeType, "kaas_group_partition_not_draining", "1 while the partition has lag and is not consumed faster than it is produced to over the health window, and its lag is more than 30 s of its production; absent otherwise. One partition can stand still while its group drains (a consumer serving partitions in turns): the group's kaas_group_not_draining is what alerts.", "group", "topic", "partition")
	dRetentionBreach  = fam(gaugeType, "kaas_group_retention_breach_seconds", "Seconds until the log start passes the group's committed offset on its soonest lagging partition (records deleted before the group reads them), from the log start's advance over the health window (kaas moves it only on DeleteRecords; it does not enforce retention.ms); 0 when it already did. Absent while no log start advances toward a lagging committed offset.", "group")
	dLastCommitAge    = fam(gaugeType, "kaas_group_last_commit_age_seconds", "Seconds since the group last committed: the offset file's modification time (kaas rewrites it on every commit), else the last refresh at which a committed offset moved within the window; absent when neither tells.", "group")
	dRewinds          = fam(counterType, "kaas_group_offset_rewinds_total", "Committed offsets of the group seen moving backwards (a reset, or an unfenced stale commit) since the exporter started; the series appears at the first one (alert on kaas_group_condition).", "group")
	dVanished         = fam(counterType, "kaas_group_vanished_partitions_total", "Partitions seen disappearing from the group's offset file (a partial rewrite) since the exporter started; the series appears at the first one (alert on kaas_group_condition).", "group")

	dBuildInfo      = fam(gaugeType, "kaas_exporter_build_info", "kaasctl build information.", "version", "revision", "goversion")
	dRefreshes      = fam(counterType, "kaas_exporter_refreshes_total", "Refreshes since the exporter started.")
	dLastRefresh    = fam(gaugeType, "kaas_exporter_last_refresh_timestamp_seconds", "When the last refresh finished (Unix seconds).")
	dLastSuccess    = fam(gaugeType, "kaas_exporter_last_successful_refresh_timestamp_seconds", "When the last refresh that read assignment.json (with a volume) and reached the brokers (with brokers) finished (Unix seconds); 0 before the first.")
	dInterval       = fam(gaugeType, "kaas_exporter_refresh_interval_seconds", "The exporter's --interval: alert rules count missed refreshes in it.")
	dLastDuration   = fam(gaugeType, "kaas_exporter_last_refresh_duration_seconds", "How long the last refresh took.")
	dBrokerErrors   = fam(counterType, "kaas_exporter_broker_errors_total", "Refreshes in which the broker did not answer ListGroups.", "broker")
	dBrokerRequests = fam(counterType, "kaas_exporter_broker_requests_total", "Requests the exporter sent to each broker (seed connections are labelled seed).", "broker")
	dGroupsObserved = fam(gaugeType, "kaas_exporter_groups", "Groups observed at the last refresh (after --group-regex and --max-groups).")
	dGroupsDropped  = fam(gaugeType, "kaas_exporter_groups_dropped", "Groups matching --group-regex left out by --max-groups at the last refresh.")
	dGroupsInvalid  = fam(gaugeType, "kaas_exporter_groups_invalid_utf8", "Groups observed at the last refresh whose id is not valid UTF-8: their group label has U+FFFD for each invalid byte and group_base64 holds the exact id.")
	dProbes         = fam(counterType, "kaas_exporter_lag_seconds_probes_total", "Record timestamps fetched for lag in seconds (cache misses) since the exporter started.")
	dFollowing      = fam(gaugeType, "kaas_exporter_offsets_following", "1 while the offsets follower follows the live offsets dir (rewinds and vanished partitions are seen as each file changes), 0 when it is off or not running (they are compared between refreshes).")
	dOffsetChanges  = fam(counterType, "kaas_exporter_offset_file_changes_total", "Changes of offset files the offsets follower saw (commits, rewrites, removals) since the exporter started.")
	dJournalRecords = fam(counterType, "kaas_exporter_journal_records_total", "Offset file changes recorded in the offsets journal (--journal) since the exporter started.")
	dJournalErrors  = fam(counterType, "kaas_exporter_journal_errors_total", "Batches of offset file changes the offsets journal (--journal) could not record.")
)

// invalidIDs lists the observed group ids that are not valid UTF-8.
func invalidIDs(o *observe.Observation) []string {
	var out []string
	for i := range o.Groups {
		if g := o.Groups[i].Row.Group; !utf8.ValidString(g) {
			out = append(out, g)
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// counters are the exporter's cumulative state, copied into each snapshot.
type counters struct {
	moves          map[inspect.Cause]int64
	versionsSeen   int64
	versionsMissed int64
	// versionsBackwards counts versions older than the newest seen.
	versionsBackwards int64
	refreshes         int64
	probes            int64
	brokerErrors      map[string]int64
	brokersSeen       map[string]bool
	brokerRequests    map[string]int64
	// seedOnly are the brokers known from a --brokers address alone (not
	// listed, not in the metadata, not answering): forgotten once their
	// address answers or a listed broker has it.
	seedOnly map[string]bool
	// lastSuccess is when the last successful refresh ended (Unix
	// seconds, see Successful); interval is --interval.
	lastSuccess float64
	interval    time.Duration
	// textSizes sizes the next refresh's exposition buffers.
	textSizes []int
	// The offsets follower (when configured) and its journal.
	follower, following, journal  bool
	offsetChanges                 int64
	journalRecords, journalErrors int64
	// shard is the exporter's --shard (nil: not sharded; shard.go).
	shard *inspect.Shard
	// members are the membership's (metrics_members.go).
	members memberCounters
}

// forgetAnsweredSeeds drops from the brokers seen those known from a
// --brokers address alone that this refresh (one that asked the brokers)
// no longer finds down: their address answers now, as the broker the
// metadata names, so the address's series would stay 0 for nothing.
func forgetAnsweredSeeds(o *observe.Observation, c *counters) {
	if !o.HasBrokers || o.WireErr != "" {
		return
	}
	down := map[string]bool{}
	for _, b := range o.Brokers {
		if b.Seed {
			down[b.Name] = true
			if c.seedOnly == nil {
				c.seedOnly = map[string]bool{}
			}
			c.seedOnly[b.Name] = true
		}
	}
	for name := range c.seedOnly {
		if !down[name] {
			delete(c.seedOnly, name)
			delete(c.brokersSeen, name)
			delete(c.brokerErrors, name)
		}
	}
}

// refreshCtx is what the metric rows read of one refresh.
type refreshCtx struct {
	o                 *observe.Observation
	c                 *counters
	partitionMetrics  bool
	version, revision string
	// The brokers: alive in assignment.json, answered ListGroups, and
	// every broker seen since the start, sorted.
	listedAlive, reach map[string]bool
	seen               []string
}

// groupCtx is one group of the refresh.
type groupCtx struct {
	*refreshCtx
	g      *observe.GroupObs
	h      *inspect.GroupHealth
	counts inspect.HealthCounts
}

// metric is one row of a metrics table: a family and how a refresh (or
// one group of it) writes its samples. A new series is one row.
type metric[X any] struct {
	f    *family
	emit func(tw *textWriter, f *family, x X)
}

// buildText writes the metrics of one refresh, each family's samples
// together: the refresh rows once, the group rows for every group.
func buildText(o *observe.Observation, health []inspect.GroupHealth, counts []inspect.HealthCounts, c *counters, partitionMetrics bool, version, revision string) *textWriter {
	b := newPageBuilder(o, c, partitionMetrics, version, revision)
	b.groups(o.Groups, health, counts)
	return b.done()
}

// pageBuilder writes one refresh's page: the refresh rows when it starts,
// the group rows as each chunk of groups is evaluated (each family keeps
// its own samples, so the page's order does not depend on the chunks').
type pageBuilder struct {
	tw *textWriter
	gx groupCtx
}

func newPageBuilder(o *observe.Observation, c *counters, partitionMetrics bool, version, revision string) *pageBuilder {
	x := &refreshCtx{o: o, c: c, partitionMetrics: partitionMetrics, version: version, revision: revision}
	b := &pageBuilder{tw: newTextWriter(c.textSizes), gx: groupCtx{refreshCtx: x}}
	x.noteBrokers()
	for _, m := range refreshMetrics {
		if !c.leavesOut(m.f) {
			m.emit(b.tw, m.f, x)
		}
	}
	return b
}

// groups writes the group rows of groups, whose health and counts are
// given (same lengths).
func (b *pageBuilder) groups(groups []observe.GroupObs, health []inspect.GroupHealth, counts []inspect.HealthCounts) {
	gx := &b.gx
	for i := range groups {
		gx.g, gx.h, gx.counts = &groups[i], &health[i], counts[i]
		for _, m := range groupMetrics {
			m.emit(b.tw, m.f, gx)
		}
	}
}

// done is the text written; the next refresh's buffers are sized from it.
func (b *pageBuilder) done() *textWriter {
	b.gx.c.textSizes = b.tw.sizes()
	return b.tw
}

// page is the page compressed.
func (b *pageBuilder) page() zpage { return b.done().page() }

// noteBrokers records the brokers this refresh saw (every broker seen
// since the start stays in the series).
func (x *refreshCtx) noteBrokers() {
	forgetAnsweredSeeds(x.o, x.c)
	x.listedAlive, x.reach = map[string]bool{}, map[string]bool{}
	if a := x.o.Assignment; a != nil {
		for _, b := range a.Brokers {
			x.listedAlive[b.ID] = b.Health == grouphash.HealthAlive
			x.c.brokersSeen[b.ID] = true
		}
	}
	for _, b := range x.o.Brokers {
		x.reach[b.Name] = b.Answered
		x.c.brokersSeen[b.Name] = true
		if !b.Answered {
			x.c.brokerErrors[b.Name]++
		}
	}
	x.seen = slices.Sorted(maps.Keys(x.c.brokersSeen))
}

// hasAssignment: a volume whose assignment.json was read.
func (x *refreshCtx) hasAssignment() bool { return x.o.HasVolume && x.o.Assignment != nil }

// refreshMetrics are the series of the cluster, the brokers and the
// exporter itself, written once per refresh, in this order.
var refreshMetrics = slices.Concat(assignmentMetrics, brokerMetrics, exporterMetrics)

// assignmentMetrics are the series of assignment.json and the volume.
var assignmentMetrics = []metric[*refreshCtx]{
	{dAssignmentReadable, func(tw *textWriter, f *family, x *refreshCtx) {
		if x.o.HasVolume {
			tw.sample(f, b2f(x.o.Assignment != nil))
		}
	}},
	{dAssignmentVersions, gaugeWhen(hasVolume, func(c *counters) float64 { return float64(c.versionsSeen) })},
	{dVersionsMissed, gaugeWhen(hasVolume, func(c *counters) float64 { return float64(c.versionsMissed) })},
	{dVersionsBackwards, gaugeWhen(hasVolume, func(c *counters) float64 { return float64(c.versionsBackwards) })},
	{dAssignmentVersion, assignmentGauge(func(a *volume.Assignment) float64 { return float64(a.AssignmentVersion) })},
	{dControllerEpoch, assignmentGauge(func(a *volume.Assignment) float64 { return float64(a.ControllerEpoch) })},
	{dAssignmentGenerated, writeAssignmentGenerated},
	{dBrokersListed, assignmentGauge(func(a *volume.Assignment) float64 { return float64(len(a.Brokers)) })},
	{dBrokersAlive, assignmentGauge(func(a *volume.Assignment) float64 { return float64(a.AliveCount()) })},
	{dExplicitEntries, assignmentGauge(func(a *volume.Assignment) float64 { return float64(len(a.ConsumerGroups)) })},
	{dMoves, func(tw *textWriter, f *family, x *refreshCtx) {
		for _, cause := range inspect.Causes {
			tw.sample(f, float64(x.c.moves[cause]), string(cause))
		}
	}},
	{dFindings, writeFindings},
	{dGeneration, writeGeneration},
}

// writeAssignmentGenerated is assignment.json's generatedAt, when it has one.
func writeAssignmentGenerated(tw *textWriter, f *family, x *refreshCtx) {
	if a := x.o.Assignment; a != nil {
		if t := a.GeneratedTime(); !t.IsZero() {
			tw.sample(f, float64(t.UnixNano())/1e9)
		}
	}
}

// writeGeneration is the kaas generation the refresh assumed.
func writeGeneration(tw *textWriter, f *family, x *refreshCtx) {
	if gi := x.o.Generation; gi != nil {
		name := gi.Name
		if name == "" {
			name = "unknown"
		}
		tw.sample(f, 1, name, gi.Source)
	}
}

// brokerMetrics are the brokers' and the partitions' series.
var brokerMetrics = []metric[*refreshCtx]{
	{dBrokerReachable, writeBrokerReachable},
	{dBrokerGroups, func(tw *textWriter, f *family, x *refreshCtx) {
		for _, b := range x.o.Brokers {
			if b.Answered {
				tw.sample(f, float64(b.Groups), b.Name)
			}
		}
	}},
	{dBrokerUp, func(tw *textWriter, f *family, x *refreshCtx) {
		for _, name := range x.seen {
			up := (!x.hasAssignment() || x.listedAlive[name]) && (!x.o.HasBrokers || x.reach[name])
			tw.sample(f, b2f(up), name)
		}
	}},
	{dBrokerListedAlive, func(tw *textWriter, f *family, x *refreshCtx) {
		if x.hasAssignment() {
			for _, name := range x.seen {
				tw.sample(f, b2f(x.listedAlive[name]), name)
			}
		}
	}},
	{dBrokerErrors, func(tw *textWriter, f *family, x *refreshCtx) {
		if x.o.HasBrokers {
			for _, name := range x.seen {
				tw.sample(f, float64(x.c.brokerErrors[name]), name)
			}
		}
	}},
	{dBrokerRequests, func(tw *textWriter, f *family, x *refreshCtx) {
		for _, name := range slices.Sorted(maps.Keys(x.c.brokerRequests)) {
			tw.sample(f, float64(x.c.brokerRequests[name]), name)
		}
	}},
	{dServedBehind, writeServedBehind},
	{dPartitionIncidents, writePartitionIncidents},
}

// writeBrokerReachable is whether each broker answered, and 0 for a broker
// seen before that this refresh did not reach.
func writeBrokerReachable(tw *textWriter, f *family, x *refreshCtx) {
	for _, b := range x.o.Brokers {
		tw.sample(f, b2f(b.Answered), b.Name)
	}
	for _, name := range x.seen {
		if _, ok := x.reach[name]; !ok && x.o.HasBrokers {
			tw.sample(f, 0, name)
		}
	}
}

// writeServedBehind is the records each partition is served short of what
// its segments held (0 once producers appended past them, while the
// cause stays).
func writeServedBehind(tw *textWriter, f *family, x *refreshCtx) {
	for _, sb := range x.o.ServedBehind {
		if t, p, err := volume.SplitOffsetKey(sb.Partition); err == nil {
			tw.sample(f, float64(max(sb.LogEnd-sb.Served, 0)), t, strconv.Itoa(int(p)))
		}
	}
}

// exporterMetrics are the exporter's own series.
var exporterMetrics = []metric[*refreshCtx]{
	{dBuildInfo, func(tw *textWriter, f *family, x *refreshCtx) {
		tw.sample(f, 1, x.version, x.revision, runtime.Version())
	}},
	{dRefreshes, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, float64(x.c.refreshes)) }},
	{dLastRefresh, func(tw *textWriter, f *family, x *refreshCtx) {
		tw.sample(f, float64(x.o.Time.Add(x.o.Duration).UnixNano())/1e9)
	}},
	{dLastSuccess, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, x.c.lastSuccess) }},
	{dInterval, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, x.c.interval.Seconds()) }},
	{dLastDuration, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, x.o.Duration.Seconds()) }},
	{dGroupsObserved, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, float64(len(x.o.Groups))) }},
	{dGroupsDropped, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, float64(x.o.Dropped)) }},
	{dGroupsInvalid, func(tw *textWriter, f *family, x *refreshCtx) { tw.sample(f, float64(len(invalidIDs(x.o)))) }},
	{dProbes, gaugeWhen(askedBrokers, func(c *counters) float64 { return float64(c.probes) })},
	{dFollowing, gaugeWhen(follows, func(c *counters) float64 { return b2f(c.following) })},
	{dOffsetChanges, gaugeWhen(follows, func(c *counters) float64 { return float64(c.offsetChanges) })},
	{dJournalRecords, gaugeWhen(journals, func(c *counters) float64 { return float64(c.journalRecords) })},
	{dJournalErrors, gaugeWhen(journals, func(c *counters) float64 { return float64(c.journalErrors) })},
	{dRewindPageRecords, emitRewindPage},
	{dChurnRebalances, emitChurnRebalances},
	{dEventsJournalErrs, emitEventsJournalErrors},
}

// gaugeWhen is a row of one of the exporter's own numbers, sampled only
// when the refresh has it (on).
func gaugeWhen(on func(x *refreshCtx) bool, v func(c *counters) float64) func(*textWriter, *family, *refreshCtx) {
	return func(tw *textWriter, f *family, x *refreshCtx) {
		if on(x) {
			tw.sample(f, v(x.c))
		}
	}
}

// gaugeWhen's conditions: the refresh asked the brokers; it read a
// volume; the exporter follows the offset files; it writes the offsets
// journal.
func askedBrokers(x *refreshCtx) bool { return x.o.HasBrokers }
func hasVolume(x *refreshCtx) bool    { return x.o.HasVolume }
func follows(x *refreshCtx) bool      { return x.c.follower }
func journals(x *refreshCtx) bool     { return x.c.journal }

// assignmentGauge is a row of one number read from assignment.json.
func assignmentGauge(v func(a *volume.Assignment) float64) func(*textWriter, *family, *refreshCtx) {
	return func(tw *textWriter, f *family, x *refreshCtx) {
		if a := x.o.Assignment; a != nil {
			tw.sample(f, v(a))
		}
	}
}

// writeFindings counts the refresh's findings by severity and code.
func writeFindings(tw *textWriter, f *family, x *refreshCtx) {
	type sevCode struct{ sev, code string }
	fc := map[sevCode]int{}
	for _, fd := range x.o.Findings {
		fc[sevCode{string(fd.Severity), fd.Code}]++
	}
	keys := slices.SortedFunc(maps.Keys(fc), func(a, b sevCode) int {
		if a.sev != b.sev {
			return inspect.SeverityRank(volume.Severity(a.sev)) - inspect.SeverityRank(volume.Severity(b.sev))
		}
		return strings.Compare(a.code, b.code)
	})
	for _, k := range keys {
		tw.sample(f, float64(fc[k]), k.sev, k.code)
	}
}

// writePartitionIncidents counts, per partition and incident, the groups
// the read model found it in.
func writePartitionIncidents(tw *textWriter, f *family, x *refreshCtx) {
	type key struct {
		topic string
		part  int32
		code  string
	}
	n := map[key]int{}
	for i := range x.o.Groups {
		for _, in := range x.o.Groups[i].Incidents {
			n[key{in.Topic, in.Partition, in.Code}]++
		}
	}
	keys := slices.SortedFunc(maps.Keys(n), func(a, b key) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part), strings.Compare(a.code, b.code))
	})
	for _, k := range keys {
		tw.sample(f, float64(n[k]), k.topic, strconv.Itoa(int(k.part)), k.code)
	}
}

// groupMetrics are the series of one group, written for every group, in
// this order. Issue series are sparse: present only while the issue is (a
// 100,000-group page carries what is wrong, not 0s).
var groupMetrics = slices.Concat(groupStateMetrics, groupHealthMetrics, groupMembershipMetrics)

// groupGauge is a row of one number per group, sampled when ok.
func groupGauge(v func(x *groupCtx) (float64, bool)) func(*textWriter, *family, *groupCtx) {
	return func(tw *textWriter, f *family, x *groupCtx) {
		if n, ok := v(x); ok {
			tw.sample(f, n, x.g.Row.Group)
		}
	}
}

// groupStateMetrics are a group's state, routing and lag.
var groupStateMetrics = []metric[*groupCtx]{
	{dGroupState, func(tw *textWriter, f *family, x *groupCtx) {
		if state, _, ok := x.liveState(); ok && state != "" {
			tw.sample(f, 1, x.g.Row.Group, state)
		}
	}},
	{dGroupMembers, groupGauge(func(x *groupCtx) (float64, bool) {
		_, members, ok := x.liveState()
		return float64(members), ok
	})},
	{dStaleListings, groupGauge(func(x *groupCtx) (float64, bool) {
		if lv := x.g.Row.Live; lv != nil {
			return float64(len(lv.StaleOn)), len(lv.StaleOn) > 0
		}
		return 0, false
	})},
	{dFileOnly, liveIssue(inspect.IssueFileOnly)},
	{dWireMismatch, liveIssue(inspect.IssueWireMismatch)},
	{dGroupCoordinator, writeGroupCoordinator},
	{dTiersDisagree, groupGauge(func(x *groupCtx) (float64, bool) {
		return 1, x.o.HasVolume && x.g.Row.HasIssue(inspect.IssueTiersDisagree)
	})},
	{dGroupLag, groupGauge(func(x *groupCtx) (float64, bool) { return float64(x.g.Lag), x.g.LagKnown })},
	{dGroupLagUnknown, groupGauge(func(x *groupCtx) (float64, bool) { return float64(x.g.LagUnknown), x.g.LagUnknown > 0 })},
	{dGroupLagSeconds, groupGauge(func(x *groupCtx) (float64, bool) { return x.g.LagSeconds, x.g.LagSecondsKnown })},
	{dPartCommitted, partitionRow(func(p *observe.PartObs) (float64, bool) { return float64(p.Committed), p.Committed >= 0 })},
	{dPartLag, partitionRow(func(p *observe.PartObs) (float64, bool) { return float64(p.Lag), p.LagKnown })},
	{dPartLagSeconds, partitionRow(func(p *observe.PartObs) (float64, bool) { return p.LagSeconds, p.LagSecondsKnown })},
}

// writeGroupCoordinator is the group's coordinator by each tier (the
// brokers' answer stands in when there is no assignment.json).
func writeGroupCoordinator(tw *textWriter, f *family, x *groupCtx) {
	r := &x.g.Row
	wireBroker := ""
	if r.Live != nil {
		wireBroker = r.Live.WireCoordinator
	}
	broker, tier := r.Coordinator, r.Tier
	if broker == "" && wireBroker != "" && x.o.Assignment == nil {
		broker, tier = wireBroker, "wire"
	}
	tw.sample(f, 1, r.Group, broker, tier, r.HashCoordinator, r.ExplicitBroker, wireBroker)
}

// writeBlocked is the group's blocked partitions by blocker kind.
func writeBlocked(tw *textWriter, f *family, x *groupCtx) {
	n := map[string]int{}
	for _, b := range x.g.Blockers {
		n[b.Kind]++
	}
	for _, k := range slices.Sorted(maps.Keys(n)) {
		tw.sample(f, float64(n[k]), x.g.Row.Group, k)
	}
}

// groupHealthMetrics are a group's health, drain, retention and commits.
// Per-group counters appear at their first change, as a client library's
// labelled counters do; kaas_group_condition is what alerts use
// (increase() misses a series' first sample).
var groupHealthMetrics = []metric[*groupCtx]{
	{dHealth, func(tw *textWriter, f *family, x *groupCtx) {
		if x.h.State != inspect.HealthOK {
			tw.sample(f, 1, x.g.Row.Group, x.h.State)
		}
	}},
	{dCondition, func(tw *textWriter, f *family, x *groupCtx) {
		for _, c := range x.h.Conditions {
			if c != inspect.HealthOK {
				tw.sample(f, 1, x.g.Row.Group, c)
			}
		}
	}},
	{dBlocked, writeBlocked},
	{dUnknownSince, groupGauge(func(x *groupCtx) (float64, bool) {
		return float64(x.h.UnknownSince.UnixNano()) / 1e9, !x.h.UnknownSince.IsZero()
	})},
	{dDrainSeconds, groupGauge(func(x *groupCtx) (float64, bool) {
		if d := x.h.Drain; d != nil && d.Known && !d.NotDraining {
			return d.Seconds, true
		}
		return 0, false
	})},
	{dNotDraining, groupGauge(func(x *groupCtx) (float64, bool) {
		d := x.h.Drain
		return 1, d != nil && d.Known && d.NotDraining
	})},
	{dPartDrainSeconds, partitionDrainRow(false)},
	{dPartNotDraining, partitionDrainRow(true)},
	{dRetentionBreach, groupGauge(func(x *groupCtx) (float64, bool) {
		if r := x.h.Retention; r != nil && r.Known {
			return r.Seconds, true
		}
		return 0, false
	})},
	{dLastCommitAge, groupGauge(func(x *groupCtx) (float64, bool) {
		return max(0, x.o.Time.Sub(x.h.LastCommit).Seconds()), !x.h.LastCommit.IsZero()
	})},
	{dRewinds, groupGauge(func(x *groupCtx) (float64, bool) { return float64(x.counts.Rewinds), x.counts.Rewinds > 0 })},
	{dVanished, groupGauge(func(x *groupCtx) (float64, bool) { return float64(x.counts.Vanished), x.counts.Vanished > 0 })},
}

// groupMembershipMetrics are a group's membership, rewinds' authors and
// lag spread (metrics_members.go).
var groupMembershipMetrics = []metric[*groupCtx]{
	{dRewindRecords, emitRewindRecords},
	{dStalledPartitions, emitStalled},
	{dObservedGeneration, emitObservedGeneration},
	{dMembershipChanges, emitMembershipChanges},
	{dRebalances, emitRebalances},
	{dLagMaxOverMean, emitLagSpread(false)},
	{dLagCV, emitLagSpread(true)},
	{dProduceMaxOverMean, emitProduceSpread},
	{dHotPartitions, emitHotPartitions},
	{dOwnershipKnown, emitOwnershipKnown},
	{dUnownedLagging, emitUnowned},
	{dIdleMembers, emitIdle},
}

// liveState is the group's state and members on its coordinator (ok:
// the brokers were asked about it).
func (x *groupCtx) liveState() (string, int, bool) {
	lv := x.g.Row.Live
	if lv == nil {
		return "", 0, false
	}
	state, members := lv.State, lv.Members
	if d := x.g.Live; d != nil && d.Err == "" && state == "" {
		// Not listed by its coordinator (kaas lists only what it holds in
		// memory): DescribeGroups still answers.
		state, members = d.State, len(d.Members)
	}
	return state, members, true
}

// liveIssue is a sparse row for a live issue flag of the group.
func liveIssue(flag string) func(*textWriter, *family, *groupCtx) {
	return func(tw *textWriter, f *family, x *groupCtx) {
		if x.g.Row.Live != nil && x.g.Row.HasIssue(flag) {
			tw.sample(f, 1, x.g.Row.Group)
		}
	}
}

// partitionRow is a per-partition row (--partition-metrics): v gives the
// value and whether it is known.
func partitionRow(v func(p *observe.PartObs) (float64, bool)) func(*textWriter, *family, *groupCtx) {
	return func(tw *textWriter, f *family, x *groupCtx) {
		if !x.partitionMetrics {
			return
		}
		for i := range x.g.Partitions {
			p := &x.g.Partitions[i]
			if val, ok := v(p); ok {
				tw.sample(f, val, x.g.Row.Group, p.Topic, strconv.Itoa(int(p.Partition)))
			}
		}
	}
}

// partitionDrainRow is the per-partition drain row: the seconds of those
// draining, or a 1 for those not draining.
func partitionDrainRow(notDraining bool) func(*textWriter, *family, *groupCtx) {
	return func(tw *textWriter, f *family, x *groupCtx) {
		d := x.h.Drain
		if !x.partitionMetrics || d == nil || !d.Known {
			return
		}
		for _, p := range d.Partitions {
			if !p.Known || p.NotDraining != notDraining {
				continue
			}
			t, pn, err := volume.SplitOffsetKey(p.Partition)
			if err != nil {
				continue
			}
			v := p.Seconds
			if notDraining {
				v = 1
			}
			tw.sample(f, v, x.g.Row.Group, t, strconv.Itoa(int(pn)))
		}
	}
}

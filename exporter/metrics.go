package exporter

import (
	"runtime"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
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
	dServedBehind        = fam(gaugeType, "kaas_partition_served_behind_log_records", "Records the partition's segment files held, read before the brokers were asked, past the log end its leader then served (with a volume and brokers; partitions an offset file names): a stale high watermark, which consumers cannot fetch past and under which every group's lag on the partition reads low (kaas's Go broker after a takeover at the epoch its manifest already held). Present only while it is so.", "topic", "partition")

	dGroupState       = fam(gaugeType, "kaas_group_state", "The group's state on its coordinator (DescribeGroups), 1 for the current state.", "group", "state")
	dGroupMembers     = fam(gaugeType, "kaas_group_members", "Members of the group on its coordinator.", "group")
	dGroupCoordinator = fam(gaugeType, "kaas_group_coordinator_info", "The group's coordinator: broker (from the volume's two tiers; FindCoordinator, with tier wire, when there is no readable assignment.json), tier (explicit or hash), hash_broker (what the hash tier alone says), explicit_broker (the winning consumerGroups[] entry) and wire_broker (FindCoordinator).", "group", "broker", "tier", "hash_broker", "explicit_broker", "wire_broker")
	dTiersDisagree    = fam(gaugeType, "kaas_group_tiers_disagree", "1 while the group's explicit entry names another broker than the hash tier (retiring the entry moves the group); absent otherwise. Normal under kaas's rendezvous placement of entries: no alert reads it.", "group")
	dWireMismatch     = fam(gaugeType, "kaas_group_wire_mismatch", "1 while FindCoordinator names another broker than the volume's assignment.json; absent otherwise.", "group")
	dStaleListings    = fam(gaugeType, "kaas_group_stale_listings", "Brokers listing the group without coordinating it (a stale in-memory group: the deleted-group-reappears symptom); absent when none does.", "group")
	dFileOnly         = fam(gaugeType, "kaas_group_file_only", "1 while the group has committed offsets on the volume but its coordinator does not hold it; absent otherwise.", "group")
	dGroupLag         = fam(gaugeType, "kaas_group_lag", "Total lag of the group in messages (log end minus committed offset, summed over partitions with a known lag).", "group")
	dGroupLagSeconds  = fam(gaugeType, "kaas_group_lag_seconds", "Largest partition lag of the group in seconds: the age of the record at the committed offset.", "group")
	dPartCommitted    = fam(gaugeType, "kaas_group_partition_committed_offset", "Committed offset of the group on the partition (the coordinator's, else the offset file's).", "group", "topic", "partition")
	dPartLag          = fam(gaugeType, "kaas_group_partition_lag", "Lag of the group on the partition in messages.", "group", "topic", "partition")
	dPartLagSeconds   = fam(gaugeType, "kaas_group_partition_lag_seconds", "Age of the record at the group's committed offset on the partition, in seconds (0 when caught up).", "group", "topic", "partition")
	dHealth           = fam(gaugeType, "kaas_group_health", "The group's worst health condition over the window (kaasctl groups health), always 1; present only while it is not OK. Alert on kaas_group_condition: a worse condition hides the others here.", "group", "state")
	dCondition        = fam(gaugeType, "kaas_group_condition", "One series per active health condition of the group (REWIND, VANISHED, ERR, STOP, STALL, WARN), always 1; absent while the condition is not. During ERR (the group cannot be observed) the conditions last known stay, see kaas_group_unknown_since_timestamp_seconds.", "group", "condition")
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
func invalidIDs(o *Observation) []string {
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
}

// forgetAnsweredSeeds drops from the brokers seen those known from a
// --brokers address alone that this refresh (one that asked the brokers)
// no longer finds down: their address answers now, as the broker the
// metadata names, so the address's series would stay 0 for nothing.
func forgetAnsweredSeeds(o *Observation, c *counters) {
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

// buildMetrics turns one refresh into the metrics every scrape serves
// until the next refresh (the text; Refresh keeps only its gzip, see
// buildText).
func buildMetrics(o *Observation, health []inspect.GroupHealth, counts []inspect.HealthCounts, c *counters, partitionMetrics bool, version, revision string) []byte {
	return buildText(o, health, counts, c, partitionMetrics, version, revision).bytes()
}

// buildText writes the metrics of one refresh, each family's samples
// together.
func buildText(o *Observation, health []inspect.GroupHealth, counts []inspect.HealthCounts, c *counters, partitionMetrics bool, version, revision string) *textWriter {
	tw := newTextWriter(c.textSizes)
	defer func() { c.textSizes = tw.sizes() }()
	// Samples are added by direct method calls, not through a func value,
	// so their label values stay on the stack (200,000 samples at 100,000
	// groups).
	add := func(struct{}) {}

	// Cluster.
	if o.HasVolume {
		add(tw.sample(dAssignmentReadable, b2f(o.Assignment != nil)))
		add(tw.sample(dAssignmentVersions, float64(c.versionsSeen)))
		add(tw.sample(dVersionsMissed, float64(c.versionsMissed)))
		add(tw.sample(dVersionsBackwards, float64(c.versionsBackwards)))
	}
	if a := o.Assignment; a != nil {
		add(tw.sample(dAssignmentVersion, float64(a.AssignmentVersion)))
		add(tw.sample(dControllerEpoch, float64(a.ControllerEpoch)))
		if t := a.GeneratedTime(); !t.IsZero() {
			add(tw.sample(dAssignmentGenerated, float64(t.UnixNano())/1e9))
		}
		alive := 0
		for _, b := range a.Brokers {
			if b.Health == "alive" {
				alive++
			}
		}
		add(tw.sample(dBrokersListed, float64(len(a.Brokers))))
		add(tw.sample(dBrokersAlive, float64(alive)))
		add(tw.sample(dExplicitEntries, float64(len(a.ConsumerGroups))))
	}
	for _, cause := range inspect.Causes {
		add(tw.sample(dMoves, float64(c.moves[cause]), string(cause)))
	}
	type sevCode struct{ sev, code string }
	fc := map[sevCode]int{}
	for _, f := range o.Findings {
		fc[sevCode{string(f.Severity), f.Code}]++
	}
	keys := make([]sevCode, 0, len(fc))
	for k := range fc {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b sevCode) int {
		if a.sev != b.sev {
			return inspect.SeverityRank(volume.Severity(a.sev)) - inspect.SeverityRank(volume.Severity(b.sev))
		}
		if a.code < b.code {
			return -1
		}
		return 1
	})
	for _, k := range keys {
		add(tw.sample(dFindings, float64(fc[k]), k.sev, k.code))
	}
	if gi := o.Generation; gi != nil {
		name := gi.Name
		if name == "" {
			name = "unknown"
		}
		add(tw.sample(dGeneration, 1, name, gi.Source))
	}

	// Brokers: every broker seen since the exporter started.
	forgetAnsweredSeeds(o, c)
	listedAlive := map[string]bool{}
	if a := o.Assignment; a != nil {
		for _, b := range a.Brokers {
			listedAlive[b.ID] = b.Health == "alive"
			c.brokersSeen[b.ID] = true
		}
	}
	reach := map[string]bool{}
	for _, b := range o.Brokers {
		reach[b.Name] = b.Answered
		c.brokersSeen[b.Name] = true
		if !b.Answered {
			c.brokerErrors[b.Name]++
		}
	}
	for _, b := range o.Brokers {
		add(tw.sample(dBrokerReachable, b2f(b.Answered), b.Name))
		if b.Answered {
			add(tw.sample(dBrokerGroups, float64(b.Groups), b.Name))
		}
	}
	for _, name := range sortedKeys(c.brokersSeen) {
		up := true
		if o.HasVolume && o.Assignment != nil {
			up = up && listedAlive[name]
		}
		if o.HasBrokers {
			up = up && reach[name]
		}
		add(tw.sample(dBrokerUp, b2f(up), name))
		if o.HasVolume && o.Assignment != nil {
			add(tw.sample(dBrokerListedAlive, b2f(listedAlive[name]), name))
		}
		if _, ok := reach[name]; !ok && o.HasBrokers {
			add(tw.sample(dBrokerReachable, 0, name))
		}
	}
	if o.HasBrokers {
		for _, name := range sortedKeys(c.brokersSeen) {
			add(tw.sample(dBrokerErrors, float64(c.brokerErrors[name]), name))
		}
	}
	for _, name := range sortedKeys(c.brokerRequests) {
		add(tw.sample(dBrokerRequests, float64(c.brokerRequests[name]), name))
	}
	for _, sb := range o.ServedBehind {
		if t, p, err := volume.SplitOffsetKey(sb.Partition); err == nil {
			add(tw.sample(dServedBehind, float64(sb.LogEnd-sb.Served), t, strconv.Itoa(int(p))))
		}
	}

	// Groups.
	for i := range o.Groups {
		g := &o.Groups[i]
		r := &g.Row
		name := r.Group
		if lv := r.Live; lv != nil {
			state, members := lv.State, lv.Members
			if d := g.Live; d != nil && d.Err == "" && state == "" {
				// Not listed by its coordinator (kaas lists only what it holds in memory): DescribeGroups still answers.
				state, members = d.State, len(d.Members)
			}
			if state != "" {
				add(tw.sample(dGroupState, 1, name, state))
			}
			add(tw.sample(dGroupMembers, float64(members), name))
			// Issue series are sparse: present only while the issue is
			// (a 100,000-group page carries what is wrong, not 0s).
			if len(lv.StaleOn) > 0 {
				add(tw.sample(dStaleListings, float64(len(lv.StaleOn)), name))
			}
			if r.HasIssue(inspect.IssueFileOnly) {
				add(tw.sample(dFileOnly, 1, name))
			}
			if r.HasIssue(inspect.IssueWireMismatch) {
				add(tw.sample(dWireMismatch, 1, name))
			}
		}
		wireBroker := ""
		if r.Live != nil {
			wireBroker = r.Live.WireCoordinator
		}
		broker, tier := r.Coordinator, r.Tier
		if broker == "" && wireBroker != "" && o.Assignment == nil {
			broker, tier = wireBroker, "wire"
		}
		add(tw.sample(dGroupCoordinator, 1, name, broker, tier, r.HashCoordinator, r.ExplicitBroker, wireBroker))
		if o.HasVolume && r.HasIssue(inspect.IssueTiersDisagree) {
			add(tw.sample(dTiersDisagree, 1, name))
		}
		if g.LagKnown {
			add(tw.sample(dGroupLag, float64(g.Lag), name))
		}
		if g.LagSecondsKnown {
			add(tw.sample(dGroupLagSeconds, g.LagSeconds, name))
		}
		if partitionMetrics {
			for _, p := range g.Partitions {
				ps := strconv.Itoa(int(p.Partition))
				if p.Committed >= 0 {
					add(tw.sample(dPartCommitted, float64(p.Committed), name, p.Topic, ps))
				}
				if p.LagKnown {
					add(tw.sample(dPartLag, float64(p.Lag), name, p.Topic, ps))
				}
				if p.LagSecondsKnown {
					add(tw.sample(dPartLagSeconds, p.LagSeconds, name, p.Topic, ps))
				}
			}
		}
		h := health[i]
		if h.State != inspect.HealthOK {
			add(tw.sample(dHealth, 1, name, h.State))
		}
		for _, c := range h.Conditions {
			if c != inspect.HealthOK {
				add(tw.sample(dCondition, 1, name, c))
			}
		}
		if !h.UnknownSince.IsZero() {
			add(tw.sample(dUnknownSince, float64(h.UnknownSince.UnixNano())/1e9, name))
		}
		if d := h.Drain; d != nil && d.Known {
			if !d.NotDraining {
				add(tw.sample(dDrainSeconds, d.Seconds, name))
			}
			if d.NotDraining {
				add(tw.sample(dNotDraining, 1, name))
			}
			if partitionMetrics {
				for _, p := range d.Partitions {
					if !p.Known {
						continue
					}
					t, pn, err := volume.SplitOffsetKey(p.Partition)
					if err != nil {
						continue
					}
					ps := strconv.Itoa(int(pn))
					if p.NotDraining {
						add(tw.sample(dPartNotDraining, 1, name, t, ps))
					} else {
						add(tw.sample(dPartDrainSeconds, p.Seconds, name, t, ps))
					}
				}
			}
		}
		if f := h.Retention; f != nil && f.Known {
			add(tw.sample(dRetentionBreach, f.Seconds, name))
		}
		if !h.LastCommit.IsZero() {
			add(tw.sample(dLastCommitAge, max(0, o.Time.Sub(h.LastCommit).Seconds()), name))
		}
		// Per-group counters appear at their first change, as a client
		// library's labelled counters do; kaas_group_condition is what
		// alerts use (increase() misses a series' first sample).
		if counts[i].Rewinds > 0 {
			add(tw.sample(dRewinds, float64(counts[i].Rewinds), name))
		}
		if counts[i].Vanished > 0 {
			add(tw.sample(dVanished, float64(counts[i].Vanished), name))
		}
	}

	// The exporter itself.
	add(tw.sample(dBuildInfo, 1, version, revision, runtime.Version()))
	add(tw.sample(dRefreshes, float64(c.refreshes)))
	add(tw.sample(dLastRefresh, float64(o.Time.Add(o.Duration).UnixNano())/1e9))
	add(tw.sample(dLastSuccess, c.lastSuccess))
	add(tw.sample(dInterval, c.interval.Seconds()))
	add(tw.sample(dLastDuration, o.Duration.Seconds()))
	add(tw.sample(dGroupsObserved, float64(len(o.Groups))))
	add(tw.sample(dGroupsDropped, float64(o.Dropped)))
	add(tw.sample(dGroupsInvalid, float64(len(invalidIDs(o)))))
	if o.HasBrokers {
		add(tw.sample(dProbes, float64(c.probes)))
	}
	if c.follower {
		add(tw.sample(dFollowing, b2f(c.following)))
		add(tw.sample(dOffsetChanges, float64(c.offsetChanges)))
	}
	if c.journal {
		add(tw.sample(dJournalRecords, float64(c.journalRecords)))
		add(tw.sample(dJournalErrors, float64(c.journalErrors)))
	}
	return tw
}

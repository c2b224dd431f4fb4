package exporter

import (
	"slices"

	"github.com/kaasctl/kaasctl/inspect"
)

// The series of a group's membership, the authors of its rewinds, the
// spread of its lag and who owns its partitions (rows of groupMetrics and
// refreshMetrics in metrics.go). Each is one series per group at most (or
// per group and one of a few fixed label values), present only while it
// says something: no series per partition.
var (
	dObservedGeneration = fam(gaugeType, "kaas_group_observed_generation", "kaasctl's count of the group's generations since the exporter started observing it: +1 at each generation change it saw between two refreshes (a member id came or went, another coordinator answered, the members' reported assignments changed, or the group was caught rebalancing). kaas's DescribeGroups carries no generation id: this is not kaas's number, its changes are what counts. Present with brokers once the group was observed.", "group")
	dMembershipChanges  = fam(counterType, "kaas_group_membership_changes_total", "Members that joined (change=joined) or left or timed out (change=left; DescribeGroups cannot tell which) the group since the exporter started; each series appears at its first change.", "group", "change")
	dRebalances         = fam(counterType, "kaas_group_rebalances_total", "Generation changes of the group since the exporter started, by cause (member_left, member_joined, coordinator_moved, rebalance: the same members rebalanced); a change with two causes counts once for each. Each series appears at its first change; CHURN reads the changes in the health window.", "group", "cause")
	dRewindRecords      = fam(gaugeType, "kaas_group_rewind_records", "Records the group's rewinds in the health window went back, summed by their likely author: own (the group's members: a few records back when two of their commits landed out of order), admin (no member in the group: an admin tool, generation -1), zombie (a member of an older generation), cacheRewrite (a coordinator wrote its stale memory of the group after a move) or unknown (membership not observed). Present while the group is REWIND. The alert rules page on every author but own, and on own past kaas_exporter_rewind_page_records.", "group", "author")
	dLagMaxOverMean     = fam(gaugeType, "kaas_group_lag_max_over_mean", "The group's largest partition lag over the mean of its partitions' lags (1: even; the partition count: all of it on one partition). Present while the group has lag on a partition and at least two partitions with a known lag.", "group")
	dLagCV              = fam(gaugeType, "kaas_group_lag_cv", "Coefficient of variation of the group's partition lags (standard deviation over mean; 0: even). Present with kaas_group_lag_max_over_mean.", "group")
	dProduceMaxOverMean = fam(gaugeType, "kaas_group_produce_max_over_mean", "The produce rate of the group's hottest partition over the mean of its partitions' rates, fitted over the health window. Present once the window has the rates of at least two partitions.", "group")
	dHotPartitions      = fam(gaugeType, "kaas_group_hot_partitions", "Partitions of the group produced to at least twice the mean rate over the health window ('kaasctl groups describe --drain-window' names them). Present while there is one.", "group")
	dUnownedLagging     = fam(gaugeType, "kaas_group_unowned_lagging_partitions", "Partitions with lag, of topics the group's members are assigned, that no member owns (nobody reads them), where the broker reports the members' assignments. Present while there is one.", "group")
	dIdleMembers        = fam(gaugeType, "kaas_group_idle_members", "Members of the group that own no partition, where the broker reports assignments. Present while there is one.", "group")
	dOwnershipKnown     = fam(gaugeType, "kaas_group_assignments_reported", "1 when the group's coordinator reports its members' assignments in DescribeGroups, 0 when it does not (kaas's Go broker sends them empty: unowned partitions and idle members cannot be told). Present for groups with members.", "group")
	dStalledPartitions  = fam(gaugeType, "kaas_group_stalled_partitions", "Partitions of the group with lag whose committed offset has not moved over the health window while commits arrived (the group's other partitions advanced, or its file was rewritten): STALL's partitions. A partition still for less than 2 minutes while the group drains is served in turns, not counted. Present while there is one.", "group")
	dRewindPageRecords  = fam(gaugeType, "kaas_exporter_rewind_page_records", "The exporter's --rewind-page-records: a rewind by a group's own members past this many records pages (the alert rules compare kaas_group_rewind_records{author=\"own\"} with it).")
	dChurnRebalances    = fam(gaugeType, "kaas_exporter_churn_rebalances", "The exporter's --churn-rebalances: CHURN when a group has more generation changes than this in the health window.")
	dEventsJournalErrs  = fam(counterType, "kaas_exporter_events_journal_errors_total", "Batches of membership changes and condition transitions the events journal (--journal DIR/events) could not record.")
)

// memberCounters are the refresh series of the membership (counters.members).
type memberCounters struct {
	pageRecords   int64
	rebalances    int
	journal       bool
	journalErrors int64
}

func emitRewindPage(tw *textWriter, f *family, x *refreshCtx) {
	tw.sample(f, float64(x.c.members.pageRecords))
}

func emitChurnRebalances(tw *textWriter, f *family, x *refreshCtx) {
	if x.o.HasBrokers {
		tw.sample(f, float64(x.c.members.rebalances))
	}
}

func emitEventsJournalErrors(tw *textWriter, f *family, x *refreshCtx) {
	if x.c.members.journal {
		tw.sample(f, float64(x.c.members.journalErrors))
	}
}

// The group rows.

func emitObservedGeneration(tw *textWriter, f *family, x *groupCtx) {
	if c := x.h.Churn; c != nil {
		tw.sample(f, float64(c.ObservedGeneration), x.g.Row.Group)
	}
}

func emitMembershipChanges(tw *textWriter, f *family, x *groupCtx) {
	if c := x.h.Churn; c != nil {
		if c.Joined > 0 {
			tw.sample(f, float64(c.Joined), x.g.Row.Group, "joined")
		}
		if c.Left > 0 {
			tw.sample(f, float64(c.Left), x.g.Row.Group, "left")
		}
	}
}

func emitRebalances(tw *textWriter, f *family, x *groupCtx) {
	if c := x.h.Churn; c != nil {
		for _, cc := range c.Rebalances {
			tw.sample(f, float64(cc.Count), x.g.Row.Group, cc.Cause)
		}
	}
}

func emitRewindRecords(tw *textWriter, f *family, x *groupCtx) {
	if !x.h.Has(inspect.HealthRewind) || len(x.h.Rewinds) == 0 {
		return
	}
	by := map[string]int64{}
	for _, r := range x.h.Rewinds {
		by[r.Author] += r.Records
	}
	for _, a := range inspect.Authors {
		if n, ok := by[a]; ok {
			tw.sample(f, float64(n), x.g.Row.Group, a)
		}
	}
}

func emitLagSpread(cv bool) func(*textWriter, *family, *groupCtx) {
	return func(tw *textWriter, f *family, x *groupCtx) {
		s := x.g.Spread
		if s == nil || s.Partitions < 2 || s.Total <= 0 {
			return
		}
		v := s.MaxOverMean
		if cv {
			v = s.CV
		}
		tw.sample(f, v, x.g.Row.Group)
	}
}

func emitProduceSpread(tw *textWriter, f *family, x *groupCtx) {
	if s := x.g.Spread; s != nil && s.ProduceMaxOverMean > 0 {
		tw.sample(f, s.ProduceMaxOverMean, x.g.Row.Group)
	}
}

func emitHotPartitions(tw *textWriter, f *family, x *groupCtx) {
	if s := x.g.Spread; s != nil && len(s.Hot) > 0 {
		tw.sample(f, float64(len(s.Hot)), x.g.Row.Group)
	}
}

func emitUnowned(tw *textWriter, f *family, x *groupCtx) {
	if o := x.g.Ownership; o != nil && len(o.Unowned) > 0 {
		tw.sample(f, float64(len(o.Unowned)), x.g.Row.Group)
	}
}

func emitIdle(tw *textWriter, f *family, x *groupCtx) {
	if o := x.g.Ownership; o != nil && len(o.Idle) > 0 {
		tw.sample(f, float64(len(o.Idle)), x.g.Row.Group)
	}
}

func emitOwnershipKnown(tw *textWriter, f *family, x *groupCtx) {
	if o := x.g.Ownership; o != nil {
		tw.sample(f, b2f(o.Reported), x.g.Row.Group)
	}
}

func emitStalled(tw *textWriter, f *family, x *groupCtx) {
	var parts []string
	for _, e := range x.h.Evidence {
		if e.State == inspect.HealthStall && !slices.Contains(parts, e.Partition) {
			parts = append(parts, e.Partition)
		}
	}
	if len(parts) > 0 {
		tw.sample(f, float64(len(parts)), x.g.Row.Group)
	}
}

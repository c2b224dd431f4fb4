package inspect

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/watch"
)

// membershipEvents are the group's membership as first observed and each
// generation change.
func membershipEvents(in *TimelineInput, f *timelineFacts) []TimelineEvent {
	var out []TimelineEvent
	first := true
	for _, r := range in.Events {
		if r.Kind != watch.EvMembers || r.Group != in.Group {
			continue
		}
		if !first {
			continue
		}
		first = false
		s := MemberSampleOfRecord(r)
		out = append(out, TimelineEvent{Time: r.Time, Source: TLMembers, Kind: TLMembersSeen, Members: s.Members, Evidence: "events journal",
			Summary: "membership first observed: " + membersLine(&s)})
	}
	prevGen := int64(0)
	for i := range f.changes {
		c := &f.changes[i]
		ev := TimelineEvent{Time: c.Time, Source: TLMembers, Kind: TLGeneration, Change: c, Evidence: "events journal"}
		switch {
		case c.ObservedGeneration < 0:
			ev.Summary = "generation changed while nobody observed (between " + clock(c.Since) + " and " + clock(c.Time) + "): " + c.Summary()
		case c.ObservedGeneration == prevGen:
			// The same rebalance seen at the next look: the record holds
			// it as a whole.
			ev.Summary = fmt.Sprintf("generation change #%d still rebalancing at the next look (the whole rebalance, between %s and %s): %s; %s after it", c.ObservedGeneration, clock(c.Since), clock(c.Time),
				c.Summary(), healthPlural(c.Members, "member", "members"))
		default:
			ev.Summary = fmt.Sprintf("generation change #%d (as observed, between %s and %s): %s; %s after it", c.ObservedGeneration, clock(c.Since), clock(c.Time),
				c.Summary(), healthPlural(c.Members, "member", "members"))
		}
		prevGen = c.ObservedGeneration
		out = append(out, ev)
	}
	return out
}

// commitEvents are the offsets journal's points of the group, each commit
// attributed.
func commitEvents(in *TimelineInput, f *timelineFacts) []TimelineEvent {
	var out []TimelineEvent
	var prev map[string]int64
	var prevCommit time.Time
	seen := false
	for i := range in.History {
		p := &in.History[i]
		if p.Source != "journal" || p.Kind == watch.RecGap {
			continue // backups are kaasctl's writes (writeEvents); gaps are the observer's
		}
		ev := TimelineEvent{Time: p.Time, Source: TLCommits, Evidence: "offsets journal " + fileOf(p)}
		switch {
		case p.Kind == watch.RecCorrupt:
			ev.Kind, ev.Summary = TLUnreadable, "the offset file could not be read: "+p.Problem+" (kaas ignores it; the next commit rewrites it with only the partitions committed)"
		case p.Kind == watch.RecMissing:
			ev.Kind, ev.Summary, ev.Removed = TLFileRemoved, "the offset file was removed", p.Removed
			f.commitAt(&ev, in, i, prev, prevCommit)
		case p.Kind == watch.RecSnapshot && !seen:
			ev.Kind, ev.Summary = TLState, "offsets as first recorded: "+offsetsLine(p.Offsets)
		default:
			ev.Changed, ev.Removed = p.Changed, p.Removed
			f.commitAt(&ev, in, i, prev, prevCommit)
			if p.Kind == watch.RecSnapshot {
				ev.Summary += " (seen at a journal segment's snapshot: changed while the journal did not record)"
				if ev.Attribution != nil && ev.Attribution.Author != AuthorKaasctl {
					ev.Attribution.Certain = false
				}
			}
			prevCommit = p.Time
		}
		seen = true
		prev = p.Offsets
		out = append(out, ev)
	}
	return out
}

// commitAt fills a commit event: what moved, who made it, how it pages.
func (f *timelineFacts) commitAt(ev *TimelineEvent, in *TimelineInput, i int, prev map[string]int64, prevCommit time.Time) {
	p := &in.History[i]
	forward := 0
	for _, k := range sortedKeys(p.Changed) {
		v := p.Changed[k]
		if old, ok := prev[k]; ok && v < old {
			ev.Rewound = append(ev.Rewound, Rewound{Partition: k, Before: old, After: v})
		} else if !ok || v > old {
			forward++
		}
	}
	c := CommitContext{Time: p.Time, Since: p.Time, Rewound: ev.Rewound, Forward: forward, MaxGap: f.maxGap, ZombieGrace: DefaultZombieGrace,
		OutOfOrder: in.OutOfOrder, Before: f.before(p.Time), After: f.after(p.Time), Unobserved: f.unobservedAt(p.Time, p.Time),
		LastChange: f.lastChange(p.Time), Move: f.lastMove(prevCommit, p.Time), Earlier: earlierIn(in.History[:i])}
	if in.EventsDir == "" {
		c.Unobserved = "no events journal"
	}
	if c.LastChange != nil {
		c.AtChange = offsetsAt(in.History[:i], c.LastChange.Since)
		c.DuringChange = offsetsAt(in.History[:i], c.LastChange.Time)
	}
	if w := f.matchWrite(p.Time, p.Changed, p.Removed); w != nil {
		c.Write = &WriteRef{Time: w.Time, Command: w.Command, By: w.By}
	}
	a := AttributeCommit(c)
	ev.Attribution = &a
	switch {
	case ev.Kind == TLFileRemoved:
	case len(ev.Rewound) > 0:
		ev.Kind, ev.Severity = TLRewind, RewindSeverity(a, in.PageRecords)
	case len(p.Removed) > 0 && len(p.Changed) == 0:
		ev.Kind = TLVanished
	default:
		ev.Kind = TLCommit
	}
	if ev.Summary == "" {
		ev.Summary = commitLine(ev)
	}
}

// commitLine is a commit in words.
func commitLine(ev *TimelineEvent) string {
	var parts []string
	back := map[string]Rewound{}
	for _, r := range ev.Rewound {
		back[r.Partition] = r
	}
	for _, k := range sortedKeys(ev.Changed) {
		if r, ok := back[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %d→%d (%d back)", k, r.Before, r.After, r.Before-r.After))
		} else {
			parts = append(parts, fmt.Sprintf("%s→%d", k, ev.Changed[k]))
		}
	}
	for _, k := range ev.Removed {
		parts = append(parts, k+" removed")
	}
	head := map[string]string{TLRewind: "rewind", TLVanished: "partitions vanished", TLCommit: "commit"}[ev.Kind]
	if len(parts) == 0 {
		return head + ": the same offsets written again"
	}
	const most = 8
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("… %d more", len(parts)-most))
	}
	return head + ": " + strings.Join(parts, ", ")
}

// earlierIn tells when a partition last held v in the points before a
// commit (journal points only).
func earlierIn(pts []watch.HistoryPoint) func(string, int64) (time.Time, bool) {
	return func(partition string, v int64) (time.Time, bool) {
		for i := len(pts) - 1; i >= 0; i-- {
			if pts[i].Source != "journal" || pts[i].Unsound {
				continue
			}
			if got, ok := pts[i].Offsets[partition]; ok && got == v {
				return pts[i].Time, true
			}
		}
		return time.Time{}, false
	}
}

// offsetsAt are the group's offsets as of t (the last sound journal point
// at or before it; nil when none is).
func offsetsAt(pts []watch.HistoryPoint, t time.Time) map[string]int64 {
	for i := len(pts) - 1; i >= 0; i-- {
		if pts[i].Source == "journal" && !pts[i].Time.After(t) {
			if pts[i].Unsound {
				return nil
			}
			return maps.Clone(pts[i].Offsets)
		}
	}
	return nil
}

func fileOf(p *watch.HistoryPoint) string {
	if p.File == "" {
		return ""
	}
	return "(" + p.File + ")"
}

// offsetsLine is a group's offsets in words.
func offsetsLine(offs map[string]int64) string {
	if len(offs) == 0 {
		return "none"
	}
	keys := sortedKeys(offs)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, offs[k]))
	}
	const most = 8
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("… %d more", len(parts)-most))
	}
	return strings.Join(parts, ", ")
}

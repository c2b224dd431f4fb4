package inspect

import (
	"fmt"
	"strings"
	"time"
)

// Who made a commit. kaas never fences OffsetCommit by generation or member
// (kaas-formats §0 item 11), so a commit the file shows can be the group's
// own, an admin tool's (generation −1, no member), a member's that is no
// longer in the group (a zombie: an older generation), or the coordinator
// writing its memory of the group over the file after a move (its cache
// from when it last held the group). The file records none of this: the
// rule reads who was in the group at the time, what changed just before,
// and what the partition held before, and says plainly when that evidence
// is missing.

// Commit authors (AttributeCommit's classes).
const (
	AuthorOwn          = "own"          // the group's members of the generation then
	AuthorAdmin        = "admin"        // no member: an admin tool (generation −1) or a consumer using assign()
	AuthorZombie       = "zombie"       // a member of an older generation, or one that left
	AuthorCacheRewrite = "cacheRewrite" // the coordinator wrote its stale memory of the group after a move
	AuthorKaasctl      = "kaasctl"      // kaasctl's own write (its write log names the command)
	AuthorUnknown      = "unknown"      // the evidence cannot tell
)

// Authors lists the classes, in the order reports list them.
var Authors = []string{AuthorOwn, AuthorAdmin, AuthorZombie, AuthorCacheRewrite, AuthorKaasctl, AuthorUnknown}

// DefaultZombieGrace is how long after a generation change a commit that
// moves a partition back is taken for one from the older generation when
// the offsets at the change are unknown: a member evicted by the rebalance
// (a session timeout, a long pause) commits the position it had.
const DefaultZombieGrace = 2 * time.Minute

// DefaultRewindPageRecords is how many records a rewind by the group's own
// members may go back before it pages (kaasctl exporter
// --rewind-page-records): on a real Go-flavour cluster two members'
// commits landed out of order a few records back about once a minute.
const DefaultRewindPageRecords = 100

// Rewound is one partition a commit moved back.
type Rewound struct {
	Partition string `json:"partition"`
	Before    int64  `json:"before"`
	After     int64  `json:"after"`
}

// MembersAt is a membership observation near a commit.
type MembersAt struct {
	Time        time.Time `json:"time"`
	Members     int       `json:"members"`
	State       string    `json:"state"`
	Coordinator string    `json:"coordinator,omitempty"`
	// IDs name the members (empty when the observer kept only the count).
	IDs []string `json:"memberIds,omitempty"`
}

// CoordinatorMove is a move of the group to another coordinator.
type CoordinatorMove struct {
	Time  time.Time `json:"time"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	Cause string    `json:"cause,omitempty"`
}

// CommitContext is what is known around one commit of a group: what it
// changed, the membership observed before and after it, and what happened
// just before. A field the caller cannot fill stays nil or zero and the
// attribution says what it could not check.
type CommitContext struct {
	// Time is when the commit was seen; Since the previous look at the
	// file (the commit happened in between; equal when known exactly).
	Time, Since time.Time
	Rewound     []Rewound
	// Forward counts the partitions it moved forward or added.
	Forward int
	// Before and After are the membership observations at or before Since
	// and at or after Time (nil: none).
	Before, After *MembersAt
	// MaxGap is how far apart observations may be and still cover the
	// commit (the observer's interval with slack); 0: any.
	MaxGap time.Duration
	// Unobserved says why the membership was not observed then (a gap in
	// the observer's record, brokers that did not answer); "" when it was.
	Unobserved string
	// LastChange is the last generation change seen at or before Time
	// (nil: none).
	LastChange *MembershipChange
	// Move is the last coordinator move after the group's previous commit
	// and at or before Time (nil: none).
	Move *CoordinatorMove
	// AtChange holds, per partition, the committed offset just before
	// LastChange (nil: unknown): a commit at or below it carries a
	// position from before the change.
	AtChange map[string]int64
	// DuringChange holds, per partition, the committed offset as of the
	// look that saw LastChange (nil: unknown): commits between its two
	// looks may be the older generation's last (a member commits as its
	// partitions are revoked), so a commit at or below it may carry a
	// position from before the change, not certainly.
	DuringChange map[string]int64
	// Earlier tells when the partition last held v before this commit
	// (nil: the history is not known).
	Earlier func(partition string, v int64) (time.Time, bool)
	// Write is kaasctl's write this commit is (nil: none matches).
	Write *WriteRef
	// ZombieGrace bounds the look for an older generation's commit after
	// a change when AtChange is unknown (0: DefaultZombieGrace).
	ZombieGrace time.Duration
	// OutOfOrder is the generation's note on a group's commits landing
	// out of order (volume.BrokerFacts.CommitOrder; "" when none known).
	OutOfOrder string
}

// WriteRef names one of kaasctl's writes.
type WriteRef struct {
	Time    time.Time `json:"time"`
	Command string    `json:"command"`
	By      string    `json:"by,omitempty"`
}

// Attribution is who made a commit, as far as the evidence tells.
type Attribution struct {
	Author string `json:"author"`
	// Who names the author in words.
	Who string `json:"who"`
	// Why is the evidence, and what could not be checked.
	Why string `json:"why"`
	// Certain: the evidence decides it; false when it only points there.
	Certain bool `json:"certain"`
	// Records is how many records the commit moved back, summed over
	// partitions (0: it moved none back).
	Records int64 `json:"records"`
}

// AttributeCommit classes one commit of a group, in this order: kaasctl's
// own write (its write log); no membership observed around it (unknown);
// no member before or after it (admin); a coordinator move just before it
// that put partitions back to what they held earlier (cacheRewrite); a
// partition put back at or below its offset before the last generation
// change or one committed while it happened, or soon after a change in
// which members left (zombie); else the
// group's members (own), including a few records back when two of their
// commits landed out of order.
func AttributeCommit(c CommitContext) Attribution {
	a := Attribution{Records: rewoundRecords(c.Rewound)}
	switch {
	case c.Write != nil:
		a.Author, a.Certain = AuthorKaasctl, true
		a.Who = "kaasctl " + c.Write.Command
		if c.Write.By != "" {
			a.Who += " by " + c.Write.By
		}
		a.Why = "kaasctl's write log records this write at " + c.Write.Time.UTC().Format(time.RFC3339)
	case c.Unobserved != "" || !covered(c):
		a.Author, a.Who = AuthorUnknown, "unknown"
		a.Why = "the membership was not observed around the commit"
		if c.Unobserved != "" {
			a.Why += " (" + c.Unobserved + ")"
		}
	case !hasMembers(c.Before) && !hasMembers(c.After):
		a.Author, a.Who, a.Certain = AuthorAdmin, "an admin tool (generation −1) or a consumer using assign()", c.Before != nil && c.After != nil
		a.Why = "the group had no member " + noMemberWhen(c.Before, c.After) + ": no member of it could have committed"
	default:
		attributeWithMembers(&a, c)
	}
	return a
}

// attributeWithMembers classes a commit made while the group had members
// (before it, after it, or both).
func attributeWithMembers(a *Attribution, c CommitContext) {
	if len(c.Rewound) > 0 && c.Move != nil && !c.Move.Time.After(c.Time) {
		if ok, why := cacheRewrite(c); ok || c.Earlier == nil {
			a.Author, a.Certain, a.Why = AuthorCacheRewrite, ok, why
			a.Who = "coordinator " + orUnknownBroker(c.Move.To) + " (its memory of the group)"
			return
		}
	}
	if len(c.Rewound) > 0 && c.LastChange != nil {
		if ok, certain, why := olderGeneration(c); ok {
			a.Author, a.Certain, a.Why = AuthorZombie, certain, why
			a.Who = "a member of the generation before " + clock(c.LastChange.Time)
			if len(c.LastChange.Left) > 0 {
				a.Who += " (left since: " + memberLabels(c.LastChange.Left) + ")"
			}
			return
		}
	}
	a.Author, a.Who = AuthorOwn, "the group's members"
	if c.Before != nil && len(c.Before.IDs) > 0 {
		a.Who += " (" + strings.Join(c.Before.IDs, ", ") + ")"
	}
	switch {
	case !hasMembers(c.Before) && hasMembers(c.After):
		a.Why = "a member joined between the observations around the commit; an admin commit cannot be told from its first commit"
	case hasMembers(c.Before) && !hasMembers(c.After) && c.After != nil:
		a.Why = "the members left between the observations around the commit: a member's last commit before leaving, or an admin commit"
	case len(c.Rewound) > 0:
		a.Certain = c.AtChange != nil || c.LastChange == nil
		a.Why = fmt.Sprintf("%d records back to offsets this generation committed, with the same members before and after", a.Records)
		if c.OutOfOrder != "" {
			a.Why += ": two of their commits landed out of order (" + c.OutOfOrder + ")"
		}
	default:
		a.Certain = true
		a.Why = "the group had members before and after the commit"
	}
}

// cacheRewrite reports whether every partition the commit put back was
// put back to a value it held before the coordinator moved (the new
// coordinator's memory from when it last held the group).
func cacheRewrite(c CommitContext) (bool, string) {
	why := fmt.Sprintf("the coordinator moved from %s to %s at %s, just before", orUnknownBroker(c.Move.From), orUnknownBroker(c.Move.To), clock(c.Move.Time))
	if c.Earlier == nil {
		return false, why + "; whether the file went back to values it held earlier is unknown (no history of the partitions)"
	}
	var held []string
	for _, r := range c.Rewound {
		t, ok := c.Earlier(r.Partition, r.After)
		if !ok || !t.Before(c.Move.Time) {
			return false, ""
		}
		held = append(held, fmt.Sprintf("%s back to %d, which it held at %s", r.Partition, r.After, clock(t)))
	}
	return true, why + ", and the file went back to offsets it held before the move (" + strings.Join(held, "; ") + "): the new coordinator wrote its memory of the group over the file"
}

// olderGeneration reports whether the partitions put back carry a
// position from before the last generation change: at or below the
// offsets just before it (certain) or committed while it happened (not
// certain), or, those unknown, within the grace after a change in which
// members left or joined.
func olderGeneration(c CommitContext) (ok, certain bool, why string) {
	ch := c.LastChange
	if c.AtChange != nil {
		return olderThanOffsets(c)
	}
	grace := c.ZombieGrace
	if grace <= 0 {
		grace = DefaultZombieGrace
	}
	if len(ch.Left)+len(ch.Joined) == 0 || c.Time.Sub(ch.Time) > grace {
		return false, false, ""
	}
	return true, false, fmt.Sprintf("%d records back within %s of the generation change at %s (%s); the offsets before the change are not known here, so a member of the new generation cannot be ruled out",
		rewoundRecords(c.Rewound), roundSpan(c.Time.Sub(ch.Time)), clock(ch.Time), ch.Summary())
}

// olderThanOffsets is olderGeneration when the offsets before the change
// are known: every partition put back at or below its offset before the
// change (certain), or at or below one committed while the change
// happened (between the looks that saw it: not certain).
func olderThanOffsets(c CommitContext) (ok, certain bool, why string) {
	var olds []string
	certain = true
	for _, r := range c.Rewound {
		at, known := c.AtChange[r.Partition]
		during, seen := c.DuringChange[r.Partition]
		switch {
		case known && r.After <= at:
			olds = append(olds, fmt.Sprintf("%s at %d, not above its %d before the change", r.Partition, r.After, at))
		case seen && r.After <= during:
			certain = false
			olds = append(olds, fmt.Sprintf("%s at %d, not above the %d committed while the group changed (the older generation's last commit, or the new one's first)", r.Partition, r.After, during))
		default:
			return false, false, ""
		}
	}
	ch := c.LastChange
	return true, certain, fmt.Sprintf("after the generation change at %s (%s), the commit put back positions from before it (%s)", clock(ch.Time), ch.Summary(), strings.Join(olds, "; "))
}

// covered reports whether the membership observations around the commit
// are close enough to it to tell who was in the group.
func covered(c CommitContext) bool {
	if c.Before == nil && c.After == nil {
		return false
	}
	if c.MaxGap <= 0 {
		return true
	}
	near := func(m *MembersAt, t time.Time) bool {
		return m != nil && absDur(t.Sub(m.Time)) <= c.MaxGap
	}
	return near(c.Before, c.Since) || near(c.After, c.Time)
}

// RewindSeverity is how a rewind pages: "page" for one by anyone but the
// group's own members, or by them past threshold records (0:
// DefaultRewindPageRecords); "warning" for a few records by the members;
// "" when the commit moved nothing back.
func RewindSeverity(a Attribution, threshold int64) string {
	if a.Records <= 0 {
		return ""
	}
	if threshold <= 0 {
		threshold = DefaultRewindPageRecords
	}
	if a.Author == AuthorOwn && a.Records <= threshold {
		return "warning"
	}
	return "page"
}

func rewoundRecords(rs []Rewound) int64 {
	var n int64
	for _, r := range rs {
		if r.Before > r.After {
			n += r.Before - r.After
		}
	}
	return n
}

func hasMembers(m *MembersAt) bool { return m != nil && m.Members > 0 }

// noMemberWhen says when the group was seen without members: before the
// commit, after it, or both.
func noMemberWhen(before, after *MembersAt) string {
	switch {
	case before != nil && after != nil:
		return "at " + clock(before.Time) + " nor at " + clock(after.Time)
	case before != nil:
		return "at " + clock(before.Time) + " (no observation after the commit)"
	default:
		return "at " + clock(after.Time) + " (no observation before the commit)"
	}
}

func memberLabels(ms []MemberInfo) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Label()
	}
	return strings.Join(out, ", ")
}

func orUnknownBroker(b string) string {
	if b == "" {
		return "(unknown)"
	}
	return b
}

// clock is a time in messages (UTC, to the millisecond when it has one).
func clock(t time.Time) string {
	if t.IsZero() {
		return "(unknown time)"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

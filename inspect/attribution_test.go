package inspect

import (
	"strings"
	"testing"
	"time"
)

func TestAttributeCommit(t *testing.T) {
	t.Parallel()
	at := func(sec int) time.Time { return m0.Add(time.Duration(sec) * time.Second) }
	members := func(sec, n int) *MembersAt {
		return &MembersAt{Time: at(sec), Members: n, State: map[bool]string{true: "Stable", false: "Empty"}[n > 0]}
	}
	back := []Rewound{{Partition: "orders/0", Before: 500, After: 300}}
	left := &MembershipChange{Time: at(40), Since: at(35), Causes: []string{CauseMemberLeft}, Left: []MemberInfo{{ID: "m-a", ClientID: "app"}}}
	held := func(p string, v int64) (time.Time, bool) {
		if p == "orders/0" && v == 300 {
			return at(10), true
		}
		return time.Time{}, false
	}
	cases := []struct {
		name    string
		c       CommitContext
		author  string
		certain bool
		why     string
	}{
		{"kaasctl", CommitContext{Time: at(60), Since: at(59), Rewound: back, Write: &WriteRef{Time: at(59), Command: "offsets reset", By: "ops@host"}},
			AuthorKaasctl, true, "write log"},
		{"no observation", CommitContext{Time: at(60), Since: at(59), Rewound: back},
			AuthorUnknown, false, "not observed"},
		{"observations too far", CommitContext{Time: at(600), Since: at(599), Rewound: back, Before: members(0, 2), After: members(1200, 2), MaxGap: 30 * time.Second},
			AuthorUnknown, false, "not observed"},
		{"journal gap", CommitContext{Time: at(60), Since: at(59), Before: members(55, 2), After: members(65, 2), Unobserved: "the record has a gap"},
			AuthorUnknown, false, "gap"},
		{"empty group", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 0), After: members(65, 0)},
			AuthorAdmin, true, "no member"},
		{"own forward", CommitContext{Time: at(60), Since: at(59), Forward: 2, Before: members(55, 2), After: members(65, 2)},
			AuthorOwn, true, "members before and after"},
		{"own out of order", CommitContext{Time: at(60), Since: at(59), Rewound: []Rewound{{"orders/0", 504, 500}}, Before: members(55, 2), After: members(65, 2), OutOfOrder: "one shared tmp file"},
			AuthorOwn, true, "out of order (one shared tmp file)"},
		{"zombie with offsets at the change", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 1), After: members(65, 1), LastChange: left, AtChange: map[string]int64{"orders/0": 320}},
			AuthorZombie, true, "positions from before it"},
		{"not older than the change", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 1), After: members(65, 1), LastChange: left, AtChange: map[string]int64{"orders/0": 250}},
			AuthorOwn, true, "this generation committed"},
		{"zombie, its position committed during the change", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 1), After: members(65, 1), LastChange: left,
			AtChange: map[string]int64{"orders/0": 250}, DuringChange: map[string]int64{"orders/0": 320}},
			AuthorZombie, false, "orders/0 at 300, not above the 320 committed while the group changed"},
		{"above what was committed during the change", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 1), After: members(65, 1), LastChange: left,
			AtChange: map[string]int64{"orders/0": 250}, DuringChange: map[string]int64{"orders/0": 280}},
			AuthorOwn, true, "this generation committed"},
		{"zombie within the grace", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 1), After: members(65, 1), LastChange: left},
			AuthorZombie, false, "cannot be ruled out"},
		{"after the grace", CommitContext{Time: at(400), Since: at(399), Rewound: back, Before: members(395, 1), After: members(405, 1), LastChange: left},
			AuthorOwn, false, "this generation committed"},
		{"cache rewrite", CommitContext{Time: at(60), Since: at(59), Rewound: back, Forward: 1, Before: members(55, 2), After: members(65, 2), LastChange: left,
			Move: &CoordinatorMove{Time: at(50), From: "kaas-1", To: "kaas-0"}, Earlier: held},
			AuthorCacheRewrite, true, "held before the move"},
		{"move, no history", CommitContext{Time: at(60), Since: at(59), Rewound: back, Before: members(55, 2), After: members(65, 2), Move: &CoordinatorMove{Time: at(50), From: "kaas-1", To: "kaas-0"}},
			AuthorCacheRewrite, false, "unknown (no history"},
		{"member joined in between", CommitContext{Time: at(60), Since: at(59), Forward: 1, Before: members(55, 0), After: members(65, 1)},
			AuthorOwn, false, "joined between"},
		{"members left in between", CommitContext{Time: at(60), Since: at(59), Forward: 1, Before: members(55, 1), After: members(65, 0)},
			AuthorOwn, false, "last commit before leaving"},
	}
	for _, c := range cases {
		a := AttributeCommit(c.c)
		if a.Author != c.author || a.Certain != c.certain || !strings.Contains(a.Why, c.why) {
			t.Errorf("%s: got %s certain=%v %q; want %s certain=%v containing %q", c.name, a.Author, a.Certain, a.Why, c.author, c.certain, c.why)
		}
	}
}

func TestRewindSeverity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		author  string
		records int64
		want    string
	}{
		{AuthorOwn, 0, ""},
		{AuthorOwn, 4, "warning"},
		{AuthorOwn, 100, "warning"},
		{AuthorOwn, 101, "page"},
		{AuthorAdmin, 1, "page"},
		{AuthorZombie, 1, "page"},
		{AuthorCacheRewrite, 684, "page"},
		{AuthorUnknown, 2, "page"},
	}
	for _, c := range cases {
		if got := RewindSeverity(Attribution{Author: c.author, Records: c.records}, 0); got != c.want {
			t.Errorf("%s %d records: %q, want %q", c.author, c.records, got, c.want)
		}
	}
	if got := RewindSeverity(Attribution{Author: AuthorOwn, Records: 101}, 1000); got != "warning" {
		t.Errorf("a threshold of 1000: %q", got)
	}
}

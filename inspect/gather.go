package inspect

import (
	"fmt"
	"slices"

	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// The brokers' answers to one group gathering (wire.GatherGroups) merged
// with the volume: which groups exist, which broker answered, the live
// flags and what to tell the operator. Every live command that lists
// groups goes through these.

// BrokerSource is one broker as a source of a live command.
type BrokerSource struct {
	Node     int32  `json:"node"`
	Broker   string `json:"broker"`
	Addr     string `json:"addr"`
	Answered bool   `json:"answered"`
	Groups   int    `json:"groups"`
	Error    string `json:"error,omitempty"`
	// Down: a --brokers address that did not answer and that no broker's
	// metadata names: kaas dropped it from the cluster (a dead broker),
	// so it holds no group and the listing is not the poorer for it.
	Down bool `json:"down,omitempty"`
}

// BrokerSources says how each broker took the ListGroups round, named the
// way the volume names brokers.
func BrokerSources(ls []wire.BrokerGroups, names *NodeNamer) []BrokerSource {
	out := make([]BrokerSource, 0, len(ls))
	for _, a := range ls {
		out = append(out, BrokerSource{Node: a.Broker.NodeID, Broker: names.Name(a.Broker.NodeID), Addr: a.Broker.Addr(),
			Answered: a.Err == "", Groups: len(a.Groups), Error: a.Err})
	}
	return out
}

// VolumeGroupNames are the groups the volume knows (offset files, then
// explicit entries; repeats kept): the Extra of a gathering, so their
// coordinators are looked up too.
func VolumeGroupNames(files []GroupFile, a *volume.Assignment) []string {
	n := len(files)
	if a != nil {
		n += len(a.ConsumerGroups)
	}
	out := make([]string, 0, n)
	for _, f := range files {
		out = append(out, f.Group)
	}
	if a != nil {
		for _, e := range a.ConsumerGroups {
			out = append(out, e.GroupID)
		}
	}
	return out
}

// NewLiveAnswers wraps a gathering for MergeLive; a is the volume's
// assignment (nil when missing, unreadable or no volume).
func NewLiveAnswers(gg *wire.GatheredGroups, a *volume.Assignment) *LiveAnswers {
	return &LiveAnswers{GatheredGroups: gg, HasAssignment: a != nil, Names: NewNodeNamer(a)}
}

// ListedRows is the half of a live groups list's rows that needs only the
// brokers' listings: a row for every group the volume or a listing names,
// and the listings naming each. A live command makes it while the lookups and
// descriptions are still in flight (wire.GroupRounds.OnListed), and
// MergeListedRows finishes the rows once they are in.
type ListedRows struct {
	rows   []GroupRow
	listed [][]listing // listed[i]: the listings naming rows[i]'s group
	total  int         // listings in listed
}

// PrepareListedRows builds one row per group the volume or a broker knows
// from the volume (in; hasVolume false: the listed groups alone) and the
// listings, without their live view (MergeListedRows merges it).
func PrepareListedRows(in GroupsInput, hasVolume bool, listings []wire.BrokerGroups) *ListedRows {
	if !hasVolume {
		// The rows are the listed groups: one merge of the listings names
		// them and says who listed each.
		if names, listed, total, ok := mergeListedBy(listings); ok {
			return &ListedRows{rows: BrokersOnlyRows(names), listed: listed, total: total}
		}
	}
	names := listedGroupNames(listings)
	p := &ListedRows{}
	if hasVolume {
		in.Extra = names
		p.rows = BuildGroupRows(in)
	} else {
		p.rows = BrokersOnlyRows(names)
	}
	p.listed, p.total = listedBy(p.rows, listings)
	return p
}

// MergeListedRows fills the live view and live flags of rows prepared from
// la's listings (MergeLive) and returns them.
func MergeListedRows(p *ListedRows, la *LiveAnswers) []GroupRow {
	mergeListings(p.rows, la, p.listed, p.total, mergeWorkers(len(p.rows)))
	return p.rows
}

// LiveIssueCounts counts the rows carrying each live flag.
type LiveIssueCounts struct {
	StaleOnNonCoordinator int
	FileOnly              int
	WireMismatch          int
}

// CountLiveIssues counts the live flags over rows (all of them, not only
// those a filter shows).
func CountLiveIssues(rows []GroupRow) LiveIssueCounts {
	var c LiveIssueCounts
	for i := range rows {
		for _, is := range rows[i].Issues {
			switch is {
			case IssueStaleOnNonCoord:
				c.StaleOnNonCoordinator++
			case IssueFileOnly:
				c.FileOnly++
			case IssueWireMismatch:
				c.WireMismatch++
			}
		}
	}
	return c
}

// LiveNotes is what a live listing tells the operator on stderr.
type LiveNotes struct {
	// Warnings: every failed broker's error, then one line per condition.
	Warnings []string
	// Notes are informational.
	Notes []string
	// Failed counts the brokers that did not answer ListGroups.
	Failed int
}

// ListNotes says what a live listing could not see and which live flags it
// raised; assignment names the assignment file for a wireMismatch.
func ListNotes(sources []BrokerSource, c LiveIssueCounts, assignment string) LiveNotes {
	var n LiveNotes
	down := 0
	for _, b := range sources {
		switch {
		case b.Down:
			down++ // the connection check warned about it
		case !b.Answered:
			n.Failed++
			n.Warnings = append(n.Warnings, b.Error)
		}
	}
	if n.Failed > 0 {
		n.Warnings = append(n.Warnings, fmt.Sprintf("%d of %d brokers did not answer ListGroups: groups only they hold are missing, and stale listings on them cannot be seen", n.Failed, len(sources)))
	}
	if down > 0 {
		n.Notes = append(n.Notes, fmt.Sprintf("%s given by --brokers did not answer and no broker's metadata names %s: out of the cluster (down), %s no group", render.Plural(down, "address", "addresses"),
			map[bool]string{true: "it", false: "them"}[down == 1], map[bool]string{true: "it holds", false: "they hold"}[down == 1]))
	}
	if s := c.StaleOnNonCoordinator; s > 0 {
		pron := "them"
		if s == 1 {
			pron = "it"
		}
		n.Warnings = append(n.Warnings, fmt.Sprintf("%s listed by a broker that does not coordinate %s (stale in-memory groups: a deleted group \"reappears\" in --list; restart the listing broker to drop them)",
			render.Plural(s, "group", "groups"), pron))
	}
	if m := c.WireMismatch; m > 0 {
		n.Warnings = append(n.Warnings, fmt.Sprintf("%s: FindCoordinator disagrees with the coordinator computed from %s (brokers route by another assignment version?)",
			render.Plural(m, "group", "groups"), assignment))
	}
	if f := c.FileOnly; f > 0 {
		n.Notes = append(n.Notes, fmt.Sprintf("%s only on the volume (committed offsets, no live group on the coordinator): invisible to ListGroups and OffsetFetch-all",
			render.Plural(f, "group is", "groups are")))
	}
	return n
}

// UnionGroupNames is every group the volume names or a broker listed,
// sorted, once each.
func UnionGroupNames(volumeNames []string, listings []wire.BrokerGroups) []string {
	out := slices.Clone(volumeNames)
	for _, l := range listings {
		for _, g := range l.Groups {
			out = append(out, g.Group)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// WithUnansweredSeeds adds to the sources each --brokers address (seeds)
// that did not answer when kaasctl connected (not in answered) and is no
// listed broker's address: kaas drops a dead broker from its metadata, so
// without this a listing said "2 of 2 answered" with 3 brokers given.
func WithUnansweredSeeds(sources []BrokerSource, seeds, answered []string) []BrokerSource {
	have := map[string]bool{}
	for _, s := range answered {
		have[normAddr(s)] = true
	}
	for _, b := range sources {
		have[normAddr(b.Addr)] = true
	}
	for _, s := range seeds {
		if have[normAddr(s)] {
			continue
		}
		have[normAddr(s)] = true
		sources = append(sources, BrokerSource{Node: -1, Broker: s, Addr: s, Down: true,
			Error: "broker " + s + ": did not answer when kaasctl connected, and no broker's metadata names it (given by --brokers: a broker that is down, and out of the cluster)"})
	}
	return sources
}

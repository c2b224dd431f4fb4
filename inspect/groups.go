// Package inspect is kaasctl's analysis: pure functions from parsed volume
// data (and, later, live broker answers) to the views commands print. No
// I/O happens here, so everything is testable with literals.
package inspect

import (
	"regexp"
	"slices"
	"strings"

	"github.com/kaasctl/kaasctl/internal/grouphash"
	"github.com/kaasctl/kaasctl/internal/volume"
)

// Sources of a group row. The live layer adds SourceLive.
const (
	SourceFile       = "file"         // <live offsets dir>/<group>.json (DATA/ on Go / Rust ≤ 0.2.15, CD/ from 0.2.16)
	SourceLegacyFile = "legacyFile"   // DATA/__consumer_offsets/<group>.json on Rust 0.2.18
	SourceOtherFile  = "otherDirFile" // a file in the offsets dir the assumed generation does not read, or cannot be told
	SourceEntry      = "entry"        // an explicit consumerGroups[] entry
	SourceLive       = "live"         // ListGroups from a broker (live layer)
)

// Issue flags of a group row, offline ones first. The live layer adds the
// last three; their names are fixed here so both layers agree.
const (
	IssueLegacyPlainMap       = "legacyPlainMap"       // brokers read the file as EMPTY (Rust 0.2.18)
	IssuePlainMapUndetermined = "plainMapUndetermined" // plain map; EMPTY on 0.2.18, offsets before: generation undetermined
	IssueOffsetsDirUnknown    = "offsetsDirUndetermined"
	IssueNotReadDir           = "notReadDir"           // only in a dir the assumed generation never reads
	IssuePermissionDenied     = "permissionDenied"     // kaasctl may not read the file
	IssueCorruptFile          = "corruptFile"          // brokers ignore the file
	IssueBadEntries           = "badEntries"           // keys or values kaas cannot use
	IssueLegacyDir            = "legacyDir"            // offsets only in DATA/__consumer_offsets
	IssueCurrentAndLegacy     = "currentAndLegacy"     // a file in both layouts
	IssueEntryDeadBroker      = "entryDeadBroker"      // explicit entry names a broker that is not alive
	IssueEntryUnknownBroker   = "entryUnknownBroker"   // explicit entry names a broker not in brokers[]
	IssueTiersDisagree        = "tiersDisagree"        // explicit entry ≠ hash tier: retiring it moves the group
	IssueDuplicateEntry       = "duplicateEntry"       // more than one consumerGroups[] entry
	IssueUnroundtrippableName = "unroundtrippableName" // kaas cannot write this group's file
	IssueNoCoordinator        = "noCoordinator"        // COORDINATOR_NOT_AVAILABLE
	IssueNoAssignment         = "noAssignment"         // assignment.json unreadable: coordinator unknown
	IssueStaleOnNonCoord      = "staleOnNonCoordinator"
	IssueFileOnly             = "fileOnly"
	IssueWireMismatch         = "wireMismatch"
)

// GroupFile is what groups list needs from one offset file: a summary, so a
// scan of 100,000 files keeps no file content.
type GroupFile struct {
	Group string `json:"group"`
	Path  string `json:"path"`
	// Layout is the file's dir's role under the volume's generation:
	// current (live), legacy (0.2.18), notRead, preMigration, undetermined.
	Layout string `json:"layout"`
	Format string `json:"format"` // envelope, plainMap, or "" when unreadable
	// Partitions is the number of committed partitions kaasctl could read.
	Partitions      int    `json:"partitions"`
	Corrupt         bool   `json:"corrupt"`
	Problem         string `json:"problem"`
	BadEntries      bool   `json:"badEntries"`
	BrokerSeesEmpty bool   `json:"brokerSeesEmpty"`
	// PlainMapUndetermined: a plain map on a volume whose generation is
	// not known (EMPTY to 0.2.18 brokers, offsets to older ones).
	PlainMapUndetermined bool `json:"plainMapUndetermined"`
	// Denied: kaasctl may not read the file (not corrupt).
	Denied       bool     `json:"permissionDenied"`
	NameProblems []string `json:"nameProblems"`
}

// SummarizeOffsetItem reduces one scanned offset file to a GroupFile.
func SummarizeOffsetItem(it *volume.OffsetScanItem) GroupFile {
	gf := GroupFile{Group: it.Group, Path: it.Path, Layout: it.Layout, NameProblems: it.NameProblems}
	if it.Err != nil {
		gf.Corrupt = !it.Denied
		gf.Denied = it.Denied
		gf.Problem = it.Err.Problem
	}
	if it.Summary.Format != "" {
		gf.Format = it.Summary.Format
		gf.Partitions = it.Summary.Partitions
	}
	if it.File != nil {
		gf.Format = it.File.Format
		gf.Partitions = len(it.File.Entries)
		gf.BrokerSeesEmpty = it.File.BrokerSeesEmpty
	}
	for _, f := range it.Findings {
		switch f.Code {
		case volume.CodePlainMapUndetermined:
			gf.PlainMapUndetermined = true
		case volume.CodeOffsetsBadKey, volume.CodeOffsetsBadValue:
			gf.BadEntries = true
		}
		if f.Code == volume.CodeOffsetsBadValue {
			// kaas cannot decode the file at all.
			gf.Corrupt = true
			if gf.Problem == "" {
				gf.Problem = f.Message
			}
		}
	}
	return gf
}

// GroupLive is what the live layer adds to a row (nil offline).
type GroupLive struct {
	State           string   `json:"state"`
	ProtocolType    string   `json:"protocolType"`
	Members         int      `json:"members"`
	WireCoordinator string   `json:"wireCoordinator"`
	ListedBy        []string `json:"listedBy"`
	// Protocol is the assignor; StaleOn the brokers listing the group
	// without coordinating it; WireError a failed FindCoordinator or
	// DescribeGroups for this group (live.go).
	Protocol  string   `json:"protocol"`
	StaleOn   []string `json:"staleOn"`
	WireError string   `json:"wireError,omitempty"`
}

// GroupRow is one line of 'groups list'.
type GroupRow struct {
	Group string `json:"group"`
	// Coordinator is computed from assignment.json ("" when none).
	Coordinator string `json:"coordinator"`
	Tier        string `json:"tier"`
	// HashCoordinator is what the hash tier alone says; ExplicitBroker the
	// winning consumerGroups[] entry ("" when none).
	HashCoordinator     string     `json:"hashCoordinator"`
	ExplicitBroker      string     `json:"explicitBroker"`
	CommittedPartitions int        `json:"committedPartitions"`
	Sources             []string   `json:"sources"`
	Issues              []string   `json:"issues"`
	Files               []string   `json:"files"`
	Live                *GroupLive `json:"live,omitempty"`
	// TopicOffsets is set by groups list --topic: per asked topic, the
	// partitions with a committed offset in the file and on the coordinator.
	TopicOffsets []TopicCommits `json:"topicOffsets,omitempty"`
}

// HasIssue reports whether the row carries flag.
func (r *GroupRow) HasIssue(flag string) bool { return slices.Contains(r.Issues, flag) }

// GroupsInput is everything offline groups analysis needs.
type GroupsInput struct {
	// Assignment may be nil when assignment.json is missing or unreadable.
	Assignment *volume.Assignment
	Files      []GroupFile
	// Extra names groups known from elsewhere (ListGroups answers): they
	// get a row with their computed coordinator and no source.
	Extra []string
	// IncludeCanaries keeps the probe's canary groups (IsCanary), which
	// every listing, metric and alert leaves out by default.
	IncludeCanaries bool
}

// BuildGroupRows returns one row per group known from offset files or
// explicit entries, sorted by group id.
func BuildGroupRows(in GroupsInput) []GroupRow {
	// Rows live in one slice (indexed by group) so 100,000 groups cost one
	// allocation, and machine output needs no nil-slice rewriting.
	n := len(in.Files) + len(in.Extra)
	if in.Assignment != nil {
		n += len(in.Assignment.ConsumerGroups)
	}
	idx := make(map[string]int, n)
	out := make([]GroupRow, 0, n)
	get := func(g string) *GroupRow {
		i, ok := idx[g]
		if !ok {
			i = len(out)
			idx[g] = i
			out = append(out, GroupRow{Group: g, Sources: []string{}, Issues: []string{}, Files: []string{}})
		}
		return &out[i]
	}
	// The winning (first) entry of each group is kept on its row, so
	// routing needs no second map of every entry.
	var ring *grouphash.Ring
	if a := in.Assignment; a != nil {
		ring = grouphash.NewRing(a.GrouphashBrokers())
		for _, e := range a.ConsumerGroups {
			r := get(e.GroupID)
			if slices.Contains(r.Sources, SourceEntry) {
				addOnce(&r.Issues, IssueDuplicateEntry)
				continue
			}
			r.Sources = append(r.Sources, SourceEntry)
			r.ExplicitBroker = e.Broker
		}
	}
	skip := func(g string) bool { return !in.IncludeCanaries && IsCanary(g) }
	for _, g := range in.Extra {
		if !skip(g) {
			get(g)
		}
	}
	hasCurrent := map[string]bool{}
	for i := range in.Files {
		if in.Files[i].Layout == volume.OffsetsCurrent {
			hasCurrent[in.Files[i].Group] = true
		}
	}
	for i := range in.Files {
		f := &in.Files[i]
		if skip(f.Group) {
			continue
		}
		r := get(f.Group)
		r.Files = append(r.Files, f.Path)
		live := f.Layout == volume.OffsetsCurrent
		legacy := f.Layout == volume.OffsetsLegacy
		switch {
		case live:
			addOnce(&r.Sources, SourceFile)
		case legacy:
			addOnce(&r.Sources, SourceLegacyFile)
		default:
			addOnce(&r.Sources, SourceOtherFile)
		}
		// The partition count is what brokers would load: the live file
		// when there is one, else the other one.
		if live || !hasCurrent[f.Group] {
			r.CommittedPartitions = f.Partitions
		}
		if f.Format == volume.FormatPlainMap {
			switch {
			case f.BrokerSeesEmpty:
				addOnce(&r.Issues, IssueLegacyPlainMap)
			case f.PlainMapUndetermined:
				addOnce(&r.Issues, IssuePlainMapUndetermined)
			}
		}
		switch f.Layout {
		case volume.OffsetsUndetermined:
			addOnce(&r.Issues, IssueOffsetsDirUnknown)
		case volume.OffsetsNotRead:
			if !hasCurrent[f.Group] {
				addOnce(&r.Issues, IssueNotReadDir)
			}
		}
		if f.Denied {
			addOnce(&r.Issues, IssuePermissionDenied)
		} else if f.Corrupt {
			addOnce(&r.Issues, IssueCorruptFile)
		} else if f.BadEntries {
			addOnce(&r.Issues, IssueBadEntries)
		}
		if legacy {
			if hasCurrent[f.Group] {
				addOnce(&r.Issues, IssueCurrentAndLegacy)
			} else {
				addOnce(&r.Issues, IssueLegacyDir)
			}
		}
		if len(f.NameProblems) > 0 {
			addOnce(&r.Issues, IssueUnroundtrippableName)
		}
	}
	for i := range out {
		r := &out[i]
		if ring == nil {
			r.Tier = string(grouphash.TierNone)
			addOnce(&r.Issues, IssueNoAssignment)
		} else {
			hasEntry := slices.Contains(r.Sources, SourceEntry)
			res := ring.ResolveGroup(r.Group, hasEntry, r.ExplicitBroker)
			r.Coordinator = res.Coordinator
			r.Tier = string(res.Tier)
			r.HashCoordinator = res.Hash.Coordinator
			if res.HasExplicit {
				switch {
				case !ring.Listed(res.ExplicitBroker):
					addOnce(&r.Issues, IssueEntryUnknownBroker)
				case !ring.Alive(res.ExplicitBroker):
					addOnce(&r.Issues, IssueEntryDeadBroker)
				}
				if res.ExplicitBroker != res.Hash.Coordinator {
					addOnce(&r.Issues, IssueTiersDisagree)
				}
			}
			if r.Coordinator == "" {
				addOnce(&r.Issues, IssueNoCoordinator)
			}
		}
		sortIssues(r.Issues)
		slices.Sort(r.Files)
	}
	slices.SortFunc(out, func(a, b GroupRow) int { return strings.Compare(a.Group, b.Group) })
	return out
}

var issueOrder = []string{IssuePermissionDenied, IssueCorruptFile, IssueLegacyPlainMap, IssueEntryUnknownBroker, IssueEntryDeadBroker, IssueNoCoordinator,
	IssueNoAssignment, IssueLegacyDir, IssueCurrentAndLegacy, IssuePlainMapUndetermined, IssueOffsetsDirUnknown, IssueNotReadDir, IssueBadEntries, IssueUnroundtrippableName, IssueTiersDisagree,
	IssueDuplicateEntry, IssueStaleOnNonCoord, IssueFileOnly, IssueWireMismatch}

func sortIssues(is []string) {
	slices.SortFunc(is, func(a, b string) int {
		ia, ib := slices.Index(issueOrder, a), slices.Index(issueOrder, b)
		if ia < 0 {
			ia = len(issueOrder)
		}
		if ib < 0 {
			ib = len(issueOrder)
		}
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
}

func addOnce(s *[]string, v string) {
	if !slices.Contains(*s, v) {
		*s = append(*s, v)
	}
}

// GroupFilter selects rows of 'groups list'. Zero values select everything.
type GroupFilter struct {
	Coordinator string
	Tier        string
	IssuesOnly  bool
	Issue       string // only rows with this issue flag
	Regex       *regexp.Regexp
}

// Match reports whether r passes the filter.
func (f GroupFilter) Match(r *GroupRow) bool {
	if f.Coordinator != "" && r.Coordinator != f.Coordinator {
		return false
	}
	if f.Tier != "" && r.Tier != f.Tier {
		return false
	}
	if f.IssuesOnly && len(r.Issues) == 0 {
		return false
	}
	if f.Issue != "" && !r.HasIssue(f.Issue) {
		return false
	}
	if f.Regex != nil && !f.Regex.MatchString(r.Group) {
		return false
	}
	return true
}

// FilterGroups keeps the rows that match (rows itself when the filter is
// empty; otherwise a new slice, rows is not modified).
func FilterGroups(rows []GroupRow, f GroupFilter) []GroupRow {
	if f == (GroupFilter{}) {
		return rows
	}
	n := 0
	for i := range rows {
		if f.Match(&rows[i]) {
			n++
		}
	}
	out := make([]GroupRow, 0, n)
	for i := range rows {
		if f.Match(&rows[i]) {
			out = append(out, rows[i])
		}
	}
	return out
}

// KnownIssues lists every issue flag, for help text and validation.
func KnownIssues() []string { return slices.Clone(issueOrder) }

// Package inspect is kaasctl's analysis: pure functions from parsed volume
// data (and, later, live broker answers) to the views commands print. No
// I/O happens here, so everything is testable with literals.
package inspect

import (
	"fmt"
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
	IssueSymlinkedFile        = "symlinkedFile"        // a link kaas follows; kaasctl does not read through it
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
	// IssueServedBehindLog: a broker serves a partition of the group below
	// the log end its segments gave before the brokers were asked (a stale
	// high watermark; groups describe with a volume and brokers).
	IssueServedBehindLog = "servedBehindLog"
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
	Denied bool `json:"permissionDenied"`
	// Linked: the file is a link kaas follows, which kaasctl does not read
	// through (not corrupt).
	Linked       bool     `json:"symlinked"`
	NameProblems []string `json:"nameProblems"`
}

// SummarizeOffsetItem reduces one scanned offset file to a GroupFile.
func SummarizeOffsetItem(it *volume.OffsetScanItem) GroupFile {
	gf := GroupFile{Group: it.Group, Path: it.Path, Layout: it.Layout, NameProblems: it.NameProblems}
	if it.Err != nil {
		gf.Corrupt = !it.Denied && !it.Linked
		gf.Denied, gf.Linked = it.Denied, it.Linked
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
	// Held says whether the group's coordinator holds it (its ListGroups
	// lists it): the read model's load rule (inspect.ResumeOffset) needs it.
	Held Held `json:"-"`
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
	// Forecast is the time to drain and retention forecast ('groups list
	// --drain-window'; nil without).
	Forecast *GroupForecast `json:"forecast,omitempty"`
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
func BuildGroupRows(in GroupsInput) []GroupRow { return BuildGroupRowsWhere(in, nil) }

// BuildGroupRowsWhere is BuildGroupRows keeping only the rows keep is true
// of (every row when keep is nil). A row left out is never copied: a shard
// of a tenth of a million groups holds a tenth of their rows.
func BuildGroupRowsWhere(in GroupsInput, keep func(*GroupRow) bool) []GroupRow {
	set := NewGroupRowSet(in)
	n := set.Len()
	if keep != nil {
		n = 0
	}
	out := make([]GroupRow, 0, n)
	set.Each(func(r *GroupRow) bool {
		if keep != nil && !keep(r) {
			return true
		}
		c := *r
		c.Sources = slices.Clone(r.Sources)
		c.Issues = slices.Clone(r.Issues)
		c.Files = slices.Clone(r.Files)
		out = append(out, c)
		return true
	})
	return out
}

// GroupRowSet is every group known from offset files, explicit entries and
// extra names, in group order, with each row built only when it is walked:
// a million groups cost an index of a million small keys, not a million
// rows (groups list streams them).
type GroupRowSet struct {
	in   GroupsInput
	ring *grouphash.Ring
	// keys holds one key per source item (entry, extra name, file),
	// sorted by group and then by source order; groups counts the
	// distinct groups.
	keys   []groupKey
	groups int
}

// groupKey is one source item of a group: src indexes the entries, then
// the extra names, then the files (GroupsInput order).
type groupKey struct {
	group string
	src   int
}

// NewGroupRowSet indexes in; in must not change while the set is used.
func NewGroupRowSet(in GroupsInput) *GroupRowSet {
	s := &GroupRowSet{in: in}
	var entries []volume.GroupEntry
	if in.Assignment != nil {
		entries = in.Assignment.ConsumerGroups
		s.ring = grouphash.NewRing(in.Assignment.GrouphashBrokers())
	}
	s.keys = make([]groupKey, 0, len(entries)+len(in.Extra)+len(in.Files))
	// The probe's canaries are left out unless asked for, also when kaas's
	// controller gave them explicit entries (it places one for every group
	// active at a recompute).
	skip := func(g string) bool { return !in.IncludeCanaries && IsCanary(g) }
	for i := range entries {
		if !skip(entries[i].GroupID) {
			s.keys = append(s.keys, groupKey{entries[i].GroupID, i})
		}
	}
	nEntryKeys := len(s.keys)
	for i, g := range in.Extra {
		if !skip(g) {
			s.keys = append(s.keys, groupKey{g, len(entries) + i})
		}
	}
	for i := range in.Files {
		if g := in.Files[i].Group; !skip(g) {
			s.keys = append(s.keys, groupKey{g, len(entries) + len(in.Extra) + i})
		}
	}
	sortKeys(s.keys, nEntryKeys)
	for i := range s.keys {
		if i == 0 || s.keys[i].group != s.keys[i-1].group {
			s.groups++
		}
	}
	return s
}

// compareKeys orders keys by group, then by source order.
func compareKeys(a, b groupKey) int {
	if c := strings.Compare(a.group, b.group); c != 0 {
		return c
	}
	return a.src - b.src
}

// sortKeys sorts keys, whose first n (the explicit entries, usually most
// of them and already in order, as kaas's controllers write them) and the
// rest are each sorted on their own and then merged: a million entries
// and 20,000 files sort in the time of the files.
func sortKeys(keys []groupKey, n int) {
	head, tail := keys[:n], keys[n:]
	slices.SortFunc(head, compareKeys)
	slices.SortFunc(tail, compareKeys)
	if len(tail) == 0 || len(head) == 0 || compareKeys(head[len(head)-1], tail[0]) <= 0 {
		return
	}
	// Merge from the back, the tail set aside: every source index of the
	// tail is above the head's, so equal groups keep source order.
	rest := slices.Clone(tail)
	i, j := len(head)-1, len(rest)-1
	for k := len(keys) - 1; j >= 0; k-- {
		if i >= 0 && compareKeys(head[i], rest[j]) > 0 {
			keys[k] = head[i]
			i--
		} else {
			keys[k] = rest[j]
			j--
		}
	}
}

// Len is the number of groups.
func (s *GroupRowSet) Len() int { return s.groups }

// Each calls fn with each group's row in group order until fn returns
// false. The row and its slices are reused for the next group: fn must
// copy what it keeps.
func (s *GroupRowSet) Each(fn func(r *GroupRow) bool) {
	r := GroupRow{Sources: make([]string, 0, 4), Issues: make([]string, 0, 4), Files: make([]string, 0, 2)}
	nEntries, nExtra := 0, len(s.in.Extra)
	if s.in.Assignment != nil {
		nEntries = len(s.in.Assignment.ConsumerGroups)
	}
	for i := 0; i < len(s.keys); {
		j := i + 1
		for j < len(s.keys) && s.keys[j].group == s.keys[i].group {
			j++
		}
		s.build(&r, s.keys[i:j], nEntries, nExtra)
		if !fn(&r) {
			return
		}
		i = j
	}
}

// build fills r from one group's keys (entries first in file order, then
// extra names, then files in input order).
func (s *GroupRowSet) build(r *GroupRow, keys []groupKey, nEntries, nExtra int) {
	*r = GroupRow{Group: keys[0].group, Sources: r.Sources[:0], Issues: r.Issues[:0], Files: r.Files[:0]}
	hasCurrent := false
	for _, k := range keys {
		if k.src >= nEntries+nExtra && s.in.Files[k.src-nEntries-nExtra].Layout == volume.OffsetsCurrent {
			hasCurrent = true
		}
	}
	for _, k := range keys {
		switch {
		case k.src < nEntries:
			// The winning (first) entry is kept on the row.
			if slices.Contains(r.Sources, SourceEntry) {
				addOnce(&r.Issues, IssueDuplicateEntry)
				continue
			}
			r.Sources = append(r.Sources, SourceEntry)
			r.ExplicitBroker = s.in.Assignment.ConsumerGroups[k.src].Broker
		case k.src < nEntries+nExtra:
			// A name known from elsewhere: a row, no source.
		default:
			addFile(r, &s.in.Files[k.src-nEntries-nExtra], hasCurrent)
		}
	}
	s.route(r)
	sortIssues(r.Issues)
	slices.Sort(r.Files)
}

// addFile adds one offset file to its group's row; hasCurrent says the
// group has a file in the live dir.
func addFile(r *GroupRow, f *GroupFile, hasCurrent bool) {
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
	if live || !hasCurrent {
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
		if !hasCurrent {
			addOnce(&r.Issues, IssueNotReadDir)
		}
	}
	if f.Denied {
		addOnce(&r.Issues, IssuePermissionDenied)
	} else if f.Linked {
		addOnce(&r.Issues, IssueSymlinkedFile)
	} else if f.Corrupt {
		addOnce(&r.Issues, IssueCorruptFile)
	} else if f.BadEntries {
		addOnce(&r.Issues, IssueBadEntries)
	}
	if legacy {
		if hasCurrent {
			addOnce(&r.Issues, IssueCurrentAndLegacy)
		} else {
			addOnce(&r.Issues, IssueLegacyDir)
		}
	}
	if len(f.NameProblems) > 0 {
		addOnce(&r.Issues, IssueUnroundtrippableName)
	}
}

// route sets the row's coordinator from the assignment's two tiers.
func (s *GroupRowSet) route(r *GroupRow) {
	if s.ring == nil {
		r.Tier = string(grouphash.TierNone)
		addOnce(&r.Issues, IssueNoAssignment)
		return
	}
	hasEntry := slices.Contains(r.Sources, SourceEntry)
	res := s.ring.ResolveGroup(r.Group, hasEntry, r.ExplicitBroker)
	r.Coordinator = res.Coordinator
	r.Tier = string(res.Tier)
	r.HashCoordinator = res.Hash.Coordinator
	if res.HasExplicit {
		switch {
		case !s.ring.Listed(res.ExplicitBroker):
			addOnce(&r.Issues, IssueEntryUnknownBroker)
		case !s.ring.Alive(res.ExplicitBroker):
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

var issueOrder = []string{IssuePermissionDenied, IssueSymlinkedFile, IssueCorruptFile, IssueLegacyPlainMap, IssueEntryUnknownBroker, IssueEntryDeadBroker, IssueNoCoordinator,
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

// CheckGroupFilter refuses a tier or an issue flag the rows never carry.
func CheckGroupFilter(f GroupFilter) error {
	tiers := []string{string(grouphash.TierExplicit), string(grouphash.TierHash), string(grouphash.TierHashFallback), string(grouphash.TierNone)}
	if f.Tier != "" && !slices.Contains(tiers, f.Tier) {
		return fmt.Errorf("--tier %q: choose explicit, hash, hash-fallback or none", f.Tier)
	}
	if known := KnownIssues(); f.Issue != "" && !slices.Contains(known, f.Issue) {
		return fmt.Errorf("--issue %q: known flags are %s", f.Issue, strings.Join(known, ", "))
	}
	return nil
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

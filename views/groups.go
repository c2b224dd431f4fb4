package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/render"
)

// GroupsSourcesView says which sources a groups command used.
type GroupsSourcesView struct {
	Assignment   string `json:"assignment"`
	AssignmentOK bool   `json:"assignmentOk"`
	OffsetsDir   string `json:"offsetsDir"`
	LegacyDir    string `json:"legacyOffsetsDir"`
	// OffsetFiles counts the offset files read: all of them for list,
	// --all and --regex; the named groups' own for describe GROUP...
	OffsetFiles int `json:"offsetFiles"`
	// Generation is the kaas generation assumed for the volume and why
	// (absent without a volume).
	Generation    *volume.GenerationInfo `json:"generation,omitempty"`
	ExplicitCount int                    `json:"explicitEntries"`
	Live          bool                   `json:"live"`
	// Mode and Brokers are set when brokers were asked: mode "live"
	// (brokers only) or "merged" (volume and brokers).
	Mode    string             `json:"mode,omitempty"`
	Brokers []BrokerSourceView `json:"brokers,omitempty"`
}

// GroupsListView is the machine document of 'groups list'.
type GroupsListView struct {
	Sources GroupsSourcesView  `json:"sources"`
	Total   int                `json:"total"`
	Shown   int                `json:"shown"`
	Groups  []inspect.GroupRow `json:"groups"`
}

// GroupsListOutput is the offline list for format f: a row per group
// shown, and what the filters left out.
func GroupsListOutput(f render.Format, v GroupsListView) render.Output {
	var t *render.TableData
	if needsTable(f) {
		t = render.NewTable("GROUP", "COORDINATOR", "TIER", "PARTITIONS", "SOURCES", "ISSUES", "HASH-COORDINATOR+", "EXPLICIT-BROKER+", "FILES+")
		t.Rows = make([][]string, 0, len(v.Groups))
		for _, r := range v.Groups {
			t.Add(cellName(f, r.Group), r.Coordinator, r.Tier, strconv.Itoa(r.CommittedPartitions), strings.Join(r.Sources, ","),
				strings.Join(r.Issues, ","), r.HashCoordinator, r.ExplicitBroker, filesCell(r.Files))
		}
	}
	return render.Output{Data: v, Items: v.Groups, Table: t, Human: func(p *render.Printer) error {
		return FilteredTable(p, t, v.Shown, v.Total, "groups", "no groups"+filteredSuffix(v.Total))
	}}
}

// needsTable reports whether the output format prints a table (people's
// formats and csv): json, jsonl and yaml never build one, which for a
// million rows is most of the memory.
func needsTable(f render.Format) bool {
	return !f.Machine() || f == render.CSV
}

func filteredSuffix(total int) string {
	if total == 0 {
		return " on this volume"
	}
	return " match (" + render.Plural(total, "group", "groups") + " on the volume)"
}

// filesCell lists a group's offset files whole (the printer escapes what
// a terminal must not see; csv carries the paths unchanged).
func filesCell(files []string) string { return strings.Join(files, " ") }

// LiveListOutput is the live list for format f: the sources line, a row
// per group shown, and what the filters left out.
func LiveListOutput(f render.Format, v GroupsListView, hasVolume bool, header []string) render.Output {
	t := liveListTable(f, hasVolume, v.Groups)
	return render.Output{Data: v, Items: v.Groups, Table: t, Human: func(p *render.Printer) error {
		fmt.Fprintf(p.Out, "sources: %s\n", strings.Join(header, "; "))
		empty := "no groups"
		if v.Total > 0 {
			empty = fmt.Sprintf("no groups match (%s known)", render.Plural(v.Total, "group", "groups"))
		}
		return FilteredTable(p, t, v.Shown, v.Total, "groups", empty)
	}}
}

// liveListTable is the live list's table: merged columns with a volume,
// fewer without (nil for json, jsonl and yaml).
func liveListTable(f render.Format, hasVolume bool, rows []inspect.GroupRow) *render.TableData {
	var t *render.TableData
	switch {
	case !needsTable(f):
	case hasVolume:
		t = render.NewTable("GROUP", "STATE", "MEMBERS", "COORDINATOR", "WIRE", "TIER", "PARTITIONS", "SOURCES", "ISSUES",
			"PROTOCOL+", "LISTED-BY+", "HASH-COORDINATOR+", "EXPLICIT-BROKER+", "DRAIN+", "RETENTION+", "FILES+")
		t.AddRows(len(rows), func(i int, c []string) {
			r := &rows[i]
			copy(c, []string{cellName(f, r.Group), listStateCell(r.Live), listMembersCell(r.Live), render.Dash(r.Coordinator), listWireCell(r.Live), r.Tier,
				strconv.Itoa(r.CommittedPartitions), strings.Join(r.Sources, ","), strings.Join(r.Issues, ","),
				r.Live.Protocol, strings.Join(r.Live.ListedBy, ","), r.HashCoordinator, r.ExplicitBroker, forecastDrainCell(r.Forecast), forecastRetentionCell(r.Forecast), filesCell(r.Files)})
		})
	default:
		t = render.NewTable("GROUP", "STATE", "PROTOCOL", "MEMBERS", "COORDINATOR", "LISTED-BY", "ISSUES", "PROTOCOL-TYPE+", "DRAIN+", "RETENTION+")
		t.AddRows(len(rows), func(i int, c []string) {
			r := &rows[i]
			copy(c, []string{cellName(f, r.Group), listStateCell(r.Live), r.Live.Protocol, listMembersCell(r.Live), listWireCell(r.Live),
				strings.Join(r.Live.ListedBy, ","), strings.Join(r.Issues, ","), r.Live.ProtocolType, forecastDrainCell(r.Forecast), forecastRetentionCell(r.Forecast)})
		})
	}
	return t
}

func listStateCell(l *inspect.GroupLive) string {
	if l == nil || l.State == "" {
		return "-"
	}
	return l.State
}

func listMembersCell(l *inspect.GroupLive) string {
	if l == nil || l.State == "" {
		return "-"
	}
	return strconv.Itoa(l.Members)
}

func listWireCell(l *inspect.GroupLive) string {
	if l == nil {
		return "-"
	}
	if l.WireCoordinator == "" {
		if l.WireError != "" {
			return "error"
		}
		return "-"
	}
	return l.WireCoordinator
}

// BrokerSourceView is one broker as a source of a live command.
type BrokerSourceView = inspect.BrokerSource

// BrokersLine is the header line naming the brokers used.
func BrokersLine(bs []BrokerSourceView) string {
	var ok, bad []string
	for _, b := range bs {
		if b.Answered {
			ok = append(ok, b.Broker)
		} else {
			bad = append(bad, b.Broker)
		}
	}
	s := fmt.Sprintf("brokers %s (%d of %d answered)", strings.Join(ok, ","), len(ok), len(bs))
	if len(ok) == 0 {
		s = fmt.Sprintf("brokers: none of %d answered", len(bs))
	}
	if len(bad) > 0 {
		s += "; unreachable: " + strings.Join(bad, ",")
	}
	return s
}

// VolumeLine is the header line naming the volume used.
func VolumeLine(l volume.Layout, a *volume.Assignment, files int) string {
	s := "volume " + volume.DisplayName(l.ClusterDir)
	if a != nil {
		s += fmt.Sprintf(" (assignment v%d, %s, %s)", a.AssignmentVersion, render.Plural(files, "offset file", "offset files"),
			render.Plural(len(a.ConsumerGroups), "explicit entry", "explicit entries"))
	} else {
		s += fmt.Sprintf(" (assignment unreadable, %s)", render.Plural(files, "offset file", "offset files"))
	}
	return s + "; " + l.Gen.Summary()
}

// VolumeSources fills the volume half of a sources view: the assignment,
// the live offsets dir of the volume's generation (CD/__consumer_offsets
// when it cannot be told), the 0.2.18 legacy dir, and the generation
// assumed and why.
func VolumeSources(v *GroupsSourcesView, l volume.Layout, a *volume.Assignment, sr volume.ScanResult) {
	gi := sr.Generation
	if !gi.Resolved() {
		gi = l.WithGeneration().Gen
	}
	v.Assignment, v.AssignmentOK, v.LegacyDir, v.OffsetFiles = l.AssignmentPath(), a != nil, sr.LegacyDir, sr.Files
	v.OffsetsDir = l.FollowedOffsetsDir()
	v.Generation = &gi
	if a != nil {
		v.ExplicitCount = a.EntryCount()
	}
}

// ListVolume is what groups list read from the volume (Has false: none).
type ListVolume struct {
	Has        bool
	Layout     volume.Layout
	Assignment *volume.Assignment
	Files      []inspect.GroupFile
	// FileTopics: group → topic → committed partitions (--topic).
	FileTopics map[string]map[string]int
	Scan       volume.ScanResult
}

// LiveListHeader fills the volume's half of a live list's sources and
// returns its header's lines: the volume (or "no volume"), then the
// brokers.
func LiveListHeader(notes render.Notes, vol ListVolume, src *GroupsSourcesView) []string {
	var header []string
	if vol.Has {
		src.Mode = "merged"
		VolumeSources(src, vol.Layout, vol.Assignment, vol.Scan)
		header = append(header, VolumeLine(vol.Layout, vol.Assignment, vol.Scan.Files))
		WarnGeneration(notes, vol.Scan)
	} else {
		header = append(header, "no volume: live state only (no offset files, explicit entries or computed coordinators; pass --data-dir for the merged view)")
	}
	return append(header, BrokersLine(src.Brokers))
}

// NoteOfflineList says what an offline list read; genNote names the kaas
// generation assumed.
func NoteOfflineList(notes render.Notes, vol ListVolume, explicit int, genNote string) {
	notes.Notef("offline: %s from the volume and %s; no broker was asked (live state is not shown); %s",
		render.Plural(vol.Scan.Files, "offset file", "offset files"), render.Plural(explicit, "explicit entry", "explicit entries"), genNote)
	WarnGeneration(notes, vol.Scan)
}

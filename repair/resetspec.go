package repair

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/when"
	"github.com/kaasctl/kaasctl/render"
)

// SpecKind is how new offsets are chosen (Kafka's reset matrix).
type SpecKind string

const (
	ToEarliest SpecKind = "to-earliest"
	ToLatest   SpecKind = "to-latest"
	ToCurrent  SpecKind = "to-current"
	ToOffset   SpecKind = "to-offset"
	ShiftBy    SpecKind = "shift-by"
	ToDatetime SpecKind = "to-datetime"
	ByDuration SpecKind = "by-duration"
	FromFile   SpecKind = "from-file"
	// ToGroup copies the committed offsets of another group (Source).
	ToGroup SpecKind = "to-group"
)

// Spec is one reset specification.
type Spec struct {
	Kind   SpecKind
	Offset int64     // to-offset
	Shift  int64     // shift-by
	Time   time.Time // to-datetime, and by-duration resolved against now
	File   FilePlan  // from-file; for to-group, the source's offsets once resolved
	Source string    // to-group: the group whose offsets are copied
	// Zone says how a --to-datetime without a zone was read ("" when the
	// value named its zone).
	Zone string
	// Origin, when set, is how the user asked for this spec (a restore
	// from history is planned as a from-file spec).
	Origin string
	// AllowUnverifiedLogEnd (--allow-unverified-log-end) plans rows whose
	// log end kaasctl could not verify (no broker, no readable segment
	// file: at most manifest.json, which trails the log) instead of
	// refusing them; every such row says so.
	AllowUnverifiedLogEnd bool
}

// UnverifiedFlag is the override the refusals name.
const UnverifiedFlag = "--allow-unverified-log-end"

// NeedsTime reports whether the spec needs offsets looked up by timestamp.
func (s Spec) NeedsTime() bool { return s.Kind == ToDatetime || s.Kind == ByDuration }

// String is the spec as the user would write it.
func (s Spec) String() string {
	if s.Origin != "" {
		return s.Origin
	}
	switch s.Kind {
	case ToOffset:
		return fmt.Sprintf("--to-offset %d", s.Offset)
	case ShiftBy:
		return fmt.Sprintf("--shift-by %+d", s.Shift)
	case ToDatetime, ByDuration:
		if s.Zone != "" {
			return fmt.Sprintf("--%s (%s, read as %s)", s.Kind, s.Time.UTC().Format(time.RFC3339Nano), s.Zone)
		}
		return fmt.Sprintf("--%s (%s)", s.Kind, s.Time.UTC().Format(time.RFC3339Nano))
	case ToGroup:
		return "--to-group " + s.Source
	}
	return "--" + string(s.Kind)
}

// validTopic checks a topic name against Kafka's rules (letters, digits,
// '.', '_', '-'; at most 249 characters).
func validTopic(t string) bool {
	if len(t) < 1 || len(t) > 249 {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// TopicScope is one --topic value: a topic, and optionally partitions.
type TopicScope struct {
	Topic      string
	Partitions []int32 // nil: every partition
}

// ParseTopicScope reads "orders" or "orders:0,2,5".
func ParseTopicScope(s string) (TopicScope, error) {
	topic, parts, hasParts := strings.Cut(s, ":") // topic names cannot hold ':'
	if !validTopic(topic) {
		return TopicScope{}, fmt.Errorf("--topic %q: %q is not a valid topic name (letters, digits, '.', '_', '-')", s, topic)
	}
	ts := TopicScope{Topic: topic}
	if !hasParts {
		return ts, nil
	}
	for _, p := range strings.Split(parts, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return TopicScope{}, fmt.Errorf("--topic %q: %q is not a partition number", s, p)
		}
		if !slices.Contains(ts.Partitions, int32(n)) {
			ts.Partitions = append(ts.Partitions, int32(n))
		}
	}
	slices.Sort(ts.Partitions)
	return ts, nil
}

// FileRow is one line of a reset plan file.
type FileRow struct {
	Group     string // "" in the one-group layout
	Topic     string
	Partition int32
	Offset    int64
}

// FilePlan is a parsed --from-file.
type FilePlan struct {
	Rows []FileRow
	// MultiGroup is true for the group,topic,partition,offset layout.
	MultiGroup bool
	// byGroup indexes a multi-group plan's rows (Indexed), so that each
	// group's rows are found without reading every row again: a plan of a
	// million rows over many groups stays linear.
	byGroup map[string][]FileRow
}

// Indexed returns the plan with its rows indexed by group.
func (fp FilePlan) Indexed() FilePlan {
	if !fp.MultiGroup || fp.byGroup != nil {
		return fp
	}
	fp.byGroup = map[string][]FileRow{}
	for _, r := range fp.Rows {
		fp.byGroup[r.Group] = append(fp.byGroup[r.Group], r)
	}
	return fp
}

// ForGroup returns the rows that apply to group.
func (fp FilePlan) ForGroup(group string) []FileRow {
	if !fp.MultiGroup {
		return fp.Rows
	}
	if fp.byGroup != nil {
		return fp.byGroup[group]
	}
	var out []FileRow
	for _, r := range fp.Rows {
		if r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

// ParseResetCSV reads a plan in either layout kafka-consumer-groups.sh
// writes with --export: topic,partition,offset (one group) or
// group,topic,partition,offset (several). A header row is skipped; blank
// lines and lines starting with '#' are ignored. name is used in messages.
func ParseResetCSV(r io.Reader, name string) (FilePlan, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	var fp FilePlan
	width := 0
	seen := map[FileRow]bool{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return FilePlan{}, fmt.Errorf("%s: %w", name, err)
		}
		ln, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 3 && len(rec) != 4 {
			return FilePlan{}, fmt.Errorf("%s:%d: %d fields; want topic,partition,offset or group,topic,partition,offset", name, ln, len(rec))
		}
		if width == 0 {
			width = len(rec)
			fp.MultiGroup = width == 4
			// A header row names its columns.
			if strings.EqualFold(strings.TrimSpace(rec[width-2]), "partition") {
				continue
			}
		} else if len(rec) != width {
			return FilePlan{}, fmt.Errorf("%s:%d: %d fields, but earlier lines have %d: one file holds one layout", name, ln, len(rec), width)
		}
		row, err := parseCSVRow(rec, name, ln)
		if err != nil {
			return FilePlan{}, err
		}
		key := FileRow{Group: row.Group, Topic: row.Topic, Partition: row.Partition}
		if seen[key] {
			return FilePlan{}, fmt.Errorf("%s:%d: %s partition %d is listed twice", name, ln, row.Topic, row.Partition)
		}
		seen[key] = true
		fp.Rows = append(fp.Rows, row)
	}
	if len(fp.Rows) == 0 {
		return FilePlan{}, fmt.Errorf("%s: no offsets in the file", name)
	}
	return fp.Indexed(), nil
}

// parseCSVRow reads one plan row (line ln of file name): its group in
// the four-field layout, topic, partition and offset, each checked.
func parseCSVRow(rec []string, name string, ln int) (FileRow, error) {
	var row FileRow
	f := rec
	if len(rec) == 4 {
		row.Group, f = strings.TrimSpace(rec[0]), rec[1:]
		if row.Group == "" {
			return row, fmt.Errorf("%s:%d: empty group", name, ln)
		}
	}
	row.Topic = strings.TrimSpace(f[0])
	if !validTopic(row.Topic) {
		return row, fmt.Errorf("%s:%d: %q is not a valid topic name", name, ln, row.Topic)
	}
	p, err := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 32)
	if err != nil || p < 0 {
		return row, fmt.Errorf("%s:%d: partition %q is not a partition number", name, ln, f[1])
	}
	o, err := strconv.ParseInt(strings.TrimSpace(f[2]), 10, 64)
	if err != nil || o < 0 {
		return row, fmt.Errorf("%s:%d: offset %q is not an offset (a whole number >= 0)", name, ln, f[2])
	}
	row.Partition, row.Offset = int32(p), o
	return row, nil
}

// ExportCSV writes a plan in kafka-consumer-groups.sh's --export layout:
// topic,partition,offset for one group, group,topic,partition,offset for
// several. Rows that cannot be executed are left out. A group id that
// starts with '#' is quoted, so it is not read back as a comment.
func ExportCSV(w io.Writer, rows []PlanRow, multiGroup bool) error {
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		if multiGroup {
			bw.WriteString(csvField(r.Group))
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "%s,%d,%d\n", csvField(r.Topic), r.Partition, r.New)
	}
	return bw.Flush()
}

// csvField quotes a field when a CSV reader could misread it.
func csvField(s string) string {
	if s == "" || strings.ContainsAny(s, ",\"\r\n") || s[0] == '#' || s[0] == ' ' || s[0] == '\t' {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// SpecKinds are the reset specifications in Kafka's order, each named as
// the flag that asks for it.
var SpecKinds = []SpecKind{ToDatetime, ByDuration, ToEarliest, ToLatest, ShiftBy, FromFile, ToCurrent, ToOffset, ToGroup, ToHistory, ToHistoryBeforeAnomaly}

// ParseSpec reads the reset specification kind asked for with value (its
// flag's text; a switch's is not read), a time read against now; what the
// user should know of how a time was read goes to notes. A from-file spec
// only names its kind here (ReadFromFile reads the file). Bad values are
// usage errors.
func ParseSpec(kind SpecKind, value string, now time.Time, notes render.Notes) (Spec, error) {
	sp := Spec{Kind: kind}
	switch kind {
	case ToOffset:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil || n < 0 {
			return sp, exit.UsageErrorf("--to-offset %q: an offset is a whole number >= 0", value)
		}
		sp.Offset = n
	case ShiftBy:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return sp, exit.UsageErrorf("--shift-by %q: a whole number, e.g. -100 or +20", value)
		}
		sp.Shift = n
	case ToGroup:
		if sp.Source = strings.TrimSpace(value); sp.Source == "" {
			return sp, exit.UsageErrorf("--to-group: name the group whose committed offsets to copy")
		}
	case ToDatetime, ByDuration, ToHistory:
		return parseTimeSpec(kind, value, now, notes)
	case ToHistoryBeforeAnomaly:
		sp.Origin = "--to-history-before-anomaly"
	}
	return sp, nil
}

// parseTimeSpec reads --to-datetime, --by-duration (now minus it) or
// --to-history (internal/when's grammar).
func parseTimeSpec(kind SpecKind, value string, now time.Time, notes render.Notes) (Spec, error) {
	sp := Spec{Kind: kind}
	if kind == ByDuration {
		d, err := when.ParseDuration(value)
		if err != nil {
			return sp, exit.UsageErrorf("--by-duration %q: %v", value, err)
		}
		if d < 0 {
			notes.Warnf("--by-duration %s is negative: as in Java's Duration (what kafka-consumer-groups.sh reads), now minus it is %s in the future, which no record has reached, so every partition resets to its log end", value, -d)
		}
		sp.Time = now.Add(-d)
		return sp, nil
	}
	var note string
	if value != "" || kind == ToDatetime {
		var err error
		if sp.Time, note, err = when.ParseTime(value, now); err != nil {
			return sp, exit.UsageErrorf("--%s %q: %v", kind, value, err)
		}
	}
	if kind == ToHistory {
		if note != "" {
			notes.Warnf("--to-history: %s", note)
		}
		sp.Origin = "--to-history " + sp.Time.UTC().Format(time.RFC3339Nano)
	} else if note != "" {
		notes.Warnf("--to-datetime %s", note)
		sp.Zone = "UTC (no zone given)"
	}
	return sp, nil
}

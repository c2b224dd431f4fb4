package repair

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// A group's offsets history, and the restore spec built on it: `offsets
// history` shows the timeline; `offsets reset --to-history TIME` and
// `--to-history-before-anomaly` plan the offsets the group had then and go
// through the one reset path (the plan is a from-file spec).

// Backup is one copy kaasctl kept beside a file before rewriting it.
type Backup struct {
	Path string
	// Time is when kaasctl rewrote the file (the backup holds the content
	// from just before).
	Time time.Time
}

// ListBackups lists kaasctl's backups of path (<path>.kaasctl-bak-<UTC
// time>[-n], written by WriteFileAtomic), oldest first. This is the one
// place that knows how backups are named and where they live.
func ListBackups(path string) ([]Backup, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	prefix := BackupStem(base) + BackupSuffix
	var out []Backup
	for _, e := range ents {
		stamp, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if i := strings.IndexByte(stamp, '-'); i >= 0 {
			stamp = stamp[:i]
		}
		t, err := time.Parse(backupStamp, stamp)
		if err != nil {
			continue
		}
		out = append(out, Backup{Path: filepath.Join(dir, e.Name()), Time: t})
	}
	slices.SortStableFunc(out, func(a, b Backup) int { return a.Time.Compare(b.Time) })
	return out, nil
}

// KindBeforeRewrite marks the history point of a file's oldest kaasctl
// backup: the state before kaasctl first rewrote the file, which also
// stands for every earlier moment (nothing older is recorded).
const KindBeforeRewrite = "before-rewrite"

// HistorySource says where a group's history is read from.
type HistorySource struct {
	// JournalDir is an offsets journal (see watch.ResolveOffsetJournal);
	// empty: backups only.
	JournalDir string
	// Layout locates the group's file, whose backups are read (current
	// and legacy offsets dirs).
	Layout       volume.Layout
	Since, Until time.Time
	// Now is the clock that tells a backup named for the future (zero:
	// time.Now).
	Now time.Time
}

// GroupHistory is one group's timeline: journal records and backups
// merged by time.
type GroupHistory struct {
	Group    string               `json:"group"`
	Points   []watch.HistoryPoint `json:"points"`
	Journal  string               `json:"journal,omitempty"`
	Backups  []string             `json:"backups"`
	Warnings []string             `json:"warnings"`
}

// LoadGroupHistory reads a group's history from the journal and from
// kaasctl's backups beside its offset file. Points before Since are
// dropped except the last one (the state at Since); points after Until
// are dropped.
func LoadGroupHistory(src HistorySource, group string) (GroupHistory, error) {
	h := GroupHistory{Group: group, Points: []watch.HistoryPoint{}, Backups: []string{}, Warnings: []string{}}
	pts, err := journalPoints(src, group, &h)
	if err != nil {
		return h, err
	}
	journalled := len(pts)
	plainMapIsEmpty := src.Layout.Gen.Gen.Known() && !src.Layout.Gen.Gen.PlainMapIsOffsets()
	now := src.Now
	if now.IsZero() {
		now = time.Now()
	}
	for _, f := range historyFiles(src.Layout, group) {
		chain := backupChain(f, now, &h)
		if len(chain) == 0 {
			continue
		}
		markBackupAnomalies(chain, pts[:journalled], group, plainMapIsEmpty)
		pts = append(pts, chain...)
	}
	h.Points = append(h.Points, historyRange(mergeHistory(pts[:journalled], pts[journalled:]), src.Since, src.Until)...)
	return h, nil
}

// journalPoints is the group's timeline replayed from the journal, when
// one is given (its dir and warnings go into h).
func journalPoints(src HistorySource, group string, h *GroupHistory) ([]watch.HistoryPoint, error) {
	if src.JournalDir == "" {
		return nil, nil
	}
	dir, err := watch.ResolveOffsetJournal(src.JournalDir)
	if err != nil {
		return nil, err
	}
	h.Journal = dir
	jr, err := watch.ReadOffsetJournal(dir, watch.JournalReadOptions{Group: group, Since: src.Since, Until: src.Until})
	if err != nil {
		return nil, err
	}
	h.Warnings = append(h.Warnings, jr.Warnings...)
	return watch.ReplayGroup(jr.Records, group), nil
}

// historyFiles is where the group's file is and was: in the live offsets
// dir, and in the other offsets dirs (backups of a file kaasctl rewrote
// before a migration, or while the generation was pinned otherwise).
func historyFiles(l volume.Layout, group string) []string {
	p, err := GroupFilePath(l, group)
	if err != nil {
		return nil
	}
	files := []string{p}
	for _, od := range l.OffsetsDirs() {
		d := od.Path
		if o := filepath.Join(d, group+".json"); o != p && !volume.SameDir(d, filepath.Dir(p)) {
			files = append(files, o)
		}
	}
	return files
}

// backupChain is the history kaasctl's backups of file f tell (nil when it
// has none that can be read; their paths and problems go into h). A backup
// taken at time T holds the state up to T; from T on the file held what
// kaasctl wrote, last known as the next backup's copy or, after the last
// rewrite, the file itself. So the points are: the first backup just
// before its rewrite (it stands for the time before, too: see TargetAt),
// then at each rewrite the next copy, and at the last rewrite the current
// file.
func backupChain(f string, now time.Time, h *GroupHistory) []watch.HistoryPoint {
	bs, err := ListBackups(f)
	if err != nil {
		h.Warnings = append(h.Warnings, fmt.Sprintf("backups of %s: %v", f, err))
		return nil
	}
	bs = dropFutureBackups(bs, now, &h.Warnings)
	type copyOf struct {
		at   time.Time
		path string
		of   *volume.OffsetFile
	}
	var copies []copyOf
	for _, b := range bs {
		of, _, err := volume.ReadOffsetFile(b.Path)
		if err != nil {
			h.Warnings = append(h.Warnings, fmt.Sprintf("backup %s: %v (skipped)", b.Path, err))
			continue
		}
		h.Backups = append(h.Backups, b.Path)
		copies = append(copies, copyOf{b.Time, b.Path, of})
	}
	if len(copies) == 0 {
		return nil
	}
	chain := []watch.HistoryPoint{backupPoint(copies[0].at.Add(-time.Nanosecond), "backup", KindBeforeRewrite, copies[0].path, copies[0].of)}
	for i, c := range copies {
		if i+1 < len(copies) {
			n := copies[i+1]
			chain = append(chain, backupPoint(c.at, "backup", watch.RecSnapshot, n.path, n.of))
			continue
		}
		cur, _, err := volume.ReadOffsetFile(f)
		if err != nil {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%s: %v (the state after kaasctl's last rewrite at %s is unknown)", f, err, c.at.UTC().Format(time.RFC3339Nano)))
			continue
		}
		chain = append(chain, backupPoint(c.at, "file", watch.RecSnapshot, f, cur))
	}
	return chain
}

// backupPoint is the history point of the offsets of, read from file.
func backupPoint(at time.Time, source, kind, file string, of *volume.OffsetFile) watch.HistoryPoint {
	offs := map[string]int64{}
	for _, e := range of.Entries {
		offs[e.Topic+"/"+fmt.Sprint(e.Partition)] = e.Offset
	}
	return watch.HistoryPoint{Time: at, Source: source, Kind: kind, File: file, Format: of.Format,
		Offsets: offs, Changed: map[string]int64{}, Removed: []string{}, Anomalies: []watch.JournalAnomaly{}}
}

// historyRange keeps the points from the last one before since (the state
// then, its anomalies out of range) to the latest one at or before until
// (after a clock that stepped back, its latest pass); zero bounds are
// open. When none is that early, the state kaasctl saved before its first
// rewrite still answers: it also held before.
func historyRange(pts []watch.HistoryPoint, since, until time.Time) []watch.HistoryPoint {
	start, end := 0, len(pts)-1
	for i, p := range pts {
		if !since.IsZero() && p.Time.Before(since) {
			start = i
		}
	}
	if !until.IsZero() {
		end = -1
		for i, p := range pts {
			if !p.Time.After(until) {
				end = i
			}
		}
	}
	out := []watch.HistoryPoint{}
	for i, p := range pts[start:] {
		if i+start > end {
			if i == 0 && p.Kind == KindBeforeRewrite {
				out = append(out, p)
			}
			break
		}
		if !since.IsZero() && p.Time.Before(since) {
			p.Anomalies = []watch.JournalAnomaly{}
		}
		out = append(out, p)
	}
	return out
}

// dropFutureBackups leaves out the backups named for a time after now: no
// point in any history (a clock that was ahead, or a file kaasctl did not
// make), each with a warning.
func dropFutureBackups(bs []Backup, now time.Time, warnings *[]string) []Backup {
	return slices.DeleteFunc(bs, func(b Backup) bool {
		if !b.Time.After(now.Add(volume.FutureSlack)) {
			return false
		}
		*warnings = append(*warnings, fmt.Sprintf("backup %s is named for %s, in the future: it is no point in the history (a clock that was ahead, or a file kaasctl did not make); check it, then remove it", b.Path, b.Time.UTC().Format(time.RFC3339Nano)))
		return true
	})
}

// mergeHistory merges the journal's points (in the journal's own order:
// its times are labels a clock that stepped back can repeat) with the
// backups' points (each kaasctl rewrite, ordered by its time) by time,
// never reordering the journal's.
func mergeHistory(journal, backups []watch.HistoryPoint) []watch.HistoryPoint {
	slices.SortStableFunc(backups, func(a, b watch.HistoryPoint) int { return a.Time.Compare(b.Time) })
	out := make([]watch.HistoryPoint, 0, len(journal)+len(backups))
	for len(journal) > 0 && len(backups) > 0 {
		if backups[0].Time.Before(journal[0].Time) {
			out, backups = append(out, backups[0]), backups[1:]
		} else {
			out, journal = append(out, journal[0]), journal[1:]
		}
	}
	return append(append(out, journal...), backups...)
}

// markBackupAnomalies flags, on each point of one file's backup chain, the
// anomalies between it and the chain's previous point, by the detection
// the journal uses (inspect.CompareOffsetObservations): a chain of
// rewinds kaasctl made (--shift-by -1, a bad --to-offset) is marked
// whether or not a journal recorded it. An anomaly the journal holds too
// (the same kind, partition, before and after, recorded at or after the
// previous chain point) is the journal's: it is not counted twice.
func markBackupAnomalies(chain, journal []watch.HistoryPoint, group string, plainMapIsEmpty bool) {
	used := map[[2]int]bool{}
	obs := func(p watch.HistoryPoint) inspect.OffsetObservation {
		return inspect.OffsetObservation{Time: p.Time, Group: group, File: p.File, Format: p.Format, Offsets: p.Offsets}
	}
	for i := 1; i < len(chain); i++ {
		prev := chain[i-1]
	next:
		for _, a := range inspect.CompareOffsetObservations(obs(prev), obs(chain[i]), plainMapIsEmpty) {
			for j, jp := range journal {
				if jp.Time.Before(prev.Time) {
					continue
				}
				for k, ja := range jp.Anomalies {
					if !used[[2]int{j, k}] && ja.Kind == a.Kind && ja.Partition == a.Partition && ja.Before == a.Before && ja.After == a.After {
						used[[2]int{j, k}] = true
						continue next
					}
				}
			}
			chain[i].Anomalies = append(chain[i].Anomalies, watch.JournalAnomaly{Kind: a.Kind, Partition: a.Partition, Before: a.Before, After: a.After, Detail: a.Detail})
		}
	}
}

// HistoryTarget is the state a restore plans for one group.
type HistoryTarget struct {
	Group string
	// At is the moment restored: the time asked for, or the last good
	// point before the anomaly.
	At time.Time
	// Point is the history point whose state is restored.
	Point   watch.HistoryPoint
	Offsets map[string]int64
	// Anomaly is the first anomaly of the incident the restore undoes
	// (before-anomaly only), Later the count of the incident's other
	// anomalies, and EarlierIncidents the incidents before it, left alone.
	Anomaly          *watch.JournalAnomaly
	AnomalyTime      time.Time
	Later            int
	EarlierIncidents int
	Notes            []string
}

// TargetAt is the group's state at t: the last point at or before t.
func TargetAt(h GroupHistory, t time.Time) (HistoryTarget, error) {
	idx := -1
	for i, p := range h.Points {
		if !p.Time.After(t) {
			idx = i
		}
	}
	if idx < 0 && len(h.Points) > 0 && h.Points[0].Kind == KindBeforeRewrite {
		// Before kaasctl's first rewrite: its backup is the state then
		// (since when, nothing records).
		ht, err := target(h, 0, t)
		ht.Notes = append(ht.Notes, fmt.Sprintf("the state kaasctl saved before it rewrote the file at %s; how long the group had held it before is not recorded", h.Points[0].Time.Add(time.Nanosecond).UTC().Format(time.RFC3339Nano)))
		return ht, err
	}
	if idx < 0 {
		if len(h.Points) == 0 {
			return HistoryTarget{}, fmt.Errorf("group '%s': no history recorded (no journal records and no kaasctl backups)", volume.DisplayName(h.Group))
		}
		return HistoryTarget{}, fmt.Errorf("group '%s': the history starts at %s, after %s: nothing is known about that moment", volume.DisplayName(h.Group), h.Points[0].Time.UTC().Format(time.RFC3339Nano), t.UTC().Format(time.RFC3339Nano))
	}
	return target(h, idx, t)
}

// GapError refuses a restore whose state would be rebuilt across a gap in
// the journal: records are deltas, so the offsets after a lost or
// unreadable record are not known until the group's next full snapshot.
type GapError struct {
	Group string
	// At is the moment asked for (or the state before an anomaly).
	At time.Time
	// Gap is where the journal's records stop being whole, and Problem why.
	Gap     time.Time
	Problem string
	// Before is the last sound point before the gap, After the first
	// sound one after it (a snapshot); nil when there is none.
	Before, After *time.Time
}

func (e *GapError) Error() string {
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	var near []string
	if e.Before != nil {
		near = append(near, ts(*e.Before)+" (the last sound state before the gap)")
	}
	if e.After != nil {
		near = append(near, ts(*e.After)+" (the first full snapshot after it)")
	} else {
		near = append(near, "none after it yet (a running 'watch --offsets --journal' or 'exporter --journal' writes a full snapshot when its next segment starts, within an hour by default)")
	}
	return fmt.Sprintf("group '%s': the journal has a gap from %s (%s); its records are deltas, so the offsets at %s cannot be rebuilt across it and nothing is restored. The nearest moments that are sound: %s; name one with --to-history TIME",
		volume.DisplayName(e.Group), ts(e.Gap), e.Problem, ts(e.At), strings.Join(near, "; "))
}

// gapError is the refusal for the unsound point idx, or nil when it is
// sound.
func gapError(h GroupHistory, idx int, at time.Time) error {
	if !h.Points[idx].Unsound {
		return nil
	}
	e := &GapError{Group: h.Group, At: at}
	gi := idx
	for gi > 0 && h.Points[gi].Kind != watch.RecGap {
		gi--
	}
	e.Gap, e.Problem = h.Points[gi].Time, h.Points[gi].Problem
	for i := gi - 1; i >= 0; i-- {
		if p := h.Points[i]; !p.Unsound && p.Time.Before(e.Gap) {
			t := p.Time
			e.Before = &t
			break
		}
	}
	for i := idx + 1; i < len(h.Points); i++ {
		if p := h.Points[i]; !p.Unsound {
			t := p.Time
			e.After = &t
			break
		}
	}
	return e
}

func target(h GroupHistory, idx int, at time.Time) (HistoryTarget, error) {
	if err := gapError(h, idx, at); err != nil {
		return HistoryTarget{}, err
	}
	// A corrupt point keeps the earlier offsets: that is the state then.
	p := h.Points[idx]
	ht := HistoryTarget{Group: h.Group, At: at, Point: p, Offsets: p.Offsets}
	if p.Kind == watch.RecCorrupt {
		ht.Notes = append(ht.Notes, fmt.Sprintf("the file was unreadable at %s (%s); restoring the last offsets read before it", p.Time.UTC().Format(time.RFC3339Nano), p.Problem))
	}
	if len(ht.Offsets) == 0 {
		return ht, fmt.Errorf("group '%s' had no committed offsets at %s (%s record from %s): nothing to restore", volume.DisplayName(h.Group), at.UTC().Format(time.RFC3339Nano), p.Kind, p.Source)
	}
	return ht, nil
}

// TargetBeforeAnomaly is the group's last good state before the most
// recent incident recorded at or after since (zero: the whole history).
//
// An incident is a run of consecutive history points that each carry an
// anomaly, with no good (anomaly-free) observation between them: a chain
// of rewinds, or a rewind followed by a wipe before the group committed
// again cleanly, is one incident, and the restore goes back to the point
// just before its first anomaly. Earlier incidents (one already restored,
// typically) are left alone: the restore does not send the group back past
// the good states recorded since them. --history-since only narrows which
// anomalies count; to go back further, name the moment (--to-history).
func TargetBeforeAnomaly(h GroupHistory, since time.Time) (HistoryTarget, error) {
	bad := func(i int) bool {
		p := h.Points[i]
		return len(p.Anomalies) > 0 && (since.IsZero() || !p.Time.Before(since))
	}
	last := -1
	for i := range h.Points {
		if bad(i) {
			last = i
		}
	}
	if last < 0 {
		return HistoryTarget{}, fmt.Errorf("group '%s': no anomaly recorded%s: name the moment with --to-history TIME", volume.DisplayName(h.Group), sinceText(since))
	}
	first := last
	for first > 0 && bad(first-1) {
		first--
	}
	later := -1
	for i := first; i <= last; i++ {
		later += len(h.Points[i].Anomalies)
	}
	earlier := 0
	for i := 0; i < first; i++ {
		if bad(i) && (i == 0 || !bad(i-1)) {
			earlier++
		}
	}
	if first == 0 {
		return HistoryTarget{}, fmt.Errorf("group '%s': the latest incident (%s at %s) starts at the first point of the history: the state before it is not known", volume.DisplayName(h.Group), h.Points[0].Anomalies[0].Kind, h.Points[0].Time.UTC().Format(time.RFC3339Nano))
	}
	ht, err := target(h, first-1, h.Points[first-1].Time)
	if err != nil {
		return ht, err
	}
	a := h.Points[first].Anomalies[0]
	ht.Anomaly, ht.AnomalyTime, ht.Later, ht.EarlierIncidents = &a, h.Points[first].Time, later, earlier
	return ht, nil
}

func sinceText(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return " since " + since.UTC().Format(time.RFC3339Nano)
}

// HistorySpec turns restore targets into the reset spec the one reset path
// executes: a from-file plan of every partition the group had then,
// narrowed to the --topic scopes when given. Partitions the group has
// committed since are not in the plan (a commit cannot remove them): they
// are kept as they are, and notes say so.
func HistorySpec(targets []HistoryTarget, scopes []TopicScope, label string) (Spec, []string, error) {
	fp := FilePlan{MultiGroup: true}
	var notes []string
	for _, t := range targets {
		keys := make([]string, 0, len(t.Offsets))
		for k := range t.Offsets {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		n := 0
		for _, k := range keys {
			topic, part, err := volume.SplitOffsetKey(k)
			if err != nil {
				continue
			}
			if len(scopes) > 0 && !inScopes(scopes, topic, part) {
				continue
			}
			fp.Rows = append(fp.Rows, FileRow{Group: t.Group, Topic: topic, Partition: part, Offset: t.Offsets[k]})
			n++
		}
		if n == 0 {
			return Spec{}, nil, fmt.Errorf("group '%s': none of the partitions it had at %s is in the --topic scope", volume.DisplayName(t.Group), t.At.UTC().Format(time.RFC3339Nano))
		}
		notes = append(notes, t.Notes...)
	}
	return Spec{Kind: FromFile, File: fp, Origin: label}, notes, nil
}

func inScopes(scopes []TopicScope, topic string, part int32) bool {
	for _, s := range scopes {
		if s.Topic == topic && (s.Partitions == nil || slices.Contains(s.Partitions, part)) {
			return true
		}
	}
	return false
}

// ExtraPartitions lists partitions in the group's file now that the
// restored state did not have: a restore keeps them as they are.
func ExtraPartitions(l volume.Layout, t HistoryTarget) []string {
	gf, err := ReadGroupFile(l, t.Group)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range gf.Entries() {
		k := e.Topic + "/" + fmt.Sprint(e.Partition)
		if _, ok := t.Offsets[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// The restore specs. They never reach Plan: HistorySpec turns them into a
// from-file spec once the groups are known.
const (
	ToHistory              SpecKind = "to-history"
	ToHistoryBeforeAnomaly SpecKind = "to-history-before-anomaly"
)

// FromHistory reports whether the spec restores from the offsets history.
func (s Spec) FromHistory() bool { return s.Kind == ToHistory || s.Kind == ToHistoryBeforeAnomaly }

// ExportRollbackCSV writes the rollback of a plan: every planned
// partition's offset before the write, in the --from-file layout (several
// groups: group,topic,partition,offset). A partition without a committed
// offset cannot be rolled back by a reset; it is listed as a comment.
func ExportRollbackCSV(w io.Writer, plans []*GroupPlan) error {
	bw := bufio.NewWriter(w)
	multi := len(plans) > 1
	fmt.Fprintf(bw, "# rollback of a kaasctl reset planned %s: the offsets before it\n", time.Now().UTC().Format(time.RFC3339))
	for _, gp := range plans {
		for _, r := range gp.Rows {
			if r.Current == nil {
				fmt.Fprintf(bw, "# %s %s/%d had no committed offset (remove it with 'kaasctl offsets delete' to roll back)\n", volume.DisplayName(gp.Group), r.Topic, r.Partition)
				continue
			}
			if multi {
				bw.WriteString(csvField(gp.Group))
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, "%s,%d,%d\n", csvField(r.Topic), r.Partition, *r.Current)
		}
	}
	return bw.Flush()
}

// MovedBack lists partitions whose committed offset now is past the
// restored one ("orders/0 16→15"): the restore moves them back and the
// group re-processes those records.
func MovedBack(l volume.Layout, t HistoryTarget) []string {
	gf, err := ReadGroupFile(l, t.Group)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range gf.Entries() {
		k := e.Topic + "/" + fmt.Sprint(e.Partition)
		if o, ok := t.Offsets[k]; ok && e.Offset > o {
			out = append(out, fmt.Sprintf("%s %d→%d", k, e.Offset, o))
		}
	}
	return out
}

// CompleteGap fills in the gap and the nearest sound moments around it
// from the whole history (a restore reads only up to the moment it
// restores, so the snapshot that closes the gap was not read).
func CompleteGap(src HistorySource, e *GapError) {
	src.Since, src.Until = time.Time{}, time.Time{}
	h, err := LoadGroupHistory(src, e.Group)
	if err != nil {
		return
	}
	idx := -1
	for i, p := range h.Points {
		if !p.Time.After(e.At) {
			idx = i
		}
	}
	if idx < 0 {
		return
	}
	var full *GapError
	if errors.As(gapError(h, idx, e.At), &full) {
		*e = *full
	}
}

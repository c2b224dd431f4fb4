package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/render"
)

// watchOffsetsFlags are the flags of `watch --offsets` (added to watch).
func watchOffsetsFlags() []cli.Flag {
	const cat = "Offsets (--offsets)"
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "offsets", Usage: "follow every group's offset file instead of assignment.json: print changes and anomalies (REWIND, VANISHED, PLAIN_MAP, CORRUPT, EMPTIED) as they happen; with --journal, record every change", Category: cat},
		&cli.BoolFlag{Name: "anomalies-only", Usage: "print only anomalies (the journal still records every change)", Category: cat},
	}, offsetJournalFlags(cat)...)
}

// offsetJournalFlags are the offsets journal's retention flags, shared by
// `watch --offsets` and `exporter` (read with offsetJournalFrom).
func offsetJournalFlags(cat string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "journal-max-bytes", Value: "1GiB", Usage: "keep at most this much offsets journal (e.g. 500MiB, 2GB; 0: no limit); whole segments are removed, oldest first", Category: cat},
		&cli.DurationFlag{Name: "journal-max-age", Value: 30 * 24 * time.Hour, Usage: "remove offsets journal segments whose last record is older than this (0: no limit)", Category: cat},
		&cli.DurationFlag{Name: "journal-segment-age", Value: time.Hour, Usage: "start a new journal segment after this long (the closed one is gzipped)", Category: cat},
	}
}

// offsetJournalSpec is --journal DIR with the retention flags.
type offsetJournalSpec struct {
	dir        string // the --journal DIR ("" : no journal)
	maxBytes   int64
	maxAge     time.Duration
	segmentAge time.Duration
}

// offsetJournalFrom reads --journal and the retention flags.
func offsetJournalFrom(c *cli.Context) (offsetJournalSpec, error) {
	js := offsetJournalSpec{dir: c.String("journal"), maxAge: c.Duration("journal-max-age"), segmentAge: c.Duration("journal-segment-age")}
	var err error
	if js.maxBytes, err = parseByteSize(c.String("journal-max-bytes")); err != nil {
		return js, exit.UsageErrorf("--journal-max-bytes: %v", err)
	}
	if js.maxAge < 0 || js.segmentAge < 0 {
		return js, exit.UsageErrorf("--journal-max-age and --journal-segment-age must not be negative")
	}
	return js, nil
}

// open opens the offsets journal in DIR/offsets for the offsets dir dir of
// generation gen (nil without --journal). A journal that already holds a
// run is resumed: seed is where it left off, so the follower reports and
// flags what changed while nothing was watching.
func (js offsetJournalSpec) open(g *Globals, dataDir, dir string, gen volume.Generation) (journal *watch.OffsetJournal, seed []inspect.OffsetObservation, err error) {
	if js.dir == "" {
		return nil, nil, nil
	}
	if w, err := watch.CheckJournalDir(js.dir, dataDir); err != nil {
		return nil, nil, exit.Refusedf("%v", err)
	} else if w != "" {
		g.Warnf("%s", w)
	}
	journal = &watch.OffsetJournal{Dir: filepath.Join(js.dir, watch.OffsetJournalSubdir), OffsetsDir: dir, Generation: gen,
		MaxBytes: js.maxBytes, MaxAge: js.maxAge, SegmentAge: js.segmentAge}
	state, last, err := watch.LastJournalState(journal.Dir)
	if err != nil {
		g.Warnf("journal %s: %v (starting without the earlier state)", journal.Dir, err)
	} else if len(state) > 0 {
		seed = state
		journal.Resume(state)
		g.Notef("resuming the journal: %s as of %s; changes since are compared with it", render.Plural(len(state), "group", "groups"), trTime(last))
	}
	return journal, seed, nil
}

// offsetsGeneration is the kaas generation the offsets follower assumes:
// it decides which directory is live (volume.Layout.FollowedOffsetsDir) and whether a
// plain-map file is flagged (only 0.2.18 reads it as empty).
//
// offsetsDir is the offsets dir `watch --offsets` follows and the
// generation it assumes: the detected or pinned (--kaas-version) one. A
// volume whose two offsets dirs both hold group files is refused until the
// version is pinned; one with no group files yet is followed where the
// assumed generation's brokers will write (CD/__consumer_offsets unless
// the generation is Go / Rust ≤ 0.2.15).
func offsetsDir(g *Globals, l volume.Layout) (string, volume.Generation, error) {
	l = l.WithGeneration()
	gi := l.Gen
	if gi.Ambiguous && gi.Gen == volume.GenUnknown {
		return "", gi.Gen, exit.Refusedf("%v", &volume.GenerationError{Info: gi})
	}
	if gi.LiveOffsetsDir != "" {
		return gi.LiveOffsetsDir, gi.Gen, nil
	}
	dir := l.FollowedOffsetsDir()
	g.Notef("kaas generation %s (%s): following %s", gi.Label, gi.Evidence, dir)
	return dir, gi.Gen, nil
}

// offsetWatchEvent is one change as printed by `watch --offsets` (-o jsonl
// streams them; -o json lists them).
type offsetWatchEvent struct {
	Time      time.Time               `json:"time"`
	Group     string                  `json:"group"`
	File      string                  `json:"file"`
	Kind      string                  `json:"kind"` // snapshot | change | corrupt | missing
	Format    string                  `json:"format"`
	Changed   map[string]int64        `json:"changed"`
	Removed   []string                `json:"removed"`
	Problem   string                  `json:"problem,omitempty"`
	Anomalies []inspect.OffsetAnomaly `json:"anomalies"`
}

type watchOffsetsView struct {
	Dir        string             `json:"dir"`
	Generation string             `json:"generation"`
	Journal    string             `json:"journal"`
	Files      int                `json:"files"`
	Events     []offsetWatchEvent `json:"events"`
	Anomalies  int                `json:"anomalies"`
	Problems   []string           `json:"problems"`
}

// parseByteSize reads 1GiB, 500MiB, 2GB, 100k, 12345.
func parseByteSize(s string) (int64, error) {
	in := strings.TrimSpace(s)
	low := strings.ToLower(in)
	units := []struct {
		suf string
		n   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(low, u.suf) {
			low, mult = strings.TrimSpace(strings.TrimSuffix(low, u.suf)), u.n
			break
		}
	}
	f, err := strconv.ParseFloat(low, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 500MiB, 2GB, 0 for no limit)", in)
	}
	return int64(f * float64(mult)), nil
}

func watchOffsetsCmd(c *cli.Context, g *Globals) error {
	if c.IsSet("assignment") {
		return exit.UsageErrorf("--offsets follows the offset files of the volume; --assignment does not apply")
	}
	js, err := offsetJournalFrom(c)
	if err != nil {
		return err
	}
	ctx, stop := watchContext(c)
	defer stop()
	l, err := layoutOrWait(ctx, c, g)
	if err != nil {
		return err
	}
	dir, gen, err := offsetsDir(g, l)
	if err != nil {
		return err
	}
	// A journal that already holds a run carries its state on, so what
	// changed while nothing was watching is reported and flagged.
	journal, seed, err := js.open(g, l.DataDir, dir, gen)
	if err != nil {
		return err
	}
	if journal != nil {
		defer journal.Close()
	}
	filter := c.StringSlice("group")
	match := inspect.GroupMatcher(filter)

	ctx, cancelCount := context.WithCancel(ctx)
	defer cancelCount()
	// --count N stops after N changes shown (after the baseline; with
	// --anomalies-only, N anomalous changes); --once after the baseline.
	once := c.Bool("once")
	maxShown := c.Int("count")
	mode := "fsnotify + poll every " + c.Duration("poll-interval").String()
	if c.Bool("poll-only") {
		mode = "poll every " + c.Duration("poll-interval").String()
	}
	genNote := "generation " + gen.Label()
	if !gen.Known() {
		genNote = "kaas generation unknown: following CD/__consumer_offsets; a plain-map file is not flagged"
	}
	g.Notef("watching the offset files in %s (%s; %s); Ctrl-C to stop", dir, mode, genNote)
	if journal != nil {
		g.Notef("journal: %s", journal.Dir)
	}

	p := g.Printer
	view := watchOffsetsView{Dir: dir, Generation: string(gen), Events: []offsetWatchEvent{}, Problems: []string{}}
	if journal != nil {
		view.Journal = journal.Dir
	}
	// json and yaml print the whole view at the end; the other formats
	// stream each change as it comes, and a failed write (a closed pipe)
	// stops the watch with that error.
	var out *render.Stream
	var writeErr error
	if p.Format != render.JSON && p.Format != render.YAML {
		var hdr []string
		if p.Format == render.CSV {
			hdr = []string{"TIME", "GROUP", "KIND", "PARTITION", "OFFSET", "ANOMALY", "DETAIL"}
		}
		out = render.NewStream(p.Out, p.Format, hdr, "")
		writeErr = out.Flush()
	}
	anomaliesOnly := c.Bool("anomalies-only")
	journalFailures, shownTotal := 0, 0
	files := map[string]bool{}
	for _, o := range seed {
		files[o.File] = true
	}
	onEvents := func(evs []watch.OffsetEvent) {
		if journal != nil {
			if err := journal.Append(evs); err != nil {
				journalFailures++
				g.Warnf("journal: %v (%d changes not recorded)", err, len(evs))
			}
			for _, w := range journal.Warnings {
				g.Warnf("%s", w)
			}
			journal.Warnings = nil
		}
		var shown []offsetWatchEvent
		initial := 0
		for _, ev := range evs {
			files[ev.Cur.File] = !ev.Cur.Missing
			if !match(ev.Cur.Group) {
				continue
			}
			if ev.Initial && ev.Prev == nil {
				initial++
			}
			view.Anomalies += len(ev.Anomalies)
			we := toWatchEvent(ev)
			if ev.Initial && ev.Prev == nil && !once && p.Format != render.JSON && p.Format != render.YAML {
				continue // the first scan is the baseline, not news
			}
			if anomaliesOnly && len(ev.Anomalies) == 0 {
				continue
			}
			if maxShown > 0 && shownTotal >= maxShown {
				continue
			}
			shown = append(shown, we)
			if ev.Prev != nil {
				shownTotal++
			}
		}
		if maxShown > 0 && shownTotal >= maxShown {
			defer cancelCount()
		}
		view.Events = append(view.Events, shown...)
		if initial > 0 && !once {
			g.Notef("baseline: %s", render.Plural(initial, "offset file", "offset files"))
		}
		if out == nil || writeErr != nil {
			return // json and yaml: printed at the end
		}
		for _, e := range shown {
			if p.Format == render.JSONL || p.Format == render.CSV {
				out.Event(e, watchEventRows(e)...)
				continue
			}
			out.Lines(watchEventLines(p, e)...) // names cleaned, colour kept
		}
		if writeErr = out.Flush(); writeErr != nil {
			cancelCount()
		}
	}
	err = watch.FollowOffsets(ctx, watch.OffsetsOptions{
		Dir: dir, PollInterval: c.Duration("poll-interval"), PollOnly: c.Bool("poll-only"), Generation: gen,
		OnEvents: onEvents, Now: g.Now, Seed: seed, OnNote: func(msg string) { g.Notef("%s", msg) },
		OnReady: func() {
			if once {
				cancelCount()
			}
		},
		OnProblem: func(msg string, ok bool) {
			if ok {
				g.Notef("%s is readable again", dir)
				return
			}
			view.Problems = append(view.Problems, msg)
			g.Warnf("%s", msg)
		},
	})
	if err != nil {
		return err
	}
	if writeErr != nil {
		return writeErr
	}
	for _, present := range files {
		if present {
			view.Files++
		}
	}
	if p.Format == render.JSON || p.Format == render.YAML {
		if err := p.Print(render.Output{Data: view}); err != nil {
			return err
		}
	}
	if journal != nil && journal.Segment() != "" {
		g.Notef("journal segment: %s", journal.Segment())
	}
	if journalFailures > 0 {
		return fmt.Errorf("%s could not be written to the journal %s (see the warnings above)", render.Plural(journalFailures, "batch", "batches"), journal.Dir)
	}
	if once && len(files) == 0 {
		return fmt.Errorf("no offset file seen in %s", dir)
	}
	return nil
}

func toWatchEvent(ev watch.OffsetEvent) offsetWatchEvent {
	c := ev.Cur
	we := offsetWatchEvent{Time: c.Time, Group: c.Group, File: c.File, Format: c.Format, Changed: ev.Changed,
		Removed: ev.Removed, Problem: c.Problem, Anomalies: ev.Anomalies}
	switch {
	case c.Missing:
		we.Kind = watch.RecMissing
	case c.Corrupt:
		we.Kind = watch.RecCorrupt
	case ev.Prev == nil:
		we.Kind, we.Changed = watch.RecSnapshot, c.Offsets
	default:
		we.Kind = watch.RecChange
	}
	if we.Changed == nil {
		we.Changed = map[string]int64{}
	}
	if we.Removed == nil {
		we.Removed = []string{}
	}
	if we.Anomalies == nil {
		we.Anomalies = []inspect.OffsetAnomaly{}
	}
	return we
}

func sortedOffsetKeys(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, compareOffsetKeys)
	return ks
}

// compareOffsetKeys orders "topic/partition" by topic, then partition number.
func compareOffsetKeys(a, b string) int {
	ta, pa, ea := volume.SplitOffsetKey(a)
	tb, pb, eb := volume.SplitOffsetKey(b)
	if ea != nil || eb != nil {
		return strings.Compare(a, b)
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return int(pa) - int(pb)
}

func watchEventRows(e offsetWatchEvent) [][]string {
	t := trTime(e.Time)
	var rows [][]string
	for _, k := range sortedOffsetKeys(e.Changed) {
		rows = append(rows, []string{t, e.Group, e.Kind, k, strconv.FormatInt(e.Changed[k], 10), "", ""})
	}
	for _, k := range e.Removed {
		rows = append(rows, []string{t, e.Group, e.Kind, k, "", "", "removed"})
	}
	for _, a := range e.Anomalies {
		rows = append(rows, []string{t, e.Group, e.Kind, a.Partition, "", a.Kind, a.Detail})
	}
	if len(rows) == 0 {
		rows = append(rows, []string{t, e.Group, e.Kind, "", "", "", e.Problem})
	}
	return rows
}

// watchEventLines is one line per change, then one per anomaly.
func watchEventLines(p *render.Printer, e offsetWatchEvent) []string {
	head := trClock(e.Time, false) + "  " + render.Shorten(e.Group, 60) + "  "
	var parts []string
	for _, k := range sortedOffsetKeys(e.Changed) {
		parts = append(parts, k+"="+strconv.FormatInt(e.Changed[k], 10))
	}
	for _, k := range e.Removed {
		parts = append(parts, k+" removed")
	}
	body := e.Kind
	switch e.Kind {
	case watch.RecCorrupt:
		body = p.Paint(render.Red, "unreadable: "+e.Problem)
	case watch.RecMissing:
		body = "file removed"
	}
	if len(parts) > 0 {
		const maxParts = 12
		if len(parts) > maxParts {
			parts = append(parts[:maxParts], fmt.Sprintf("… %d more", len(parts)-maxParts))
		}
		body += "  " + strings.Join(parts, " ")
	}
	lines := []string{head + body}
	for _, a := range e.Anomalies {
		lines = append(lines, "    "+p.Paint(render.Red, a.Kind)+"  "+a.Detail)
	}
	return lines
}

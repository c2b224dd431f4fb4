package exporter

import (
	"bytes"
	"runtime"
	"unicode/utf8"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// What a refresh keeps, at 100,000 groups. The health windows hold every
// group's observations (compact: inspect/healthstore.go); the groups'
// health is evaluated a chunk at a time into the page's series and not
// kept: /api/health evaluates it again from the windows when asked (they
// hold what they held at the refresh until the next one replaces the
// snapshot), into a compressed document, once a refresh. So between
// refreshes a snapshot is its compressed page, the groups' window refs and
// their lag, not 70 MB of GroupHealth values, and a refresh never holds
// the health of more than one chunk.

// healthChunk is how many groups are evaluated at once into the page.
const healthChunk = 4096

// groupLag is a group's lag at the refresh, for its health document.
type groupLag struct {
	lag     int64
	unknown int32
	known   bool
}

// publishGroups adds the refresh's samples to the health windows,
// evaluates them into the page, forgets the groups no longer observed and
// stores the snapshot scrapes serve.
func (e *Exporter) publishGroups(o *observe.Observation) {
	refs, revealed := e.addSamples(o)
	e.setMemberCounters()
	b := newPageBuilder(o, &e.c, e.opt.PartitionMetrics, e.opt.Version, e.opt.Revision)
	health := make([]inspect.GroupHealth, min(len(refs), healthChunk))
	counts := make([]inspect.HealthCounts, len(health))
	lags := make([]groupLag, len(refs))
	for lo := 0; lo < len(refs); lo += healthChunk {
		hi := min(lo+healthChunk, len(refs))
		h, c := health[:hi-lo], counts[:hi-lo]
		e.health.EvaluateRefs(refs[lo:hi], h, runtime.GOMAXPROCS(0))
		for i := range h {
			g := &o.Groups[lo+i]
			lags[lo+i] = groupLag{lag: g.Lag, unknown: int32(g.LagUnknown), known: g.LagKnown}
			lags[lo+i].set(&h[i])
			c[i] = refs[lo+i].Counts()
		}
		e.observeMembers(o, lo, h, revealed[lo:hi])
		b.groups(o.Groups[lo:hi], h, c)
	}
	e.membersDone(o)
	e.health.Sweep()
	if e.lastA == nil && o.Assignment != nil {
		e.lastA = o.Assignment
	}
	e.snap.Store(&snapshot{time: o.Time, page: b.page(), refs: refs, lags: lags, coverage: e.opt.Source.Coverage(o)})
}

func (l groupLag) set(h *inspect.GroupHealth) {
	h.Lag, h.LagKnown, h.LagUnknown = l.lag, l.known, int(l.unknown)
}

// addSamples adds each group's sample to its window (what the follower saw
// since the last refresh replacing the comparison of this refresh's file
// with the last one, for files it follows) and returns their refs and the
// rewinds each window revealed (the membership attributes them).
func (e *Exporter) addSamples(o *observe.Observation) ([]inspect.GroupRef, [][]inspect.OffsetAnomaly) {
	keys := make([]string, len(o.Groups))
	refs := make([]inspect.GroupRef, len(o.Groups))
	revealed := make([][]inspect.OffsetAnomaly, len(o.Groups))
	pending, followed := e.pending, e.following.Load()
	e.pending = map[string][]inspect.OffsetAnomaly{}
	e.c.follower, e.c.following = e.opt.Offsets != nil, followed
	e.c.journal = e.opt.Offsets != nil && e.opt.Offsets.Journal != nil
	for i := range o.Groups {
		name := o.Groups[i].Row.Group
		keys[i] = name
		if s := &o.Groups[i].Sample; followed && e.followsFile(s.File) {
			s.FileFollowed, s.FileAnomalies = true, pending[name]
		}
		refs[i], revealed[i] = e.health.AddRef(name, o.Groups[i].Sample)
		// The window has them: a refresh of 100,000 groups lets go of
		// their offsets and file readings (40 MB) before the page.
		o.Groups[i].Sample.Partitions, o.Groups[i].Sample.File = nil, nil
	}
	e.lastKeys = keys
	return refs, revealed
}

// healthOf evaluates the groups of sn again from the windows: what the
// refresh evaluated, as long as sn is the latest snapshot (the caller
// holds e.mu, under which a refresh replaces it); nil when it is not.
func (e *Exporter) healthOf(sn *snapshot) []inspect.GroupHealth {
	if e.snap.Load() != sn {
		return nil
	}
	health := make([]inspect.GroupHealth, len(sn.refs))
	e.health.EvaluateRefs(sn.refs, health, runtime.GOMAXPROCS(0))
	for i := range health {
		sn.lags[i].set(&health[i])
		e.members.win.Apply(&health[i])
	}
	return health
}

// healthPage is sn's /api/health, compressed: evaluated and encoded on the
// first request of a refresh and shared by every request until the next.
// A request holding a snapshot a refresh has replaced since gets the
// latest one's.
func (e *Exporter) healthPage(sn *snapshot) *zpage {
	if sn == nil {
		z := newZseg()
		render.WriteJSON(z, HealthDocument{Window: e.opt.Window.String(), Groups: []inspect.GroupHealth{}}, false)
		var p zpage
		p.add(z)
		return &p
	}
	for {
		sn.healthOnce.Do(func() { sn.healthDoc = e.encodeHealth(sn) })
		if sn.healthDoc != nil {
			return sn.healthDoc
		}
		sn = e.snap.Load()
	}
}

// encodeHealth evaluates and encodes sn's health document (nil when a
// refresh has replaced sn).
func (e *Exporter) encodeHealth(sn *snapshot) *zpage {
	e.mu.Lock()
	health := e.healthOf(sn)
	e.mu.Unlock()
	if health == nil && len(sn.refs) > 0 {
		return nil
	}
	if health == nil {
		health = []inspect.GroupHealth{}
	}
	z := newZseg()
	doc := HealthDocument{Time: sn.time, Window: e.opt.Window.String(), Groups: health, Coverage: sn.coverage}
	if err := writeHealthDoc(z, doc); err != nil {
		e.logf("/api/health: %v", err)
	}
	var p zpage
	p.add(z)
	return &p
}

// writeHealthDoc writes doc as render.WriteJSON does (compact, one line),
// a group at a time: the document of 100,000 groups is never encoded whole
// in memory. With a group id that is not UTF-8 (render.WriteJSON then
// rewrites the whole document with groupBase64 siblings) it is encoded
// whole.
func writeHealthDoc(w interface{ Write([]byte) (int, error) }, doc HealthDocument) error {
	for i := range doc.Groups {
		if !utf8.ValidString(doc.Groups[i].Group) {
			return render.WriteJSON(w, doc, false)
		}
	}
	groups := doc.Groups
	doc.Groups = []inspect.GroupHealth{}
	var head bytes.Buffer
	if err := render.WriteJSON(&head, doc, false); err != nil {
		return err
	}
	marker := []byte(`"groups":[]`)
	at := bytes.Index(head.Bytes(), marker)
	if at < 0 || bytes.Contains(head.Bytes()[at+len(marker):], marker) {
		doc.Groups = groups
		return render.WriteJSON(w, doc, false)
	}
	cut := at + len(marker) - 1 // at the closing ]
	if _, err := w.Write(head.Bytes()[:cut]); err != nil {
		return err
	}
	var el bytes.Buffer
	for i := range groups {
		el.Reset()
		if i > 0 {
			el.WriteByte(',')
		}
		if err := render.WriteJSON(&el, &groups[i], false); err != nil {
			return err
		}
		if _, err := w.Write(bytes.TrimSuffix(el.Bytes(), []byte("\n"))); err != nil {
			return err
		}
	}
	_, err := w.Write(head.Bytes()[cut:])
	return err
}

// healthJSON is sn's /api/health as text (tests).
func (e *Exporter) healthJSON(sn *snapshot) []byte {
	var b bytes.Buffer
	writeText(&b, e.healthPage(sn))
	return b.Bytes()
}

// Health is the health of every observed group at the last refresh.
func (e *Exporter) Health() []inspect.GroupHealth {
	e.mu.Lock()
	defer e.mu.Unlock()
	if sn := e.snap.Load(); sn != nil {
		return e.healthOf(sn)
	}
	return nil
}

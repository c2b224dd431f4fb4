package exporter

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/anomaly"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// The health window's representation must not change what the exporter
// serves: these tests drive the exporter's publish step with scripted and
// seeded random observations (commits, rewinds, partitions that vanish and
// come back, corrupt and plain-map files, outages and the conditions they
// carry, the follower's anomalies, unobservable partitions, times in other
// zones, unknown offsets and log ends) and compare every refresh's metrics
// and /api/health document with golden files written by the window it
// replaced. go test ./exporter -run TestWindowGolden -update rewrites them.

var updateWindowGolden = flag.Bool("update", false, "rewrite the exporter's golden files under testdata/window")

// followedDir is where the scenarios' followed offset files live.
const followedDir = "/vol/__cluster/__consumer_offsets"

// scenario is a seeded stream of observations of a set of groups.
type scenario struct {
	rnd    *rand.Rand
	t0     time.Time
	step   int
	groups []*simGroup
}

// simGroup is one group's simulated state.
type simGroup struct {
	name  string
	idx   int
	parts map[string]*simPart
	// inFile are the partitions its offset file holds (nil: no file).
	inFile  map[string]bool
	modTime time.Time
	// outage counts the steps left in an outage (the sample fails).
	outage  int
	corrupt bool
	plain   bool
	absent  bool
	idle    bool
	// noFile: a brokers-only group (its rewinds come from the
	// coordinator's offsets).
	noFile bool
}

type simPart struct{ committed, end, start int64 }

func newScenario(seed uint64, groups int) *scenario {
	s := &scenario{rnd: rand.New(rand.NewPCG(seed, seed^0x5eed)), t0: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	for i := range groups {
		g := &simGroup{name: fmt.Sprintf("grp-%03d", i), idx: i, parts: map[string]*simPart{}, inFile: map[string]bool{},
			idle: i%5 == 0, noFile: i%11 == 3}
		for p := range 1 + i%4 {
			k := "orders/" + strconv.Itoa(p)
			g.parts[k] = &simPart{committed: int64(100 * p), end: int64(100*p + i%7), start: 0}
			g.inFile[k] = true
		}
		if i%13 == 7 {
			g.parts["events/0"] = &simPart{committed: -1, end: 40, start: -1}
		}
		s.groups = append(s.groups, g)
	}
	return s
}

// zones are the locations observation times come in (a refresh's time is
// the exporter's local time; a window must keep it as it was given).
var zones = []*time.Location{time.UTC, time.FixedZone("CET", 3600), time.FixedZone("X", -5*3600-1800)}

// next is the observation of the next refresh, and the follower's
// anomalies by group to inject before it (nil: not following).
func (s *scenario) next() (*observe.Observation, map[string][]inspect.OffsetAnomaly, bool) {
	r := s.rnd
	s.step++
	at := s.t0.Add(time.Duration(s.step)*10*time.Second + time.Duration(r.IntN(1e9)))
	if s.step%9 == 4 {
		at = at.In(zones[1+s.step%2])
	}
	o := &observe.Observation{Time: at, Duration: 1500 * time.Millisecond, HasVolume: true, HasBrokers: true, Findings: nil, Brokers: []observe.BrokerObs{}}
	following := s.step > 12 && s.step%17 < 12
	pending := map[string][]inspect.OffsetAnomaly{}
	for _, g := range s.groups {
		if s.step > 3 && r.IntN(40) == 0 {
			g.absent = !g.absent
		}
		if g.absent {
			continue
		}
		s.evolve(g, at, following, pending)
		o.Groups = append(o.Groups, s.observe(g, at))
	}
	if !following {
		pending = nil
	}
	return o, pending, following
}

// evolve moves a group's state on by one refresh.
func (s *scenario) evolve(g *simGroup, at time.Time, following bool, pending map[string][]inspect.OffsetAnomaly) {
	r := s.rnd
	switch {
	case g.outage > 0:
		g.outage--
	case g.idx%5 == 0 && s.step%20 == 14:
		g.outage = 3 // an outage of a stopped group: its STOP is carried
	case r.IntN(30) == 0:
		g.outage = 1 + r.IntN(4)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range g.parts {
			if !yield(k) {
				return
			}
		}
	})
	committed := false
	for _, k := range keys {
		p := g.parts[k]
		if p.end >= 0 {
			p.end += int64(r.IntN(30))
		}
		if r.IntN(25) == 0 {
			p.end = -1 // the leader did not answer
		} else if p.end < 0 && r.IntN(3) == 0 {
			p.end = p.committed + 5
		}
		switch {
		case g.idle:
		case r.IntN(35) == 0 && p.committed > 10:
			p.committed -= 1 + int64(r.IntN(10)) // a rewind
			committed = true
		case r.IntN(3) > 0 && p.committed >= 0 && p.end > p.committed:
			p.committed += 1 + int64(r.IntN(int(p.end-p.committed)))
			committed = true
		case r.IntN(8) == 0:
			committed = true // the same offsets committed again
		}
		if p.start >= 0 && (g.idx%7 == 2 || r.IntN(60) == 0) {
			p.start += int64(r.IntN(5)) // DeleteRecords: toward a lagging commit
		}
		if p.committed > 1<<40 || r.IntN(200) == 0 {
			p.committed = 1<<62 + int64(r.IntN(1000)) // an offset far from the others
		}
	}
	switch n := r.IntN(60); {
	case n == 0 && len(g.inFile) > 1:
		delete(g.inFile, keys[0]) // a partial rewrite: VANISHED
		committed = true
	case n == 1:
		k := "orders/" + strconv.Itoa(4+r.IntN(3))
		g.parts[k] = &simPart{committed: 7, end: 9, start: 0}
		g.inFile[k] = true
		committed = true
	case n == 2:
		g.corrupt = !g.corrupt
	case n == 3:
		g.plain = !g.plain
	case n == 4:
		for _, k := range keys {
			g.inFile[k] = true // vanished partitions come back
		}
	}
	if committed || g.modTime.IsZero() && r.IntN(2) == 0 {
		g.modTime = at.Add(-time.Duration(r.IntN(9e9)))
		if r.IntN(10) == 0 {
			g.modTime = g.modTime.In(zones[2])
		}
	}
	if r.IntN(50) == 0 {
		g.modTime = time.Time{}
	}
	if following && !g.noFile && r.IntN(12) == 0 {
		k := keys[r.IntN(len(keys))]
		pending[g.name] = append(pending[g.name], inspect.OffsetAnomaly{Kind: []string{anomaly.Rewind, anomaly.Vanished, anomaly.Corrupt, anomaly.Emptied}[r.IntN(4)],
			Partition: k, Before: 50, After: 20, Since: at.Add(-7 * time.Second), Time: at.Add(-3 * time.Second), File: followedDir + "/" + g.name + ".json",
			Detail: "seen by the follower at step " + strconv.Itoa(s.step)})
	}
}

// observe is the group's observation at this refresh.
func (s *scenario) observe(g *simGroup, at time.Time) observe.GroupObs {
	r := s.rnd
	row := inspect.GroupRow{Group: g.name, Coordinator: "kaas-" + strconv.Itoa(len(g.name)%3), Tier: "hash", HashCoordinator: "kaas-1"}
	sample := inspect.HealthSample{Time: at, Partitions: []inspect.PartitionSample{}, FileModTime: g.modTime}
	obs := observe.GroupObs{Row: row, Partitions: []observe.PartObs{}}
	if !g.noFile {
		fo := &inspect.OffsetReading{Group: g.name, File: followedDir + "/" + g.name + ".json", Format: "envelope"}
		switch {
		case g.corrupt:
			fo.Corrupt, fo.Problem = true, "unexpected end of JSON input"
		case g.plain:
			fo.Format = "plainMap"
		}
		sample.File = fo
	}
	if g.outage > 0 {
		sample.Err = "DescribeGroups: COORDINATOR_NOT_AVAILABLE"
		if g.outage%2 == 0 {
			sample.Err = "brokers: dial tcp 127.0.0.1:9092: connect: connection refused"
		}
		obs.Sample = sample
		return obs
	}
	var totals inspect.LagTotals
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range g.parts {
			if !yield(k) {
				return
			}
		}
	}) {
		p := g.parts[k]
		c := p.committed
		if !g.noFile && !g.inFile[k] {
			c = -1
		}
		if sample.File != nil && !sample.File.Corrupt && c >= 0 {
			sample.File.Offsets = append(sample.File.Offsets, anomaly.Offset{Key: k, Offset: c})
		}
		ps := inspect.PartitionSample{Key: k, Committed: c, End: p.end, Start: p.start}
		sample.Partitions = append(sample.Partitions, ps)
		lag, ok := ps.Lag()
		totals.Add(lag, ok)
		if p.end < 0 && c >= 0 && r.IntN(2) == 0 {
			if sample.Unobserved == 0 {
				sample.UnobservedFirst = k
			}
			sample.Unobserved++
		}
	}
	obs.Lag, obs.LagKnown, obs.LagUnknown = totals.Lag, totals.LagKnown(), totals.Unknown
	obs.Sample = sample
	return obs
}

// servedNow is what the exporter serves after its last refresh: the
// metrics of the refresh (its own registry aside) and /api/health.
func servedNow(t *testing.T, e *Exporter) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := e.WriteMetrics(&b, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		// HELP and TYPE do not depend on the window; build_info names the
		// Go version.
		if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "kaas_exporter_build_info{") {
			out.WriteString(line)
		}
	}
	out.Write(e.healthJSON(e.snap.Load()))
	return out.Bytes()
}

// runScenario publishes steps refreshes of s and returns what was served
// after each.
func runScenario(t *testing.T, s *scenario, steps int, opt inspect.HealthOptions) [][]byte {
	t.Helper()
	e := New(Options{Source: &observe.Source{}, Interval: 10 * time.Second, Window: time.Minute, Health: opt, PartitionMetrics: true,
		Offsets: &OffsetsFollow{Dir: followedDir}})
	var out [][]byte
	for range steps {
		o, pending, following := s.next()
		e.following.Store(following)
		if following {
			e.pending = pending
		}
		e.publish(o)
		out = append(out, servedNow(t, e))
	}
	return out
}

func checkWindowGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "window", name)
	if *updateWindowGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./exporter -run TestWindowGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %.400s\nwant: %.400s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d", path, len(gl), len(wl))
	}
}

// TestWindowGoldenScripted serves twelve groups over 40 refreshes and
// compares every byte served with the golden file.
func TestWindowGoldenScripted(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for i, b := range runScenario(t, newScenario(1, 12), 40, inspect.HealthOptions{MinSpan: 20 * time.Second}) {
		fmt.Fprintf(&all, "== refresh %d\n", i+1)
		all.Write(b)
	}
	checkWindowGolden(t, "scripted.golden", all.Bytes())
}

// TestWindowGoldenRandom serves 150 groups over 120 refreshes in three
// seeded runs (one with plain maps read as empty and no --stop-after) and
// compares a digest of every refresh's bytes with the golden file. 'make
// test' runs it without -race (scripts/test.sh says why).
func TestWindowGoldenRandom(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for seed, opt := range []inspect.HealthOptions{{MinSpan: time.Minute}, {PlainMapIsEmpty: true}, {MinSpan: 15 * time.Second}} {
		for i, b := range runScenario(t, newScenario(uint64(100+seed), 150), 120, opt) {
			fmt.Fprintf(&all, "seed %d refresh %d %x %d\n", 100+seed, i+1, sha256.Sum256(b), len(b))
		}
	}
	checkWindowGolden(t, "random.golden", all.Bytes())
}

// /api/health is evaluated again from the windows when it is asked for,
// not kept from the refresh: asked at every third refresh only, it serves
// at those refreshes what the golden file holds (an evaluation leaves the
// windows as it found them), and so do the metrics at every refresh.
func TestWindowGoldenHealthOnRequest(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("testdata", "window", "scripted.golden"))
	if err != nil {
		t.Fatal(err)
	}
	steps := strings.Split(string(want), "== refresh ")[1:]
	s := newScenario(1, 12)
	e := New(Options{Source: &observe.Source{}, Interval: 10 * time.Second, Window: time.Minute, Health: inspect.HealthOptions{MinSpan: 20 * time.Second},
		PartitionMetrics: true, Offsets: &OffsetsFollow{Dir: followedDir}})
	for i := range 40 {
		o, pending, following := s.next()
		e.following.Store(following)
		if following {
			e.pending = pending
		}
		e.publish(o)
		_, golden, _ := strings.Cut(steps[i], "\n")
		metrics, health, _ := strings.Cut(golden, "{\"time\"")
		var b bytes.Buffer
		e.WriteMetrics(&b, func(string) bool { return false })
		if got := dropComments(b.String()); got != metrics {
			t.Fatalf("refresh %d: the metrics differ from the golden file", i+1)
		}
		if i%3 == 2 {
			if got := string(e.healthJSON(e.snap.Load())); got != "{\"time\""+health {
				t.Fatalf("refresh %d: /api/health differs from the golden file", i+1)
			}
		}
	}
}

func dropComments(page string) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(page, "\n") {
		if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "kaas_exporter_build_info{") {
			out.WriteString(line)
		}
	}
	return out.String()
}

// The health document written a group at a time is render.WriteJSON's,
// byte for byte, with and without a group id that is not UTF-8.
func TestHealthDocStreamedIsWriteJSON(t *testing.T) {
	t.Parallel()
	s := newScenario(3, 20)
	hw := inspect.HealthWindow{Window: time.Minute}
	var names []string
	for range 12 {
		o, _, _ := s.next()
		names = names[:0]
		for i := range o.Groups {
			hw.Add(o.Groups[i].Row.Group, o.Groups[i].Sample)
			names = append(names, o.Groups[i].Row.Group)
		}
	}
	var groups []inspect.GroupHealth
	for _, n := range names {
		groups = append(groups, hw.Evaluate(n))
	}
	for _, bad := range []bool{false, true} {
		doc := HealthDocument{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Window: "5m0s", Groups: slices.Clone(groups),
			Coverage: inspect.HealthCoverage{GroupRegex: "^grp-", MaxGroups: 10}}
		if bad {
			doc.Groups[3].Group = "bad\xff"
		}
		var want, got bytes.Buffer
		if err := render.WriteJSON(&want, doc, false); err != nil {
			t.Fatal(err)
		}
		if err := writeHealthDoc(&got, doc); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("invalid UTF-8 %v: streamed document differs:\n got %.300s\nwant %.300s", bad, got.String(), want.String())
		}
	}
}

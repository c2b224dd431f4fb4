package commands

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExporterShardsAtScale's checks of what Prometheus stored. Asking
// Prometheus at every scrape instant to aggregate 200,000 series took a
// minute an instant on two busy cores; instead the test reads each
// target's scrapes once (their raw samples over the window) and replays
// them in order, keeping per group how many series the shards and the
// unsharded exporter have: after each scrape, the state a query at that
// instant would see.

// scaleRun is the test's view of Prometheus.
type scaleRun struct {
	t        *testing.T
	prom     string
	groups   int
	interval time.Duration
	// changes are when the test changed the assignment (stopped or
	// started a broker), Unix ms.
	changes []int64
}

// promTime is Unix milliseconds as the query API takes a time.
func promTime(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

// versions is what the targets' last scrapes say of the assignment
// version: the one the shards split by and the unsharded exporter read,
// or why there is not one.
func (s *scaleRun) versions() (float64, string) {
	res, err := promVectorAt(s.prom, `kaas_exporter_shard_assignment_version or kaas_assignment_version{job="whole"}`, "")
	if err != nil {
		return 0, err.Error()
	}
	var vs []float64
	for _, r := range res {
		vs = append(vs, r.float())
	}
	if len(vs) != 4 || slices.Min(vs) != slices.Max(vs) {
		return 0, fmt.Sprintf("versions of the three shards and the unsharded exporter: %v", vs)
	}
	return vs[0], ""
}

// agree waits until the three shards split by the version the unsharded
// exporter read, at least minVersion; it returns that instant (Unix ms)
// and the version.
func (s *scaleRun) agree(when string, minVersion float64) (int64, float64) {
	s.t.Helper()
	deadline := time.Now().Add(6*s.interval + 2*time.Minute)
	why := ""
	for time.Now().Before(deadline) {
		at := time.Now().UnixMilli()
		v, problem := s.versions()
		if problem == "" && v < minVersion {
			problem = fmt.Sprintf("assignment version %v, want at least %v", v, minVersion)
		}
		if problem == "" {
			return at, v
		}
		why = problem
		time.Sleep(time.Second)
	}
	s.t.Fatalf("%s: the shards never split by the unsharded exporter's version: %s", when, why)
	return 0, 0
}

// scrapedSince waits until every target was scraped after instant at.
func (s *scaleRun) scrapedSince(at int64) int64 {
	s.t.Helper()
	deadline := time.Now().Add(2*s.interval + time.Minute)
	for time.Now().Before(deadline) {
		res, err := promVectorAt(s.prom, `min(timestamp(up))`, "")
		if err == nil && len(res) == 1 && int64(math.Round(res[0].float()*1000)) > at {
			return int64(math.Round(res[0].float() * 1000))
		}
		time.Sleep(time.Second)
	}
	s.t.Fatalf("not every target was scraped after %s", promTime(at))
	return 0
}

// groupLag is one group's lag series in one scrape (the group by id).
type groupLag struct {
	id  int32
	lag float64
}

// targetHistory is one target's scrapes: when each was, whether it
// succeeded, and what Prometheus kept of its page.
type targetHistory struct {
	instance, job string
	scrapes       []int64
	up            map[int64]bool
	pages         map[int64][]groupLag
	infos         map[int64][]int32
	version       map[int64]float64
	groups        map[int64]float64
}

// scaleHistory is every target's scrapes from one instant to another.
type scaleHistory struct {
	names   []string
	ids     map[string]int32
	targets map[string]*targetHistory
}

func (h *scaleHistory) target(m map[string]string) *targetHistory {
	tg := h.targets[m["instance"]]
	if tg == nil {
		tg = &targetHistory{instance: m["instance"], job: m["job"], up: map[int64]bool{}, pages: map[int64][]groupLag{}, infos: map[int64][]int32{}, version: map[int64]float64{}, groups: map[int64]float64{}}
		h.targets[m["instance"]] = tg
	}
	return tg
}

func (h *scaleHistory) id(group string) int32 {
	if id, ok := h.ids[group]; ok {
		return id
	}
	id := int32(len(h.names))
	h.names = append(h.names, group)
	h.ids[group] = id
	return id
}

// point is a sample's time (Unix ms) and value.
func point(p [2]any) (int64, float64) {
	sec, _ := p[0].(float64)
	v, _ := strconv.ParseFloat(fmt.Sprint(p[1]), 64)
	return int64(math.Round(sec * 1000)), v
}

// history reads every target's scrapes in (from, to].
func (s *scaleRun) history(from, to int64) *scaleHistory {
	s.t.Helper()
	h := &scaleHistory{ids: map[string]int32{}, targets: map[string]*targetHistory{}}
	each := func(q string, f func(tg *targetHistory, ms int64, v float64, m map[string]string)) {
		res, err := promQueryMatrix(s.prom, fmt.Sprintf("%s[%dms]", q, to-from), promTime(to))
		if err != nil {
			s.t.Fatal(err)
		}
		for _, r := range res {
			tg := h.target(r.Metric)
			for _, p := range r.Values {
				ms, v := point(p)
				f(tg, ms, v, r.Metric)
			}
		}
	}
	each(`up`, func(tg *targetHistory, ms int64, v float64, _ map[string]string) {
		tg.scrapes, tg.up[ms] = append(tg.scrapes, ms), v == 1
	})
	each(`kaas_exporter_shard_assignment_version`, func(tg *targetHistory, ms int64, v float64, _ map[string]string) { tg.version[ms] = v })
	each(`kaas_assignment_version{job="whole"}`, func(tg *targetHistory, ms int64, v float64, _ map[string]string) { tg.version[ms] = v })
	each(`kaas_exporter_groups`, func(tg *targetHistory, ms int64, v float64, _ map[string]string) { tg.groups[ms] = v })
	for inst := range h.targets {
		each(fmt.Sprintf(`kaas_group_lag{instance=%q}`, inst), func(tg *targetHistory, ms int64, v float64, m map[string]string) {
			tg.pages[ms] = append(tg.pages[ms], groupLag{h.id(m["group"]), v})
		})
		each(fmt.Sprintf(`kaas_group_coordinator_info{instance=%q}`, inst), func(tg *targetHistory, ms int64, _ float64, m map[string]string) {
			tg.infos[ms] = append(tg.infos[ms], h.id(m["group"]))
		})
	}
	for _, tg := range h.targets {
		slices.Sort(tg.scrapes)
	}
	return h
}

// scaleTally is Prometheus' state as the scrapes are replayed: each
// target's last scrape, and per group the series the shards and the
// unsharded exporter have of its coordinator and of its lag.
type scaleTally struct {
	// info counts each group's kaas_group_coordinator_info series, lag
	// its kaas_group_lag series and their values, on the shards [0] and
	// the unsharded exporter [1].
	info, lagN [2][]int8
	lagV       [2][]float64
	// odd counts the groups with a series that are not on one shard and
	// the unsharded exporter both; lagDiff is the shards' lag minus the
	// unsharded exporter's over the groups both have one lag of, oneSided
	// the groups only one side has a lag of; wholeGroups the groups the
	// unsharded exporter has.
	odd, oneSided, wholeGroups int
	lagDiff                    float64
	last                       map[string]int64
	version, groupCount        map[string]float64
}

func newTally(groups int) *scaleTally {
	t := &scaleTally{last: map[string]int64{}, version: map[string]float64{}, groupCount: map[string]float64{}}
	for i := range 2 {
		t.info[i], t.lagN[i], t.lagV[i] = make([]int8, groups), make([]int8, groups), make([]float64, groups)
	}
	return t
}

func (t *scaleTally) isOdd(id int32) bool {
	return t.info[0][id]+t.info[1][id] > 0 && (t.info[0][id] != 1 || t.info[1][id] != 1)
}

// lagOf is what group id adds to lagDiff, and whether only one side has
// its lag.
func (t *scaleTally) lagOf(id int32) (float64, bool) {
	if t.lagN[0][id] == 1 && t.lagN[1][id] == 1 {
		return t.lagV[0][id] - t.lagV[1][id], false
	}
	return 0, (t.lagN[0][id] > 0) != (t.lagN[1][id] > 0)
}

// count adds (by +1) or removes (-1) one scrape's series.
func (t *scaleTally) count(tg *targetHistory, ms int64, by int8) {
	side := 0
	if tg.job == "whole" {
		side = 1
		t.wholeGroups += int(by) * len(tg.infos[ms])
	}
	for _, id := range tg.infos[ms] {
		was := t.isOdd(id)
		t.info[side][id] += by
		if now := t.isOdd(id); now != was {
			t.odd += map[bool]int{true: 1, false: -1}[now]
		}
	}
	for _, g := range tg.pages[ms] {
		d0, o0 := t.lagOf(g.id)
		t.lagN[side][g.id] += by
		t.lagV[side][g.id] += float64(by) * g.lag
		d1, o1 := t.lagOf(g.id)
		t.lagDiff += d1 - d0
		t.oneSided += map[bool]int{true: 1, false: 0}[o1] - map[bool]int{true: 1, false: 0}[o0]
	}
}

// scrape replaces tg's last scrape with its scrape at ms (a failed one
// leaves none of its series: Prometheus marks them stale).
func (t *scaleTally) scrape(tg *targetHistory, ms int64) {
	if prev, ok := t.last[tg.instance]; ok {
		t.count(tg, prev, -1)
	}
	t.last[tg.instance] = ms
	t.count(tg, ms, +1)
	t.version[tg.instance], t.groupCount[tg.instance] = tg.version[ms], tg.groups[ms]
}

// examples names a few groups pick says are wrong, with their series
// counts (shards, unsharded exporter).
func (t *scaleTally) examples(h *scaleHistory, pick func(id int32) bool) string {
	var out []string
	for id := range int32(len(h.names)) {
		if pick(id) && len(out) < 5 {
			out = append(out, fmt.Sprintf("%s (coordinator %d+%d, lag %d+%d)", h.names[id], t.info[0][id], t.info[1][id], t.lagN[0][id], t.lagN[1][id]))
		}
	}
	return strings.Join(out, ", ")
}

// judge says what keeps the state from one version split exactly as the
// unsharded exporter sees it; between: the shards and it are at different
// versions (the documented takeover rule allows a group on two shards or
// none until each has refreshed).
func (t *scaleTally) judge(h *scaleHistory, groups int) (problem string, between bool) {
	var shardVersions []float64
	var whole, shardGroups float64
	for inst, v := range t.version {
		if h.targets[inst].job == "whole" {
			whole = v
			continue
		}
		shardVersions = append(shardVersions, v)
		shardGroups += t.groupCount[inst]
	}
	if len(shardVersions) != 3 || slices.Min(shardVersions) != slices.Max(shardVersions) || shardVersions[0] != whole {
		return fmt.Sprintf("versions: shards %v, unsharded %v", shardVersions, whole), true
	}
	switch wholeGroups := t.groupCount[t.wholeInstance(h)]; {
	case t.odd != 0:
		return fmt.Sprintf("at version %v: %d groups not on exactly one shard beside the unsharded exporter: %s", whole, t.odd, t.examples(h, t.isOdd)), false
	case t.oneSided != 0:
		return fmt.Sprintf("at version %v: %d groups with a lag on one side only: %s", whole, t.oneSided, t.examples(h, func(id int32) bool { _, o := t.lagOf(id); return o })), false
	case t.lagDiff != 0:
		return fmt.Sprintf("at version %v: the shards' lag sums to %+v of the unsharded exporter's", whole, t.lagDiff), false
	case shardGroups != wholeGroups:
		return fmt.Sprintf("at version %v: the shards observed %v groups, the unsharded exporter %v", whole, shardGroups, wholeGroups), false
	case t.wholeGroups < groups:
		return fmt.Sprintf("the unsharded exporter has %d groups, want at least %d", t.wholeGroups, groups), false
	}
	return "", false
}

func (t *scaleTally) wholeInstance(h *scaleHistory) string {
	for inst, tg := range h.targets {
		if tg.job == "whole" {
			return inst
		}
	}
	return ""
}

// checkEveryScrape replays every scrape of every target up to instant to
// and judges the state after each one after instant from: every scrape
// succeeded, and each state is one version split exactly as the unsharded
// exporter sees it, but for the scrapes a version change leaves some
// targets behind. It returns the replayed history.
func (s *scaleRun) checkEveryScrape(from, to int64) *scaleHistory {
	s.t.Helper()
	h := s.history(from-3*s.interval.Milliseconds(), to)
	if len(h.targets) != 4 {
		s.t.Fatalf("%d targets scraped, want 4", len(h.targets))
	}
	type at struct {
		ms int64
		tg *targetHistory
	}
	var order []at
	for _, tg := range h.targets {
		for _, ms := range tg.scrapes {
			order = append(order, at{ms, tg})
			if !tg.up[ms] && ms > from {
				s.t.Errorf("%s (%s) failed its scrape at %s", tg.instance, tg.job, promTime(ms))
			}
		}
	}
	slices.SortFunc(order, func(a, b at) int { return cmp.Compare(a.ms, b.ms) })
	grace := s.refreshes(to) + 2*s.interval
	tl := newTally(len(h.names))
	var checked, between int
	var bad []string
	for i, a := range order {
		tl.scrape(a.tg, a.ms)
		if a.ms <= from || (i+1 < len(order) && order[i+1].ms == a.ms) || len(tl.last) < 4 {
			continue // before the window, or another scrape at the same instant
		}
		checked++
		problem, isBetween := tl.judge(h, s.groups)
		if isBetween {
			between++
			if since, ok := s.sinceChange(a.ms); !ok || since > grace {
				problem = fmt.Sprintf("%s, %s after the last change of the assignment (at most %s: the longest refresh and two scrapes)", problem, since.Round(time.Second), grace.Round(time.Second))
			} else {
				problem = ""
			}
		}
		if problem != "" {
			bad = append(bad, promTime(a.ms)+": "+problem)
		}
	}
	if checked < 8 {
		s.t.Fatalf("%d scrapes from %s to %s: want several of each target", checked, promTime(from), promTime(to))
	}
	if len(bad) > 0 {
		s.t.Errorf("%d of %d scrapes from %s to %s where the shards did not split one version exactly:\n%s", len(bad), checked, promTime(from), promTime(to), strings.Join(bad, "\n"))
	}
	s.t.Logf("%d scrapes checked from %s to %s (every scrape of every target): %d between two versions, within %s of a change", checked, promTime(from), promTime(to), between, grace.Round(time.Second))
	return h
}

// sinceChange is how long before ms the test last changed the assignment
// (ok false: it had not).
func (s *scaleRun) sinceChange(ms int64) (time.Duration, bool) {
	var last int64 = -1
	for _, c := range s.changes {
		if c <= ms {
			last = c
		}
	}
	return time.Duration(ms-last) * time.Millisecond, last >= 0
}

// owners is each group's shard (its instance) after the last scrapes at
// or before instant at.
func (h *scaleHistory) owners(at int64) map[string]string {
	out := map[string]string{}
	for inst, tg := range h.targets {
		if tg.job != "shards" {
			continue
		}
		i, found := slices.BinarySearch(tg.scrapes, at)
		if !found {
			i--
		}
		if i < 0 {
			continue
		}
		for _, g := range tg.pages[tg.scrapes[i]] {
			out[h.names[g.id]] = inst
		}
	}
	return out
}

// refreshes logs each exporter's longest refresh up to instant to,
// against the interval Prometheus scrapes at, and returns the longest.
func (s *scaleRun) refreshes(to int64) time.Duration {
	s.t.Helper()
	res, err := promVectorAt(s.prom, `max_over_time(kaas_exporter_last_refresh_duration_seconds[1h])`, promTime(to))
	if err != nil {
		s.t.Fatal(err)
	}
	var parts []string
	var most float64
	for _, r := range res {
		parts = append(parts, fmt.Sprintf("%s %s %.1fs", r.Metric["job"], r.Metric["instance"], r.float()))
		most = max(most, r.float())
	}
	slices.Sort(parts)
	s.t.Logf("longest refresh of each exporter (refreshed and scraped every %s): %s", s.interval, strings.Join(parts, ", "))
	return time.Duration(most * float64(time.Second))
}

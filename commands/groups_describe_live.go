package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
)

// groups describe with brokers: DescribeGroups on each coordinator,
// committed offsets by explicit-partition OffsetFetch (partitions from the
// offset file and the topics' metadata), log start/end from one ListOffsets
// round over the union, side by side with the offset file when a volume is
// given. Many groups cost O(brokers) round trips (wire.DescribeMany).

// GroupsDescribeLiveView is the machine document of 'groups describe' with
// brokers.
type GroupsDescribeLiveView struct {
	Sources  GroupsSourcesView         `json:"sources"`
	Groups   []inspect.LiveDescription `json:"groups"`
	NotFound []string                  `json:"notFound"`
	// Requests counts the requests sent to each broker.
	Requests []wire.BrokerCount `json:"requests"`
}

// runGroupsDescribeLive is describe with brokers: the volume side first
// (its offset files name the partitions to ask for), then the wire rounds,
// then inspect's decisions (described, not found, failed, notes), then the
// view; stderr gets one line per kind of problem.
func runGroupsDescribeLive(ctx context.Context, g *Globals, cl *wire.Client, o groupsDescribeOptions) error {
	hasVolume := g.HasVolume()
	vol := &describeVolume{byGroup: map[string][]inspect.GroupFileData{}, known: map[string]bool{}}
	if hasVolume {
		var err error
		if vol, err = readDescribeVolume(g, o); err != nil {
			return err
		}
	}
	names := inspect.NewNodeNamer(vol.a)
	v := GroupsDescribeLiveView{Sources: GroupsSourcesView{Live: true, Mode: "live", Brokers: []BrokerSourceView{}}}
	var listings []wire.BrokerGroups
	selected := inspect.SelectGroups(nil, o.names, false, nil)
	if o.isSelectAll() {
		var err error
		if listings, selected, err = selectListed(ctx, g, cl, vol.known, o); err != nil {
			return err
		}
		v.Sources.Brokers = brokerSources(cl, listings, names)
	}
	var files map[string]*inspect.GroupDescription
	if hasVolume {
		lookup, flush := logLookup(g, vol.l)
		defer flush()
		files = inspect.DescribeKnown(selected, vol.known, vol.byGroup, vol.a, lookup)
	}
	described, err := describeOnWire(ctx, g, cl, selected, files, hasVolume)
	if err != nil {
		return err
	}
	if hasVolume {
		v.Sources.Mode = "merged"
		volumeSources(&v.Sources, vol.l, vol.a, vol.sr)
		warnGeneration(g, vol.sr)
		g.Notef("volume: %s", g.generationNote(vol.l))
	}
	res := inspect.DescribeLive(inspect.LiveDescribeInput{Described: described, Files: files, Names: names, Filter: o.filter, Lag: o.lag,
		Held: cl.CoordinatorHolds(ctx, inspect.HoldCandidates(described, files), listings)})
	v.Groups, v.NotFound = res.Groups, res.NotFound
	noteLeftOut(g, o.filter, res.LeftOut)
	if o.drainWindow > 0 {
		addForecasts(ctx, g, cl, vol, hasVolume, o.drainWindow, v.Groups)
	}
	v.Requests = cl.Counter.Snapshot()
	for _, w := range inspect.AnnotateLive(v.Groups, vol.l.Gen) {
		g.Warnf("%s", w)
	}
	noteLiveRequests(g, names, v.Requests, cl.Counter.Total(), len(v.Groups))
	if err := printGroupsDescribeLive(g, o, &v, hasVolume); err != nil {
		return err
	}
	if err := inspect.LiveDescribeError(res); err != nil {
		return err
	}
	if len(selected) == 0 {
		g.Notef("no group matches")
	}
	return nil
}

// selectListed is --all/--regex with brokers: the groups the volume knows
// and those some broker lists (the gathering's ListGroups round), selected
// by o. A listed group counts as known to the volume side too (described
// against the volume's assignment, with no offset file).
func selectListed(ctx context.Context, g *Globals, cl *wire.Client, known map[string]bool, o groupsDescribeOptions) ([]wire.BrokerGroups, []string, error) {
	gg, err := cl.GatherGroups(ctx, wire.GroupRounds{})
	if err != nil {
		return nil, nil, err
	}
	for _, w := range inspect.UnlistedWarnings(gg.Listings) {
		g.Warnf("%s", w)
	}
	selected := inspect.SelectGroups(inspect.UnionGroupNames(sortedKeys(known), gg.Listings), nil, o.all, o.re)
	for _, name := range selected {
		known[name] = true
	}
	return gg.Listings, selected, nil
}

// describeOnWire describes the selected groups on their coordinators, the
// offset files' partitions asked for explicitly; groups whose partitions
// nothing named get the OffsetFetch-all fallback.
func describeOnWire(ctx context.Context, g *Globals, cl *wire.Client, selected []string, files map[string]*inspect.GroupDescription, hasVolume bool) ([]wire.GroupDescription, error) {
	knownTP := inspect.KnownPartitions(files)
	described, err := cl.DescribeMany(ctx, selected, wire.DescribeOptions{Known: knownTP})
	if described == nil && err != nil {
		return nil, err
	}
	if err != nil {
		g.Warnf("log offsets: %v (lag unknown where the log end is missing)", err)
	}
	asked, coords := inspect.FetchAllCandidates(described, knownTP)
	ans := cl.FetchAllWithLogs(ctx, asked, coords)
	if ans.LogsErr != nil {
		g.Warnf("log offsets: %v", ans.LogsErr)
	}
	if w := inspect.NoPartitionsWarning(inspect.MergeFetchAll(described, asked, ans), hasVolume); w != "" {
		g.Warnf("%s", w)
	}
	return described, nil
}

// addForecasts observes the described groups over window (the volume too
// when there is one) and gives each its forecast.
func addForecasts(ctx context.Context, g *Globals, cl *wire.Client, vol *describeVolume, hasVolume bool, window time.Duration, groups []inspect.LiveDescription) {
	if len(groups) == 0 {
		return
	}
	names := make([]string, len(groups))
	for i := range groups {
		names[i] = groups[i].Group
	}
	var lp *volume.Layout
	if hasVolume {
		lp = &vol.l
	}
	fc := observeForecasts(ctx, g, lp, cl, names, window)
	for i := range groups {
		groups[i].Forecast = fc[groups[i].Group]
	}
}

// noteLiveRequests says how many groups were described with how many
// requests, per broker.
func noteLiveRequests(g *Globals, names *inspect.NodeNamer, reqs []wire.BrokerCount, total int64, described int) {
	var rounds []string
	for _, bc := range reqs {
		if !bc.Seed {
			rounds = append(rounds, fmt.Sprintf("%s %d", names.Name(bc.Node), bc.Requests))
		}
	}
	g.Notef("live: %s described with %s (requests per broker: %s)", render.Plural(described, "group", "groups"),
		render.Plural(int(total), "request", "requests"), strings.Join(rounds, ", "))
}

// printGroupsDescribeLive prints the live view: the summary section and a
// block per group for people, one row per partition in csv.
func printGroupsDescribeLive(g *Globals, o groupsDescribeOptions, v *GroupsDescribeLiveView, hasVolume bool) error {
	if o.view != "" {
		return printDescribeView(g, *v, v.Groups, liveViewTable(o.view, g.Printer.Format, v.Groups))
	}
	sum := make([]summaryRow, len(v.Groups))
	for i, d := range v.Groups {
		sum[i] = summaryRow{d.Group, d.Summary}
	}
	return printDescribe(g, o, *v, v.Groups, sum, func() *render.TableData { return describeLiveTable(v) },
		func(p *render.Printer) error { return describeLiveHuman(p, v, hasVolume) })
}

// describeLiveTable is the live view one row per partition (csv).
func describeLiveTable(v *GroupsDescribeLiveView) *render.TableData {
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "COMMITTED", "FILE-COMMITTED", "LOG-START", "LOG-END", "LAG", "MEMBER", "CLIENT-ID+", "HOST+", "STATE+", "COORDINATOR+", "NOTE+")
	for _, d := range v.Groups {
		for _, p := range d.Partitions {
			t.Add(cellName(render.CSV, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), render.Offset(p.Committed), optInt(p.FileCommitted), render.Offset(p.LogStart), render.Offset(p.LogEnd),
				optInt(p.Lag), render.Dash(p.Member), render.Dash(p.ClientID), render.Dash(p.AssignedHost()), d.State, d.WireCoordinator, p.Note)
		}
	}
	return t
}

// logLookup reads each partition's log bounds for offline lag: from the
// segment files, with manifest.json only where they cannot be read (nil
// without a data dir). Findings are kept until flush prints them, one
// line per kind, with a warning naming every manifest fallback.
func logLookup(g *Globals, l volume.Layout) (lookup inspect.LogLookup, flush func()) {
	if l.DataDir == "" {
		return nil, func() {}
	}
	lr := volume.NewLogReader(l)
	seen := map[*volume.LogBounds]bool{}
	var all []volume.Finding
	var fallbacks []string
	return func(topic string, p int32) *volume.LogBounds {
			b := lr.Get(topic, p)
			if !seen[b] {
				seen[b] = true
				all = append(all, b.Findings...)
				if b.EndSource() == volume.SourceManifest {
					fallbacks = append(fallbacks, fmt.Sprintf("%s/%d", topic, p))
				}
			}
			return b
		}, func() {
			g.WarnFindings(all)
			if len(fallbacks) > 0 {
				g.Warnf("%s: the log end came from manifest.json because the segment files could not be read; kaas rewrites the manifest only on takeover, roll and close, so the lag there is likely larger (logEndSource \"manifest\" in -o json)", render.Plural(len(fallbacks), "partition", "partitions")+" ("+strings.Join(fallbacks, ", ")+")")
			}
			all, fallbacks = nil, nil
		}
}

package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
)

func init() {
	registerSub("groups", groupsUsage, func() *cli.Command {
		return &cli.Command{
			Name:      "health",
			Usage:     "group health over a window: every active condition (REWIND, VANISHED, ERR, STOP, STALL, WARN) with evidence, time to drain, retention forecast",
			ArgsUsage: "[GROUP...]",
			Description: "Observes the groups every --interval for --window (the same refresh as 'kaasctl exporter': the\n" +
				"volume's offset files and/or one batched broker round), then evaluates each group. A group can\n" +
				"hold several conditions at once (rewound, lost partitions and stopped); each is listed with its\n" +
				"evidence (-o wide: every fact), worst first:\n\n" +
				"  REWIND    a committed offset moved backwards between two observations: a reset, or a commit from a\n" +
				"            stale consumer (kaas never fences OffsetCommit by generation or member)\n" +
				"  VANISHED  partitions disappeared from the offset file: a commit to an unloaded group rewrote it\n" +
				"            with only the committed partitions\n" +
				"  ERR       the group could not be observed, or its file turned corrupt or (on 0.2.18) a plain map\n" +
				"  STOP      lag > 0 and no commit arrived in the window (offsets still, file not rewritten)\n" +
				"  STALL     lag > 0 on a partition whose offset did not move although commits arrived\n" +
				"  WARN      the total lag grew at every observation while commits advanced\n" +
				"  OK        none of the above\n\n" +
				"While a group cannot be observed (ERR: brokers or coordinator silent), the conditions last known\n" +
				"stay, marked \"(last known)\", with unknownSince in JSON.\n\n" +
				"DRAIN is the estimated time until the group's lag is zero (its slowest partition), from the consume\n" +
				"and produce rates fitted over the window; \"not draining\" when some partition is not consumed\n" +
				"faster than produced; \"-\" before 3 observations. RETENTION is when the log start (kaas moves it\n" +
				"only on DeleteRecords) passes the committed offset of a lagging partition, from its advance over the\n" +
				"window. JSON: drain and retention per partition, with the window and samples used.\n\n" +
				"Each state comes with its evidence: partition, before/after, when, and which file change.\n" +
				"Without a volume, commits are only seen as moving offsets, so a stuck consumer that keeps\n" +
				"committing the same offsets shows as STOP rather than STALL.\n" +
				"--exporter URL reads a running exporter's evaluation (its /api/health) instead of observing.\n" +
				"Exit code 3 when a group is not OK.\n\n" +
				"Examples:\n" +
				"  kaasctl groups health --data-dir /data -b kaas-0:9092                # every group, 30 s window\n" +
				"  kaasctl groups health --data-dir /data --window 2m --interval 10s orders-app\n" +
				"  kaasctl groups health --exporter http://kaasctl-exporter:10092 -o json",
			Flags: []cli.Flag{
				&cli.DurationFlag{Name: "window", Value: 30 * time.Second, Usage: "observe for `D`"},
				&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "observe every `D`"},
				&cli.StringFlag{Name: "regex", Aliases: []string{"r"}, Usage: "only groups whose id matches `RE`"},
				&cli.IntFlag{Name: "max-groups", Value: 10000, Usage: "observe at most `N` groups (0: no cap)"},
				&cli.StringFlag{Name: "exporter", Usage: "read the health a running 'kaasctl exporter' at `URL` evaluated"},
				&cli.BoolFlag{Name: "all", Usage: "also list groups that are OK (the default lists every group; kept for symmetry with describe)", Hidden: true},
			},
			Action: runGroupsHealth,
		}
	})
}

// GroupsHealthView is the machine document of 'groups health'.
type GroupsHealthView struct {
	// Source is "observed" or the exporter's URL.
	Source   string                `json:"source"`
	Window   string                `json:"window"`
	Interval string                `json:"interval"`
	Groups   []inspect.GroupHealth `json:"groups"`
	// States counts the groups per worst condition; Conditions the groups
	// per active condition (a group counts once for each it has).
	States     map[string]int `json:"states"`
	Conditions map[string]int `json:"conditions"`
}

func runGroupsHealth(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	window, interval := c.Duration("window"), c.Duration("interval")
	if window <= 0 || interval <= 0 {
		return exit.UsageErrorf("--window and --interval must be positive")
	}
	if interval > window {
		return exit.UsageErrorf("--interval %s is longer than --window %s: at least two observations are needed", interval, window)
	}
	re, err := compileRegex("regex", c.String("regex"))
	if err != nil {
		return err
	}
	names := c.Args().Slice()
	v := GroupsHealthView{Window: window.String(), Interval: interval.String(), Groups: []inspect.GroupHealth{}, States: map[string]int{}, Conditions: map[string]int{}}
	var all []inspect.GroupHealth
	if u := c.String("exporter"); u != "" {
		doc, err := fetchExporterHealth(c.Context, u)
		if err != nil {
			return err
		}
		v.Source, v.Window, v.Interval = u, doc.Window, ""
		all = doc.Groups
	} else {
		src, closeFn, err := exporterSource(c, g, re, c.Int("max-groups"), false, false)
		if err != nil {
			return err
		}
		defer closeFn()
		v.Source = "observed"
		all = observeHealth(c.Context, g, src, window, interval, healthOptions(src.Generation, 0), names)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	found := map[string]bool{}
	for _, h := range all {
		if len(want) > 0 && !want[h.Group] {
			continue
		}
		if re != nil && !re.MatchString(h.Group) {
			continue
		}
		found[h.Group] = true
		v.Groups = append(v.Groups, h)
		v.States[h.State]++
		for _, c := range h.Conditions {
			v.Conditions[c]++
		}
	}
	var missing []string
	for _, n := range names {
		if !found[n] {
			missing = append(missing, n)
		}
	}
	t := render.NewTable("GROUP", "CONDITION", "LAG", "DRAIN", "RETENTION", "SAMPLES", "EVIDENCE", "PARTITION+", "BEFORE+", "AFTER+", "SINCE+", "FILE+")
	wide := g.Printer.Format == render.Wide || g.Printer.Format == render.CSV
	for _, h := range v.Groups {
		lag := "-"
		if h.LagKnown {
			lag = strconv.FormatInt(h.Lag, 10)
		}
		drain, ret := h.Drain.Text(), h.Retention.Text()
		if len(h.Evidence) == 0 {
			t.Add(cellName(g.Printer.Format, h.Group), h.State, lag, drain, ret, strconv.Itoa(h.Samples), "-", "", "", "", "", "")
			continue
		}
		// Every active condition with its evidence: the first fact of each
		// (every fact with -o wide).
		shown := map[string]bool{}
		for _, e := range h.Evidence {
			if shown[e.State] && !wide {
				continue
			}
			shown[e.State] = true
			cond := e.State
			if e.Carried {
				cond += " (last known)"
			}
			t.Add(cellName(g.Printer.Format, h.Group), cond, lag, drain, ret, strconv.Itoa(h.Samples), e.Detail, e.Partition, healthOff(e.Before), healthOff(e.After), healthTime(e.Since), e.File)
		}
	}
	if err := g.Printer.Print(render.Output{Data: v, Items: v.Groups, Table: t}); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("not observed (no offset file, entry or broker listing): %s", quoteList(missing))
	}
	bad := 0
	for _, h := range v.Groups {
		if h.State != inspect.HealthOK {
			bad++
		}
	}
	if bad > 0 {
		return exit.ProblemsFound("%s not OK", render.Plural(bad, "group", "groups"))
	}
	return nil
}

func healthOff(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func healthTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// observeHealth refreshes every interval for window and evaluates.
func observeHealth(ctx context.Context, g *Globals, src *exporter.Source, window, interval time.Duration, opt inspect.HealthOptions, names []string) []inspect.GroupHealth {
	// The window holds every observation of the run (no time cut: on a
	// busy machine their timestamps spread beyond --window, and the run
	// already bounds them).
	hw := inspect.HealthWindow{Opt: opt}
	n := int(window/interval) + 1
	var last *exporter.Observation
	g.Notef("observing for %s (%d observations, every %s)", window, n, interval)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				i = n
				continue
			case <-tick.C:
			}
		}
		last = src.Observe(ctx)
		for _, grp := range last.Groups {
			hw.Add(grp.Row.Group, grp.Sample)
		}
		if last.WireErr != "" {
			g.Warnf("brokers: %s", last.WireErr)
		}
	}
	out := make([]inspect.GroupHealth, 0, len(last.Groups))
	for _, grp := range last.Groups {
		h := hw.Evaluate(grp.Row.Group)
		h.Lag, h.LagKnown = grp.Lag, grp.LagKnown
		out = append(out, h)
	}
	return out
}

func fetchExporterHealth(ctx context.Context, base string) (*exporter.HealthDocument, error) {
	u := strings.TrimRight(base, "/") + "/api/health"
	if !strings.Contains(base, "://") {
		u = "http://" + u
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, exit.UsageErrorf("--exporter %q: %v", base, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("exporter %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("exporter %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("exporter %s: HTTP %d: %s", u, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var doc exporter.HealthDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("exporter %s: not a kaasctl exporter health document: %v", u, err)
	}
	return &doc, nil
}

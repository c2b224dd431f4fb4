package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/render"
)

// ObserveHealth refreshes src every interval for window and evaluates
// every group observed (the caller selects: inspect.SelectHealth), with
// what the last refresh covered (groups health without an exporter).
func ObserveHealth(ctx context.Context, src *observe.Source, window, interval time.Duration, opt inspect.HealthOptions, mw *inspect.MemberWindow, g render.Notes) ([]inspect.GroupHealth, inspect.HealthCoverage) {
	out, last := ObserveWindow(ctx, src, window, interval, opt, mw, nil, g)
	return out, src.Coverage(last)
}

// ObserveWindow is ObserveHealth's loop, handing each observation to each
// (nil: none), and returning the last one; with mw (and brokers) each
// group's membership goes into it and its conditions into the result.
func ObserveWindow(ctx context.Context, src *observe.Source, window, interval time.Duration, opt inspect.HealthOptions, mw *inspect.MemberWindow, each func(*observe.Observation), g render.Notes) ([]inspect.GroupHealth, *observe.Observation) {
	// The window holds every observation of the run (no time cut: on a
	// busy machine their timestamps spread beyond --window, and the run
	// already bounds them).
	hw := inspect.HealthWindow{Opt: opt}
	n := int(window/interval) + 1
	var last *observe.Observation
	if n > 1 {
		g.Notef("observing for %s (%d observations, every %s)", window, n, interval)
	}
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
			found := hw.Add(grp.Row.Group, grp.Sample)
			if mw != nil && grp.Members != nil { // with brokers
				mw.Observe(grp.Row.Group, *grp.Members, found)
			}
		}
		if last.WireErr != "" {
			g.Warnf("brokers: %s", last.WireErr)
		}
		if each != nil {
			each(last)
		}
	}
	out := make([]inspect.GroupHealth, 0, len(last.Groups))
	for _, grp := range last.Groups {
		h := hw.Evaluate(grp.Row.Group)
		h.Lag, h.LagKnown, h.LagUnknown = grp.Lag, grp.LagKnown, grp.LagUnknown
		if mw != nil {
			mw.Apply(&h)
		}
		out = append(out, h)
	}
	return out, last
}

// FetchHealth reads a running exporter's health document (BASE/api/health;
// http:// when BASE names no scheme).
func FetchHealth(ctx context.Context, base string) (*HealthDocument, error) {
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
	var doc HealthDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("exporter %s: not a kaasctl exporter health document: %v", u, err)
	}
	return &doc, nil
}

// ObserveForecasts observes groups (the volume when l is set, and the
// brokers) four times over window and returns each group's forecast.
func ObserveForecasts(ctx context.Context, l *volume.Layout, cl *wire.Client, groups []string, window time.Duration, g render.Notes) map[string]*inspect.GroupForecast {
	only := make(map[string]bool, len(groups))
	for _, n := range groups {
		only[n] = true
	}
	src := &observe.Source{Client: cl, Only: only}
	if l != nil {
		wl := l.WithGeneration()
		src.Layout = &wl
	}
	interval := window / (inspect.MinForecastSamples)
	out := map[string]*inspect.GroupForecast{}
	healths, _ := ObserveHealth(ctx, src, window, interval, inspect.HealthOptions{}, nil, g)
	for _, h := range healths {
		out[h.Group] = h.Forecast()
	}
	return out
}

// ObserveNamedHealth is groups health's observation: src's groups over
// window (the groups named observed whatever src's cap), with the
// membership window memberWindow gives for the volume's generation.
func ObserveNamedHealth(ctx context.Context, src *observe.Source, names []string, window, interval time.Duration, memberWindow func(volume.GenerationInfo) inspect.MemberWindow, g render.Notes) ([]inspect.GroupHealth, inspect.HealthCoverage) {
	OnlyNamed(src, names) // observe the groups named, whatever --max-groups
	var gi volume.GenerationInfo
	if src.Layout != nil {
		gi = src.Layout.WithGeneration().Gen
	}
	mw := memberWindow(gi)
	return ObserveHealth(ctx, src, window, interval, inspect.HealthOptionsFor(src.Gen(), 0), &mw, g)
}

// OnlyNamed has src observe the groups named, whatever its cap (none
// named: every group).
func OnlyNamed(src *observe.Source, names []string) {
	if len(names) > 0 {
		src.Only = map[string]bool{}
		for _, n := range names {
			src.Only[n] = true
		}
	}
}

// ExplainObservation is what groups explain observed: each group's health
// (a running exporter's when one was asked), the last refresh and what it
// covered, the assignment of every refresh (for the coordinator moves),
// and the exporter's document (nil: observed here).
type ExplainObservation struct {
	Healths  []inspect.GroupHealth
	Last     *observe.Observation
	Seen     []*volume.Assignment
	Cover    inspect.HealthCoverage
	Exporter *HealthDocument
}

// ObserveExplain observes src over window every interval, or once when
// the conditions and forecasts come from the exporter at exporterURL
// ("": none).
func ObserveExplain(ctx context.Context, src *observe.Source, window, interval time.Duration, exporterURL string, g render.Notes) (ExplainObservation, error) {
	if exporterURL != "" {
		window = 0
	}
	var ob ExplainObservation
	ob.Healths, ob.Last = ObserveWindow(ctx, src, window, interval, inspect.HealthOptionsFor(src.Gen(), 0), nil, func(o *observe.Observation) {
		ob.Seen = append(ob.Seen, o.Assignment)
	}, g)
	ob.Cover = src.Coverage(ob.Last)
	if exporterURL != "" {
		doc, err := FetchHealth(ctx, exporterURL)
		if err != nil {
			return ob, err
		}
		ob.Healths, ob.Exporter = doc.Groups, doc
	}
	return ob, nil
}

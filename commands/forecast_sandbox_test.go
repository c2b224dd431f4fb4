package commands

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/observe"
	"github.com/kaasctl/kaasctl/views"
)

// forecastExporter is an exporter on the sandbox refreshed by the test.
func forecastExporter(t *testing.T, sb *sandbox.Sandbox, groups string) *exporter.Exporter {
	t.Helper()
	return forecastExporterAt(t, sb, groups, nil)
}

// forecastExporterAt is forecastExporter observing at now() (nil: the
// wall clock).
func forecastExporterAt(t *testing.T, sb *sandbox.Sandbox, groups string, now func() time.Time) *exporter.Exporter {
	t.Helper()
	cl, err := wire.NewClient(&wire.Settings{Brokers: sb.Bootstrap(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	l := sb.Layout()
	re, _ := compileRegex("group-regex", groups)
	return exporter.New(exporter.Options{Source: &observe.Source{Layout: &l, Client: cl, Filter: re, Now: now}, Window: time.Minute})
}

func healthOf(e *exporter.Exporter, group string) inspect.GroupHealth {
	for _, h := range e.Health() {
		if h.Group == group {
			return h
		}
	}
	return inspect.GroupHealth{}
}

// Time to drain on the sandbox: orders/0 produced at 20/s, one group
// consuming it at 60/s from 120 behind, another at 10/s. Once the window
// has three observations the estimate of the first is within 20% of when
// it really catches up; the second reads not draining. The records and
// commits are real; the clock is the test's: every step is half a second
// of it, and the exporter observes at that time (a loaded machine cannot
// skew the rates).
func TestDrainEstimateSandbox(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	prod := sbClient(t, sb, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(sbClient(t, sb))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const start, produceRate, fastRate, slowRate = 200, 20.0, 60.0, 10.0
	const step = 500 * time.Millisecond
	produce := func(n int) {
		rs := make([]*kgo.Record, n)
		for i := range rs {
			rs[i] = &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("x")}
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	commit := func(group string, off int64) {
		o := kadm.Offsets{}
		o.AddOffset("orders", 0, off, -1)
		if err := adm.CommitAllOffsets(ctx, group, o); err != nil {
			t.Fatalf("commit %s: %v", group, err)
		}
	}
	produce(start)
	t0 := time.Now()
	now := t0
	e := forecastExporterAt(t, sb, "^(drainer|grower)$", func() time.Time { return now })
	// At el seconds the log end is start+20·el, drainer's offset
	// start-120+60·el (capped at the end), grower's start-120+10·el.
	produced := 0
	var est, grow inspect.GroupHealth
	var caughtUp time.Time
	for k := 0; caughtUp.IsZero(); k++ {
		if k > 40 {
			t.Fatalf("drainer never caught up (estimate %+v)", est.Drain)
		}
		el := (time.Duration(k) * step).Seconds()
		if n := int(produceRate*el) - produced; n > 0 {
			produce(n)
			produced += n
		}
		end := int64(start + produced)
		off := min(int64(start-120+fastRate*el), end)
		commit("drainer", off)
		commit("grower", int64(start-120+slowRate*el))
		now = t0.Add(time.Duration(k) * step)
		if off == end {
			caughtUp = now
			break
		}
		e.Refresh(ctx)
		if est.Drain != nil && est.Drain.Known {
			continue // the first estimate is the one judged
		}
		est, grow = healthOf(e, "drainer"), healthOf(e, "grower")
		if d := est.Drain; d != nil && !d.Known && d.Samples >= inspect.MinForecastSamples {
			t.Fatalf("three samples and no estimate: %+v", d)
		}
	}
	if est.Drain == nil || est.Drain.Samples != inspect.MinForecastSamples || est.Drain.NotDraining || est.Drain.WindowSeconds <= 0 {
		t.Fatalf("first estimate %+v", est.Drain)
	}
	if grow.Drain == nil || !grow.Drain.Known || !grow.Drain.NotDraining || grow.Drain.Text() != "not draining" {
		t.Errorf("grower: %+v", grow.Drain)
	}
	var buf bytes.Buffer
	e.WriteMetrics(&buf, nil)
	if !strings.Contains(buf.String(), `kaas_group_not_draining{group="grower"} 1`) || !strings.Contains(buf.String(), `kaas_group_drain_seconds{group="drainer"} `) ||
		strings.Contains(buf.String(), `kaas_group_drain_seconds{group="grower"}`) {
		t.Errorf("drain metrics:\n%s", buf.String())
	}
	real := caughtUp.Sub(est.To).Seconds()
	if got := est.Drain.Seconds; got < real*0.8 || got > real*1.2 {
		t.Errorf("estimated %.2fs at %s, caught up %.2fs later (more than 20%% off); rates %+v", got, est.To.Sub(t0), real, est.Drain)
	}
}

// The retention forecast on the sandbox: a stopped group at offset 100 of
// orders/0 while DeleteRecords advances the log start 40 records a second;
// the forecast fires (under the 30-minute default, and sooner than the
// real time) before the log start passes the committed offset, then
// reads breached.
func TestRetentionForecastSandbox(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 300)
	commitAdmin(t, sb, "stopped", map[int32]int64{0: 100})
	adm := kadm.NewClient(sbClient(t, sb))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	logStart := int64(0)
	t0 := time.Now()
	go func() {
		for ctx.Err() == nil {
			to := min(int64(40*time.Since(t0).Seconds()), 200)
			o := kadm.Offsets{}
			o.AddOffset("orders", 0, to, -1)
			if _, err := adm.DeleteRecords(ctx, o); err != nil && ctx.Err() == nil {
				t.Errorf("DeleteRecords: %v", err)
				return
			}
			mu.Lock()
			logStart = to
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	e := forecastExporter(t, sb, "^stopped$")
	fired := false
	for ctx.Err() == nil {
		e.Refresh(ctx)
		h := healthOf(e, "stopped")
		f := h.Retention
		if f != nil && f.Breached {
			break
		}
		if f != nil && f.Known && !fired {
			mu.Lock()
			ls := logStart
			mu.Unlock()
			if ls >= 100 || f.Seconds >= 1800 || f.Partition != "orders/0" {
				t.Fatalf("forecast %+v with the log start at %d", f, ls)
			}
			var buf bytes.Buffer
			e.WriteMetrics(&buf, nil)
			if !strings.Contains(buf.String(), `kaas_group_retention_breach_seconds{group="stopped"} `) || !strings.Contains(buf.String(), `kaas_group_last_commit_age_seconds{group="stopped"} `) {
				t.Errorf("metrics lack the forecast or the last commit age:\n%s", buf.String())
			}
			fired = true
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !fired {
		t.Fatal("the forecast never fired before the breach")
	}
	if f := healthOf(e, "stopped").Retention; f == nil || !f.Breached || f.Seconds != 0 {
		t.Fatalf("after the breach: %+v", f)
	}
}

// groups describe and groups list -o wide with --drain-window: the time
// to drain with the window and observations it used; a stopped group with
// lag reads not draining, a caught-up one caught up; without the flag
// nothing is claimed.
func TestDescribeAndListDrainWindow(t *testing.T) {
	t.Parallel()
	sb := liveSB(t)
	produceOrders(t, sb, 10)
	commitAdmin(t, sb, "behind", map[int32]int64{0: 2, 1: 2, 2: 2, 3: 2})
	commitAdmin(t, sb, "current", map[int32]int64{0: 10, 1: 10, 2: 10, 3: 10})
	dd := sb.Layout().DataDir
	v := decodeJSON[views.GroupsDescribeLiveView](t, live(t, sb, "groups", "describe", "--data-dir", dd, "behind", "current", "--drain-window", "600ms", "-o", "json"))
	got := map[string]*inspect.GroupForecast{}
	for _, d := range v.Groups {
		got[d.Group] = d.Forecast
	}
	if f := got["behind"]; f == nil || !f.Drain.Known || !f.Drain.NotDraining || f.Drain.Samples != 4 || f.Drain.WindowSeconds <= 0 || f.LastCommit.IsZero() {
		t.Errorf("behind: %+v", f)
	}
	if f := got["current"]; f == nil || f.Drain.Text() != "caught up" {
		t.Errorf("current: %+v", f)
	}
	r := live(t, sb, "groups", "describe", "--data-dir", dd, "behind", "--drain-window", "600ms")
	if !strings.Contains(r.Out, "time to drain") || !strings.Contains(r.Out, "not draining  (consumed 0.0/s, produced 0.0/s over") {
		t.Errorf("describe table:\n%s", r.Out)
	}
	if r := live(t, sb, "groups", "describe", "--data-dir", dd, "behind"); strings.Contains(r.Out, "time to drain") {
		t.Errorf("a time to drain without observations:\n%s", r.Out)
	}
	r = live(t, sb, "groups", "list", "--data-dir", dd, "-o", "wide", "--drain-window", "600ms")
	for _, line := range strings.Split(r.Out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "behind" && !strings.Contains(line, "not draining") || f[0] == "current" && !strings.Contains(line, "caught up") {
			t.Errorf("list -o wide: %q", line)
		}
	}
	if !strings.Contains(r.Out, "DRAIN") {
		t.Errorf("list -o wide has no DRAIN column:\n%s", r.Out)
	}
}

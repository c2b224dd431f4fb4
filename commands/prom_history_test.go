package commands

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// logPromHistory logs, once the test has failed, how each series of each
// query changed since from (range queries at 250ms steps; "-" where it was
// absent): what the exporter served and Prometheus evaluated, step by
// step, in seconds since from.
func logPromHistory(t *testing.T, base string, from time.Time, queries ...string) {
	t.Helper()
	if !t.Failed() {
		return
	}
	now := time.Now()
	for _, q := range queries {
		series, err := promRange(base, q, from, now)
		if err != nil {
			t.Logf("history of %s: %v", q, err)
			continue
		}
		for _, s := range series {
			t.Logf("history of %s %v:%s", q, s.Metric, promChanges(s.Values, from, now))
		}
	}
}

// promSeries is one series of a range query's answer.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// promRange asks Prometheus for q from from to to at 250ms steps.
func promRange(base, q string, from, to time.Time) ([]promSeries, error) {
	u := fmt.Sprintf("%s/api/v1/query_range?query=%s&start=%.3f&end=%.3f&step=0.25", base, url.QueryEscape(q),
		float64(from.UnixMilli())/1000, float64(to.UnixMilli())/1000)
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []promSeries `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	return r.Data.Result, nil
}

// promChanges lists where a series' value changed, as " seconds:value"
// (seconds since from), and " seconds:-" where it went absent.
func promChanges(values [][2]any, from, now time.Time) string {
	var b strings.Builder
	t0 := float64(from.UnixMilli()) / 1000
	prev, prevAt := "", -1.0
	for _, v := range values {
		at, _ := v[0].(float64)
		if prevAt >= 0 && at-prevAt > 0.3 { // a step without a sample
			fmt.Fprintf(&b, " %.2f:-", prevAt-t0+0.25)
			prev = ""
		}
		if val := fmt.Sprint(v[1]); val != prev {
			fmt.Fprintf(&b, " %.2f:%s", at-t0, val)
			prev = val
		}
		prevAt = at
	}
	if prevAt >= 0 && prevAt < float64(now.UnixMilli())/1000-0.5 {
		fmt.Fprintf(&b, " %.2f:-", prevAt-t0+0.25)
	}
	return b.String()
}

package views

import (
	"strconv"
	"time"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/render"
)

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

// GroupsHealthTable is a line per group and active condition with its
// evidence: the first fact of each (every fact with -o wide or csv).
func GroupsHealthTable(f render.Format, groups []inspect.GroupHealth) *render.TableData {
	t := render.NewTable("GROUP", "CONDITION", "LAG", "DRAIN", "RETENTION", "SAMPLES", "EVIDENCE", "PARTITION+", "BEFORE+", "AFTER+", "SINCE+", "FILE+")
	wide := f == render.Wide || f == render.CSV
	for _, h := range groups {
		lag := "-"
		if h.LagKnown || h.LagUnknown > 0 {
			lag = totalLagText(h.LagKnown, h.Lag, h.LagUnknown)
		}
		drain, ret := h.Drain.Text(), h.Retention.Text()
		if len(h.Evidence) == 0 {
			t.Add(cellName(f, h.Group), h.State, lag, drain, ret, strconv.Itoa(h.Samples), "-", "", "", "", "", "")
			continue
		}
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
			detail := e.Detail
			if ra := h.RewindAuthor(e); ra != nil {
				detail += "; " + ra.Text()
			}
			t.Add(cellName(f, h.Group), cond, lag, drain, ret, strconv.Itoa(h.Samples), detail, e.Partition, healthOff(e.Before), healthOff(e.After), healthTime(e.Since), e.File)
		}
	}
	return t
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

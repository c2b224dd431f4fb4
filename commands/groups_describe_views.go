package commands

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/render"
)

// groups describe's one-table views, as kafka-consumer-groups.sh
// --describe prints them: --offsets (a row per partition), --members (a
// row per member), --state (a row per group). JSON and YAML keep the whole
// document; the table and csv are the view.

// describeViews are the view flags, each a table of its own.
var describeViews = []struct {
	flag, usage string
	live        bool // needs the brokers
}{
	{"offsets", "print one table, a row per partition: committed offset, log end, lag, the member owning it (kafka-consumer-groups.sh --describe --offsets)", false},
	{"members", "print one table, a row per member: id, host, client id, partitions owned; with -o wide its assignment (--describe --members [--verbose])", true},
	{"state", "print one table, a row per group: coordinator, assignor, state, members (--describe --state)", true},
}

// describeViewFlags are the view flags of groups describe.
func describeViewFlags() []cli.Flag {
	out := make([]cli.Flag, len(describeViews))
	for i, v := range describeViews {
		out[i] = &cli.BoolFlag{Name: v.flag, Usage: v.usage}
	}
	return out
}

// parseDescribeView reads the view flags: at most one ("": the blocks).
func parseDescribeView(c *cli.Context) (string, error) {
	view := ""
	for _, v := range describeViews {
		if !c.Bool(v.flag) {
			continue
		}
		if view != "" {
			return "", exit.UsageErrorf("--%s and --%s are two views: give one", view, v.flag)
		}
		view = v.flag
	}
	if view != "" && c.Bool("summary") {
		return "", exit.UsageErrorf("--summary and --%s are two views: give one", view)
	}
	return view, nil
}

// viewNeedsBrokers is the usage error of a live view offline ("": fine).
func viewNeedsBrokers(view string) error {
	for _, v := range describeViews {
		if v.flag == view && v.live {
			return exit.UsageErrorf("--%s shows what the group's coordinator says (members, state): give --brokers", view)
		}
	}
	return nil
}

// liveViewTable is the view of a live describe.
func liveViewTable(view string, f render.Format, groups []inspect.LiveDescription) *render.TableData {
	switch view {
	case "members":
		t := render.NewTable("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT+", "INSTANCE-ID+")
		for _, d := range groups {
			for _, m := range d.Members {
				n, parts := 0, make([]string, 0, len(m.Assignment))
				for _, a := range m.Assignment {
					n += len(a.Partitions)
					parts = append(parts, a.Topic+"("+joinInts(a.Partitions)+")")
				}
				t.Add(cellName(f, d.Group), m.MemberID, m.Host(), render.Dash(m.ClientID), strconv.Itoa(n), render.Dash(strings.Join(parts, ",")), render.Dash(m.InstanceID))
			}
		}
		return t
	case "state":
		t := render.NewTable("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
		for _, d := range groups {
			t.Add(cellName(f, d.Group), fmt.Sprintf("%s (%s)", render.Dash(d.WireCoordinatorAddr), render.Dash(d.WireCoordinator)), render.Dash(d.Protocol), render.Dash(d.State), strconv.Itoa(len(d.Members)))
		}
		return t
	}
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, d := range groups {
		for _, p := range d.Partitions {
			t.Add(cellName(f, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), offsetCell(p.Committed), offsetCell(p.LogEnd), optDash(p.Lag),
				render.Dash(p.Member), render.Dash(p.AssignedHost()), render.Dash(p.ClientID))
		}
	}
	return t
}

// offlineOffsetsTable is --offsets of an offline describe (no member is
// known without the brokers).
func offlineOffsetsTable(f render.Format, groups []inspect.GroupDescription) *render.TableData {
	t := render.NewTable("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, d := range groups {
		for _, p := range d.Partitions {
			t.Add(cellName(f, d.Group), p.Topic, strconv.Itoa(int(p.Partition)), offsetCell(p.Committed), optDash(p.HighWatermark), optDash(p.Lag), "-", "-", "-")
		}
	}
	return t
}

func offsetCell(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func optDash(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func joinInts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

// printDescribeView prints a view's table (data for json/yaml).
func printDescribeView(g *Globals, data, items any, t *render.TableData) error {
	return g.Printer.Print(render.Output{Data: data, Items: items, Table: t})
}

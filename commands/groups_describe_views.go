package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
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

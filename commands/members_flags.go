package commands

import (
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
	"github.com/kaasctl/kaasctl/observe"
)

// The flags of what kaasctl does with the membership it observes (CHURN,
// the rewinds' authors and their severity), shared by the exporter,
// groups health and watch --offsets, and the events journal they record
// beside the offsets journal.

const churnUsage = "CHURN when a group has more than `N` generation changes (members joining, leaving or timing out, coordinator moves) in the window"

// churnFlags are the membership flags (category cat).
func churnFlags(cat string) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "churn-rebalances", Value: inspect.DefaultChurnRebalances, Usage: churnUsage, Category: cat},
		&cli.Int64Flag{Name: "rewind-page-records", Value: inspect.DefaultRewindPageRecords, Usage: "a rewind by a group's own members of more than `N` records pages (a few records back is two of their commits landing out of order: a warning); a rewind by an admin tool, a zombie or a coordinator's stale cache always pages", Category: cat},
	}
}

// churnSpec is the membership flags after parsing.
type churnSpec struct {
	rebalances  int
	pageRecords int64
}

func churnFrom(c *cli.Context) (churnSpec, error) {
	cs := churnSpec{rebalances: c.Int("churn-rebalances"), pageRecords: c.Int64("rewind-page-records")}
	if cs.rebalances < 1 || cs.pageRecords < 1 {
		return cs, exit.UsageErrorf("--churn-rebalances and --rewind-page-records must be 1 or more")
	}
	return cs, nil
}

// window is the membership window over window for generation gi (its
// note on commits landing out of order words the rewinds' authors).
func (cs churnSpec) window(window time.Duration, gi volume.GenerationInfo) inspect.MemberWindow {
	return inspect.MemberWindow{Window: window, Rebalances: cs.rebalances, PageRecords: cs.pageRecords, OutOfOrder: commitOrder(gi)}
}

// exporterMembers are the exporter's membership options.
func (cs churnSpec) exporterMembers(gi volume.GenerationInfo, journal *watch.EventJournal) exporter.MembersOptions {
	return exporter.MembersOptions{Rebalances: cs.rebalances, PageRecords: cs.pageRecords, OutOfOrder: commitOrder(gi), Journal: journal}
}

// commitOrder is the generation's note on commits landing out of order.
func commitOrder(gi volume.GenerationInfo) string {
	return gi.BrokerFact(func(f volume.BrokerFacts) string { return f.CommitOrder })
}

// openEventJournal opens the events journal of a --journal DIR (nil
// without one), observed by observer every interval, with the offsets
// journal's retention.
func openEventJournal(js observe.JournalSpec, observer string, interval time.Duration) *watch.EventJournal {
	if js.Dir == "" {
		return nil
	}
	return &watch.EventJournal{Dir: filepath.Join(js.Dir, watch.EventJournalSubdir), Observer: observer, Interval: interval,
		MaxBytes: js.MaxBytes, MaxAge: js.MaxAge, SegmentAge: js.SegmentAge}
}

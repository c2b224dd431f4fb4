package commands

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/exporter"
	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/watch"
)

// The flags of what kaasctl does with the membership it observes (CHURN,
// the rewinds' authors and their severity), shared by the exporter,
// groups health and watch --offsets, which record it in the events
// journal beside the offsets journal (observe.JournalSpec.EventJournal).

const churnUsage = "CHURN when a group has more than `N` generation changes (members joining, leaving or timing out, coordinator moves) in the window"

// churnSpec is the membership flags.
type churnSpec struct {
	rebalances  int
	pageRecords int64
}

// churnFlags are the membership flags (category cat), bound to cs.
func churnFlags(cs *churnSpec, cat string) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "churn-rebalances", Value: inspect.DefaultChurnRebalances, Usage: churnUsage, Category: cat, Destination: &cs.rebalances},
		&cli.Int64Flag{Name: "rewind-page-records", Value: inspect.DefaultRewindPageRecords, Usage: "a rewind by a group's own members of more than `N` records pages (a few records back is two of their commits landing out of order: a warning); a rewind by an admin tool, a zombie or a coordinator's stale cache always pages", Category: cat, Destination: &cs.pageRecords},
	}
}

// check refuses thresholds below 1.
func (cs churnSpec) check() error {
	if cs.rebalances < 1 || cs.pageRecords < 1 {
		return exit.UsageErrorf("--churn-rebalances and --rewind-page-records must be 1 or more")
	}
	return nil
}

// window is the membership window over window for generation gi (its
// note on commits landing out of order words the rewinds' authors).
func (cs churnSpec) window(window time.Duration, gi volume.GenerationInfo) inspect.MemberWindow {
	return inspect.MemberWindow{Window: window, Rebalances: cs.rebalances, PageRecords: cs.pageRecords, OutOfOrder: gi.CommitOrder()}
}

// exporterMembers are the exporter's membership options.
func (cs churnSpec) exporterMembers(gi volume.GenerationInfo, journal *watch.EventJournal) exporter.MembersOptions {
	return exporter.MembersOptions{Rebalances: cs.rebalances, PageRecords: cs.pageRecords, OutOfOrder: gi.CommitOrder(), Journal: journal}
}
